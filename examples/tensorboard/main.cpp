// The TensorBoard chapter's example: the MNIST MLP trained with GradientTape, logging the loss
// of every batch (and a sample image) with tf::summary, then telling you how to look at it.
//
// With the chapter's "graph and profile" section too: the loss computation runs as a
// tf::function under trace_on({.graph, .profiler}) and trace_export writes its graph (Graphs
// tab) and per-op timings (Profile tab, `<logdir>/plugins/profile/`).
#include <cstdint>
#include <cstdio>

#include <tapeflow/keras.hpp>
#include <tapeflow/summary.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"
#include "common/mnist.hpp"

namespace tf = tapeflow;

namespace {
examples::ArgumentParser parser(
    "tensorboard",
    "Trains the chapter's MNIST MLP with GradientTape and Adam, writing the loss of every batch\n"
    "and a sample image to an event file in --logdir, with the loss function's graph and a\n"
    "profile (trace_on / trace_export), then prints the `tensorboard --logdir` command to view\n"
    "it.");
auto& data_dir = parser.add_data_dir();

// [seed:tensorboard begin]
auto& num_batches = parser.add_argument("--num_batches", std::int64_t{10000});
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{50});
auto& learning_rate = parser.add_argument("--learning_rate", 0.001);
auto& logdir = parser.add_argument("--logdir", "./tensorboard");

// [snippet:train]
void train() {
  examples::MLP model;
  examples::MNISTLoader data_loader(data_dir);
  tf::keras::optimizers::Adam optimizer({.learning_rate = learning_rate});
  auto summary_writer = tf::summary::create_file_writer(logdir);
  auto scope = summary_writer.as_default();  // with summary_writer.as_default():
  auto loss_fn = tf::function(  // a tf::function, so that the trace has a graph to show
      [](const tf::Tensor<std::int32_t, 1>& y, const tf::Tensor<float, 2>& y_pred) {
        return tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, y_pred));
      });
  tf::summary::trace_on({.graph = true, .profiler = true});  // graph and per-op timings
  for (std::int64_t batch_index = 0; batch_index < num_batches; ++batch_index) {
    auto [X, y] = data_loader.get_batch(batch_size);
    tf::GradientTape tape;
    auto y_pred = model(X);
    auto loss = loss_fn(y, y_pred);
    std::printf("batch %ld: loss %f\n", batch_index, loss.item());
    tf::summary::scalar("loss", loss, batch_index);
    auto grads = tape.gradient(loss, model.variables());
    optimizer.apply_gradients(grads, model.variables());
  }
  tf::summary::trace_export("model_trace", 0, {.profiler_outdir = logdir});
  // [snippet:summary_image]
  tf::summary::image("samples", data_loader.get_batch(3).first, 0);
  // [snippet:summary_image]
  summary_writer.close();
  std::printf("wrote %s\n", summary_writer.path().c_str());
}
// [snippet:train]
// [seed:tensorboard end]
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    if (batch_size <= 0 || num_batches < 0) {
      throw tf::invalid_argument("--batch_size must be > 0 and --num_batches >= 0");
    }
    train();
    std::printf("to view it, run:\n  tensorboard --logdir=%s\n", logdir.c_str());
    return 0;
  });
}
