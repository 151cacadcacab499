// MNIST with the handbook's MLP or CNN (train_mnist.py --model mlp|cnn): its custom loop
// (GradientTape + optimizer.apply_gradients on random batches, then SparseCategoricalAccuracy
// over the test set), or with --fit model.compile + model.fit with a Keras progress bar.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"
#include "common/mnist.hpp"

namespace tf = tapeflow;
using examples::MNISTLoader;

namespace {
// As the Python program's module-level argparse: the values are filled in by main.
examples::ArgumentParser parser(
    "mnist",
    "Trains the handbook's MNIST MLP or CNN with Adam and prints the test accuracy. Default: the\n"
    "handbook's custom loop (GradientTape); --fit uses model.compile + model.fit.");
auto& model_name = parser.add_argument("--model", "mlp", "mlp or cnn");
auto& use_fit = parser.add_argument("--fit", false, "train with model.compile + model.fit");
auto& max_steps = parser.add_argument("--max_steps", std::numeric_limits<std::int64_t>::max(),
                                      "stop after S batches");
auto& seed = parser.add_argument("--seed", 0);
auto& data_dir = parser.add_data_dir();

// [seed:train_mnist begin]
auto& num_epochs = parser.add_argument("--num_epochs", 5);
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{50});
auto& learning_rate = parser.add_argument("--learning_rate", 0.001);

// [snippet:train]
void train(auto& model, MNISTLoader& data_loader) {
  tf::keras::optimizers::Adam optimizer({.learning_rate = learning_rate});
  auto num_batches = std::min(data_loader.num_train_data / batch_size * num_epochs, max_steps);
  for (std::int64_t batch_index = 0; batch_index < num_batches; ++batch_index) {
    auto [X, y] = data_loader.get_batch(batch_size);
    tf::GradientTape tape;
    auto y_pred = model(X);
    auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, y_pred));
    std::printf("batch %ld: loss %f\n", batch_index, loss.item());
    auto grads = tape.gradient(loss, model.variables());
    optimizer.apply_gradients(grads, model.variables());
  }
}
// [snippet:train]

// [snippet:test]
void test(auto& model, MNISTLoader& data_loader) {
  tf::keras::metrics::SparseCategoricalAccuracy sparse_categorical_accuracy;
  auto num_batches = data_loader.num_test_data / batch_size;
  for (std::int64_t batch_index = 0; batch_index < num_batches; ++batch_index) {
    std::int64_t start_index = batch_index * batch_size;
    auto y_pred = model.predict(
        tf::slice(data_loader.test_data, {start_index, 0, 0, 0}, {batch_size, -1, -1, -1}));
    sparse_categorical_accuracy.update_state(
        tf::slice(data_loader.test_label, {start_index}, {batch_size}), y_pred);
  }
  std::printf("test accuracy: %f\n", sparse_categorical_accuracy.result());
}
// [snippet:test]
// [seed:train_mnist end]

// [snippet:fit]
// The same training with Keras' compile and fit.
template <class Model>
void fit(Model& model, MNISTLoader& data_loader) {
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = learning_rate}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy(),
                 .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  model.fit(data_loader.train_data, data_loader.train_label,
            {.batch_size = batch_size, .epochs = num_epochs, .seed = 0});
}
// [snippet:fit]

template <class Model>
int run(MNISTLoader& data_loader) {
  Model model;
  const auto start = std::chrono::steady_clock::now();
  use_fit ? fit(model, data_loader) : train(model, data_loader);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  std::printf("training time: %.1f s\n", seconds.count());
  test(model, data_loader);
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    if ((model_name != "mlp" && model_name != "cnn") || batch_size <= 0) {
      throw tf::invalid_argument("--model must be mlp or cnn and --batch_size > 0");
    }
    tf::random::set_seed(seed);
    MNISTLoader data_loader(data_dir);
    return model_name == "mlp" ? run<examples::MLP>(data_loader) : run<examples::CNN>(data_loader);
  });
}
