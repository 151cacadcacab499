// SavedModel export helper for tests/interop/check_saved_model_export.py (issue 17).
//
//   interop_saved_model_export DIR : for each of the handbook's MLP, CNN and LSTM text model,
//       trains 2 Adam steps on the shared batch, traces a serving function (free batch for the
//       MLP and CNN; the text model's zero initial state has a fixed batch, as the first call's
//       shape is in a Keras 3 subclassed model's export), exports DIR/<model>/saved_model with
//       tf::saved_model::save (signature "serving_default") and writes the inputs and our
//       predictions to DIR/<model>/input.txt and DIR/<model>/pred.txt (one number per line,
//       row-major).
// The checker loads each SavedModel with TensorFlow and compares its predictions with ours.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <tapeflow/keras.hpp>
#include <tapeflow/saved_model/save.hpp>
#include <tapeflow/tapeflow.hpp>

#include "handbook_models.hpp"

namespace tf = tapeflow;
namespace fs = std::filesystem;
namespace layers = tf::keras::layers;

namespace {

using namespace handbook;  // NOLINT(google-build-using-namespace): the shared models

template <class T, std::size_t R>
void write_values(const tf::Tensor<T, R>& t, const fs::path& file) {
  std::ofstream out(file);
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g\n", double(t.data()[i]));
    out << buf;
  }
  if (!out) {
    throw tf::data_loss("interop_saved_model_export: cannot write " + file.string());
  }
}

template <class M, class X>
void export_case(const std::string& name, const fs::path& dir, const X& x,
                 const tf::Tensor<std::int32_t, 1>& y, tf::Shape serving_shape) {
  M model;
  tf::keras::optimizers::Adam adam({.learning_rate = 1e-3});
  for (int s = 0; s < 2; ++s) {
    tf::GradientTape tape;
    auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, model(x)));
    auto vars = model.trainable_variables();
    adam.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
  }
  using V = typename X::value_type;
  auto serve =
      tf::function([&](const X& input) { return model(input); },
                   {.input_signature = std::vector<tf::TensorSpec>{{tf::dtype_v<V>, serving_shape}},
                    .name = name + "_serve"});
  const auto pred = serve(x);
  fs::create_directories(dir / name);
  tf::saved_model::save(
      model, (dir / name / "saved_model").string(),
      {.signatures = {{"serving_default", tf::saved_model::Signature{
                                              .function = serve.concrete_functions().front()}}}});
  write_values(x, dir / name / "input.txt");
  write_values(pred, dir / name / "pred.txt");
  std::cout << "exported " << name << " to " << (dir / name / "saved_model").string() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::cerr << "usage: interop_saved_model_export DIR\n";
    return argc == 2 ? 0 : 2;
  }
  const fs::path dir = argv[1];
  int failures = 0;
  auto run = [&](const char* name, auto&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::cerr << name << ": " << e.what() << "\n";
      fs::create_directories(dir / name);
      std::ofstream(dir / name / "error.txt") << e.what() << "\n";
      ++failures;
    }
  };
  const auto labels = tf::constant<std::int32_t>({3, 7, 0, 9});
  run("mlp", [&] { export_case<MLP>("mlp", dir, images(), labels, tf::Shape{-1, 28, 28, 1}); });
  run("cnn", [&] { export_case<CNN>("cnn", dir, images(), labels, tf::Shape{-1, 28, 28, 1}); });
  run("rnn", [&] {
    export_case<RNN>("rnn", dir, tokens(), tf::constant<std::int32_t>({5, 16, 27, 8}),
                     tf::Shape{batch, seq_length});
  });
  return failures == 0 ? 0 : 1;
}
