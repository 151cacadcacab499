#include <array>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/nn/relu6.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_nn_relu6 {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

TEST_CASE("relu6 clamps to [0, 6]", "[ops][nn][relu6]") {
  auto x = tf::constant<float>({-3.0f, -0.0f, 0.0f, 2.5f, 6.0f, 6.5f, 100.0f});
  CHECK(tf::nn::relu6(x).numpy() == std::vector<float>{0, 0, 0, 2.5f, 6, 6, 6});
  // Long enough for the vector loop and its scalar tail, float and double.
  auto big = test_data<1>({1003}, 3) * 9.0;
  auto y = tf::nn::relu6(big);
  auto yf = tf::nn::relu6(tf::cast<float>(big));
  for (std::size_t i = 0; i < 1003; ++i) {
    double const v = big.values()[i];
    double const want = v < 0 ? 0 : (v > 6 ? 6 : v);
    CHECK(y.values()[i] == want);
    CHECK(yf.values()[i] == static_cast<float>(want));
  }
}

TEST_CASE("relu6 gradients (first and second order)", "[ops][nn][relu6]") {
  // Values in [-9, 9), none within the finite-difference step of 0 or 6.
  auto x = test_data<2>({4, 5}, 11) * 9.0;
  check_gradients([](auto const& v) { return tf::nn::relu6(v); }, x);
  // At the kinks the gradient is 0, as TensorFlow's Relu6Grad (0 < y < 6 strictly).
  auto k = tf::constant<double>({-1.0, 0.0, 3.0, 6.0, 8.0});
  tf::GradientTape tape;
  tape.watch(k);
  auto g = tape.gradient(tf::reduce_sum(tf::nn::relu6(k) * 2.0), k);
  CHECK(g->numpy() == std::vector<double>{0, 0, 2, 0, 0});
  // Relu6Grad is linear in its gradient input: the second-order gradient through it.
  check_gradients(
      [](auto const& v) {
        tf::GradientTape inner;
        inner.watch(v);
        auto y = tf::nn::relu6(v);
        return *inner.gradient(tf::reduce_sum(y * y * v), v);
      },
      x);
}

}  // namespace test_ops_nn_relu6
