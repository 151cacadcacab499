#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/nn/softmax.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_nn_softmax {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

namespace {
// Naive softmax of `v` along the middle axis of [outer, n, inner].
std::vector<double> reference_softmax(std::vector<double> const& v, std::int64_t outer,
                                      std::int64_t n, std::int64_t inner, bool log) {
  std::vector<double> out(v.size());
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      auto at = [&](std::int64_t j) { return static_cast<std::size_t>((o * n + j) * inner + i); };
      double m = -INFINITY;
      for (std::int64_t j = 0; j < n; ++j) {
        m = std::max(m, v[at(j)]);
      }
      double s = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        s += std::exp(v[at(j)] - m);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        out[at(j)] = log ? v[at(j)] - m - std::log(s) : std::exp(v[at(j)] - m) / s;
      }
    }
  }
  return out;
}

void check_close(std::vector<double> const& a, std::vector<double> const& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i] == Approx(b[i]).margin(1e-12));
  }
}
}  // namespace

TEST_CASE("softmax values", "[ops][nn][softmax]") {
  auto p = tf::nn::softmax(tf::constant<float>({{1, 2, 3}, {0, 0, 0}}));
  CHECK(p(0, 0) == Approx(0.09003057f));
  CHECK(p(0, 1) == Approx(0.24472847f));
  CHECK(p(0, 2) == Approx(0.66524096f));
  CHECK(p(1, 1) == Approx(1.0f / 3));
  auto lp = tf::nn::log_softmax(tf::constant<float>({1, 2, 3}));
  CHECK(lp(2) == Approx(std::log(0.66524096f)));
}

TEST_CASE("softmax is numerically stable", "[ops][nn][softmax]") {
  auto p = tf::nn::softmax(tf::constant<float>({1000, 1001, -1000}));
  CHECK(p(0) == Approx(0.26894142f));
  CHECK(p(1) == Approx(0.73105858f));
  CHECK(p(2) == 0.0f);
  auto lp = tf::nn::log_softmax(tf::constant<float>({1000, 1001, -1000}));
  CHECK(std::isfinite(lp(2)));
  CHECK(lp(2) == Approx(-2001.31326f));
  CHECK(lp(0) == Approx(-1.31326169f));
}

TEST_CASE("softmax along any axis matches a naive reference", "[ops][nn][softmax]") {
  auto x = test_data<3>({3, 4, 5}, 3) * 4.0;
  auto v = x.numpy();
  check_close(tf::nn::softmax(x).numpy(), reference_softmax(v, 12, 5, 1, false));
  check_close(tf::nn::softmax(x, 1).numpy(), reference_softmax(v, 3, 4, 5, false));
  check_close(tf::nn::softmax(x, -3).numpy(), reference_softmax(v, 1, 3, 20, false));
  check_close(tf::nn::log_softmax(x, -1).numpy(), reference_softmax(v, 12, 5, 1, true));
  check_close(tf::nn::log_softmax(x, 1).numpy(), reference_softmax(v, 3, 4, 5, true));
  check_close(tf::nn::log_softmax(x, 0).numpy(), reference_softmax(v, 1, 3, 20, true));
}

TEST_CASE("softmax on large tensors runs in parallel and sums to one", "[ops][nn][softmax]") {
  auto x = tf::cast<float>(test_data<2>({2000, 100}, 5) * 10.0);
  auto p = tf::nn::softmax(x);
  auto sums = tf::reduce_sum(p, 1);
  for (float s : sums.values()) {
    CHECK(s == Approx(1.0f).epsilon(1e-5));
  }
  auto col = tf::nn::softmax(x, 0);
  auto col_sums = tf::reduce_sum(col, 0);
  for (float s : col_sums.values()) {
    CHECK(s == Approx(1.0f).epsilon(1e-4));
  }
}

TEST_CASE("softmax gradients", "[ops][nn][softmax]") {
  auto x = test_data<2>({3, 4}, 11);
  check_gradients([](auto const& v) { return tf::nn::softmax(v); }, x);
  check_gradients([](auto const& v) { return tf::nn::softmax(v, 0); }, x);
  check_gradients([](auto const& v) { return tf::nn::log_softmax(v); }, x);
  check_gradients([](auto const& v) { return tf::nn::log_softmax(v, 0); }, x);
  auto x3 = test_data<3>({2, 3, 2}, 12);
  check_gradients([](auto const& v) { return tf::nn::softmax(v, 1); }, x3);
  check_gradients([](auto const& v) { return tf::nn::log_softmax(v, 1); }, x3);
}

TEST_CASE("softmax second-order gradients", "[ops][nn][softmax]") {
  // The gradient is written in ops, so it is itself differentiable.
  auto x = test_data<2>({2, 3}, 13);
  check_gradients(
      [](auto const& v) {
        tf::GradientTape inner;
        inner.watch(v);
        auto y = tf::reduce_sum(tf::square(tf::nn::softmax(v)));
        return *inner.gradient(y, v);
      },
      x);
  check_gradients(
      [](auto const& v) {
        tf::GradientTape inner;
        inner.watch(v);
        auto y = tf::reduce_sum(tf::square(tf::nn::log_softmax(v)));
        return *inner.gradient(y, v);
      },
      x);
}

TEST_CASE("softmax errors", "[ops][nn][softmax]") {
  auto x = tf::constant<float>({{1, 2}, {3, 4}});
  CHECK_THROWS_AS(tf::nn::softmax(x, 2), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::nn::softmax(x, -3),
                    Catch::Contains("Softmax") && Catch::Contains("(2, 2)"));
  CHECK_THROWS_WITH(tf::nn::log_softmax(x, 5), Catch::Contains("LogSoftmax"));
}

}  // namespace test_ops_nn_softmax
