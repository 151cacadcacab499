#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/ops/array/where.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/math/compare.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_compare {

namespace tf = tapeflow;

TEST_CASE("comparisons and logical ops", "[ops][compare]") {
  auto a = tf::constant<float>({1, 2, 3});
  auto b = tf::constant<float>({3, 2, 1});
  CHECK((a < b).numpy() == std::vector<bool>{true, false, false});
  CHECK((a <= b).numpy() == std::vector<bool>{true, true, false});
  CHECK((a > 2.0f).numpy() == std::vector<bool>{false, false, true});
  CHECK((a >= b).numpy() == std::vector<bool>{false, true, true});
  CHECK(tf::equal(a, b).numpy() == std::vector<bool>{false, true, false});
  CHECK(tf::not_equal(a, b).numpy() == std::vector<bool>{true, false, true});
  auto p = a > 1.0f;
  auto q = a < 3.0f;
  CHECK((p & q).numpy() == std::vector<bool>{false, true, false});
  CHECK((p | q).numpy() == std::vector<bool>{true, true, true});
  CHECK((!p).numpy() == std::vector<bool>{true, false, false});
}

TEST_CASE("cast", "[ops][cast]") {
  auto x = tf::constant<float>({-1.7f, 0.0f, 2.9f});
  CHECK(tf::cast<std::int32_t>(x).numpy() == std::vector<std::int32_t>{-1, 0, 2});
  CHECK(tf::cast<bool>(x).numpy() == std::vector<bool>{true, false, true});
  CHECK(tf::cast<float>(tf::constant<bool>({true, false})).numpy() == std::vector<float>{1, 0});
  // Gradients pass between floating types (here through float32, so checked exactly, not
  // numerically: float32 rounding would swamp a central difference).
  auto x64 = tf::constant<double>({0.25, -2.0});
  tf::GradientTape tape;
  tape.watch(x64);
  auto y = tf::cast<double>(tf::cast<float>(x64) * 2.0f);
  CHECK(tape.gradient(y, x64)->numpy() == std::vector<double>{2, 2});
}

TEST_CASE("where selects with broadcasting", "[ops][where]") {
  auto c = tf::constant<bool>({true, false, true});
  auto x = tf::constant<std::int32_t>({1, 2, 3});
  CHECK(tf::where(c, x, tf::constant<std::int32_t>(0)).numpy() ==
        std::vector<std::int32_t>{1, 0, 3});
  auto rows = tf::constant<bool>({{true}, {false}});
  CHECK(tf::where(rows, x, -x).numpy() == std::vector<std::int32_t>{1, 2, 3, -1, -2, -3});
  CHECK_THROWS_WITH(tf::where(c, x, tf::constant<std::int32_t>({1, 2})),
                    Catch::Contains("SelectV2"));
  auto a = tapeflow_test::test_data<2>({2, 3}, 1);
  auto b = tapeflow_test::test_data<1>({3}, 2);
  auto mask = a > 0.0;
  tapeflow_test::check_gradients(
      [&](const auto& u, const auto& v) { return tf::where(mask, u, v); }, a, b);
}

}  // namespace test_ops_compare
