// The README's demo: the MNIST MLP end to end through every module a TensorFlow user would
// combine — keras::datasets to load, a tf.data pipeline (from_tensor_slices | shuffle | batch |
// prefetch), a Keras Sequential model trained with GradientTape and Adam, the loss logged to
// TensorBoard, model and optimizer saved each epoch by a CheckpointManager (a second run resumes
// from the latest checkpoint), and the test accuracy at the end.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include <tapeflow/data.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/summary.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train.hpp>

#include "common/argparse.hpp"

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {
examples::ArgumentParser parser(
    "mnist_end_to_end",
    "Trains the MNIST MLP (Flatten, Dense 100 relu, Dense 10) with Adam on a tf::data pipeline,\n"
    "logs the loss to TensorBoard, keeps the last 3 epoch checkpoints of model and optimizer\n"
    "(a later run resumes from the latest) and prints the test accuracy.");
auto& num_epochs = parser.add_argument("--num_epochs", 2);
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{50});
auto& learning_rate = parser.add_argument("--learning_rate", 1e-3);
auto& logdir = parser.add_argument("--logdir", "./tensorboard", "TensorBoard logs");
auto& save_dir = parser.add_argument("--save_dir", "./save", "checkpoints");
auto& max_steps = parser.add_argument("--max_steps", std::int64_t{-1}, "batches per epoch");
auto& data_dir = parser.add_data_dir();

tf::Tensor<float, 3> normalize(const tf::Tensor<std::uint8_t, 3>& images) {
  return tf::cast<float>(images) / 255.0f;
}

int run() {
  auto mnist = tf::keras::datasets::mnist::load_data(data_dir);
  auto x_train = normalize(mnist.x_train);
  auto y_train = tf::cast<std::int32_t>(mnist.y_train);
  auto train = tf::data::from_tensor_slices(x_train, y_train) |
               tf::data::shuffle(10000, {.seed = 1}) | tf::data::batch(batch_size) |
               tf::data::prefetch(tf::data::autotune);

  tf::keras::Sequential model(layers::Flatten(), layers::Dense(100, {.activation = tf::nn::relu}),
                              layers::Dense(10));
  tf::keras::optimizers::Adam optimizer({.learning_rate = learning_rate});
  tf::keras::losses::SparseCategoricalCrossentropy loss_fn({.from_logits = true});

  // [snippet:resume]
  tf::train::Checkpoint checkpoint({{"model", model}, {"optimizer", optimizer}});
  tf::train::CheckpointManager manager(checkpoint, save_dir, {.max_to_keep = 3});
  int first_epoch = 0;
  if (const std::string latest = manager.latest_checkpoint(); !latest.empty()) {
    // Layers are built on their first call: the restore is applied when the weights appear.
    checkpoint.restore(latest);
    first_epoch = std::stoi(latest.substr(latest.rfind('-') + 1));  // "ckpt-<epoch>"
    std::cout << "resumed from " << latest << "\n";
  }
  // [snippet:resume]
  auto writer = tf::summary::create_file_writer(logdir);

  const auto start = std::chrono::steady_clock::now();
  std::int64_t step = optimizer.iterations();
  for (int epoch = first_epoch; epoch < first_epoch + num_epochs; ++epoch) {
    std::int64_t batches = 0;
    float last_loss = 0;
    for (auto&& [x, y] : train) {
      if (batches == max_steps) {
        break;
      }
      tf::GradientTape tape;
      auto logits = model(x, {.training = true});
      auto loss = loss_fn(y, logits);
      auto grads = tape.gradient(loss, model.trainable_variables());
      optimizer.apply_gradients(grads, model.trainable_variables());
      ++batches;
      ++step;
      // [snippet:log_scalar]
      if (step % 100 == 0) {
        auto scope = writer.as_default();
        tf::summary::scalar("loss", loss, step);
      }
      // [snippet:log_scalar]
      last_loss = loss.item();
    }
    const std::string path = manager.save({.checkpoint_number = epoch + 1});
    std::printf("epoch %d: %ld batches, loss %.4f, saved %s\n", epoch + 1, batches,
                static_cast<double>(last_loss), path.c_str());
  }
  writer.flush();
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;

  tf::keras::metrics::SparseCategoricalAccuracy accuracy;
  accuracy.update_state(mnist.y_test, model.predict(normalize(mnist.x_test), {.batch_size = 1000}));
  std::printf("training time: %.1f s\ntest accuracy: %.4f\n", seconds.count(),
              static_cast<double>(accuracy.result()));
  std::cout << "TensorBoard: tensorboard --logdir=" << logdir << "\n";
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    if (batch_size <= 0 || num_epochs < 0) {
      throw tf::invalid_argument("--batch_size must be positive, --num_epochs >= 0");
    }
    return run();
  });
}
