#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/ops/reduce/reduce.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_reduce {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

TEST_CASE("reductions over axes with keepdims", "[ops][reduce]") {
  auto x = tf::reshape(tf::range<float>(0, 24, 1), {2, 3, 4});
  CHECK(tf::reduce_sum(x).item() == 276.0f);
  CHECK(tf::reduce_mean(x).item() == 11.5f);
  CHECK(tf::reduce_max(x).item() == 23.0f);
  CHECK(tf::reduce_min(x).item() == 0.0f);
  auto s1 = tf::reduce_sum(x, 1);
  CHECK(s1.shape() == tf::Shape{2, 4});
  CHECK(s1.numpy() == std::vector<float>{12, 15, 18, 21, 48, 51, 54, 57});
  auto s02 = tf::reduce_sum(x, {0, 2});
  CHECK(s02.numpy() == std::vector<float>{60, 92, 124});
  auto keep = tf::reduce_max(x, {-1}, tf::keepdims);
  CHECK(keep.shape() == tf::Shape{2, 3, 1});
  CHECK(keep.numpy() == std::vector<float>{3, 7, 11, 15, 19, 23});
  CHECK(tf::reduce_mean(tf::constant<std::int32_t>({1, 2})).item() == 1);  // integer mean truncates
  CHECK_THROWS_WITH(tf::reduce_sum(x, 3), Catch::Contains("out of range"));
  CHECK_THROWS_WITH((tf::reduce_sum(x, {1, -2})), Catch::Contains("twice"));
  CHECK_THROWS_AS(tf::reduce_max(tf::zeros<float>({0})), tf::invalid_argument);
  auto big = tf::ones<float>({300, 1000});
  CHECK(tf::reduce_sum(big, 1).numpy() == std::vector<float>(300, 1000.0f));
}

TEST_CASE("reduction gradients", "[ops][reduce]") {
  auto x = test_data<3>({2, 3, 2}, 3);
  check_gradients([](const auto& v) { return tf::reduce_sum(v); }, x);
  check_gradients([](const auto& v) { return tf::reduce_mean(v, 1); }, x);
  check_gradients([](const auto& v) { return tf::reduce_sum(v, {0, 2}); }, x);
  check_gradients([](const auto& v) { return tf::reduce_mean(v, {2}, tf::keepdims); }, x);
  check_gradients([](const auto& v) { return tf::reduce_max(v, 2); }, x);
  check_gradients([](const auto& v) { return tf::reduce_min(v, {0, 1}); }, x);
}

TEST_CASE("max gradient splits between ties", "[ops][reduce]") {
  auto x = tf::constant<double>({1, 3, 3});
  tf::GradientTape tape;
  tape.watch(x);
  auto g = tape.gradient(tf::reduce_max(x), x);
  CHECK(g->numpy() == std::vector<double>{0, 0.5, 0.5});
}

TEST_CASE("sums over leading and middle axes", "[ops][reduce]") {
  // The column-sum kernel: vector widths 4, 2 and 1 plus a scalar tail (inner sizes 75 and 33),
  // whole outer slices per thread (outer 3) and one slice split over threads (outer 1).
  auto reference = [](const std::vector<float>& v, std::int64_t outer, std::int64_t red,
                      std::int64_t inner) {
    std::vector<double> out(static_cast<std::size_t>(outer * inner), 0.0);
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t r = 0; r < red; ++r) {
        for (std::int64_t i = 0; i < inner; ++i) {
          out[static_cast<std::size_t>(o * inner + i)] +=
              v[static_cast<std::size_t>((o * red + r) * inner + i)];
        }
      }
    }
    return out;
  };
  auto x = tf::cast<float>(test_data<3>({3, 2001, 75}, 11));
  auto s = tf::reduce_sum(x, 1);
  auto expected = reference(x.numpy(), 3, 2001, 75);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(s.values()[i] == Approx(expected[i]).margin(1e-3));
  }
  auto y = tf::cast<float>(test_data<3>({40, 700, 33}, 12));
  auto t = tf::reduce_sum(y, {0, 1});
  auto m = tf::reduce_mean(y, {0, 1});
  auto expected_t = reference(y.numpy(), 1, 40 * 700, 33);
  for (std::size_t i = 0; i < expected_t.size(); ++i) {
    CHECK(t.values()[i] == Approx(expected_t[i]).margin(1e-2));
    CHECK(m.values()[i] == Approx(expected_t[i] / (40 * 700)).margin(1e-6));
  }
  // Integers sum exactly.
  auto ints = tf::reshape(tf::range<std::int32_t>(0, 3000, 1), {1000, 3});
  CHECK(tf::reduce_sum(ints, 0).numpy() == std::vector<std::int32_t>{1498500, 1499500, 1500500});
}

