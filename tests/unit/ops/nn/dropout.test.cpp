#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/nn/dropout.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_nn_dropout {

namespace tf = tapeflow;

TEST_CASE("dropout zeroes about rate of the elements and scales the rest", "[ops][nn][dropout]") {
  auto x = tf::ones<float>({100000});
  auto y = tf::nn::dropout(x, 0.3, {.seed = 11});
  std::int64_t kept = 0;
  for (float v : y.values()) {
    if (v != 0.0f) {
      CHECK(v == Approx(1.0f / 0.7f));
      ++kept;
    }
  }
  // Binomial(1e5, 0.7): standard deviation 0.00145; 5 of them (it failed once at 3.5, unseeded).
  CHECK(static_cast<double>(kept) / 100000.0 == Approx(0.7).margin(0.0075));
  // The expected value is unchanged.
  CHECK(tf::reduce_mean(y).item() == Approx(1.0f).margin(0.01));
}

TEST_CASE("dropout gradient reuses the forward mask", "[ops][nn][dropout]") {
  auto x = tf::constant<double>({{1, -2, 3, 4}, {5, 6, -7, 8}});
  tf::GradientTape tape;
  tape.watch(x);
  auto y = tf::nn::dropout(x, 0.5, {.seed = 3});
  auto w = tf::constant<double>({{1, 2, 3, 4}, {5, 6, 7, 8}});
  auto g = tape.gradient(tf::reduce_sum(y * w), x);
  REQUIRE(g.has_value());
  for (std::int64_t i = 0; i < 8; ++i) {
    double const yi = y.values()[i];
    double const expected = yi == 0.0 ? 0.0 : 2.0 * w.values()[i];  // mask / (1 - rate)
    CHECK(g->values()[i] == Approx(expected));
    CHECK((yi == 0.0 || yi == Approx(2.0 * x.values()[i])));
  }
}

TEST_CASE("dropout seeds and noise_shape", "[ops][nn][dropout]") {
  auto x = tf::ones<float>({4, 3, 3, 5});
  tf::random::set_seed(9);
  auto a = tf::nn::dropout(x, 0.5, {.seed = 1});
  auto b = tf::nn::dropout(x, 0.5, {.seed = 1});
  CHECK(a.numpy() != b.numpy());
  tf::random::set_seed(9);
  CHECK(tf::nn::dropout(x, 0.5, {.seed = 1}).numpy() == a.numpy());
  // One decision per (image, channel): whole feature maps drop together.
  auto c = tf::nn::dropout(x, 0.5, {.noise_shape = {4, 1, 1, 5}});
  for (std::int64_t n = 0; n < 4; ++n) {
    for (std::int64_t ch = 0; ch < 5; ++ch) {
      float const first = c(n, 0, 0, ch);
      for (std::int64_t i = 0; i < 3; ++i) {
        for (std::int64_t j = 0; j < 3; ++j) {
          CHECK(c(n, i, j, ch) == first);
        }
      }
    }
  }
  // rate 0 keeps everything.
  CHECK(tf::nn::dropout(x, 0.0).numpy() == x.numpy());
}

TEST_CASE("dropout errors", "[ops][nn][dropout]") {
  auto x = tf::ones<float>({2, 3});
  CHECK_THROWS_AS(tf::nn::dropout(x, 1.0), tf::invalid_argument);
  CHECK_THROWS_AS(tf::nn::dropout(x, -0.1), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::nn::dropout(x, 1.5), Catch::Contains("dropout") && Catch::Contains("rate"));
  CHECK_THROWS_AS(tf::nn::dropout(x, std::nan("")), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::nn::dropout(x, 0.5, {.noise_shape = {2, 2}}),
                    Catch::Contains("noise_shape (2, 2)") && Catch::Contains("(2, 3)"));
  CHECK_THROWS_AS(tf::nn::dropout(x, 0.5, {.noise_shape = {2}}), tf::invalid_argument);
}

}  // namespace test_ops_nn_dropout
