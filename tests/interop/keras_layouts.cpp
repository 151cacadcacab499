// Keras 3 / tf_keras checkpoint interop helper for tests/interop/check_keras_layouts.py (issue 14).
//
//   interop_keras_layouts write DIR CASE... : for each CASE (<flavor>_<model>_<optimizer>, e.g.
//       keras3_cnn_adam), trains the model 2 steps on the shared batch, saves
//       tf.train.Checkpoint(myAwesomeModel=..., myAwesomeOptimizer=...) in the flavor's layout
//       to DIR/CASE/cpp/ckpt-1, writes the predictions to DIR/CASE/cpp/pred.txt, then takes one
//       more step and writes DIR/CASE/cpp/pred_step.txt.
//   interop_keras_layouts read DIR CASE...  : restores DIR/CASE/py (written by Keras) into a
//       fresh, unbuilt model and optimizer, checks the detected layout, writes our predictions
//       to DIR/CASE/py/ours_pred.txt, steps once (assert_consumed then) and writes
//       DIR/CASE/py/ours_pred_step.txt.
// Both also write the state after the extra step (DIR/CASE/cpp/step/ckpt,
// DIR/CASE/py/ours_step/ckpt): the checker compares it variable by variable with Keras's when
// predictions differ.
// A case that fails writes its error to <case dir>/error.txt and the others go on; the exit
// status is 1 when any case failed.
//
// flavor: keras3 | tf_keras (Layout::keras3, Layout::tf_keras: tf_keras' default optimizers);
// model: mlp | cnn | rnn (the handbook's MLP, CNN and LSTM text model, attribute names as in
// Python so the checkpoint keys match); optimizer: sgd (lr 0.01, momentum 0.9) | adam (1e-3)
// | rmsprop (1e-3). The batch and the models are mirrored in check_keras_layouts.py.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train.hpp>

#include "handbook_models.hpp"

namespace tf = tapeflow;
namespace fs = std::filesystem;
namespace layers = tf::keras::layers;
namespace opt = tf::keras::optimizers;
using tf::train::Layout;

namespace {

using namespace handbook;  // NOLINT(google-build-using-namespace): the shared models

tf::Tensor<std::int32_t, 1> image_labels() { return tf::constant<std::int32_t>({3, 7, 0, 9}); }
tf::Tensor<std::int32_t, 1> next_chars() {
  std::vector<std::int32_t> v;
  for (std::int64_t i = 0; i < batch; ++i) {
    v.push_back(std::int32_t((11 * i + 5) % num_chars));
  }
  return tf::constant<std::int32_t>(v);
}

opt::OptimizerHandle make_optimizer(const std::string& name) {
  if (name == "sgd") {
    return opt::SGD({.learning_rate = 0.01, .momentum = 0.9});
  }
  if (name == "adam") {
    return opt::Adam({.learning_rate = 1e-3});
  }
  if (name == "rmsprop") {
    return opt::RMSprop({.learning_rate = 1e-3});
  }
  throw tf::invalid_argument("interop_keras_layouts: unknown optimizer '" + name + "'");
}

Layout layout_of(const std::string& flavor) {
  if (flavor == "keras3") {
    return Layout::keras3;
  }
  if (flavor == "tf_keras") {
    return Layout::tf_keras;
  }
  throw tf::invalid_argument("interop_keras_layouts: unknown flavor '" + flavor + "'");
}

void write_pred(const tf::Tensor<float, 2>& pred, const fs::path& file) {
  std::ofstream out(file);
  for (std::int64_t i = 0; i < pred.num_elements(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g\n", double(pred.data()[i]));
    out << buf;
  }
  if (!out) {
    throw tf::data_loss("interop_keras_layouts: cannot write " + file.string());
  }
}

// loss = reduce_mean(sparse_categorical_crossentropy(y, model(x))), one optimizer step.
template <class M, class X>
void step(M& model, opt::Optimizer& o, const X& x, const tf::Tensor<std::int32_t, 1>& y) {
  tf::GradientTape tape;
  auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, model(x)));
  auto vars = model.trainable_variables();
  o.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
}

struct Case {
  std::string name, flavor, model, optimizer;
};

Case parse(const std::string& name) {
  // <flavor>_<model>_<optimizer>; the flavor may itself contain '_' (tf_keras).
  const auto last = name.rfind('_');
  const auto mid = last == std::string::npos ? last : name.rfind('_', last - 1);
  if (mid == std::string::npos || mid == 0) {
    throw tf::invalid_argument("interop_keras_layouts: case '" + name +
                               "' is not <flavor>_<model>_<optimizer>");
  }
  return {name, name.substr(0, mid), name.substr(mid + 1, last - mid - 1), name.substr(last + 1)};
}

