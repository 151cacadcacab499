#include <array>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/math/segment.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_segment {

namespace {
namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;
}  // namespace

TEST_CASE("unsorted_segment_sum sums rows into segments", "[ops][segment]") {
  auto data = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}});
  auto y = tf::math::unsorted_segment_sum(data, tf::constant<int32_t>({1, 0, 1}), 2);
  CHECK(y.dims() == std::array<std::int64_t, 2>{2, 2});
  CHECK(y.numpy() == std::vector<float>{3, 4, 6, 8});

  // Empty segments are zero; negative ids are dropped.
  auto z = tf::math::unsorted_segment_sum(tf::constant<int64_t>({1, 2, 3, 4}),
                                          tf::constant<int64_t>({3, -1, 0, 3}), 5);
  CHECK(z.numpy() == std::vector<int64_t>{3, 0, 0, 5, 0});

  // segment_ids of rank 2 over data of rank 3.
  auto d3 = tf::constant<double>({{{1}, {2}}, {{3}, {4}}});  // (2, 2, 1)
  auto ids = tf::constant<int32_t>({{0, 1}, {1, 1}});
  auto s = tf::math::unsorted_segment_sum(d3, ids, 3);
  CHECK(s.dims() == std::array<std::int64_t, 2>{3, 1});
  CHECK(s.numpy() == std::vector<double>{1, 9, 0});

  // Ids covering the whole data shape give a vector.
  auto v = tf::math::unsorted_segment_sum(tf::constant<int32_t>({{1, 2}, {3, 4}}),
                                          tf::constant<int32_t>({{0, 1}, {1, 0}}), 2);
  CHECK(v.numpy() == std::vector<int32_t>{5, 5});

  auto empty = tf::math::unsorted_segment_sum(tf::zeros<float>({0, 3}), tf::zeros<int32_t>({0}), 2);
  CHECK(empty.numpy() == std::vector<float>{0, 0, 0, 0, 0, 0});
  tf::Variable<float, 1> var(tf::constant<float>({1, 2}));
  CHECK(tf::math::unsorted_segment_sum(var, tf::constant<int32_t>({0, 0}), 1).numpy() ==
        std::vector<float>{3});
}

TEST_CASE("unsorted_segment_sum rejects bad ids and shapes", "[ops][segment]") {
  auto data = tf::zeros<float>({3, 2});
  CHECK_THROWS_AS(tf::math::unsorted_segment_sum(data, tf::constant<int32_t>({0, 2, 1}), 2),
                  tf::invalid_argument);
  CHECK_THROWS_WITH(tf::math::unsorted_segment_sum(data, tf::constant<int32_t>({0, 2, 1}), 2),
                    Catch::Contains("UnsortedSegmentSum") && Catch::Contains("segment_ids[1] = 2"));
  CHECK_THROWS_WITH(tf::math::unsorted_segment_sum(data, tf::constant<int32_t>({0, 1}), 2),
                    Catch::Contains("UnsortedSegmentSum") && Catch::Contains("(2,)") &&
                        Catch::Contains("(3, 2)"));
  CHECK_THROWS_WITH(tf::math::unsorted_segment_sum(data, tf::constant<int32_t>({0, 0, 0}), -1),
                    Catch::Contains("UnsortedSegmentSum") && Catch::Contains("num_segments"));
}

TEST_CASE("unsorted_segment_sum gradients match numerical ones", "[ops][segment][gradient]") {
  auto ids = tf::constant<int32_t>({1, -1, 1, 0});
  check_gradients([&](auto const& d) { return tf::math::unsorted_segment_sum(d, ids, 3); },
                  test_data<2>({4, 2}, 1));
  auto ids2 = tf::constant<int64_t>({{2, 0}, {0, 1}});
  check_gradients(
      [&](auto const& d) {
        auto s = tf::math::unsorted_segment_sum(d, ids2, 3);
        return s * s;
      },
      test_data<3>({2, 2, 3}, 2));
}

TEST_CASE("unsorted_segment_sum has a second-order gradient", "[ops][segment][gradient]") {
  auto d = tf::constant<double>({1, 2, 3});
  auto ids = tf::constant<int32_t>({0, 0, -1});
  tf::GradientTape outer;
  outer.watch(d);
  tf::Tensor<double, 1> g;
  {
    tf::GradientTape inner;
    inner.watch(d);
    auto s = tf::math::unsorted_segment_sum(d, ids, 1);  // [3]
    g = *inner.gradient(tf::reduce_sum(s * s * s), d);   // 3 s^2 for each member, 0 for dropped
  }
  CHECK(g.numpy() == std::vector<double>{27, 27, 0});
  auto gg = outer.gradient(tf::reduce_sum(g), d);  // d/dd (2 * 3 s^2) = 12 s per member
  REQUIRE(gg.has_value());
  CHECK(gg->numpy() == std::vector<double>{36, 36, 0});
}

}  // namespace test_ops_segment
