// The tf.data chapter's cats-vs-dogs program: list the JPEGs, decode and resize them to
// 256x256 in a parallel map, shuffle, batch and prefetch, then train a small CNN with
// Sequential + compile(Adam) + fit on the pipeline, and evaluate on the validation split.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <tuple>

#include <tapeflow/data.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/io/files.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main(int argc, char** argv) {
  std::string data_dir = "../shared/data/cats_vs_dogs";
  int epochs = 10, batch_size = 32;  // the chapter's num_epochs, batch_size
  std::int64_t image_size = 256, max_steps = -1;
  float learning_rate = 1e-3f;  // the chapter's
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout
          << "usage: cats_vs_dogs [--data_dir DIR] [--epochs N] [--batch_size N]\n"
             "                    [--image_size N] [--learning_rate LR] [--max_steps N]\n"
             "Trains a small CNN to tell cats from dogs, reading DIR/train/{cats,dogs}/*.jpg\n"
             "through tf::data (list_files, decode_jpeg, resize, shuffle, batch, prefetch)\n"
             "and reporting accuracy on DIR/valid. Default DIR: ../shared/data/cats_vs_dogs.\n";
      return 0;
    }
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        throw tf::invalid_argument("missing value after " + arg);
      }
      return argv[++i];
    };
    if (arg == "--data_dir") {
      data_dir = value();
    } else if (arg == "--epochs") {
      epochs = std::stoi(value());
    } else if (arg == "--batch_size") {
      batch_size = std::stoi(value());
    } else if (arg == "--image_size") {
      image_size = std::stoll(value());
    } else if (arg == "--learning_rate") {
      learning_rate = std::stof(value());
    } else if (arg == "--max_steps") {
      max_steps = std::stoll(value());
    } else {
      std::cerr << "cats_vs_dogs: unknown argument " << arg << " (see --help)\n";
      return 2;
    }
  }
  try {
    // _decode_and_resize from the chapter
    auto decode_and_resize = [image_size](const tf::Tensor<std::string, 0>& filename,
                                          const tf::Tensor<std::int32_t, 0>& label) {
      auto image_string = tf::io::read_file(filename);
      auto image_decoded = tf::image::decode_jpeg(image_string, {.channels = 3});
      auto image_resized = tf::image::resize(image_decoded, {image_size, image_size}) / 255.0f;
      return std::tuple{image_resized, label};
    };
    // the chapter lists cats (label 0) and dogs (label 1) and concatenates them
    auto labelled = [&](const std::string& split, const std::string& cls, std::int32_t label) {
      return tf::data::list_files(data_dir + "/" + split + "/" + cls + "/*.jpg",
                                  {.shuffle = false}) |
             tf::data::map([label](const tf::Tensor<std::string, 0>& f) {
               return std::tuple{f, tf::Tensor<std::int32_t, 0>(label)};
             });
    };
    auto train_dataset =
        labelled("train", "cats", 0) | tf::data::concatenate(labelled("train", "dogs", 1));
    std::cout << "training images: " << train_dataset.cardinality() << "\n";
    auto train = train_dataset |
                 tf::data::map(decode_and_resize, {.num_parallel_calls = tf::data::autotune}) |
                 tf::data::shuffle(20000) | tf::data::batch(batch_size) |
                 tf::data::prefetch(tf::data::autotune);
    auto valid =
        (labelled("valid", "cats", 0) | tf::data::concatenate(labelled("valid", "dogs", 1))) |
        tf::data::map(decode_and_resize, {.num_parallel_calls = tf::data::autotune}) |
        tf::data::batch(batch_size) | tf::data::prefetch(tf::data::autotune);

    // A small CNN in the chapter's style (strided, so that an epoch takes seconds on a CPU).
    namespace layers = tf::keras::layers;
    auto model = tf::keras::Sequential(
        layers::Conv2D(16, 3, {.strides = 2, .activation = tf::nn::relu}), layers::MaxPooling2D(4),
        layers::Conv2D(32, 3, {.activation = tf::nn::relu}), layers::MaxPooling2D(4),
        layers::Flatten(), layers::Dense(64, {.activation = tf::nn::relu}),
        layers::Dense(2, {.activation = tf::nn::softmax}));
    model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = learning_rate}),
                   .loss = tf::keras::losses::SparseCategoricalCrossentropy(),
                   .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
    const auto t0 = std::chrono::steady_clock::now();
    if (max_steps >= 0) {  // a quick check: only the first max_steps batches of each epoch
      model.fit(train | tf::data::take(max_steps), {.epochs = epochs, .verbose = 2});
    } else {
      model.fit(train, {.epochs = epochs, .verbose = 2});
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "training: " << s << " s\n";
    auto logs = model.evaluate(valid, {.verbose = 0});
    std::cout << "validation loss: " << logs["loss"]
              << ", validation accuracy: " << logs["sparse_categorical_accuracy"] << "\n";
  } catch (const std::exception& e) {
    std::cerr << "cats_vs_dogs: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
