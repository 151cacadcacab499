#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/nn/cross_entropy.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_nn_cross_entropy {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

namespace {
double reference_loss(std::vector<double> const& row, std::int64_t label) {
  double m = -INFINITY;
  for (double v : row) {
    m = std::max(m, v);
  }
  double s = 0;
  for (double v : row) {
    s += std::exp(v - m);
  }
  return m + std::log(s) - row[static_cast<std::size_t>(label)];
}
}  // namespace

TEST_CASE("sparse softmax cross-entropy values", "[ops][nn][cross_entropy]") {
  auto logits = tf::constant<float>({{2, 1, 0.1f}, {0.5f, 2.5f, 0.3f}});
  auto labels = tf::constant<std::int32_t>({0, 1});
  auto loss = tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits);
  REQUIRE(loss.dims() == std::array<std::int64_t, 1>{2});
  CHECK(loss(0) == Approx(0.4170299f));
  CHECK(loss(1) == Approx(reference_loss({0.5, 2.5, 0.3}, 1)));
  // int64 labels, float64 logits, and large logits stay finite.
  auto big = tf::constant<double>({{1000, -1000, 0}});
  auto l64 = tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant<std::int64_t>({1}), big);
  CHECK(l64(0) == Approx(2000.0));
  // Higher rank: labels [2, 2], logits [2, 2, 3].
  auto x = test_data<3>({2, 2, 3}, 4) * 3.0;
  auto lab = tf::constant<std::int64_t>({{0, 2}, {1, 1}});
  auto l3 = tf::nn::sparse_softmax_cross_entropy_with_logits(lab, x);
  auto v = x.numpy();
  std::vector<std::int64_t> const ls{0, 2, 1, 1};
  for (std::size_t r = 0; r < 4; ++r) {
    std::vector<double> row(v.begin() + static_cast<std::ptrdiff_t>(3 * r),
                            v.begin() + static_cast<std::ptrdiff_t>(3 * r + 3));
    CHECK(l3.values()[r] == Approx(reference_loss(row, ls[r])));
  }
}

TEST_CASE("sparse softmax cross-entropy gradient", "[ops][nn][cross_entropy]") {
  auto labels = tf::constant<std::int32_t>({0, 2, 1});
  auto logits = test_data<2>({3, 4}, 21) * 2.0;
  check_gradients(
      [&](auto const& x) { return tf::nn::sparse_softmax_cross_entropy_with_logits(labels, x); },
      logits);
  // Against the closed form: softmax - one_hot, scaled by dloss.
  tf::GradientTape tape;
  tape.watch(logits);
  auto loss = tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits);
  auto g = tape.gradient(tf::reduce_sum(loss * tf::constant<double>({1, 2, 3})), logits);
  REQUIRE(g.has_value());
  auto p = tf::nn::softmax(logits);
  for (std::int64_t r = 0; r < 3; ++r) {
    for (std::int64_t c = 0; c < 4; ++c) {
      double const expected = (p(r, c) - (c == labels(r) ? 1.0 : 0.0)) * static_cast<double>(r + 1);
      CHECK((*g)(r, c) == Approx(expected));
    }
  }
  // Second order: the gradient is made of ops, so the tape differentiates it again.
  check_gradients(
      [&](auto const& x) {
        tf::GradientTape inner;
        inner.watch(x);
        auto l = tf::reduce_sum(tf::nn::sparse_softmax_cross_entropy_with_logits(labels, x));
        return *inner.gradient(l, x);
      },
      logits);
}

TEST_CASE("sparse softmax cross-entropy errors", "[ops][nn][cross_entropy]") {
  auto logits = tf::constant<float>({{1, 2, 3}, {4, 5, 6}});
  CHECK_THROWS_AS(
      tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant<std::int32_t>({0, 3}), logits),
      tf::invalid_argument);
  CHECK_THROWS_WITH(
      tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant<std::int32_t>({0, 7}), logits),
      Catch::Contains("SparseSoftmaxCrossEntropyWithLogits") &&
          Catch::Contains("label value of 7") && Catch::Contains("[0, 3)"));
  CHECK_THROWS_WITH(
      tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant<std::int64_t>({-1, 0}), logits),
      Catch::Contains("-1"));
  CHECK_THROWS_WITH(tf::nn::sparse_softmax_cross_entropy_with_logits(
                        tf::constant<std::int32_t>({0, 1, 2}), logits),
                    Catch::Contains("SparseSoftmaxCrossEntropyWithLogits") &&
                        Catch::Contains("(3,)") && Catch::Contains("(2, 3)"));
}

TEST_CASE("softmax cross-entropy with probability labels", "[ops][nn][cross_entropy]") {
  auto logits = tf::constant<float>({{2, 1, 0.1f}, {0.5f, 2.5f, 0.3f}});
  auto labels = tf::constant<float>({{1, 0, 0}, {0.2f, 0.5f, 0.3f}});
  auto loss = tf::nn::softmax_cross_entropy_with_logits(labels, logits);
  CHECK(loss(0) == Approx(0.4170299f));
  auto lp = tf::nn::log_softmax(logits);
  CHECK(loss(1) == Approx(-(0.2f * lp(1, 0) + 0.5f * lp(1, 1) + 0.3f * lp(1, 2))));
  // Matches the sparse form for one-hot labels.
  auto sparse =
      tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant<std::int32_t>({0, 1}), logits);
  auto dense = tf::nn::softmax_cross_entropy_with_logits(
      tf::one_hot(tf::constant<std::int32_t>({0, 1}), 3), logits);
  CHECK(dense(0) == Approx(sparse(0)));
  CHECK(dense(1) == Approx(sparse(1)));
  // A zero label never multiplies an underflowed -inf log-probability.
  auto extreme = tf::nn::softmax_cross_entropy_with_logits(tf::constant<float>({{1, 0}}),
                                                           tf::constant<float>({{0, -1e30f}}));
  CHECK(extreme(0) == 0.0f);
}

TEST_CASE("softmax cross-entropy gradients", "[ops][nn][cross_entropy]") {
  auto logits = test_data<2>({3, 4}, 31) * 2.0;
  auto labels = tf::abs(test_data<2>({3, 4}, 32));  // not normalised: the general formula
  check_gradients(
      [](auto const& p, auto const& x) { return tf::nn::softmax_cross_entropy_with_logits(p, x); },
      labels, logits);
  check_gradients(
      [](auto const& p, auto const& x) {
        tf::GradientTape inner;
        inner.watch(x);
        auto l = tf::reduce_sum(tf::nn::softmax_cross_entropy_with_logits(p, x));
        return *inner.gradient(l, x);
      },
      labels, logits);
}

TEST_CASE("softmax cross-entropy errors", "[ops][nn][cross_entropy]") {
  auto logits = tf::constant<float>({{1, 2, 3}, {4, 5, 6}});
  CHECK_THROWS_WITH(
      tf::nn::softmax_cross_entropy_with_logits(tf::constant<float>({{1, 0}, {0, 1}}), logits),
      Catch::Contains("SoftmaxCrossEntropyWithLogits") && Catch::Contains("(2, 2)") &&
          Catch::Contains("(2, 3)"));
  CHECK_THROWS_AS(
      tf::nn::softmax_cross_entropy_with_logits(tf::constant<float>({{1, 0}, {0, 1}}), logits),
      tf::invalid_argument);
}

}  // namespace test_ops_nn_cross_entropy
