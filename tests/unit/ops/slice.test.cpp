#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_slice {

namespace {
namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;
}  // namespace

TEST_CASE("slice takes a box, size -1 meaning to the end", "[ops][slice]") {
  auto x = tf::constant<int32_t>({{1, 2, 3}, {4, 5, 6}});
  auto y = tf::slice(x, {0, 1}, {2, -1});
  CHECK(y.dims() == std::array<std::int64_t, 2>{2, 2});
  CHECK(y.numpy() == std::vector<int32_t>{2, 3, 5, 6});
  CHECK(tf::slice(x, {1, 0}, {1, 3}).numpy() == std::vector<int32_t>{4, 5, 6});
  CHECK(tf::slice(x, {0, 0}, {-1, -1}).numpy() == x.numpy());
  auto empty = tf::slice(x, {2, 3}, {0, 0});
  CHECK(empty.dims() == std::array<std::int64_t, 2>{0, 0});

  auto cube = tf::constant<float>({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}, {{9, 10}, {11, 12}}});
  auto c = tf::slice(cube, {1, 0, 1}, {2, 2, 1});
  CHECK(c.dims() == std::array<std::int64_t, 3>{2, 2, 1});
  CHECK(c.numpy() == std::vector<float>{6, 8, 10, 12});
  auto rows = tf::slice(cube, {1, 0, 0}, {1, -1, -1});  // merged into one contiguous run
  CHECK(rows.numpy() == std::vector<float>{5, 6, 7, 8});
}

TEST_CASE("slice works for string, bool, double, rank 1 and variables", "[ops][slice]") {
  auto s = tf::constant({"a", "b", "c", "d"});
  CHECK(tf::slice(s, {1}, {2}).numpy() == std::vector<std::string>{"b", "c"});
  auto b = tf::constant<bool>({{true, false}, {false, true}});
  CHECK(tf::slice(b, {1, 0}, {1, 2}).numpy() == std::vector<bool>{false, true});
  tf::Variable<double, 1> v(tf::constant<double>({1, 2, 3}));
  CHECK(tf::slice(v, {2}, {-1}).numpy() == std::vector<double>{3});
  CHECK(tf::slice(tf::constant(5.0f), std::array<std::int64_t, 0>{}, std::array<std::int64_t, 0>{})
            .item() == 5.0f);
}

TEST_CASE("slice rejects boxes outside the tensor", "[ops][slice]") {
  auto x = tf::zeros<float>({2, 3});
  CHECK_THROWS_AS(tf::slice(x, {0, 0}, {3, 1}), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::slice(x, {0, 0}, {3, 1}),
                    Catch::Contains("Slice") && Catch::Contains("(2, 3)"));
  CHECK_THROWS_WITH(tf::slice(x, {-1, 0}, {1, 1}),
                    Catch::Contains("Slice") && Catch::Contains("begin[0]"));
  CHECK_THROWS_WITH(tf::slice(x, {0, 4}, {1, -1}), Catch::Contains("Slice"));
  CHECK_THROWS_WITH(tf::slice(x, {0, 2}, {1, 2}), Catch::Contains("size[1]"));
  CHECK_THROWS_WITH(tf::slice(x, {0, 0}, {-2, 1}), Catch::Contains("Slice"));
}

TEST_CASE("slice gradients match numerical ones", "[ops][slice][gradient]") {
  check_gradients(
      [](const auto& x) {
        return tf::slice(x, {1, 0}, {2, -1});
      },
      test_data<2>({3, 4}, 1));
  check_gradients(
      [](const auto& x) {
        return tf::slice(x, {0, 1, 1}, {-1, 1, 2}) * tf::slice(x, {1, 0, 0}, {1, 1, 2});
      },
      test_data<3>({2, 3, 3}, 2));
}

TEST_CASE("slice has a second-order gradient (through Pad)", "[ops][slice][gradient]") {
  auto x = tf::constant<double>({1, 2, 3, 4});
  tf::GradientTape outer;
  outer.watch(x);
  tf::Tensor<double, 1> g;
  {
    tf::GradientTape inner;
    inner.watch(x);
    auto part = tf::slice(x, {1}, {2});
    auto y = tf::reduce_sum(part * part * part);
    g = *inner.gradient(y, x);  // 3 x^2 on the slice, 0 elsewhere
  }
  CHECK(g.numpy() == std::vector<double>{0, 12, 27, 0});
  auto gg = outer.gradient(tf::reduce_sum(g), x);
  REQUIRE(gg.has_value());
  CHECK(gg->numpy() == std::vector<double>{0, 12, 18, 0});
}