// C++ -> Python: train 2 steps, save, predict; one more step, predict.
template <class M, class X>
void write_case(const Case& c, const fs::path& dir, const X& x,
                const tf::Tensor<std::int32_t, 1>& y) {
  M model;
  auto handle = make_optimizer(c.optimizer);
  auto& o = handle.get();
  step(model, o, x, y);
  step(model, o, x, y);
  tf::train::Checkpoint ckpt({{"myAwesomeModel", model}, {"myAwesomeOptimizer", o}},
                             {.layout = layout_of(c.flavor)});
  const std::string path = ckpt.save((dir / "ckpt").string());
  write_pred(model(x), dir / "pred.txt");
  step(model, o, x, y);
  write_pred(model(x), dir / "pred_step.txt");
  ckpt.write((dir / "step" / "ckpt").string());  // the state after it, for diagnostics
  std::cout << "write " << c.name << ": " << path << " (iterations " << o.iterations() - 1 << ")\n";
}

// Python -> C++: restore into a fresh, unbuilt model and optimizer, predict; step, predict.
template <class M, class X>
void read_case(const Case& c, const fs::path& dir, const X& x,
               const tf::Tensor<std::int32_t, 1>& y) {
  M model;
  auto handle = make_optimizer(c.optimizer);
  auto& o = handle.get();
  tf::train::Checkpoint ckpt({{"myAwesomeModel", model}, {"myAwesomeOptimizer", o}});
  const std::string latest = tf::train::latest_checkpoint(dir.string());
  if (latest.empty()) {
    throw tf::not_found("no checkpoint in " + dir.string());
  }
  auto status = ckpt.restore(latest);
  if (status.layout() != layout_of(c.flavor)) {
    std::ostringstream os;
    os << "detected layout " << tf::train::layout_name(status.layout()) << ", expected " << c.flavor
       << "\n"
       << status.report();
    throw tf::failed_precondition(os.str());
  }
  status.assert_existing_objects_matched();
  const auto pending = status.report().pending.size();
  write_pred(model(x), dir / "ours_pred.txt");  // builds the layers: their values arrive
  step(model, o, x, y);                         // builds the optimizer: the slots arrive
  status.assert_consumed();
  write_pred(model(x), dir / "ours_pred_step.txt");
  ckpt.write((dir / "ours_step" / "ckpt").string(), {.layout = status.layout()});
  std::cout << "read " << c.name << ": layout " << tf::train::layout_name(status.layout()) << ", "
            << status.report().matched.size() << " values matched (" << pending
            << " deferred), iterations " << o.iterations() << "\n";
}

template <template <class, class> class Run>
void dispatch(const Case& c, const fs::path& dir) {
  if (c.model == "mlp") {
    Run<MLP, tf::Tensor<float, 4>>::run(c, dir, images(), image_labels());
  } else if (c.model == "cnn") {
    Run<CNN, tf::Tensor<float, 4>>::run(c, dir, images(), image_labels());
  } else if (c.model == "rnn") {
    Run<RNN, tf::Tensor<std::int32_t, 2>>::run(c, dir, tokens(), next_chars());
  } else {
    throw tf::invalid_argument("interop_keras_layouts: unknown model '" + c.model + "'");
  }
}
template <class M, class X>
struct Write {
  static void run(const Case& c, const fs::path& d, const X& x,
                  const tf::Tensor<std::int32_t, 1>& y) {
    write_case<M>(c, d, x, y);
  }
};
template <class M, class X>
struct Read {
  static void run(const Case& c, const fs::path& d, const X& x,
                  const tf::Tensor<std::int32_t, 1>& y) {
    read_case<M>(c, d, x, y);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: interop_keras_layouts write|read DIR CASE...\n";
    return 2;
  }
  const std::string mode = argv[1];
  if (mode != "write" && mode != "read") {
    std::cerr << "interop_keras_layouts: mode must be write or read, not '" << mode << "'\n";
    return 2;
  }
  int failed = 0;
  for (int i = 3; i < argc; ++i) {
    const std::string name = argv[i];
    const fs::path dir = fs::path(argv[2]) / name / (mode == "write" ? "cpp" : "py");
    try {
      tf::random::set_seed(1);  // each case's initial weights repeat from run to run
      const Case c = parse(name);
      if (mode == "write") {
        fs::remove_all(dir);
        fs::create_directories(dir);
        dispatch<Write>(c, dir);
      } else {
        fs::remove(dir / "error.txt");
        dispatch<Read>(c, dir);
      }
    } catch (const std::exception& e) {
      ++failed;
      std::cerr << mode << " " << name << ": FAILED: " << e.what() << "\n";
      std::error_code ec;
      fs::create_directories(dir, ec);
      std::ofstream(dir / "error.txt") << e.what() << "\n";
    }
  }
  return failed == 0 ? 0 : 1;
}
