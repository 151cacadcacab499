#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/array/one_hot.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_one_hot {

namespace {
namespace tf = tapeflow;
}  // namespace

TEST_CASE("one_hot encodes indices along a new last axis", "[ops][one_hot]") {
  auto y = tf::one_hot<float>(tf::constant<int32_t>({0, 2, 1}), 3);
  CHECK(y.dims() == std::array<std::int64_t, 2>{3, 3});
  CHECK(y.numpy() == std::vector<float>{1, 0, 0, 0, 0, 1, 0, 1, 0});
  auto d = tf::one_hot(tf::constant<int64_t>({1}), 2);  // float by default
  static_assert(std::is_same_v<decltype(d), tf::Tensor<float, 2>>);
  CHECK(d.numpy() == std::vector<float>{0, 1});
  auto s = tf::one_hot(tf::constant<uint8_t>(3), 4);  // rank 0 -> rank 1
  CHECK(s.numpy() == std::vector<float>{0, 0, 0, 1});
}

TEST_CASE("one_hot gives all-off rows for out-of-range indices", "[ops][one_hot]") {
  auto y = tf::one_hot<int32_t>(tf::constant<int32_t>({-1, 3, 1}), 3);
  CHECK(y.numpy() == std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 1, 0});
  auto empty = tf::one_hot(tf::constant<int32_t>({1, 2}), 0);
  CHECK(empty.dims() == std::array<std::int64_t, 2>{2, 0});
}

TEST_CASE("one_hot with on/off values, other dtypes and other axes", "[ops][one_hot]") {
  auto labels = tf::constant<int64_t>({{0, 1}, {2, 0}});  // (2, 2)
  auto last = tf::one_hot(labels, 3, 5.0, -1.0);          // double deduced from on_value
  static_assert(std::is_same_v<decltype(last), tf::Tensor<double, 3>>);
  CHECK(last.dims() == std::array<std::int64_t, 3>{2, 2, 3});
  CHECK(last.numpy() == std::vector<double>{5, -1, -1, -1, 5, -1, -1, -1, 5, 5, -1, -1});

  auto first = tf::one_hot<int64_t>(labels, 3, 1, 0, 0);  // (3, 2, 2)
  CHECK(first.dims() == std::array<std::int64_t, 3>{3, 2, 2});
  CHECK(first.numpy() == std::vector<int64_t>{1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0});
  auto middle = tf::one_hot<int64_t>(labels, 3, 1, 0, -2);  // (2, 3, 2)
  CHECK(middle.dims() == std::array<std::int64_t, 3>{2, 3, 2});
  CHECK(middle.numpy() == std::vector<int64_t>{1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0});

  auto words = tf::one_hot<std::string>(tf::constant<int32_t>({1}), 2, "on", "off");
  CHECK(words.numpy() == std::vector<std::string>{"off", "on"});
  auto flags = tf::one_hot<bool>(tf::constant<int32_t>({0, 1}), 2);
  CHECK(flags.numpy() == std::vector<bool>{true, false, false, true});
  tf::Variable<int32_t, 1> v(tf::constant<int32_t>({1}));
  CHECK(tf::one_hot(v, 2).numpy() == std::vector<float>{0, 1});
}

TEST_CASE("one_hot rejects a negative depth and bad axes", "[ops][one_hot]") {
  auto labels = tf::constant<int32_t>({0, 1});
  CHECK_THROWS_AS(tf::one_hot(labels, -1), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::one_hot(labels, -1), Catch::Contains("OneHot") && Catch::Contains("depth"));
  CHECK_THROWS_WITH(tf::one_hot(labels, 2, 1.0f, 0.0f, 2),
                    Catch::Contains("OneHot") && Catch::Contains("axis 2"));
  CHECK_THROWS_WITH(tf::one_hot(labels, 2, 1.0f, 0.0f, -3), Catch::Contains("OneHot"));
}

TEST_CASE("one_hot stops gradients", "[ops][one_hot][gradient]") {
  auto x = tf::constant<double>({1, 2, 3});
  tf::GradientTape tape;
  tape.watch(x);
  auto y = tf::reduce_sum(x * tf::one_hot<double>(tf::constant<int32_t>(1), 3));
  auto g = tape.gradient(y, x);
  REQUIRE(g.has_value());
  CHECK(g->numpy() == std::vector<double>{0, 1, 0});
}

}  // namespace test_ops_one_hot
