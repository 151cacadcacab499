// Writes inputs, outputs and tape gradients of tapeflow ops to a text file, which
// check_ops.py recomputes with Python TensorFlow (the interop test interop/ops_match_tensorflow).
// Line format: <case> <tensor-name> <dtype> <rank> <dims...> <values...>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <string>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

template <class T, std::size_t R>
void dump(std::ostream& out, std::string const& name, std::string const& tensor,
          tf::Tensor<T, R> const& t) {
  out << name << ' ' << tensor << ' ' << tf::dtype_name(t.dtype()) << ' ' << R;
  for (auto d : t.dims()) {
    out << ' ' << d;
  }
  out << std::setprecision(9);
  for (auto v : t.values()) {
    out << ' ' << v;
  }
  out << '\n';
}

template <std::size_t R>
tf::Tensor<float, R> data(std::array<std::int64_t, R> dims, std::uint32_t seed) {
  return tf::random::uniform<float>(dims, {.minval = -1.0f, .maxval = 1.0f, .seed = seed});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: ops_dump <output.txt>\n";
    return 2;
  }
  std::ofstream out(argv[1]);
  {
    auto a = data<2>({3, 4}, 1);
    auto b = data<2>({4, 5}, 2);
    tf::GradientTape tape;
    tape.watch(a);
    tape.watch(b);
    auto y = tf::matmul(a, b);
    auto [da, db] = tape.gradient(tf::reduce_sum(tf::square(y)), a, b);
    dump(out, "matmul", "a", a);
    dump(out, "matmul", "b", b);
    dump(out, "matmul", "y", y);
    dump(out, "matmul", "da", *da);
    dump(out, "matmul", "db", *db);
  }
  {
    auto x = data<4>({2, 7, 6, 3}, 3);
    auto w = data<4>({3, 3, 3, 4}, 4);
    tf::GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    auto y = tf::nn::conv2d(x, w, {.strides = 2, .padding = tf::nn::Padding::same});
    auto [dx, dw] = tape.gradient(tf::reduce_sum(tf::square(y)), x, w);
    dump(out, "conv2d_same_s2", "x", x);
    dump(out, "conv2d_same_s2", "w", w);
    dump(out, "conv2d_same_s2", "y", y);
    dump(out, "conv2d_same_s2", "dx", *dx);
    dump(out, "conv2d_same_s2", "dw", *dw);
  }
  {
    // The MNIST CNN's block at stride 1 with 32 channels: conv (indirect kernel), the input
    // gradient as a rotated-filter convolution, the filter gradient read in place, bias
    // gradient (column sums), ReluGrad and max pooling's write-once gradient.
    // Scaled so values stay O(1): the check's absolute tolerance is 1e-5.
    auto x = data<4>({3, 9, 8, 32}, 11) * 0.25f;
    auto w = data<4>({5, 5, 32, 36}, 12) * 0.25f;
    auto b = data<1>({36}, 13) * 0.25f;
    tf::GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    tape.watch(b);
    auto y = tf::nn::relu(tf::nn::conv2d(x, w, {.padding = tf::nn::Padding::same}) + b);
    auto m = tf::nn::max_pool2d(y, 2, 2, tf::nn::Padding::same);
    auto [dx, dw, db] = tape.gradient(tf::reduce_sum(tf::square(m)), x, w, b);
    dump(out, "conv_block", "x", x);
    dump(out, "conv_block", "w", w);
    dump(out, "conv_block", "b", b);
    dump(out, "conv_block", "y", y);
    dump(out, "conv_block", "m", m);
    dump(out, "conv_block", "dx", *dx);
    dump(out, "conv_block", "dw", *dw);
    dump(out, "conv_block", "db", *db);
  }
  {
    auto x = data<4>({2, 5, 5, 2}, 5);
    tf::GradientTape tape;
    tape.watch(x);
    auto m = tf::nn::max_pool2d(x, 2, 2, tf::nn::Padding::same);
    auto a = tf::nn::avg_pool2d(x, 3, 2, tf::nn::Padding::same);
    auto dx = tape.gradient(tf::reduce_sum(tf::square(m)) + tf::reduce_sum(tf::square(a)), x);
    dump(out, "pool", "x", x);
    dump(out, "pool", "max", m);
    dump(out, "pool", "avg", a);
    dump(out, "pool", "dx", *dx);
  }
  {
    auto logits = data<2>({4, 6}, 6) * 3.0f;
    auto labels = tf::constant<std::int32_t>({0, 5, 2, 2});
    tf::GradientTape tape;
    tape.watch(logits);
    auto loss = tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits);
    auto dlogits = tape.gradient(tf::reduce_mean(loss), logits);
    dump(out, "xent", "logits", logits);
    dump(out, "xent", "labels", labels);
    dump(out, "xent", "loss", loss);
    dump(out, "xent", "dlogits", *dlogits);
    dump(out, "xent", "softmax", tf::nn::softmax(logits));
    dump(out, "xent", "log_softmax", tf::nn::log_softmax(logits));
  }
  {
    auto x = data<3>({2, 3, 4}, 7);
    auto row = data<1>({4}, 8);
    tf::GradientTape tape;
    tape.watch(x);
    tape.watch(row);
    auto y = tf::reduce_max(tf::tanh(x) * row + tf::sigmoid(x), 1) - tf::reduce_mean(x, {0, 1});
    auto [dx, drow] = tape.gradient(tf::reduce_sum(tf::exp(y)), x, row);
    dump(out, "elementwise", "x", x);
    dump(out, "elementwise", "row", row);
    dump(out, "elementwise", "y", y);
    dump(out, "elementwise", "dx", *dx);
    dump(out, "elementwise", "drow", *drow);
  }
  return out.good() ? 0 : 1;
}
