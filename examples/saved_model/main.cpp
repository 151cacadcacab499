// The deployment chapter's "export a whole model with SavedModel" in C++. --mode export trains
// the handbook's MNIST MLP and exports it with tf::saved_model::save (TensorFlow serves the
// directory: tf.saved_model.load, saved_model_cli, TF Serving). --mode serve loads a SavedModel
// with tf::saved_model::load, with no model code, and prints the test accuracy: ours, or one the
// chapter's Python program wrote (saved_model_mlp.py beside this file, Keras 3 or tf_keras).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <tapeflow/keras.hpp>
#include <tapeflow/saved_model.hpp>
#include <tapeflow/saved_model/load.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"
#include "common/mnist.hpp"

namespace tf = tapeflow;
using examples::MLP;

namespace {
examples::ArgumentParser parser(
    "saved_model",
    "The deployment chapter's SavedModel: --mode export trains the MNIST MLP and exports it\n"
    "to SAVE_DIR with tf::saved_model::save (signature serving_default); --mode serve loads\n"
    "SAVE_DIR with tf::saved_model::load, runs the test set through its serving_default\n"
    "signature without any model code and prints the test accuracy. SAVE_DIR may also be\n"
    "what saved_model_mlp.py (beside this program) exported from Python.");
auto& mode = parser.add_argument("--mode", "export", "export or serve");
auto& save_dir = parser.add_argument("--save_dir", "./saved");
auto& max_steps = parser.add_argument("--max_steps", std::numeric_limits<std::int64_t>::max(),
                                      "stop training after S batches");
auto& num_epochs = parser.add_argument("--num_epochs", 1);
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{50});
auto& learning_rate = parser.add_argument("--learning_rate", 0.001);
auto& data_dir = parser.add_data_dir();

// [snippet:export]
void export_model(examples::MNISTLoader& data_loader) {
  MLP model;
  tf::keras::optimizers::Adam optimizer({.learning_rate = learning_rate});
  auto num_batches = std::min(data_loader.num_train_data / batch_size * num_epochs, max_steps);
  for (std::int64_t batch_index = 1; batch_index <= num_batches; ++batch_index) {
    auto [X, y] = data_loader.get_batch(batch_size);
    tf::GradientTape tape;
    auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, model(X)));
    optimizer.apply_gradients(tape.gradient(loss, model.variables()), model.variables());
  }
  // SavedModel holds graphs: the call is traced for any batch of 28x28x1 images.
  auto call =
      tf::function([&](const tf::Tensor<float, 4>& x) { return model(x); },
                   {.input_signature =
                        std::vector<tf::TensorSpec>{{tf::DType::float32, tf::Shape{-1, 28, 28, 1}}},
                    .name = "call"});
  call(tf::slice(data_loader.test_data, {0, 0, 0, 0}, {1, -1, -1, -1}));
  tf::saved_model::save(
      model, save_dir,
      {.signatures = {{"serving_default", {.function = call.concrete_functions()[0]}}}});
  std::printf("trained %ld batches; exported to %s\n", num_batches, save_dir.c_str());
}
// [snippet:export]

// [snippet:serve]
void serve(examples::MNISTLoader& data_loader) {
  auto model = tf::saved_model::load(save_dir);  // no MLP here: the graph comes from the files
  const auto& infer = model.signatures.at("serving_default");
  tf::keras::metrics::SparseCategoricalAccuracy sparse_categorical_accuracy;
  auto num_batches = data_loader.num_test_data / batch_size;
  for (std::int64_t batch_index = 0; batch_index < num_batches; ++batch_index) {
    auto start_index = batch_index * batch_size;
    auto y_pred = infer.call<float, 2>(
        tf::slice(data_loader.test_data, {start_index, 0, 0, 0}, {batch_size, -1, -1, -1}));
    sparse_categorical_accuracy.update_state(
        tf::slice(data_loader.test_label, {start_index}, {batch_size}), y_pred);
  }
  std::printf("loaded %s (%zu variables)\ntest accuracy: %f\n", save_dir.c_str(),
              model.variables.size(), sparse_categorical_accuracy.result());
}
// [snippet:serve]
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    examples::MNISTLoader data_loader(data_dir);
    if (mode == "export") {
      export_model(data_loader);
    } else if (mode == "serve") {
      serve(data_loader);
    } else {
      throw tf::invalid_argument("--mode must be export or serve");
    }
    return 0;
  });
}
