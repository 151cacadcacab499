// Checkpoint interop helper for tests/interop/check_checkpoint.py (issue 7).
//   checkpoint_interop write DIR : DIR/vars/ckpt-1 (one variable per dtype and rank) and
//                                  DIR/model/ckpt-1 (Sequential Dense(32, relu), Dense(10) +
//                                  Adam after 3 steps) with DIR/model/pred.txt (predictions on
//                                  X_EVAL) and pred_step.txt (after one more step)
//   checkpoint_interop read DIR  : restores DIR/py (tf_keras model + Adam, written by Python)
//                                  into a fresh, unbuilt model and optimizer and writes our
//                                  predictions before/after one more step (Python compares)
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train.hpp>

namespace tf = tapeflow;

namespace {
// Mirrored in check_checkpoint.py: Sequential Dense(32, relu), Dense(10) on 3 inputs, Adam(0.01)
// (Keras 2's OptimizerV2 layout: tf_keras.optimizers.legacy.Adam), loss mean((model(x) - y)^2).
auto make_model() {
  return tf::keras::Sequential(tf::keras::layers::Dense(32, {.activation = tf::nn::relu}),
                               tf::keras::layers::Dense(10));
}
tf::keras::optimizers::Adam make_optimizer() {
  return tf::keras::optimizers::Adam({.learning_rate = 0.01});
}
tf::Tensor<float, 2> x_eval() {
  return tf::constant<float>({{0.5f, -1.0f, 2.0f}, {1.0f, 0.25f, -0.5f}, {-0.3f, 0.8f, 0.1f}});
}
// x[i][j] = ((3 i + j) % 7) / 4 - 0.75 (8 x 3), y[i][k] = ((10 i + k) % 5) / 5 - 0.4 (8 x 10)
tf::Tensor<float, 2> x_train() {
  auto t = tf::Tensor<float, 2>::uninitialized({8, 3});
  float* d = tf::detail::tensor_access::mutable_data(t);
  for (int i = 0; i < 24; ++i) {
    d[i] = float(i % 7) * 0.25f - 0.75f;
  }
  return t;
}
tf::Tensor<float, 2> y_train() {
  auto t = tf::Tensor<float, 2>::uninitialized({8, 10});
  float* d = tf::detail::tensor_access::mutable_data(t);
  for (int i = 0; i < 80; ++i) {
    d[i] = float(i % 5) * 0.2f - 0.4f;
  }
  return t;
}
template <class M>
void train_steps(M& model, tf::keras::optimizers::Adam& opt, int n) {
  const auto x = x_train();
  const auto y = y_train();
  for (int i = 0; i < n; ++i) {
    tf::GradientTape tape;
    auto loss = tf::reduce_mean(tf::square(model(x) - y));
    auto v = model.trainable_variables();
    opt.apply_gradients(tape.gradient(loss, v), v);
  }
}
void write_pred(const tf::Tensor<float, 2>& pred, const std::string& file) {
  std::ofstream out(file);
  for (std::int64_t i = 0; i < pred.num_elements(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g\n", double(pred.data()[i]));
    out << buf;
  }
}
// value(i) = i * 0.5 - 3 cast to the dtype; strings "s<i>"; bools i % 3 == 0 (mirrored in Python)
template <class T, std::size_t R>
tf::Variable<T, R> pattern(std::array<std::int64_t, R> dims) {
  auto t = tf::Tensor<T, R>::uninitialized(dims);
  T* d = tf::detail::tensor_access::mutable_data(t);
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    if constexpr (std::is_same_v<T, std::string>) {
      d[i] = "s" + std::to_string(i);
    } else if constexpr (std::is_same_v<T, bool>) {
      d[i] = i % 3 == 0;
    } else if constexpr (std::is_same_v<T, std::uint8_t>) {
      d[i] = static_cast<std::uint8_t>(i * 7 % 256);
    } else {
      d[i] = static_cast<T>(double(i) * 0.5 - 3.0);
    }
  }
  return tf::Variable<T, R>(t);
}

int write(const std::string& dir) {
  auto f0 = pattern<float, 0>({});
  auto f3 = pattern<float, 3>({2, 3, 4});
  auto d2 = pattern<double, 2>({3, 2});
  auto i1 = pattern<std::int32_t, 1>({5});
  auto l4 = pattern<std::int64_t, 4>({1, 2, 1, 3});
  auto u1 = pattern<std::uint8_t, 1>({40});
  auto b2 = pattern<bool, 2>({2, 2});
  auto s1 = pattern<std::string, 1>({3});
  tf::train::Checkpoint vars({{"f0", f0},
                              {"f3", f3},
                              {"d2", d2},
                              {"i1", i1},
                              {"l4", l4},
                              {"u1", u1},
                              {"b2", b2},
                              {"s1", s1}});
  std::cout << vars.save(dir + "/vars/ckpt") << "\n";

  // DIR/model: trained 3 steps, saved; pred.txt before and pred_step.txt after one more step
  auto model = make_model();
  auto opt = make_optimizer();
  train_steps(model, opt, 3);
  tf::train::Checkpoint ckpt({{"myAwesomeModel", model}, {"myAwesomeOptimizer", opt}},
                             {.layout = tf::train::Layout::tf_keras_legacy});
  std::cout << ckpt.save(dir + "/model/ckpt") << "\n";
  write_pred(model(x_eval()), dir + "/model/pred.txt");
  train_steps(model, opt, 1);
  write_pred(model(x_eval()), dir + "/model/pred_step.txt");
  return 0;
}

// Restores DIR/py (tf_keras model + Adam trained in Python) into a fresh, unbuilt model and
// optimizer; writes DIR/py/ours_pred.txt (predictions) and DIR/py/ours_pred_step.txt (after one
// more Adam step, which creates the slots and so consumes the restored m and v).
int read(const std::string& dir) {
  auto model = make_model();
  auto opt = make_optimizer();
  tf::train::Checkpoint ckpt({{"myAwesomeModel", model}, {"myAwesomeOptimizer", opt}});
  const std::string latest = tf::train::latest_checkpoint(dir + "/py");
  if (latest.empty()) {
    std::cerr << "no checkpoint in " << dir << "/py\n";
    return 1;
  }
  auto status = ckpt.restore(latest);
  status.assert_existing_objects_matched();
  std::cout << "after restore: " << status.report().matched.size() << " matched, "
            << status.report().pending.size() << " pending (unbuilt layers, slots)\n";
  write_pred(model(x_eval()), dir + "/py/ours_pred.txt");  // builds: deferred values applied
  train_steps(model, opt, 1);                              // creates slots: restored now
  status.assert_consumed();
  std::cout << status.report();
  std::cout << "assert_consumed: ok (iterations " << opt.iterations() << ")\n";
  write_pred(model(x_eval()), dir + "/py/ours_pred_step.txt");
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: checkpoint_interop write|read DIR\n";
    return 2;
  }
  const std::string mode = argv[1];
  try {
    return mode == "write" ? write(argv[2]) : read(argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "checkpoint_interop: " << e.what() << "\n";
    return 1;
  }
}
