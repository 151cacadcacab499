#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/ops/array/reverse.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_reverse {

namespace {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

// The element of x that reverse(x, axes) puts at `at`, computed index by index.
template <std::size_t R>
double expected_at(const tf::Tensor<double, R>& x, std::array<std::int64_t, R> at,
                   const std::array<bool, R>& reversed) {
  for (std::size_t a = 0; a < R; ++a) {
    if (reversed[a]) {
      at[a] = x.dims()[a] - 1 - at[a];
    }
  }
  std::int64_t offset = 0;
  for (std::size_t a = 0; a < R; ++a) {
    offset = offset * x.dims()[a] + at[a];
  }
  return x.data()[offset];
}

template <std::size_t R>
void check_every_axis_subset(const std::array<std::int64_t, R>& dims) {
  const auto x = test_data<R>(dims, 7);
  for (unsigned mask = 0; mask < (1u << R); ++mask) {
    std::array<bool, R> reversed{};
    std::vector<int> axes;
    for (std::size_t a = 0; a < R; ++a) {
      reversed[a] = ((mask >> a) & 1u) != 0;
      if (reversed[a]) {
        axes.push_back(static_cast<int>(a));
      }
    }
    tf::ops::ReverseV2<R> op{reversed};
    const auto y = tf::detail::execute(op, x);
    REQUIRE(y.dims() == x.dims());
    std::array<std::int64_t, R> at{};
    for (std::int64_t i = 0; i < y.num_elements(); ++i) {
      INFO("mask " << mask << " element " << i);
      REQUIRE(y.data()[i] == expected_at(x, at, reversed));
      for (std::size_t a = R; a-- > 0;) {
        if (++at[a] < dims[a]) {
          break;
        }
        at[a] = 0;
      }
    }
  }
}

TEST_CASE("reverse reverses every subset of axes", "[ops][reverse]") {
  check_every_axis_subset<1>({5});
  check_every_axis_subset<2>({3, 4});
  check_every_axis_subset<3>({2, 1, 5});
  check_every_axis_subset<4>({2, 3, 4, 3});
  check_every_axis_subset<3>({2, 0, 3});  // empty
}

TEST_CASE("reverse takes negative axes and rejects bad ones", "[ops][reverse]") {
  const auto x = tf::constant<int>({{1, 2, 3}, {4, 5, 6}});
  CHECK(tf::reverse(x, {1}).numpy() == std::vector<int>{3, 2, 1, 6, 5, 4});
  CHECK(tf::reverse(x, {-2}).numpy() == std::vector<int>{4, 5, 6, 1, 2, 3});
  CHECK(tf::reverse(x, {0, -1}).numpy() == std::vector<int>{6, 5, 4, 3, 2, 1});
  CHECK(tf::reverse(tf::constant<std::string>({"a", "b"}), {0}).numpy() ==
        std::vector<std::string>{"b", "a"});
  CHECK_THROWS_AS(tf::reverse(x, {2}), tf::invalid_argument);
  CHECK_THROWS_AS(tf::reverse(x, {-3}), tf::invalid_argument);
  CHECK_THROWS_AS(tf::reverse(x, {1, -1}), tf::invalid_argument);
}

TEST_CASE("reverse's gradient is reverse", "[ops][reverse][gradient]") {
  check_gradients([](const auto& x) { return tf::reverse(x, {1}); }, test_data<2>({3, 4}, 1));
  check_gradients([](const auto& x) { return tf::reverse(x, {0, 2}); }, test_data<3>({2, 3, 2}, 2));
}

TEST_CASE("reverse traces as ReverseV2", "[ops][reverse][function]") {
  auto f = tf::function([](const tf::Tensor<float, 2>& x) { return tf::reverse(x, {-1}); });
  CHECK(f(tf::constant<float>({{1, 2}, {3, 4}})).numpy() == std::vector<float>{2, 1, 4, 3});
  CHECK_THAT(f.concrete_functions()[0]->to_string(), Catch::Contains("ReverseV2[axis=[1]](arg0)"));
}

}  // namespace

}  // namespace test_ops_reverse
