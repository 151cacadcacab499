// Keras weights files both ways between tf::keras and Python (issue 18), helper of
// tests/interop/check_keras_weights.py, on the handbook's MLP, CNN and LSTM text model
// (handbook_models.hpp: attribute names as in Python, so weights-file paths match).
//
//   interop_keras_weights write DIR : builds each MODEL (mlp, cnn, rnn) on the shared batch and
//       writes DIR/MODEL/cpp.weights.h5 (Keras 3), DIR/MODEL/cpp_ckpt/w (a checkpoint prefix in
//       tf_keras's layout) and its predictions DIR/MODEL/cpp_pred.txt.
//   interop_keras_weights read DIR  : for each MODEL, loads into a fresh model DIR/MODEL/
//       py.weights.h5 and py.keras (written by Keras 3; the model built first, as Keras 3
//       requires) and tfk_ckpt/w (written by tf_keras; into the unbuilt model), writing the
//       predictions to ours_from_h5.txt, ours_from_keras.txt and ours_from_ckpt.txt.
// The applications (MODEL mobilenet_v2: alpha 0.35 at 96x96 with the top; resnet50: 32x32, no
// top, average pooling; vgg16: 32x32, no top, max pooling) on images x[i] = 0.9 sin(i) of shape
// [2, H, W, 3] do the same, except that `read` passes py.weights.h5 as the constructor's
// `weights` (as `MobileNetV2(weights=path)` does), `write` saves the weights it read from
// py.weights.h5 (random-init applications compute next to nothing), and the checkpoint is
// tf_keras's only for mobilenet_v2.
// A model that fails writes its error to DIR/MODEL/error.txt and the others go on; the exit
// status is 1 when any failed.
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <string>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

#include "handbook_models.hpp"

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {

using namespace handbook;  // NOLINT(google-build-using-namespace): the shared models

void write_values(const std::string& path, const tf::Tensor<float, 2>& t) {
  std::ofstream out(path);
  out << std::setprecision(9);
  const float* d = t.data();
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    out << d[i] << "\n";
  }
}

template <class Model, class X>
void write_side(const std::string& dir, const X& x) {
  Model m;
  const auto pred = m(x);
  m.save_weights(dir + "/cpp.weights.h5");
  m.save_weights(dir + "/cpp_ckpt/w");
  write_values(dir + "/cpp_pred.txt", pred);
}

template <class Model, class X>
void read_side(const std::string& dir, const X& x) {
  for (const char* file : {"py.weights.h5", "py.keras"}) {
    Model m;
    (void)m(x);  // Keras 3 loads HDF5 weights into built models only
    m.load_weights(dir + "/" + file).assert_consumed();
    write_values(
        dir + (std::string(file) == "py.keras" ? "/ours_from_keras.txt" : "/ours_from_h5.txt"),
        m(x));
  }
  Model m;  // unbuilt: the checkpoint's values wait for the layers
  auto status = m.load_weights(dir + "/tfk_ckpt/w");
  write_values(dir + "/ours_from_ckpt.txt", m(x));
  status.assert_consumed();
}

tf::Tensor<float, 4> app_images(std::int64_t size) {
  auto t = tf::Tensor<float, 4>::uninitialized({2, size, size, 3});
  float* d = tf::detail::tensor_access::mutable_data(t);
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    d[i] = float(0.9 * std::sin(double(i)));
  }
  return t;
}

namespace apps = tf::keras::applications;

template <class App, class Options>
void app_side(bool write, const std::string& dir, Options options, std::int64_t size,
              bool checkpoint) {
  const auto x = app_images(size);
  auto predict = [&](App& m) { return m(x).template as<float, 2>(); };
  if (write) {
    // Random-init applications compute next to nothing (check_keras_weights.py,
    // calibrate_batch_norm): start from Python's calibrated weights, so the file written here
    // is what is checked.
    auto from_python = options;
    from_python.weights = dir + "/py.weights.h5";
    App m(from_python);
    m.save_weights(dir + "/cpp.weights.h5");
    if (checkpoint) {
      m.save_weights(dir + "/cpp_ckpt/w");
    }
    write_values(dir + "/cpp_pred.txt", predict(m));
    return;
  }
  auto from_file = options;
  from_file.weights = dir + "/py.weights.h5";
  App a(from_file);
  write_values(dir + "/ours_from_h5.txt", predict(a));
  App b(options);
  b.load_weights(dir + "/py.keras").assert_consumed();
  write_values(dir + "/ours_from_keras.txt", predict(b));
  if (checkpoint) {
    from_file.weights = dir + "/tfk_ckpt/w";
    App c(from_file);
    write_values(dir + "/ours_from_ckpt.txt", predict(c));
  }
}

template <class F>
bool attempt(const std::string& dir, F&& f) {
  try {
    fs::create_directories(dir);
    f();
    return true;
  } catch (const std::exception& e) {
    std::ofstream(dir + "/error.txt") << e.what() << "\n";
    std::cerr << dir << ": " << e.what() << "\n";
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "write" && std::string(argv[1]) != "read")) {
    std::cerr << "usage: interop_keras_weights write|read DIR\n";
    return 2;
  }
  const bool write = std::string(argv[1]) == "write";
  const std::string dir = argv[2];
  bool ok = true;
  ok &= attempt(dir + "/mlp", [&] {
    write ? write_side<MLP>(dir + "/mlp", images()) : read_side<MLP>(dir + "/mlp", images());
  });
  ok &= attempt(dir + "/cnn", [&] {
    write ? write_side<CNN>(dir + "/cnn", images()) : read_side<CNN>(dir + "/cnn", images());
  });
  ok &= attempt(dir + "/rnn", [&] {
    write ? write_side<RNN>(dir + "/rnn", tokens()) : read_side<RNN>(dir + "/rnn", tokens());
  });
  ok &= attempt(dir + "/mobilenet_v2", [&] {
    app_side<apps::MobileNetV2>(
        write, dir + "/mobilenet_v2",
        apps::MobileNetV2Options{.input_shape = {{96, 96, 3}}, .alpha = 0.35}, 96, true);
  });
  ok &= attempt(dir + "/resnet50", [&] {
    app_side<apps::ResNet50>(
        write, dir + "/resnet50",
        apps::ResNet50Options{.input_shape = {{32, 32, 3}}, .include_top = false, .pooling = "avg"},
        32, false);
  });
  ok &= attempt(dir + "/vgg16", [&] {
    app_side<apps::VGG16>(
        write, dir + "/vgg16",
        apps::VGG16Options{.input_shape = {{32, 32, 3}}, .include_top = false, .pooling = "max"},
        32, false);
  });
  return ok ? 0 : 1;
}
