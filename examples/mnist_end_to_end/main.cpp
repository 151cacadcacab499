// The README's demo: the MNIST MLP end to end through every module a TensorFlow user would
// combine — keras::datasets to load, a tf.data pipeline (from_tensor_slices | shuffle | batch |
// prefetch), a Keras Sequential model trained with GradientTape and Adam, the loss logged to
// TensorBoard, model and optimizer saved each epoch by a CheckpointManager (a second run resumes
// from the latest checkpoint), and the test accuracy at the end.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include <tapeflow/data.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/summary.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {

struct Args {
  int num_epochs = 2;
  std::int64_t batch_size = 50;
  double learning_rate = 1e-3;
  std::string logdir = "./tensorboard";
  std::string save_dir = "./save";
  std::optional<std::string> data_dir;
  std::int64_t max_steps = -1;  // per epoch, for quick checks
};

tf::Tensor<float, 3> normalize(const tf::Tensor<std::uint8_t, 3>& images) {
  return tf::cast<float>(images) / 255.0f;
}

int run(const Args& args) {
  auto mnist = tf::keras::datasets::mnist::load_data(
      args.data_dir ? std::optional<std::filesystem::path>(*args.data_dir) : std::nullopt);
  auto x_train = normalize(mnist.x_train);
  auto y_train = tf::cast<std::int32_t>(mnist.y_train);
  auto train = tf::data::from_tensor_slices(x_train, y_train) |
               tf::data::shuffle(10000, {.seed = 1}) | tf::data::batch(args.batch_size) |
               tf::data::prefetch(tf::data::autotune);

  tf::keras::Sequential model(layers::Flatten(), layers::Dense(100, {.activation = tf::nn::relu}),
                              layers::Dense(10));
  tf::keras::optimizers::Adam optimizer({.learning_rate = args.learning_rate});
  tf::keras::losses::SparseCategoricalCrossentropy loss_fn({.from_logits = true});

  tf::train::Checkpoint checkpoint({{"model", model}, {"optimizer", optimizer}});
  tf::train::CheckpointManager manager(checkpoint, args.save_dir, {.max_to_keep = 3});
  int first_epoch = 0;
  if (const std::string latest = manager.latest_checkpoint(); !latest.empty()) {
    // Layers are built on their first call: the restore is applied when the weights appear.
    checkpoint.restore(latest);
    first_epoch = std::stoi(latest.substr(latest.rfind('-') + 1));  // "ckpt-<epoch>"
    std::cout << "resumed from " << latest << "\n";
  }
  auto writer = tf::summary::create_file_writer(args.logdir);

  const auto start = std::chrono::steady_clock::now();
  std::int64_t step = optimizer.iterations();
  for (int epoch = first_epoch; epoch < first_epoch + args.num_epochs; ++epoch) {
    std::int64_t batches = 0;
    float last_loss = 0;
    for (auto&& [x, y] : train) {
      if (args.max_steps >= 0 && batches >= args.max_steps) {
        break;
      }
      tf::GradientTape tape;
      auto logits = model(x, true);
      auto loss = loss_fn(y, logits);
      auto vars = model.trainable_variables();
      optimizer.apply_gradients(tape.gradient(loss, vars), vars);
      ++batches;
      ++step;
      if (step % 100 == 0) {
        auto scope = writer.as_default();
        tf::summary::scalar("loss", loss, step);
      }
      last_loss = loss.item();
    }
    const std::string path = manager.save({.checkpoint_number = epoch + 1});
    std::printf("epoch %d: %lld batches, loss %.4f, saved %s\n", epoch + 1,
                static_cast<long long>(batches), static_cast<double>(last_loss), path.c_str());
  }
  writer.flush();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  auto logits = model.predict(normalize(mnist.x_test), {.batch_size = 1000}).as<float, 2>();
  auto predicted = tf::argmax(logits, 1);
  std::int64_t correct = 0;
  for (std::int64_t i = 0; i < predicted.num_elements(); ++i) {
    correct += predicted.data()[i] == static_cast<std::int64_t>(mnist.y_test.data()[i]) ? 1 : 0;
  }
  std::printf("training time: %.1f s\ntest accuracy: %.4f\n", seconds,
              static_cast<double>(correct) / static_cast<double>(predicted.num_elements()));
  std::cout << "TensorBoard: tensorboard --logdir=" << args.logdir << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        throw std::runtime_error(arg + " needs a value");
      }
      return argv[++i];
    };
    try {
      if (arg == "--help" || arg == "-h") {
        std::cout
            << "usage: mnist_end_to_end [--num_epochs N] [--batch_size B] [--learning_rate LR]\n"
               "                        [--logdir DIR] [--save_dir DIR] [--data_dir DIR]\n"
               "                        [--max_steps S]\n"
               "Trains the MNIST MLP (Flatten, Dense 100 relu, Dense 10) with Adam on a tf::data\n"
               "pipeline, logs the loss to TensorBoard (--logdir, default ./tensorboard), keeps\n"
               "the last 3 epoch checkpoints of model and optimizer (--save_dir, default ./save;\n"
               "a later run resumes from the latest) and prints the test accuracy.\n";
        return 0;
      }
      if (arg == "--num_epochs") {
        args.num_epochs = std::stoi(value());
      } else if (arg == "--batch_size") {
        args.batch_size = std::stoll(value());
      } else if (arg == "--learning_rate") {
        args.learning_rate = std::stod(value());
      } else if (arg == "--logdir") {
        args.logdir = value();
      } else if (arg == "--save_dir") {
        args.save_dir = value();
      } else if (arg == "--data_dir") {
        args.data_dir = value();
      } else if (arg == "--max_steps") {
        args.max_steps = std::stoll(value());
      } else {
        std::cerr << "mnist_end_to_end: unknown argument " << arg << " (see --help)\n";
        return 2;
      }
    } catch (const std::exception& e) {
      std::cerr << "mnist_end_to_end: bad value for " << arg << ": " << e.what() << "\n";
      return 2;
    }
  }
  if (args.batch_size <= 0 || args.num_epochs < 0) {
    std::cerr << "mnist_end_to_end: --batch_size must be positive, --num_epochs >= 0\n";
    return 2;
  }
  try {
    return run(args);
  } catch (const tf::error& e) {
    std::cerr << "mnist_end_to_end: " << e.what() << "\n";
    return 1;
  }
}
