// MNIST with an MLP or a CNN: the TensorFlow 2 handbook's train_mnist.py in C++.
//
// By default it trains with the handbook's custom loop (GradientTape + optimizer.apply_gradients,
// models subclassing tf::keras::Model); with --fit it uses model.compile + model.fit instead.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

// The handbook's MLP: Flatten, Dense(100, relu), Dense(10), softmax.
struct MLP : tf::keras::Model<MLP> {
  layers::Flatten flatten;
  layers::Dense dense1{100, {.activation = tf::nn::relu}};
  layers::Dense dense2{10};

  MLP() { TAPEFLOW_TRACK(flatten, dense1, dense2); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& x, bool /*training*/) {
    return tf::nn::softmax(dense2(dense1(flatten(x))));
  }
};

// The handbook's CNN: two 5x5 "same" convolutions (32, 64 filters) each followed by 2x2 max
// pooling, then Dense(1024, relu), Dense(10), softmax.
struct CNN : tf::keras::Model<CNN> {
  layers::Conv2D conv1{32, 5, {.padding = "same", .activation = tf::nn::relu}};
  layers::MaxPooling2D pool1{2, {.strides = 2}};
  layers::Conv2D conv2{64, 5, {.padding = "same", .activation = tf::nn::relu}};
  layers::MaxPooling2D pool2{2, {.strides = 2}};
  layers::Flatten flatten;
  layers::Dense dense1{1024, {.activation = tf::nn::relu}};
  layers::Dense dense2{10};

  CNN() { TAPEFLOW_TRACK(conv1, pool1, conv2, pool2, flatten, dense1, dense2); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& x, bool /*training*/) {
    auto h = pool2(conv2(pool1(conv1(x))));
    return tf::nn::softmax(dense2(dense1(flatten(h))));
  }
};

namespace {

struct Args {
  std::string model = "mlp";
  int num_epochs = 5;
  std::int64_t batch_size = 50;
  double learning_rate = 0.001;
  bool fit = false;
  std::optional<std::string> data_dir;
  std::int64_t max_steps = -1;  // stop early (for quick checks)
  int log_every = 100;
  unsigned seed = 0;
};

// Pixels scaled to [0, 1], shaped [N, 28, 28, 1] as the handbook's MNISTLoader does.
tf::Tensor<float, 4> prepare(const tf::Tensor<std::uint8_t, 3>& images) {
  return tf::reshape(tf::cast<float>(images) / 255.0f, {-1, 28, 28, 1});
}

double test_accuracy(tf::keras::Model<>& model, const tf::Tensor<float, 4>& x,
                     const tf::Tensor<std::uint8_t, 1>& y) {
  // The handbook: argmax(model.predict(test_data)) compared with the labels.
  auto probs = model.predict(x, {.batch_size = 500}).as<float, 2>();
  auto pred = tf::argmax(probs, 1);
  std::int64_t correct = 0;
  for (std::int64_t i = 0; i < y.num_elements(); ++i) {
    correct += pred.data()[i] == std::int64_t(y.data()[i]) ? 1 : 0;
  }
  return double(correct) / double(y.num_elements());
}

template <class M>
int run(M& model, const Args& args) {
  auto data = tf::keras::datasets::mnist::load_data(
      args.data_dir ? std::optional<std::filesystem::path>(*args.data_dir) : std::nullopt);
  auto x_train = prepare(data.x_train);
  auto x_test = prepare(data.x_test);
  auto y_train = tf::cast<std::int32_t>(data.y_train);
  const std::int64_t n = x_train.dim(0);
  tf::keras::optimizers::Adam optimizer({.learning_rate = args.learning_rate});

  const auto start = std::chrono::steady_clock::now();
  if (args.fit) {
    model.compile({.optimizer = optimizer,
                   .loss = tf::keras::losses::SparseCategoricalCrossentropy(),
                   .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
    model.fit(x_train, y_train,
              {.batch_size = args.batch_size, .epochs = args.num_epochs, .seed = args.seed});
  } else {
    std::mt19937 rng(args.seed);
    std::vector<std::int32_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    const std::int64_t per_epoch = n / args.batch_size;
    std::int64_t batch_index = 0;
    for (int epoch = 0; epoch < args.num_epochs; ++epoch) {
      std::shuffle(order.begin(), order.end(), rng);
      for (std::int64_t b = 0; b < per_epoch; ++b) {
        if (args.max_steps >= 0 && batch_index >= args.max_steps) {
          break;
        }
        std::vector<std::int32_t> idx(order.begin() + b * args.batch_size,
                                      order.begin() + (b + 1) * args.batch_size);
        auto indices = tf::constant<std::int32_t>(idx);
        auto X = tf::gather(x_train, indices);
        auto y = tf::gather(y_train, indices);
        tf::GradientTape tape;
        auto y_pred = model(X, {.training = true});
        auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, y_pred));
        auto vars = model.trainable_variables();
        auto grads = tape.gradient(loss, vars);
        optimizer.apply_gradients(grads, vars);
        ++batch_index;
        if (args.log_every > 0 && batch_index % args.log_every == 0) {
          std::printf("batch %lld: loss %f\n", static_cast<long long>(batch_index), loss.item());
        }
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("training time: %.1f s\n", seconds);
  std::printf("test accuracy: %f\n", test_accuracy(model, x_test, data.y_test));
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
            << "usage: mnist [--model mlp|cnn] [--num_epochs N] [--batch_size B]\n"
               "             [--learning_rate LR] [--fit] [--data_dir DIR] [--max_steps S]\n"
               "             [--log_every K] [--seed S]\n"
               "Trains the TensorFlow handbook's MNIST MLP or CNN with Adam and prints the test\n"
               "accuracy. Default: the handbook's custom loop (GradientTape); --fit uses\n"
               "model.compile/model.fit with a Keras progress bar. MNIST is looked up as\n"
               "tf::keras::datasets::mnist::load_data does (--data_dir, $TAPEFLOW_DATASETS,\n"
               "or data/mnist / shared/data/mnist in a parent directory).\n";
        return 0;
      }
      if (arg == "--model") {
        args.model = value();
      } else if (arg == "--num_epochs") {
        args.num_epochs = std::stoi(value());
      } else if (arg == "--batch_size") {
        args.batch_size = std::stoll(value());
      } else if (arg == "--learning_rate") {
        args.learning_rate = std::stod(value());
      } else if (arg == "--fit") {
        args.fit = true;
      } else if (arg == "--data_dir") {
        args.data_dir = value();
      } else if (arg == "--max_steps") {
        args.max_steps = std::stoll(value());
      } else if (arg == "--log_every") {
        args.log_every = std::stoi(value());
      } else if (arg == "--seed") {
        args.seed = unsigned(std::stoul(value()));
      } else {
        std::cerr << "mnist: unknown argument " << arg << " (see --help)\n";
        return 2;
      }
    } catch (const std::exception& e) {
      std::cerr << "mnist: bad value for " << arg << ": " << e.what() << "\n";
      return 2;
    }
  }
  if (args.batch_size <= 0 || args.num_epochs < 0) {
    std::cerr << "mnist: --batch_size must be positive and --num_epochs non-negative\n";
    return 2;
  }
  try {
    tf::random::set_seed(args.seed);
    if (args.model == "mlp") {
      MLP model;
      return run(model, args);
    }
    if (args.model == "cnn") {
      CNN model;
      return run(model, args);
    }
    std::cerr << "mnist: --model must be mlp or cnn\n";
    return 2;
  } catch (const tf::error& e) {
    std::cerr << "mnist: " << e.what() << "\n";
    return 1;
  }
}
