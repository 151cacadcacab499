#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/array/stack.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_stack {

namespace {
namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;
}  // namespace

TEST_CASE("stack joins along a new axis", "[ops][stack]") {
  auto a = tf::constant<float>({1, 2, 3});
  auto b = tf::constant<float>({4, 5, 6});
  auto y0 = tf::stack({a, b});
  CHECK(y0.dims() == std::array<std::int64_t, 2>{2, 3});
  CHECK(y0.numpy() == std::vector<float>{1, 2, 3, 4, 5, 6});
  auto y1 = tf::stack({a, b}, 1);
  CHECK(y1.dims() == std::array<std::int64_t, 2>{3, 2});
  CHECK(y1.numpy() == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(tf::stack({a, b}, -1).numpy() == y1.numpy());
  CHECK(tf::stack({a, b}, -2).numpy() == y0.numpy());

  auto s = tf::stack({tf::constant(1.0), tf::constant(2.0)});
  CHECK(s.dims() == std::array<std::int64_t, 1>{2});
  CHECK(s.numpy() == std::vector<double>{1, 2});

  auto m = tf::constant<int32_t>({{1, 2}, {3, 4}});
  auto n = tf::constant<int32_t>({{5, 6}, {7, 8}});
  std::vector<tf::Tensor<int32_t, 2>> list{m, n};
  auto mid = tf::stack(list, 1);
  CHECK(mid.dims() == std::array<std::int64_t, 3>{2, 2, 2});
  CHECK(mid.numpy() == std::vector<int32_t>{1, 2, 5, 6, 3, 4, 7, 8});
  auto last = tf::stack(list, 2);
  CHECK(last.numpy() == std::vector<int32_t>{1, 5, 2, 6, 3, 7, 4, 8});
}

TEST_CASE("stack works for strings and bools", "[ops][stack]") {
  CHECK(tf::stack({tf::constant({"a", "b"}), tf::constant({"c", "d"})}, 1).numpy() ==
        std::vector<std::string>{"a", "c", "b", "d"});
  CHECK(tf::stack({tf::constant<bool>({true}), tf::constant<bool>({false})}).numpy() ==
        std::vector<bool>{true, false});
}

TEST_CASE("stack rejects bad axes, empty lists and mismatched shapes", "[ops][stack]") {
  auto a = tf::zeros<float>({2});
  auto b = tf::zeros<float>({3});
  CHECK_THROWS_AS(tf::stack({a, b}), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::stack({a, b}), Catch::Contains("Pack") && Catch::Contains("(3,)"));
  CHECK_THROWS_WITH(tf::stack({a, a}, 2), Catch::Contains("Pack") && Catch::Contains("axis 2"));
  CHECK_THROWS_WITH(tf::stack({a, a}, -3), Catch::Contains("Pack"));
  CHECK_THROWS_WITH(tf::stack(std::vector<tf::Tensor<float, 1>>{}), Catch::Contains("Pack"));
}

TEST_CASE("unstack splits along an axis", "[ops][stack][unstack]") {
  auto x = tf::constant<int64_t>({{1, 2, 3}, {4, 5, 6}});
  auto rows = tf::unstack(x);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].numpy() == std::vector<int64_t>{1, 2, 3});
  CHECK(rows[1].numpy() == std::vector<int64_t>{4, 5, 6});
  auto cols = tf::unstack(x, -1);
  REQUIRE(cols.size() == 3);
  CHECK(cols[2].numpy() == std::vector<int64_t>{3, 6});
  auto scalars = tf::unstack(tf::constant({"p", "q"}));
  REQUIRE(scalars.size() == 2);
  CHECK(scalars[1].item() == "q");
  tf::Variable<float, 1> v(tf::constant<float>({7, 8}));
  CHECK(tf::unstack(v)[1].item() == 8.0f);
  CHECK(tf::unstack(tf::zeros<float>({0, 4})).empty());
  CHECK(tf::stack(tf::unstack(x, 1), 1).numpy() == x.numpy());
  CHECK_THROWS_WITH(tf::unstack(x, 2), Catch::Contains("Unpack") && Catch::Contains("axis 2"));
}

TEST_CASE("stack and unstack gradients match numerical ones", "[ops][stack][gradient]") {
  check_gradients(
      [](const auto& a, const auto& b) {
        return tf::stack({a, b, a}, 1);
      },
      test_data<2>({2, 3}, 1), test_data<2>({2, 3}, 2));
  check_gradients(
      [](const auto& x) {
        auto parts = tf::unstack(x, -1);
        return parts[0] * parts[2] + parts[1];
      },
      test_data<2>({3, 3}, 3));
}

TEST_CASE("stack has a second-order gradient", "[ops][stack][gradient]") {
  auto a = tf::constant<double>({1, 2});
  auto b = tf::constant<double>({3, 4});
  tf::GradientTape outer;
  outer.watch(a);
  tf::Tensor<double, 1> ga;
  {
    tf::GradientTape inner;
    inner.watch(a);
    auto y = tf::stack({a, b}, 1);
    ga = *inner.gradient(tf::reduce_sum(y * y * y), a);
  }
  CHECK(ga.numpy() == std::vector<double>{3, 12});
  auto gg = outer.gradient(tf::reduce_sum(ga), a);
  REQUIRE(gg.has_value());
  CHECK(gg->numpy() == std::vector<double>{6, 12});
}

}  // namespace test_ops_stack
