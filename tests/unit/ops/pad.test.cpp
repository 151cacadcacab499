#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/array/pad.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_pad {

namespace {
namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;
}  // namespace

TEST_CASE("pad surrounds a tensor with zeros", "[ops][pad]") {
  auto x = tf::constant<float>({{1, 2}, {3, 4}});
  auto y = tf::pad(x, {{1, 0}, {0, 2}});
  CHECK(y.dims() == std::array<std::int64_t, 2>{3, 4});
  CHECK(y.numpy() == std::vector<float>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0});
  auto none = tf::pad(x, {{0, 0}, {0, 0}});
  CHECK(none.numpy() == x.numpy());
  auto v = tf::pad(tf::constant<int32_t>({7}), {{2, 1}});
  CHECK(v.numpy() == std::vector<int32_t>{0, 0, 7, 0});
  auto grown = tf::pad(tf::zeros<int64_t>({0, 2}), {{1, 1}, {0, 0}});
  CHECK(grown.dims() == std::array<std::int64_t, 2>{2, 2});
  auto scalar = tf::pad(tf::constant(2.5), std::array<std::array<std::int64_t, 2>, 0>{});
  CHECK(scalar.item() == 2.5);
}

TEST_CASE("pad with a constant value uses PadV2", "[ops][pad]") {
  auto x = tf::constant<double>({{1, 2, 3}});
  auto y = tf::pad(x, {{1, 1}, {1, 0}}, -1.0);
  CHECK(y.dims() == std::array<std::int64_t, 2>{3, 4});
  CHECK(y.numpy() == std::vector<double>{-1, -1, -1, -1, -1, 1, 2, 3, -1, -1, -1, -1});
  auto cube = tf::constant<int32_t>({{{1, 2}, {3, 4}}});
  auto c = tf::pad(cube, {{0, 1}, {0, 0}, {1, 0}}, 9);
  CHECK(c.dims() == std::array<std::int64_t, 3>{2, 2, 3});
  CHECK(c.numpy() == std::vector<int32_t>{9, 1, 2, 9, 3, 4, 9, 9, 9, 9, 9, 9});
}

TEST_CASE("pad works for string, bool, uint8 and variables", "[ops][pad]") {
  auto s = tf::constant({"a", "b"});
  CHECK(tf::pad(s, {{1, 1}}).numpy() == std::vector<std::string>{"", "a", "b", ""});
  CHECK(tf::pad(s, {{0, 2}}, "z").numpy() == std::vector<std::string>{"a", "b", "z", "z"});
  auto b = tf::constant<bool>({true});
  CHECK(tf::pad(b, {{1, 0}}).numpy() == std::vector<bool>{false, true});
  CHECK(tf::pad(b, {{1, 1}}, true).numpy() == std::vector<bool>{true, true, true});
  auto u = tf::constant<uint8_t>({{5}});
  CHECK(tf::pad(u, {{0, 1}, {1, 0}}, uint8_t{3}).numpy() == std::vector<uint8_t>{3, 5, 3, 3});
  tf::Variable<float, 1> v(tf::constant<float>({1, 2}));
  CHECK(tf::pad(v, {{1, 0}}).numpy() == std::vector<float>{0, 1, 2});
}

// Each output element against its definition: x's element where the index minus the leading
// padding lies inside x, else the constant. Sizes reach several parallel tasks (rows of 1 to
// 40 elements, up to ~300,000 elements), and the paddings include none, leading axes only
// and the last axis only.
template <class T, std::size_t R>
void check_pad_definition(std::array<std::int64_t, R> dims,
                          std::array<std::array<std::int64_t, 2>, R> paddings, T value, auto make) {
  auto x = tf::Tensor<T, R>::uninitialized(dims);
  T* xs = tf::detail::tensor_access::mutable_data(x);
  for (std::int64_t i = 0; i < x.num_elements(); ++i) {
    xs[i] = make(i);
  }
  auto y = tf::pad(x, paddings, value);
  std::array<std::int64_t, R> out{};
  for (std::size_t a = 0; a < R; ++a) {
    out[a] = dims[a] + paddings[a][0] + paddings[a][1];
  }
  REQUIRE(y.dims() == out);
  std::int64_t wrong = 0;
  for (std::int64_t k = 0; k < y.num_elements(); ++k) {
    std::int64_t rest = k;
    std::int64_t from = 0;
    std::int64_t stride = 1;
    bool inside = true;
    for (std::size_t a = R; a-- > 0;) {
      std::int64_t const i = rest % out[a] - paddings[a][0];
      rest /= out[a];
      inside = inside && i >= 0 && i < dims[a];
      from += i * stride;
      stride *= dims[a];
    }
    wrong += y.data()[k] != (inside ? xs[from] : value);
  }
  CHECK(wrong == 0);
}

