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