TEST_CASE("strided_slice follows Python slicing", "[ops][slice][strided_slice]") {
  auto v = tf::constant<int32_t>({0, 1, 2, 3, 4, 5});
  CHECK(tf::strided_slice(v, {1}, {5}, {2}).numpy() == std::vector<int32_t>{1, 3});
  CHECK(tf::strided_slice(v, {1}, {6}, {2}).numpy() == std::vector<int32_t>{1, 3, 5});
  CHECK(tf::strided_slice(v, {-2}, {100}).numpy() == std::vector<int32_t>{4, 5});
  CHECK(tf::strided_slice(v, {-1}, {0}, {-1}).numpy() == std::vector<int32_t>{5, 4, 3, 2, 1});
  CHECK(tf::strided_slice(v, {-1}, {0}, {-1}, {.end_mask = 1}).numpy() ==
        std::vector<int32_t>{5, 4, 3, 2, 1, 0});
  CHECK(tf::strided_slice(v, {4}, {0}, {-2}).numpy() == std::vector<int32_t>{4, 2});
  CHECK(tf::strided_slice(v, {3}, {1}).numpy().empty());
  CHECK(tf::strided_slice(v, {0}, {0}, {3}, {.begin_mask = 1, .end_mask = 1}).numpy() ==
        std::vector<int32_t>{0, 3});

  auto m = tf::constant<std::string>({{"a", "b", "c"}, {"d", "e", "f"}, {"g", "h", "i"}});
  auto r = tf::strided_slice(m, {0, -1}, {3, -4}, {2, -1});
  CHECK(r.dims() == std::array<std::int64_t, 2>{2, 3});
  CHECK(r.numpy() == std::vector<std::string>{"c", "b", "a", "i", "h", "g"});
}

TEST_CASE("strided_slice rejects a zero stride", "[ops][slice][strided_slice]") {
  auto v = tf::zeros<float>({4, 2});
  CHECK_THROWS_AS(tf::strided_slice(v, {0, 0}, {4, 2}, {1, 0}), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::strided_slice(v, {0, 0}, {4, 2}, {1, 0}),
                    Catch::Contains("StridedSlice") && Catch::Contains("strides[1]"));
}

TEST_CASE("strided_slice gradients match numerical ones, to second order",
          "[ops][slice][strided_slice][gradient]") {
  check_gradients(
      [](const auto& x) {
        return tf::strided_slice(x, {3, 0}, {0, 4}, {-2, 3});
      },
      test_data<2>({4, 5}, 3));
  check_gradients(
      [](const auto& x) {
        auto s = tf::strided_slice(x, {0, 1}, {4, 5}, {1, 2});
        return s * s;
      },
      test_data<2>({4, 5}, 4));

  auto x = tf::constant<double>({1, 2, 3, 4, 5});
  tf::GradientTape outer;
  outer.watch(x);
  tf::Tensor<double, 1> g;
  {
    tf::GradientTape inner;
    inner.watch(x);
    auto s = tf::strided_slice(x, {0}, {5}, {2});  // 1, 3, 5
    g = *inner.gradient(tf::reduce_sum(s * s * s), x);
  }
  CHECK(g.numpy() == std::vector<double>{3, 0, 27, 0, 75});
  auto gg = outer.gradient(tf::reduce_sum(g), x);
  REQUIRE(gg.has_value());
  CHECK(gg->numpy() == std::vector<double>{6, 0, 18, 0, 30});
}

TEST_CASE("strided slices with steps on several axes match an index loop", "[ops][slice]") {
  // Rows of one axis (a fixed step per row) and rows of several axes take different loops.
  std::vector<float> values(4 * 5 * 6);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = float(i);
  }
  auto x = tf::from_vector<float, 3>(values, {4, 5, 6});
  auto y = tf::strided_slice(x, {3, 0, 5}, {0, 5, 0}, {-2, 2, -3});
  REQUIRE(y.dims() == std::array<std::int64_t, 3>{2, 3, 2});
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) {
      for (std::int64_t k = 0; k < 2; ++k) {
        CHECK(y(i, j, k) == float((3 - 2 * i) * 30 + 2 * j * 6 + (5 - 3 * k)));
      }
    }
  }
  auto m =
      tf::from_vector<float, 2>(std::vector<float>(values.begin(), values.begin() + 24), {4, 6});
  auto rows = tf::strided_slice(m, {3, 0}, {0, 6}, {-2, 1});  // whole rows, backwards
  CHECK(rows.numpy() == std::vector<float>{18, 19, 20, 21, 22, 23, 6, 7, 8, 9, 10, 11});
  auto cells = tf::strided_slice(m, {3, 4}, {0, 0}, {-1, -2});
  CHECK(cells.numpy() == std::vector<float>{22, 20, 16, 14, 10, 8});
  auto column = tf::slice(m, {1, 2}, {3, 1});
  CHECK(column.numpy() == std::vector<float>{8, 14, 20});
}

}  // namespace test_ops_slice
