#include <cmath>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/ops/math/unary.hpp>

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
