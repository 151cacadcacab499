#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/random/random.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_arithmetic {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

TEST_CASE("arithmetic values and scalar operands", "[ops][arithmetic]") {
  auto a = tf::constant<float>({{1, 2}, {3, 4}});
  CHECK((a + 1.0f).numpy() == std::vector<float>{2, 3, 4, 5});
  CHECK((1.0f - a).numpy() == std::vector<float>{0, -1, -2, -3});
  CHECK((a * a).numpy() == std::vector<float>{1, 4, 9, 16});
  CHECK((a / 2).numpy() == std::vector<float>{0.5f, 1, 1.5f, 2});
  CHECK((-a).numpy() == std::vector<float>{-1, -2, -3, -4});
  CHECK(tf::pow(a, 2.0f).numpy() == std::vector<float>{1, 4, 9, 16});
  CHECK(tf::maximum(a, 2.5f).numpy() == std::vector<float>{2.5f, 2.5f, 3, 4});
  CHECK(tf::minimum(a, 2.5f).numpy() == std::vector<float>{1, 2, 2.5f, 2.5f});
  CHECK(tf::math::squared_difference(a, 2.5f).numpy() ==
        std::vector<float>{2.25f, 0.25f, 0.25f, 2.25f});
  CHECK(tf::math::squared_difference(tf::constant<std::int32_t>({1, -3}), 2).numpy() ==
        std::vector<std::int32_t>{1, 25});
  // One rounding of the difference, one of its square: subtract-then-square's bits, in one op.
  const auto x = tf::random::uniform<float>({1000}, {.minval = -100, .maxval = 100, .seed = 1});
  const auto y = tf::random::uniform<float>({1000}, {.seed = 2});
  CHECK(tf::math::squared_difference(x, y).numpy() == tf::square(x - y).numpy());
  auto i = tf::constant<std::int32_t>({7, -7});
  CHECK((i / 2).numpy() == std::vector<std::int32_t>{3, -3});
  CHECK_THROWS_WITH(i / 0, Catch::Contains("division by zero"));
}

TEST_CASE("broadcasting follows NumPy", "[ops][arithmetic]") {
  auto m = tf::constant<std::int32_t>({{1, 2, 3}, {4, 5, 6}});  // (2, 3)
  auto row = tf::constant<std::int32_t>({10, 20, 30});          // (3,)
  auto col = tf::constant<std::int32_t>({{100}, {200}});        // (2, 1)
  CHECK((m + row).numpy() == std::vector<std::int32_t>{11, 22, 33, 14, 25, 36});
  CHECK((m + col).numpy() == std::vector<std::int32_t>{101, 102, 103, 204, 205, 206});
  auto outer = col + row;  // (2, 1) + (3,) -> (2, 3)
  CHECK(outer.shape() == tf::Shape{2, 3});
  CHECK(outer.numpy() == std::vector<std::int32_t>{110, 120, 130, 210, 220, 230});
  auto cube = tf::reshape(tf::range<std::int32_t>(8), {2, 2, 2});
  auto mid = tf::constant<std::int32_t>({{{1}, {2}}});  // (1, 2, 1)
  CHECK((cube * mid).numpy() == std::vector<std::int32_t>{0, 1, 4, 6, 4, 5, 12, 14});
}

// A bias ([rows, C] op [C], either side): the vector is tiled over many rows at once
// (detail::binary_kernel); row counts across tiles and thread chunks, operands in both orders.
TEST_CASE("a short vector broadcast over many rows, on either side", "[ops][arithmetic]") {
  for (std::int64_t rows : {1, 5, 683, 40000}) {
    for (std::int64_t c : {1, 3, 64}) {
      auto x =
          tf::reshape(tf::cast<float>(tf::range<std::int32_t>(std::int32_t(rows * c))), {rows, c});
      auto v = tf::cast<float>(tf::range<std::int32_t>(std::int32_t(c))) * 0.5f + 1.0f;
      const auto xd = x.numpy();
      const auto vd = v.numpy();
      const auto xv = (x - v).numpy();
      const auto vx = (v - x).numpy();
      bool same = true;
      for (std::int64_t i = 0; i < rows * c; ++i) {
        same = same && xv[i] == xd[i] - vd[i % c] && vx[i] == vd[i % c] - xd[i];
      }
      INFO("rows " << rows << ", C " << c);
      CHECK(same);
    }
  }
  auto image = tf::ones<float>({2, 3, 3, 4});  // rank 4 + rank 1: the Conv2D bias
  auto bias = tf::constant<float>({1, 2, 3, 4});
  CHECK((image + bias).numpy() ==
        std::vector<float>{2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5,
                           2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5,
                           2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3, 4, 5});
}

TEST_CASE("shape mismatches name the op and both shapes", "[ops][arithmetic]") {
  auto a = tf::zeros<float>({2, 3});
  auto b = tf::zeros<float>({4});
  CHECK_THROWS_AS(a + b, tf::invalid_argument);
  CHECK_THROWS_WITH(
      a + b, Catch::Contains("AddV2") && Catch::Contains("(2, 3)") && Catch::Contains("(4,)"));
  CHECK_THROWS_WITH(a * b, Catch::Contains("Mul"));
}

TEST_CASE("arithmetic gradients", "[ops][arithmetic]") {
  auto a = test_data<2>({2, 3}, 1);
  auto b = test_data<2>({2, 3}, 2);
  auto row = test_data<1>({3}, 3);
  auto col = test_data<2>({2, 1}, 4);
  auto positive = tf::abs(test_data<2>({2, 3}, 5)) + 0.5;
  check_gradients([](const auto& x, const auto& y) { return x + y; }, a, b);
  check_gradients([](const auto& x, const auto& y) { return x - y; }, a, row);
  check_gradients([](const auto& x, const auto& y) { return x * y; }, col, row);
  check_gradients([](const auto& x, const auto& y) { return x / y; }, a, positive);
  check_gradients([](const auto& x, const auto& y) { return tf::pow(x, y); }, positive, a);
  check_gradients([](const auto& x, const auto& y) { return tf::maximum(x, y); }, a, b);
  check_gradients([](const auto& x, const auto& y) { return tf::minimum(x, y); }, col, row);
  check_gradients([](const auto& x, const auto& y) { return tf::math::squared_difference(x, y); },
                  a, row);
  check_gradients([](const auto& x, const auto& y) { return tf::math::squared_difference(x, y); },
                  col, b);
  check_gradients([](const auto& x) { return 3.0 - 2.0 * x / 4.0; }, a);
}

TEST_CASE("an op on a tensor without value is a typed error naming the op", "[ops]") {
  const tf::Tensor<float, 1> none;
  const auto x = tf::constant<float>({1, 2});
  CHECK_THROWS_AS(x + none, tf::failed_precondition);
  CHECK_THROWS_WITH(none * x, Catch::Contains("Mul: an input tensor holds no value"));
}

}  // namespace test_ops_arithmetic
