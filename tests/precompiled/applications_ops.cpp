// Linked with tapeflow::instantiations: the extern declarations of the tf.keras.applications ops
// (DepthwiseConv2dNative, FusedBatchNormV3, Relu6) must match the library's definitions, or this
// fails to link. It prints the gradient norms of a depthwise block; the test compares them with
// the same program's values computed in double, which no precompiled specialization covers.
#include <array>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <span>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

// Deterministic values in [-1, 1), the same in every dtype.
template <class T>
tf::Tensor<T, 4> wave(std::array<std::int64_t, 4> const& dims, double phase) {
  std::vector<T> v(static_cast<std::size_t>(dims[0] * dims[1] * dims[2] * dims[3]));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<T>(std::sin(0.7 * static_cast<double>(i) + phase));
  }
  return tf::constant<T, 4>(std::span<T const>(v), dims);
}

template <class T>
double block_gradient_norm() {
  auto x = wave<T>({2, 6, 6, 8}, 0.0);
  auto w = wave<T>({3, 3, 8, 1}, 1.0);
  auto ones = tf::ones<T>({8});
  auto zeros = tf::zeros<T>({8});
  tf::GradientTape tape;
  tape.watch(x);
  tape.watch(w);
  auto y = tf::nn::depthwise_conv2d(x, w, {.strides = 2, .padding = "SAME"});
  y = tf::nn::fused_batch_norm(y, ones, zeros, zeros, ones, {.is_training = true});
  auto loss = tf::reduce_sum(tf::nn::relu6(y * T(4)));
  auto [dx, dw] = tape.gradient(loss, x, w);
  return std::sqrt(
      static_cast<double>(tf::reduce_sum(*dx * *dx).item() + tf::reduce_sum(*dw * *dw).item()));
}

int main() {
  double const f = block_gradient_norm<float>();
  double const d = block_gradient_norm<double>();
  std::cout << "float " << f << " double " << d << "\n";
  bool const agree = std::abs(f - d) <= 1e-4 * std::abs(d) && d > 0;
  std::cout << (agree ? "agree" : "DISAGREE") << "\n";
  return agree ? 0 : 1;
}
