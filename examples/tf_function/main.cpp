// The tf.function chapter's program: the handbook's CNN trained on MNIST with its training step
// as a tf::function (graph execution), printing each batch's loss from inside the graph
// (tf::print) and then the time the batches took. --eager runs the same step eagerly, for the
// chapter's comparison of the two.
#include <chrono>
#include <cstdint>
#include <cstdio>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"
#include "common/mnist.hpp"

namespace tf = tapeflow;

namespace {
examples::ArgumentParser parser(
    "tf_function",
    "Trains the handbook's MNIST CNN with Adam, its training step a tf::function: prints every\n"
    "batch's loss (tf::print, from the graph) and then the seconds the batches took. --eager\n"
    "runs the step without tf::function.");
auto& eager = parser.add_argument("--eager", false, "run the step eagerly (no tf::function)");
auto& seed = parser.add_argument("--seed", 0);
auto& data_dir = parser.add_data_dir();

// [seed:tf_function begin]
auto& num_batches = parser.add_argument("--num_batches", std::int64_t{400});
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{50});
auto& learning_rate = parser.add_argument("--learning_rate", 0.001);

// [snippet:train]
void train() {
  examples::MNISTLoader data_loader(data_dir);
  examples::CNN model;
  tf::keras::optimizers::Adam optimizer({.learning_rate = learning_rate});
  auto step = [&](const tf::Tensor<float, 4>& X, const tf::Tensor<std::int32_t, 1>& y) {
    tf::GradientTape tape;
    auto y_pred = model(X);
    auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, y_pred));
    tf::print(loss);  // a graph op: runs on every call (std::printf would run while tracing)
    auto grads = tape.gradient(loss, model.variables());
    optimizer.apply_gradients(grads, model.variables());
  };
  auto train_one_step = tf::function(step);
  auto start_time = std::chrono::steady_clock::now();
  for (std::int64_t batch_index = 0; batch_index < num_batches; ++batch_index) {
    auto [X, y] = data_loader.get_batch(batch_size);
    if (eager) {
      step(X, y);
    } else {
      train_one_step(X, y);
    }
  }
  std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start_time;
  std::printf("%f\n", seconds.count());
}
// [snippet:train]
// [seed:tf_function end]
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    tf::random::set_seed(seed);
    train();
    return 0;
  });
}