TEST_CASE("sums of every element add fixed blocks in order", "[ops][reduce]") {
  // Note [Full sums]: 256-element blocks as 16 column sums, short last blocks and rows, run in
  // parallel; the result does not depend on the axes named, only on the elements.
  for (std::int64_t n : {1, 15, 16, 17, 255, 256, 257, 4096, 4099, 100003}) {
    INFO("n = " << n);
    auto x = tf::cast<double>(test_data<1>({n}, 21));
    double exact = 0;
    for (double v : x.numpy()) {
      exact += v;
    }
    auto sum = tf::reduce_sum(x);
    CHECK(sum.item() == Approx(exact).epsilon(1e-12).margin(1e-9));
    CHECK(tf::reduce_mean(x).item() == Approx(exact / static_cast<double>(n)).margin(1e-12));
    CHECK(tf::reduce_sum(tf::ones<float>({n})).item() == static_cast<float>(n));
  }
  auto x = tf::cast<float>(test_data<3>({37, 1, 211}, 22));
  auto all = tf::reduce_sum(tf::reshape(x, {-1}));
  CHECK(tf::reduce_sum(x).item() == all.item());
  CHECK(tf::reduce_sum(x, {0, 2}).item() == all.item());  // the unit axis need not be named
  CHECK(tf::reduce_sum(x, {0, 1, 2}, tf::keepdims).shape() == tf::Shape{1, 1, 1});
  CHECK(tf::reduce_mean(x, {0, 2}).item() == tf::reduce_mean(tf::reshape(x, {-1})).item());
  CHECK(std::isnan(tf::reduce_mean(tf::zeros<float>({0, 3})).item()));
  CHECK(tf::reduce_sum(tf::zeros<float>({0, 3})).item() == 0.0f);
}

TEST_CASE("sums over leading axes add fixed blocks of rows in order", "[ops][reduce]") {
  // Note [Leading-axis sums]: blocks of a multiple of 16 rows (688 for 3 columns, 16 for 960)
  // summed into partial rows, added in block order. A chain's chunks of whole blocks, in any
  // order, give the same bits; empty and one-block inputs need no partials.
  for (std::int64_t inner : {3, 33, 960}) {
    std::int64_t const block_rows = tf::detail::leading_sum_block_rows(inner);
    CHECK(block_rows % 16 == 0);
    for (std::int64_t rows :
         {std::int64_t{1}, block_rows - 1, block_rows, block_rows + 1, 3 * block_rows + 5}) {
      INFO("inner = " << inner << " rows = " << rows);
      auto x = tf::cast<float>(test_data<2>({rows, inner}, 31));
      auto const sum = tf::reduce_sum(x, 0);
      auto const mean = tf::reduce_mean(x, 0);
      std::vector<double> exact(static_cast<std::size_t>(inner), 0.0);
      for (std::size_t i = 0; i < x.values().size(); ++i) {
        exact[i % static_cast<std::size_t>(inner)] += double(x.values()[i]);
      }
      for (std::int64_t k = 0; k < inner; ++k) {
        auto const i = static_cast<std::size_t>(k);
        CHECK(sum.values()[i] == Approx(exact[i]).margin(1e-3));
        CHECK(mean.values()[i] == sum.values()[i] / static_cast<float>(rows));
      }
      // Blocks accumulated in reverse order, two at a time: the op's bits.
      std::int64_t const n = rows * inner;
      std::int64_t const block = block_rows * inner;
      std::vector<float> partials(
          static_cast<std::size_t>(tf::detail::leading_sum_partials(n, inner)));
      std::int64_t const blocks = (rows + block_rows - 1) / block_rows;
      for (std::int64_t b = (blocks - 1) / 2 * 2; b >= 0; b -= 2) {
        std::int64_t const start = b * block;
        tf::detail::leading_sum_accumulate(partials.data(), x.data() + start, start,
                                           std::min(n - start, 2 * block), inner);
      }
      std::vector<float> out(static_cast<std::size_t>(inner));
      tf::detail::leading_sum_finish(out.data(), partials.data(), n, inner);
      CHECK(out == sum.numpy());
    }
  }
  // [N, H, W, C] over N, H and W, as a bias gradient reduces.
  auto y = tf::cast<double>(test_data<4>({3, 7, 5, 4}, 32));
  int const axes[3] = {0, 1, 2};
  CHECK(tf::reduce_sum(y, axes).numpy() ==
        tf::reduce_sum(tf::reshape(y, std::array<std::int64_t, 2>{-1, 4}), 0).numpy());
  CHECK(tf::reduce_sum(tf::zeros<float>({0, 5}), 0).numpy() == std::vector<float>(5, 0.0f));
}

}  // namespace test_ops_reduce
