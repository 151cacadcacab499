#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/math/argmax.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_argmax {

namespace {
namespace tf = tapeflow;
}  // namespace

TEST_CASE("argmax and argmin along an axis", "[ops][argmax]") {
  auto x = tf::constant<float>({{0.1f, 2.0f, 0.3f}, {5.0f, 1.0f, -4.0f}});
  auto rows = tf::argmax(x, 1);
  static_assert(std::is_same_v<decltype(rows), tf::Tensor<int64_t, 1>>);
  CHECK(rows.numpy() == std::vector<int64_t>{1, 0});
  CHECK(tf::argmax(x, -1).numpy() == rows.numpy());
  CHECK(tf::argmax(x, 0).numpy() == std::vector<int64_t>{1, 0, 0});
  CHECK(tf::argmax(x).numpy() == std::vector<int64_t>{1, 0, 0});
  CHECK(tf::argmin(x, 1).numpy() == std::vector<int64_t>{0, 2});
  CHECK(tf::argmin(x, -2).numpy() == std::vector<int64_t>{0, 1, 1});
  auto v = tf::argmax(tf::constant<int32_t>({3, 9, 2}));
  static_assert(std::is_same_v<decltype(v), tf::Tensor<int64_t, 0>>);
  CHECK(v.item() == 1);
  auto i32 = tf::argmin<int32_t>(x, 1);
  static_assert(std::is_same_v<decltype(i32), tf::Tensor<int32_t, 1>>);
  CHECK(i32.numpy() == std::vector<int32_t>{0, 2});
  CHECK(tf::math::argmax(x, 1).numpy() == rows.numpy());
}

TEST_CASE("argmax on a rank-3 tensor's middle axis", "[ops][argmax]") {
  auto x = tf::constant<double>({{{1, 8}, {7, 2}, {3, 9}}, {{4, 4}, {6, 5}, {0, 1}}});  // (2, 3, 2)
  auto y = tf::argmax(x, 1);
  CHECK(y.dims() == std::array<std::int64_t, 2>{2, 2});
  CHECK(y.numpy() == std::vector<int64_t>{1, 2, 1, 1});
  CHECK(tf::argmin(x, 1).numpy() == std::vector<int64_t>{0, 1, 2, 2});
  CHECK(tf::argmax(x, 2).numpy() == std::vector<int64_t>{1, 0, 1, 0, 0, 1});
}

TEST_CASE("argmax picks the first index on ties and the first NaN", "[ops][argmax]") {
  CHECK(tf::argmax(tf::constant<int64_t>({2, 5, 5, 1, 5})).item() == 1);
  CHECK(tf::argmin(tf::constant<uint8_t>({4, 1, 1})).item() == 1);
  CHECK(tf::argmax(tf::constant<bool>({false, true, true})).item() == 1);
  CHECK(tf::argmin(tf::constant<bool>({true, false, false})).item() == 1);
  float const nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(tf::argmax(tf::constant<float>({1, nan, 3, nan})).item() == 1);
  CHECK(tf::argmin(tf::constant<float>({nan, -1})).item() == 0);
  tf::Variable<double, 1> var(tf::constant<double>({-1, -2}));
  CHECK(tf::argmax(var).item() == 0);
}

TEST_CASE("argmax rejects bad axes and empty axes", "[ops][argmax]") {
  auto x = tf::zeros<float>({2, 3});
  CHECK_THROWS_AS(tf::argmax(x, 2), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::argmax(x, 2), Catch::Contains("ArgMax") && Catch::Contains("axis 2"));
  CHECK_THROWS_WITH(tf::argmin(x, -3), Catch::Contains("ArgMin"));
  auto empty = tf::zeros<float>({2, 0});
  CHECK_THROWS_WITH(tf::argmax(empty, 1), Catch::Contains("ArgMax") && Catch::Contains("(2, 0)"));
  CHECK(tf::argmax(empty, 0).dims() == std::array<std::int64_t, 1>{0});
}

TEST_CASE("argmax is not differentiable", "[ops][argmax][gradient]") {
  auto x = tf::constant<double>({1, 3, 2});
  tf::GradientTape tape;
  tape.watch(x);
  auto i = tf::argmax(x);
  CHECK(i.item() == 1);
  auto y = tf::reduce_sum(x * x);
  auto g = tape.gradient(y, x);
  REQUIRE(g.has_value());
  CHECK(g->numpy() == std::vector<double>{2, 6, 4});
}

}  // namespace test_ops_argmax
