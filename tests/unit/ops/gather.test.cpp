#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/array/gather.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_gather {

namespace {
namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;
}  // namespace

TEST_CASE("gather picks rows by index", "[ops][gather]") {
  auto p = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}});
  auto y = tf::gather(p, tf::constant<int32_t>({2, 0, 2}));
  CHECK(y.dims() == std::array<std::int64_t, 2>{3, 2});
  CHECK(y.numpy() == std::vector<float>{5, 6, 1, 2, 5, 6});
  auto one = tf::gather(p, tf::constant<int64_t>(1));  // rank-0 indices drop the axis
  CHECK(one.dims() == std::array<std::int64_t, 1>{2});
  CHECK(one.numpy() == std::vector<float>{3, 4});
  auto none = tf::gather(p, tf::zeros<int32_t>({0}));
  CHECK(none.dims() == std::array<std::int64_t, 2>{0, 2});
}

TEST_CASE("gather along other axes with indices of higher rank", "[ops][gather]") {
  auto p = tf::constant<int32_t>({{1, 2, 3}, {4, 5, 6}});
  auto cols = tf::gather(p, tf::constant<int64_t>({2, 0}), 1);
  CHECK(cols.dims() == std::array<std::int64_t, 2>{2, 2});
  CHECK(cols.numpy() == std::vector<int32_t>{3, 1, 6, 4});
  CHECK(tf::gather(p, tf::constant<int64_t>({2, 0}), -1).numpy() == cols.numpy());

  auto idx = tf::constant<int32_t>({{0, 1}, {1, 1}, {2, 0}});  // (3, 2)
  auto y = tf::gather(p, idx, 1);                              // (2, 3, 2)
  CHECK(y.dims() == std::array<std::int64_t, 3>{2, 3, 2});
  CHECK(y.numpy() == std::vector<int32_t>{1, 2, 2, 2, 3, 1, 4, 5, 5, 5, 6, 4});

  auto cube = tf::constant<double>({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}});  // (2, 2, 2)
  auto mid = tf::gather(cube, tf::constant<int32_t>({1}), 1);              // (2, 1, 2)
  CHECK(mid.dims() == std::array<std::int64_t, 3>{2, 1, 2});
  CHECK(mid.numpy() == std::vector<double>{3, 4, 7, 8});
}

TEST_CASE("gather works for strings, bools and variables", "[ops][gather]") {
  auto words = tf::constant({"zero", "one", "two"});
  CHECK(tf::gather(words, tf::constant<int32_t>({{2}, {0}})).numpy() ==
        std::vector<std::string>{"two", "zero"});
  auto flags = tf::constant<bool>({true, false});
  CHECK(tf::gather(flags, tf::constant<int64_t>({1, 1, 0})).numpy() ==
        std::vector<bool>{false, false, true});
  tf::Variable<float, 2> table(tf::constant<float>({{1, 1}, {2, 2}}));
  CHECK(tf::gather(table, tf::constant<int32_t>({1})).numpy() == std::vector<float>{2, 2});
}

TEST_CASE("gather rejects out-of-range indices and axes", "[ops][gather]") {
  auto p = tf::zeros<float>({3, 2});
  CHECK_THROWS_AS(tf::gather(p, tf::constant<int32_t>({0, 3})), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::gather(p, tf::constant<int32_t>({0, 3})),
                    Catch::Contains("GatherV2") && Catch::Contains("indices[1] = 3") &&
                        Catch::Contains("[0, 3)"));
  CHECK_THROWS_WITH(tf::gather(p, tf::constant<int64_t>({{0, 1}, {-1, 0}})),
                    Catch::Contains("GatherV2") && Catch::Contains("indices[1, 0] = -1"));
  CHECK_THROWS_WITH(tf::gather(p, tf::constant<int32_t>({2}), 1),
                    Catch::Contains("indices[0] = 2"));
  CHECK_THROWS_WITH(tf::gather(p, tf::constant<int32_t>({0}), 2),
                    Catch::Contains("GatherV2") && Catch::Contains("axis"));
  CHECK_THROWS_WITH(tf::gather(p, tf::constant<int32_t>({0}), -3), Catch::Contains("GatherV2"));
}

TEST_CASE("gather gradients match numerical ones", "[ops][gather][gradient]") {
  auto rows = tf::constant<int32_t>({2, 0, 2, 1});
  check_gradients([&](auto const& p) { return tf::gather(p, rows); }, test_data<2>({3, 2}, 1));
  auto idx = tf::constant<int64_t>({{1, 1}, {0, 2}});
  check_gradients([&](auto const& p) { return tf::gather(p, idx, 1) * tf::gather(p, idx, -2); },
                  test_data<3>({3, 3, 2}, 2));
  check_gradients([&](auto const& p) { return tf::gather(p, tf::constant<int32_t>(1), -1); },
                  test_data<2>({2, 3}, 3));
}

TEST_CASE("gather's gradient sums repeated indices and has a second order",
          "[ops][gather][gradient]") {
  auto p = tf::constant<double>({1, 2, 3});
  auto idx = tf::constant<int32_t>({2, 2, 0});
  tf::GradientTape outer;
  outer.watch(p);
  tf::Tensor<double, 1> g;
  {
    tf::GradientTape inner;
    inner.watch(p);
    auto y = tf::gather(p, idx);  // 3, 3, 1
    g = *inner.gradient(tf::reduce_sum(y * y * y), p);
  }
  CHECK(g.numpy() == std::vector<double>{3, 0, 54});  // 3 p^2 per use
  auto gg = outer.gradient(tf::reduce_sum(g), p);
  REQUIRE(gg.has_value());
  CHECK(gg->numpy() == std::vector<double>{6, 0, 36});  // 6 p per use
}

}  // namespace test_ops_gather