TEST_CASE("pad writes every element by its definition at any rank and size", "[ops][pad]") {
  auto number = [](std::int64_t i) { return static_cast<float>(i % 1000) + 0.5f; };
  check_pad_definition<float, 1>({100000}, {{{3, 5}}}, -1.0f, number);
  check_pad_definition<float, 2>({3000, 1}, {{{0, 0}, {1, 2}}}, 0.0f, number);
  check_pad_definition<float, 2>({1000, 40}, {{{2, 1}, {0, 0}}}, 7.0f, number);
  check_pad_definition<float, 3>({50, 60, 30}, {{{1, 0}, {0, 2}, {3, 1}}}, 0.0f, number);
  check_pad_definition<float, 4>({4, 37, 37, 24}, {{{0, 0}, {0, 1}, {0, 1}, {0, 0}}}, 0.0f, number);
  check_pad_definition<float, 4>({2, 5, 6, 7}, {{{1, 1}, {2, 0}, {0, 3}, {1, 1}}}, 2.0f, number);
  check_pad_definition<double, 5>({2, 3, 4, 5, 6}, {{{1, 0}, {0, 1}, {2, 2}, {0, 0}, {1, 0}}}, 0.0,
                                  [](std::int64_t i) { return static_cast<double>(i) * 0.25; });
  check_pad_definition<std::int64_t, 3>({20, 30, 40}, {{{0, 0}, {0, 0}, {0, 0}}}, 0,
                                        [](std::int64_t i) { return i; });
  check_pad_definition<std::string, 3>({30, 40, 5}, {{{1, 2}, {0, 1}, {2, 0}}}, "pad",
                                       [](std::int64_t i) { return std::to_string(i); });
  // Empty inputs: every element is the constant.
  check_pad_definition<float, 2>({0, 5}, {{{2, 1}, {1, 1}}}, 3.0f, number);
  check_pad_definition<float, 2>({4, 0}, {{{0, 0}, {2, 3}}}, 3.0f, number);
}

TEST_CASE("pad rejects negative paddings", "[ops][pad]") {
  auto x = tf::zeros<float>({2, 3});
  CHECK_THROWS_AS(tf::pad(x, {{0, 0}, {-1, 0}}), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::pad(x, {{0, 0}, {-1, 0}}),
                    Catch::Contains("Pad") && Catch::Contains("(2, 3)"));
  CHECK_THROWS_WITH(tf::pad(x, {{0, -2}, {0, 0}}, 1.0f), Catch::Contains("PadV2"));
}

TEST_CASE("pad gradients match numerical ones", "[ops][pad][gradient]") {
  check_gradients(
      [](const auto& x) {
        return tf::pad(x, {{1, 2}, {0, 1}});
      },
      test_data<2>({2, 3}, 1));
  check_gradients(
      [](const auto& x) {
        auto p = tf::pad(x, {{0, 1}, {2, 0}, {1, 1}}, 0.5);
        return p * p;
      },
      test_data<3>({2, 2, 2}, 2));
}

TEST_CASE("pad has a second-order gradient (through Slice)", "[ops][pad][gradient]") {
  auto x = tf::constant<double>({1, 2});
  tf::GradientTape outer;
  outer.watch(x);
  tf::Tensor<double, 1> g;
  {
    tf::GradientTape inner;
    inner.watch(x);
    auto p = tf::pad(x, {{1, 1}}, 1.0);
    g = *inner.gradient(tf::reduce_sum(p * p * p), x);  // 3 x^2
  }
  CHECK(g.numpy() == std::vector<double>{3, 12});
  auto gg = outer.gradient(tf::reduce_sum(g), x);
  REQUIRE(gg.has_value());
  CHECK(gg->numpy() == std::vector<double>{6, 12});
}

}  // namespace test_ops_pad
