#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/array/concat.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_concat {

namespace {
namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;
}  // namespace

TEST_CASE("concat joins along an existing axis", "[ops][concat]") {
  auto a = tf::constant<float>({{1, 2}, {3, 4}});
  auto b = tf::constant<float>({{5, 6}});
  auto rows = tf::concat({a, b}, 0);
  CHECK(rows.dims() == std::array<std::int64_t, 2>{3, 2});
  CHECK(rows.numpy() == std::vector<float>{1, 2, 3, 4, 5, 6});

  auto c = tf::constant<float>({{7}, {8}});
  auto cols = tf::concat({a, c, a}, 1);
  CHECK(cols.dims() == std::array<std::int64_t, 2>{2, 5});
  CHECK(cols.numpy() == std::vector<float>{1, 2, 7, 1, 2, 3, 4, 8, 3, 4});
  CHECK(tf::concat({a, c}, -1).numpy() == std::vector<float>{1, 2, 7, 3, 4, 8});

  auto single = tf::concat({a}, 0);
  CHECK(single.numpy() == a.numpy());
  auto with_empty = tf::concat({a, tf::zeros<float>({0, 2})}, 0);
  CHECK(with_empty.numpy() == a.numpy());
}

TEST_CASE("concat of rank-3 tensors along the middle axis", "[ops][concat]") {
  auto a = tf::constant<int64_t>({{{1, 2}}, {{3, 4}}});                     // (2, 1, 2)
  auto b = tf::constant<int64_t>({{{5, 6}, {7, 8}}, {{9, 10}, {11, 12}}});  // (2, 2, 2)
  std::vector<tf::Tensor<int64_t, 3>> list{a, b};
  auto y = tf::concat(list, 1);
  CHECK(y.dims() == std::array<std::int64_t, 3>{2, 3, 2});
  CHECK(y.numpy() == std::vector<int64_t>{1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12});
  CHECK(tf::concat(list, -2).numpy() == y.numpy());
}

TEST_CASE("concat works for strings, bools and int32", "[ops][concat]") {
  CHECK(tf::concat({tf::constant({"a", "b"}), tf::constant({"c"})}, 0).numpy() ==
        std::vector<std::string>{"a", "b", "c"});
  CHECK(
      tf::concat({tf::constant<bool>({{true}, {false}}), tf::constant<bool>({{false}, {true}})}, 1)
          .numpy() == std::vector<bool>{true, false, false, true});
  CHECK(tf::concat({tf::constant<int32_t>({1}), tf::constant<int32_t>({2, 3})}, 0).numpy() ==
        std::vector<int32_t>{1, 2, 3});
}

TEST_CASE("concat rejects bad axes, empty lists and mismatched shapes", "[ops][concat]") {
  auto a = tf::zeros<float>({2, 3});
  auto b = tf::zeros<float>({2, 4});
  CHECK_THROWS_AS(tf::concat({a, b}, 0), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::concat({a, b}, 0), Catch::Contains("ConcatV2") &&
                                               Catch::Contains("(2, 4)") &&
                                               Catch::Contains("(2, 3)"));
  CHECK(tf::concat({a, b}, 1).dims() == std::array<std::int64_t, 2>{2, 7});
  CHECK_THROWS_WITH(tf::concat({a, a}, 2),
                    Catch::Contains("ConcatV2") && Catch::Contains("axis 2"));
  CHECK_THROWS_WITH(tf::concat({a, a}, -3), Catch::Contains("ConcatV2"));
  CHECK_THROWS_WITH(tf::concat(std::vector<tf::Tensor<float, 2>>{}, 0),
                    Catch::Contains("ConcatV2"));
}

TEST_CASE("concat gradients match numerical ones", "[ops][concat][gradient]") {
  check_gradients(
      [](const auto& a, const auto& b) {
        return tf::concat({a, b}, 0);
      },
      test_data<2>({2, 3}, 1), test_data<2>({1, 3}, 2));
  check_gradients(
      [](const auto& a, const auto& b) {
        return tf::concat({a, b, a}, -1) * tf::concat({b, a, a}, 1);
      },
      test_data<2>({2, 2}, 3), test_data<2>({2, 2}, 4));
}

TEST_CASE("concat gradient reaches each listed input and is second-order",
          "[ops][concat][gradient]") {
  auto a = tf::constant<double>({1, 2});
  auto b = tf::constant<double>({3});
  tf::GradientTape outer({.persistent = true});
  outer.watch(a);
  outer.watch(b);
  tf::Tensor<double, 1> ga;
  tf::Tensor<double, 1> gb;
  {
    tf::GradientTape inner;
    inner.watch(a);
    inner.watch(b);
    auto y = tf::concat({a, b}, 0);
    auto [da, db] = inner.gradient(tf::reduce_sum(y * y * y), a, b);
    ga = *da;
    gb = *db;
  }
  CHECK(ga.numpy() == std::vector<double>{3, 12});
  CHECK(gb.numpy() == std::vector<double>{27});
  auto gga = outer.gradient(tf::reduce_sum(ga), a);
  REQUIRE(gga.has_value());
  CHECK(gga->numpy() == std::vector<double>{6, 12});
}

}  // namespace test_ops_concat
