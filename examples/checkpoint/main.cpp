// The checkpoint chapter's CheckPointMlp program in C++: train an MLP on MNIST and save it every
// 100 batches with tf::train::Checkpoint (or, with --manager, keep the last three through a
// CheckpointManager numbered by batch index); --mode test restores the latest checkpoint into a
// fresh, unbuilt model (deferred restoration) and prints the test accuracy. --from-python DIR
// does the same with a checkpoint the chapter's Python program wrote (checkpoint_mlp.py beside
// this file; Keras 3 or tf_keras, detected from the file).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train.hpp>

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

struct Args {
  std::string mode = "train";
  int num_epochs = 1;
  std::int64_t batch_size = 50;
  double learning_rate = 0.001;
  std::string save_dir = "./save";
  bool manager = false;
  std::int64_t max_steps = -1;
  std::optional<std::string> data_dir;
  std::optional<std::string> from_python;
};

tf::keras::datasets::ImageDataset load(const Args& args) {
  return tf::keras::datasets::mnist::load_data(
      args.data_dir ? std::optional<std::filesystem::path>(*args.data_dir) : std::nullopt);
}
tf::Tensor<float, 4> prepare(const tf::Tensor<std::uint8_t, 3>& images) {
  return tf::reshape(tf::cast<float>(images) / 255.0f, {-1, 28, 28, 1});
}

void train(const Args& args) {
  auto data = load(args);
  auto x_train = prepare(data.x_train);
  auto y_train = tf::cast<std::int32_t>(data.y_train);
  MLP model;
  tf::keras::optimizers::Adam optimizer({.learning_rate = args.learning_rate});
  const std::int64_t n = x_train.dim(0);
  std::int64_t num_batches = n / args.batch_size * args.num_epochs;
  if (args.max_steps >= 0 && args.max_steps < num_batches) {
    num_batches = args.max_steps;
  }
  // Instantiate the Checkpoint with the model as the object to save.
  tf::train::Checkpoint checkpoint({{"myAwesomeModel", model}});
  std::optional<tf::train::CheckpointManager> manager;
  if (args.manager) {
    manager.emplace(
        checkpoint, args.save_dir,
        tf::train::CheckpointManagerOptions{.checkpoint_name = "model.ckpt", .max_to_keep = 3});
  }
  std::mt19937 rng(0);
  std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(n - 1));
  for (std::int64_t batch_index = 1; batch_index <= num_batches; ++batch_index) {
    std::vector<std::int32_t> idx(static_cast<std::size_t>(args.batch_size));
    for (auto& i : idx) {
      i = pick(rng);
    }
    auto indices = tf::constant<std::int32_t>(idx);
    auto X = tf::gather(x_train, indices);
    auto y = tf::gather(y_train, indices);
    tf::GradientTape tape;
    auto y_pred = model(X, {.training = true});
    auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, y_pred));
    std::printf("batch %lld: loss %f\n", static_cast<long long>(batch_index), loss.item());
    auto vars = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
    if (batch_index % 100 == 0) {  // save every 100 batches
      std::string path = manager ? manager->save({.checkpoint_number = batch_index})
                                 : checkpoint.save(args.save_dir + "/model.ckpt");
      std::printf("model saved to %s\n", path.c_str());
    }
  }
}

int test(const Args& args) {
  auto data = load(args);
  auto x_test = prepare(data.x_test);
  MLP model_to_be_restored;
  // Restore into the new model under the same key; its layers are built (and the values
  // applied) by the first call.
  tf::train::Checkpoint checkpoint({{"myAwesomeModel", model_to_be_restored}});
  const std::string dir = args.from_python ? *args.from_python : args.save_dir;
  const std::string latest = tf::train::latest_checkpoint(dir);
  if (latest.empty()) {
    std::cerr << "checkpoint: no checkpoint in " << dir
              << (args.from_python ? " (run checkpoint_mlp.py first)\n"
                                   : " (run --mode train first)\n");
    return 1;
  }
  auto status = checkpoint.restore(latest);
  if (args.from_python) {
    std::printf("layout: %s\n", std::string(tf::train::layout_name(status.layout())).c_str());
  }
  auto probs = model_to_be_restored.predict(x_test, {.batch_size = 500}).as<float, 2>();
  status.assert_consumed();
  auto pred = tf::argmax(probs, 1);
  std::int64_t correct = 0;
  for (std::int64_t i = 0; i < data.y_test.num_elements(); ++i) {
    correct += pred.data()[i] == std::int64_t(data.y_test.data()[i]) ? 1 : 0;
  }
  std::printf("restored %s\ntest accuracy: %f\n", latest.c_str(),
              double(correct) / double(data.y_test.num_elements()));
  return 0;
}

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "checkpoint: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout
          << "usage: checkpoint [--mode train|test] [--num_epochs N] [--batch_size N]\n"
             "                  [--learning_rate LR] [--save_dir DIR] [--manager]\n"
             "                  [--max_steps N] [--data_dir DIR] [--from-python DIR]\n"
             "The checkpoint chapter's CheckPointMlp: --mode train trains an MLP on MNIST and\n"
             "saves it every 100 batches with tf::train::Checkpoint (DIR/model.ckpt-1, -2, ...;\n"
             "default DIR ./save); with --manager a CheckpointManager keeps the last 3, numbered\n"
             "by batch index. --mode test restores tf::train::latest_checkpoint(DIR) into a new\n"
             "model and prints the test accuracy. --from-python DIR restores the latest\n"
             "checkpoint the chapter's Python program (checkpoint_mlp.py, Keras 3 or tf_keras)\n"
             "wrote in DIR the same way and prints the layout it found. MNIST is found as\n"
             "tf::keras::datasets::mnist::load_data does (--data_dir, $TAPEFLOW_DATASETS, ...).\n";
      return 0;
    }
    try {
      if (a == "--mode") {
        args.mode = value();
      } else if (a == "--num_epochs") {
        args.num_epochs = std::stoi(value());
      } else if (a == "--batch_size") {
        args.batch_size = std::stoll(value());
      } else if (a == "--learning_rate") {
        args.learning_rate = std::stod(value());
      } else if (a == "--save_dir") {
        args.save_dir = value();
      } else if (a == "--manager") {
        args.manager = true;
      } else if (a == "--max_steps") {
        args.max_steps = std::stoll(value());
      } else if (a == "--data_dir") {
        args.data_dir = value();
      } else if (a == "--from-python") {
        args.from_python = value();
      } else {
        std::cerr << "checkpoint: unknown argument " << a << " (see --help)\n";
        return 2;
      }
    } catch (const std::exception&) {
      std::cerr << "checkpoint: bad value for " << a << "\n";
      return 2;
    }
  }
  if (args.from_python) {
    args.mode = "test";  // a Python-written checkpoint is only read here
  }
  try {
    if (args.mode == "train") {
      train(args);
      return 0;
    }
    if (args.mode == "test") {
      return test(args);
    }
    std::cerr << "checkpoint: --mode must be train or test\n";
    return 2;
  } catch (const tf::error& e) {
    std::cerr << "checkpoint: " << e.what() << "\n";
    return 1;
  }
}
