// Checkpoint interop helper for tests/interop/check_checkpoint.py (issue 7).
//   checkpoint_interop write DIR : DIR/vars/ckpt-1 (one variable per dtype and rank) and
//                                  DIR/model/ckpt-1 (Sequential Dense(4, relu), Dense(2) + Adam
//                                  after 3 steps) with DIR/model/pred.txt (predictions on X_EVAL)
//   checkpoint_interop read DIR  : restores DIR/py (written by TensorFlow) into a fresh, unbuilt
//                                  model, predicts X_EVAL and compares with DIR/py/pred.txt
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
auto make_model() {
  return tf::keras::Sequential(tf::keras::layers::Dense(4, {.activation = tf::nn::relu}),
                               tf::keras::layers::Dense(2));
}
tf::Tensor<float, 2> x_eval() {
  return tf::constant<float>({{0.5f, -1.0f, 2.0f}, {1.0f, 0.25f, -0.5f}, {-0.3f, 0.8f, 0.1f}});
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

  auto model = make_model();
  tf::keras::optimizers::Adam opt({.learning_rate = 0.05});
  const auto x = tf::constant<float>({{0.1f, 0.2f, 0.3f}, {-1.0f, 0.5f, 0.0f}});
  for (int i = 0; i < 3; ++i) {
    tf::GradientTape tape;
    auto loss = tf::reduce_mean(tf::square(model(x) - 1.0f));
    tape.stop();
    auto v = model.trainable_variables();
    opt.apply_gradients(tf::keras::gradient(tape, loss, v), v);
  }
  tf::train::Checkpoint ckpt({{"model", model}, {"optimizer", opt}});
  std::cout << ckpt.save(dir + "/model/ckpt") << "\n";
  auto pred = model(x_eval());
  std::ofstream out(dir + "/model/pred.txt");
  for (std::int64_t i = 0; i < pred.num_elements(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g\n", double(pred.data()[i]));
    out << buf;
  }
  return 0;
}

int read(const std::string& dir) {
  auto model = make_model();
  tf::train::Checkpoint ckpt({{"model", model}});
  const std::string latest = tf::train::latest_checkpoint(dir + "/py");
  if (latest.empty()) {
    std::cerr << "no checkpoint in " << dir << "/py\n";
    return 1;
  }
  auto status = ckpt.restore(latest);
  auto pred = model(x_eval());  // builds the layers: deferred values applied here
  status.assert_existing_objects_matched();
  std::cout << status.report();
  std::ifstream in(dir + "/py/pred.txt");
  double want = 0, max_diff = 0;
  std::int64_t i = 0;
  while (in >> want) {
    if (i >= pred.num_elements()) {
      std::cerr << "pred.txt has too many values\n";
      return 1;
    }
    max_diff = std::max(max_diff, std::abs(want - double(pred.data()[i++])));
  }
  if (i != pred.num_elements()) {
    std::cerr << "pred.txt has " << i << " values, want " << pred.num_elements() << "\n";
    return 1;
  }
  std::cout << "max abs difference vs TensorFlow/Keras: " << max_diff << "\n";
  return max_diff <= 1e-5 ? 0 : 1;
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
