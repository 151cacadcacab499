#include <cmath>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/ops/math/unary.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_unary {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

TEST_CASE("unary values", "[ops][unary]") {
  auto x = tf::constant<float>({-1.5f, 0.0f, 2.0f});
  CHECK(tf::abs(x).numpy() == std::vector<float>{1.5f, 0, 2});
  CHECK(tf::square(x).numpy() == std::vector<float>{2.25f, 0, 4});
  CHECK(tf::nn::relu(x).numpy() == std::vector<float>{0, 0, 2});
  CHECK(tf::sign(x).numpy() == std::vector<float>{-1, 0, 1});
  CHECK(tf::exp(x).numpy()[2] == Approx(std::exp(2.0f)));
  CHECK(tf::sigmoid(x).numpy()[1] == Approx(0.5f));
  CHECK(tf::tanh(x).numpy()[0] == Approx(std::tanh(-1.5f)));
  CHECK(tf::sqrt(tf::constant(4.0)).item() == 2.0);
  CHECK(tf::log(tf::constant(1.0)).item() == 0.0);
  CHECK(tf::abs(tf::constant<std::int32_t>({-3, 3})).numpy() == std::vector<std::int32_t>{3, 3});
  // Large tensors run on the thread pool and must agree with the serial result.
  auto big = tf::range<float>(0, 100000, 1) / 1000.0f;
  auto t = tf::tanh(big);
  CHECK(t.values()[99999] == Approx(std::tanh(99.999f)));
  CHECK(t.values()[1234] == Approx(std::tanh(1.234f)));
}

TEST_CASE("unary gradients", "[ops][unary]") {
  auto x = test_data<2>({2, 3}, 7);
  auto positive = tf::abs(x) + 0.25;
  check_gradients([](const auto& v) { return tf::exp(v); }, x);
  check_gradients([](const auto& v) { return tf::log(v); }, positive);
  check_gradients([](const auto& v) { return tf::sqrt(v); }, positive);
  check_gradients([](const auto& v) { return tf::square(v); }, x);
  check_gradients([](const auto& v) { return tf::abs(v); }, x);
  check_gradients([](const auto& v) { return tf::tanh(v); }, x);
  check_gradients([](const auto& v) { return tf::sigmoid(v); }, x);
  check_gradients([](const auto& v) { return tf::nn::relu(v); }, x);
  check_gradients([](const auto& v) { return -v; }, x);
}

TEST_CASE("relu gradient is one ReluGrad pass", "[ops][unary]") {
  // Values: the incoming gradient where the feature is positive, else 0 (a NaN feature
  // included, as TensorFlow's select gives), over a tensor long enough for the vector loop,
  // its tail and the thread pool.
  std::vector<float> grads(70001);
  std::vector<float> features(grads.size());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    grads[i] = static_cast<float>(i % 7) - 3.0f;
    features[i] = static_cast<float>(i % 5) - 2.0f;
  }
  features[3] = std::nanf("");
  auto g = tf::constant<float, 1>(grads, {70001});
  auto f = tf::constant<float, 1>(features, {70001});
  auto r = tf::detail::execute(tf::ops::ReluGrad{}, g, f);
  for (std::size_t i = 0; i < grads.size(); ++i) {
    REQUIRE(r.values()[i] == (features[i] > 0 ? grads[i] : 0.0f));
  }
  CHECK_THROWS_AS(
      tf::detail::execute(tf::ops::ReluGrad{}, tf::zeros<float>({2}), tf::zeros<float>({3})),
      tf::invalid_argument);
  // The tape records ReluGrad for relu, and ReluGrad's own gradient (second order).
  auto x = test_data<2>({3, 4}, 8);
  tf::GradientTape tape;
  tape.watch(x);
  auto gx = tape.gradient(tf::reduce_sum(tf::nn::relu(x) * x), x);
  for (std::int64_t i = 0; i < x.num_elements(); ++i) {
    double const v = x.values()[i];
    CHECK(gx->values()[i] == Approx(v > 0 ? 2 * v : 0.0));
  }
  check_gradients(
      [](const auto& a, const auto& b) { return tf::detail::execute(tf::ops::ReluGrad{}, a, b); },
      test_data<2>({2, 3}, 9), test_data<2>({2, 3}, 10));
}

}  // namespace test_ops_unary
