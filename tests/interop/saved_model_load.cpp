// SavedModel load helper for tests/interop/check_saved_model_load.py (issue 17, load).
//
//   interop_saved_model_load DIR : for each DIR/<case>/ the checker wrote (a SavedModel written by
//       TensorFlow Python in DIR/<case>/saved_model, its input in DIR/<case>/input.txt), loads it
//       with tf::saved_model::load, runs signature serving_default on the input and writes the
//       prediction to DIR/<case>/got.txt (one number per line, row-major) and the loaded graph
//       to TensorBoard events in DIR/<case>/tensorboard. Then, for each of the
//       handbook's MLP, CNN and LSTM text model built in C++: exports it, loads it back and
//       requires the loaded signature to give the model's own outputs exactly (C++ -> SavedModel
//       -> C++). Exit 1 on any error or difference.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <tapeflow/keras.hpp>
#include <tapeflow/saved_model.hpp>
#include <tapeflow/saved_model/load.hpp>
#include <tapeflow/summary/graph.hpp>
#include <tapeflow/summary/writer.hpp>
#include <tapeflow/tapeflow.hpp>

#include "handbook_models.hpp"

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {

using namespace handbook;  // NOLINT(google-build-using-namespace): the shared models

std::vector<double> read_values(const fs::path& file) {
  std::ifstream in(file);
  if (!in) {
    throw tf::not_found("interop_saved_model_load: cannot open " + file.string());
  }
  std::vector<double> v;
  for (double x = 0; in >> x;) {
    v.push_back(x);
  }
  return v;
}

template <class T, std::size_t R>
tf::Tensor<T, R> read_tensor(const fs::path& file, const std::array<std::int64_t, R>& shape) {
  const auto v = read_values(file);
  auto t = tf::Tensor<T, R>::uninitialized(shape);
  if (std::int64_t(v.size()) != t.num_elements()) {
    throw tf::invalid_argument(file.string() + " holds " + std::to_string(v.size()) +
                               " numbers, not " + std::to_string(t.num_elements()));
  }
  T* d = tf::detail::tensor_access::mutable_data(t);
  for (std::size_t i = 0; i < v.size(); ++i) {
    d[i] = static_cast<T>(v[i]);
  }
  return t;
}

void write_values(const tf::Tensor<float, 2>& t, const fs::path& file) {
  std::ofstream out(file);
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g\n", double(t.data()[i]));
    out << buf;
  }
  if (!out) {
    throw tf::data_loss("interop_saved_model_load: cannot write " + file.string());
  }
}

// A SavedModel TensorFlow wrote: our prediction for the checker to compare.
void serve_python_export(const fs::path& d) {
  auto m = tf::saved_model::load((d / "saved_model").string());
  const auto& sig = m.signatures.at("serving_default");
  tf::Tensor<float, 2> pred;
  if (d.filename().string().ends_with("rnn")) {
    pred = sig.call<float, 2>(read_tensor<std::int32_t, 2>(d / "input.txt", {batch, seq_length}));
  } else {
    pred = sig.call<float, 2>(read_tensor<float, 4>(d / "input.txt", {batch, 28, 28, 1}));
  }
  write_values(pred, d / "got.txt");
  {  // The loaded graph is a tf::function graph: TensorBoard shows it (the checker reads it back).
    auto writer = tf::summary::create_file_writer((d / "tensorboard").string());
    auto scope = writer.as_default();
    if (!tf::summary::graph(sig.concrete_function())) {
      throw tf::internal("tf::summary::graph wrote nothing");
    }
  }
  std::cout << "loaded " << d.filename().string() << ": " << m.variables.size() << " variables, "
            << pred.shape().to_string() << " prediction\n";
}

// C++ -> SavedModel -> C++: the loaded signature gives the model's own outputs.
template <class M, class X>
void round_trip(const std::string& name, const fs::path& dir, const X& x, tf::Shape serving_shape) {
  M model;
  using V = typename X::value_type;
  auto serve =
      tf::function([&](const X& input) { return model(input); },
                   {.input_signature = std::vector<tf::TensorSpec>{{tf::dtype_v<V>, serving_shape}},
                    .name = name + "_serve"});
  const auto want = serve(x);
  const std::string path = (dir / ("roundtrip_" + name)).string();
  tf::saved_model::save(
      model, path,
      {.signatures = {{"serving_default", tf::saved_model::Signature{
                                              .function = serve.concrete_functions().front()}}}});
  const auto got = tf::saved_model::load(path).signatures.at("serving_default").call<float, 2>(x);
  double diff = 0;
  for (std::int64_t i = 0; i < want.num_elements(); ++i) {
    diff = std::max(diff, std::abs(double(want.data()[i]) - double(got.data()[i])));
  }
  std::cout << "round trip " << name << ": max diff " << diff << "\n";
  if (got.shape() != want.shape() || diff != 0) {
    throw tf::internal("round trip " + name + ": the loaded model differs (max diff " +
                       std::to_string(diff) + ")");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::cerr << "usage: interop_saved_model_load DIR\n";
    return argc == 2 ? 0 : 2;
  }
  const fs::path dir = argv[1];
  int failures = 0;
  auto run = [&](const std::string& name, auto&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::cerr << name << ": " << e.what() << "\n";
      ++failures;
    }
  };
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (fs::exists(entry.path() / "saved_model" / "saved_model.pb")) {
      cases.push_back(entry.path());
    }
  }
  std::sort(cases.begin(), cases.end());
  for (const auto& d : cases) {
    run(d.filename().string(), [&] { serve_python_export(d); });
  }
  run("round trip mlp", [&] { round_trip<MLP>("mlp", dir, images(), tf::Shape{-1, 28, 28, 1}); });
  run("round trip cnn", [&] { round_trip<CNN>("cnn", dir, images(), tf::Shape{-1, 28, 28, 1}); });
  run("round trip rnn", [&] {
    round_trip<RNN>("rnn", dir, tokens(), tf::Shape{batch, seq_length});
  });
  return failures == 0 && !cases.empty() ? 0 : 1;
}
