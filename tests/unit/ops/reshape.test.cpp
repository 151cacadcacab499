#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/ops/array/reshape.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_reshape {

namespace tf = tapeflow;

TEST_CASE("reshape, expand_dims, squeeze share the buffer", "[ops][reshape]") {
  auto x = tf::range<std::int32_t>(6);
  auto m = tf::reshape(x, {2, -1});
  CHECK(m.shape() == tf::Shape{2, 3});
  CHECK(m.data() == x.data());
  CHECK(m.id() != x.id());
  CHECK(tf::expand_dims(m, 0).shape() == tf::Shape{1, 2, 3});
  CHECK(tf::expand_dims(m, -1).shape() == tf::Shape{2, 3, 1});
  CHECK(tf::squeeze(tf::expand_dims(m, 1), 1).shape() == tf::Shape{2, 3});
  CHECK_THROWS_WITH(tf::reshape(x, {4, 2}), Catch::Contains("Reshape") && Catch::Contains("(6,)"));
  CHECK_THROWS_AS(tf::reshape(x, {-1, -1}), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::squeeze(m, 0), Catch::Contains("Squeeze"));
  CHECK_THROWS_AS(tf::expand_dims(m, 3), tf::invalid_argument);
  auto s = tf::reshape(tf::constant({"a", "b"}), {2, 1});
  CHECK(s(1, 0) == "b");
}

TEST_CASE("reshape gradients", "[ops][reshape]") {
  tapeflow_test::check_gradients(
      [](const auto& v) {
        return tf::square(tf::reshape(v, {3, 2}));
      },
      tapeflow_test::test_data<2>({2, 3}));
  tapeflow_test::check_gradients(
      [](const auto& v) { return tf::squeeze(tf::expand_dims(v, 0) * 2.0, 0); },
      tapeflow_test::test_data<1>({4}));
  tapeflow_test::check_gradients([](const auto& v) { return tf::identity(v) * v; },
                                 tapeflow_test::test_data<1>({3}));
}

}  // namespace test_ops_reshape
