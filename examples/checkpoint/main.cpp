// The checkpoint chapter's CheckPointMlp program in C++: train an MLP on MNIST and save it every
// 100 batches with tf::train::Checkpoint (or, with --manager, keep the last three through a
// CheckpointManager numbered by batch index); --mode test restores the latest checkpoint into a
// fresh, unbuilt model (deferred restoration) and prints the test accuracy. --from-python DIR
// does the same with a checkpoint the chapter's Python program wrote (checkpoint_mlp.py beside
// this file; Keras 3 or tf_keras, detected from the file).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <string>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train.hpp>

#include "common/argparse.hpp"
#include "common/mnist.hpp"

namespace tf = tapeflow;
using examples::MLP;

namespace {
examples::ArgumentParser parser(
    "checkpoint",
    "The checkpoint chapter's CheckPointMlp: --mode train trains an MLP on MNIST and saves it\n"
    "every 100 batches with tf::train::Checkpoint (SAVE_DIR/model.ckpt-1, -2, ...); with\n"
    "--manager a CheckpointManager keeps the last 3, numbered by batch index. --mode test\n"
    "restores tf::train::latest_checkpoint(SAVE_DIR) into a new model and prints the test\n"
    "accuracy. --from-python DIR restores what the chapter's Python program (checkpoint_mlp.py,\n"
    "Keras 3 or tf_keras) wrote in DIR the same way and prints the layout it found.");
auto& save_dir = parser.add_argument("--save_dir", "./save");
auto& use_manager = parser.add_argument("--manager", false, "keep the last 3 (CheckpointManager)");
auto& max_steps = parser.add_argument("--max_steps", std::numeric_limits<std::int64_t>::max(),
                                      "stop after S batches");
auto& from_python = parser.add_argument<std::optional<std::string>>(
    "--from-python", std::nullopt, "restore a checkpoint checkpoint_mlp.py wrote in this folder");
auto& data_dir = parser.add_data_dir();

// [seed:checkpoint begin]
auto& mode = parser.add_argument("--mode", "train", "train or test");
auto& num_epochs = parser.add_argument("--num_epochs", 1);
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{50});
auto& learning_rate = parser.add_argument("--learning_rate", 0.001);

// [snippet:train]
void train(examples::MNISTLoader& data_loader) {
  MLP model;
  tf::keras::optimizers::Adam optimizer({.learning_rate = learning_rate});
  auto num_batches = std::min(data_loader.num_train_data / batch_size * num_epochs, max_steps);
  tf::train::Checkpoint checkpoint({{"myAwesomeModel", model}});  // the object to save: model
  tf::train::CheckpointManager manager(checkpoint, save_dir,      // keeps the last three
                                       {.checkpoint_name = "model.ckpt", .max_to_keep = 3});
  for (std::int64_t batch_index = 1; batch_index <= num_batches; ++batch_index) {
    auto [X, y] = data_loader.get_batch(batch_size);
    tf::GradientTape tape;
    auto y_pred = model(X);
    auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, y_pred));
    std::printf("batch %ld: loss %f\n", batch_index, loss.item());
    auto grads = tape.gradient(loss, model.variables());
    optimizer.apply_gradients(grads, model.variables());
    if (batch_index % 100 == 0) {  // every 100 batches
      auto path = use_manager ? manager.save({.checkpoint_number = batch_index})
                              : checkpoint.save(save_dir + "/model.ckpt");
      std::printf("model saved to %s\n", path.c_str());
    }
  }
}
// [snippet:train]

// [snippet:test]
void test(examples::MNISTLoader& data_loader, const std::string& dir) {
  MLP model_to_be_restored;
  // restored into the new model under the same key, as its layers are built by the first call
  tf::train::Checkpoint checkpoint({{"myAwesomeModel", model_to_be_restored}});
  auto latest = tf::train::latest_checkpoint(dir);
  if (latest.empty()) {
    throw tf::not_found("no checkpoint in " + dir + " (train first)");
  }
  auto status = checkpoint.restore(latest);
  tf::keras::metrics::SparseCategoricalAccuracy accuracy;
  accuracy.update_state(data_loader.test_label,
                        model_to_be_restored.predict(data_loader.test_data));
  status.assert_consumed();
  if (from_python) {
    std::cout << "layout: " << tf::train::layout_name(status.layout()) << "\n";
  }
  std::printf("restored %s\ntest accuracy: %f\n", latest.c_str(), accuracy.result());
}
// [snippet:test]
// [seed:checkpoint end]
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    examples::MNISTLoader data_loader(data_dir);
    if (from_python) {
      test(data_loader, *from_python);  // a checkpoint written by Python is only read
    } else if (mode == "train") {
      train(data_loader);
    } else if (mode == "test") {
      test(data_loader, save_dir);
    } else {
      throw tf::invalid_argument("--mode must be train or test");
    }
    return 0;
  });
}
