// The TensorBoard chapter's example: the MNIST MLP trained with GradientTape, logging the loss
// of every batch (and a sample image) with tf::summary, then telling you how to look at it.
//
// With --trace, the chapter's "graph and profile" section too: the loss computation runs as a
// tf::function under trace_on({.graph, .profiler}) and trace_export writes its graph (Graphs
// tab) and per-op timings (Profile tab, `<logdir>/plugins/profile/`).
#include <cstdio>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <tapeflow/function/function.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/summary.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

// The chapter's MLP: Flatten, Dense(100, relu), Dense(10), softmax.
struct MLP : tf::keras::Model<MLP> {
  layers::Flatten flatten;
  layers::Dense dense1{100, {.activation = tf::nn::relu}};
  layers::Dense dense2{10};

  MLP() { TAPEFLOW_TRACK(flatten, dense1, dense2); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& x, bool /*training*/) {
    return tf::nn::softmax(dense2(dense1(flatten(x))));
  }
};

namespace {

struct Args {
  std::int64_t num_batches = 1000;
  std::int64_t batch_size = 50;
  double learning_rate = 0.001;
  std::string logdir = "./tensorboard";
  std::optional<std::string> data_dir;
  bool trace = false;
  int print_every = 100;
};

int run(const Args& args) {
  auto data = tf::keras::datasets::mnist::load_data(
      args.data_dir ? std::optional<std::filesystem::path>(*args.data_dir) : std::nullopt);
  auto x_train = tf::reshape(tf::cast<float>(data.x_train) / 255.0f, {-1, 28, 28, 1});
  auto y_train = tf::cast<std::int32_t>(data.y_train);
  const std::int64_t n = x_train.dim(0);

  MLP model;
  tf::keras::optimizers::Adam optimizer({.learning_rate = args.learning_rate});
  auto summary_writer = tf::summary::create_file_writer(args.logdir);  // the chapter's writer

  // --trace: the loss of a batch of predictions as a tf::function (its graph and op times).
  auto loss_fn = tf::function(
      [](const tf::Tensor<std::int32_t, 1>& y, const tf::Tensor<float, 2>& y_pred) {
        return tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, y_pred));
      },
      {.name = "loss_fn"});
  if (args.trace) {
    tf::summary::trace_on({.graph = true, .profiler = true});
  }

  std::mt19937 rng(0);
  std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(n - 1));
  std::vector<std::int32_t> idx(static_cast<std::size_t>(args.batch_size));
  for (std::int64_t batch_index = 0; batch_index < args.num_batches; ++batch_index) {
    for (auto& i : idx) {
      i = pick(rng);  // the chapter's MNISTLoader.get_batch: a random batch
    }
    auto indices = tf::constant<std::int32_t>(idx);
    auto X = tf::gather(x_train, indices);
    auto y = tf::gather(y_train, indices);
    tf::GradientTape tape;
    auto y_pred = model(X, {.training = true});
    auto loss = loss_fn(y, y_pred);
    if (args.print_every > 0 && batch_index % args.print_every == 0) {
      std::printf("batch %lld: loss %f\n", static_cast<long long>(batch_index), loss.item());
    }
    {
      auto scope = summary_writer.as_default();  // the chapter's `with writer.as_default():`
      tf::summary::scalar("loss", loss, batch_index);
      if (batch_index == 0) {
        tf::summary::image("sample", X, batch_index, {.max_outputs = 3});
      }
    }
    auto vars = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
  }
  if (args.trace) {
    auto scope = summary_writer.as_default();
    tf::summary::trace_export("model_trace", 0, {.profiler_outdir = args.logdir});
  }
  summary_writer.close();
  std::printf("wrote %s\n", summary_writer.path().string().c_str());
  std::printf("to view it, run:\n  tensorboard --logdir=%s\n", args.logdir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string const arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        throw std::runtime_error(arg + " needs a value");
      }
      return argv[++i];
    };
    try {
      if (arg == "--help" || arg == "-h") {
        std::cout
            << "usage: tensorboard [--num_batches N] [--batch_size B] [--learning_rate LR]\n"
               "                   [--logdir DIR] [--trace] [--data_dir DIR] [--print_every K]\n"
               "Trains the chapter's MNIST MLP with GradientTape and Adam, writing the loss of\n"
               "every batch and a sample image to an event file in --logdir (default\n"
               "./tensorboard), then prints the `tensorboard --logdir` command to view it.\n"
               "--trace also records the loss function's graph and a profile (trace_on /\n"
               "trace_export). MNIST is found as tf::keras::datasets::mnist::load_data does.\n";
        return 0;
      }
      if (arg == "--num_batches") {
        args.num_batches = std::stoll(value());
      } else if (arg == "--batch_size") {
        args.batch_size = std::stoll(value());
      } else if (arg == "--learning_rate") {
        args.learning_rate = std::stod(value());
      } else if (arg == "--logdir") {
        args.logdir = value();
      } else if (arg == "--trace") {
        args.trace = true;
      } else if (arg == "--data_dir") {
        args.data_dir = value();
      } else if (arg == "--print_every") {
        args.print_every = std::stoi(value());
      } else {
        std::cerr << "tensorboard: unknown argument " << arg << " (see --help)\n";
        return 2;
      }
    } catch (const std::exception& e) {
      std::cerr << "tensorboard: bad value for " << arg << ": " << e.what() << "\n";
      return 2;
    }
  }
  if (args.batch_size <= 0 || args.num_batches < 0) {
    std::cerr << "tensorboard: --batch_size must be positive and --num_batches non-negative\n";
    return 2;
  }
  try {
    return run(args);
  } catch (const tf::error& e) {
    std::cerr << "tensorboard: " << e.what() << "\n";
    return 1;
  }
}
