// The tf.data chapter's cats-vs-dogs program: list the JPEGs, decode and resize them to
// 256x256 in a parallel map, shuffle, batch and prefetch, then train a small CNN with
// Sequential + compile(Adam) + fit on the pipeline, and evaluate on the validation split.
// `--model mobilenet_v2` trains the Keras chapter's transfer-learning shape instead:
// tf.keras.applications.MobileNetV2(include_top=False, pooling='avg') with a Dense head, from
// scratch or, with `--weights FILE`, from a weights file (frozen, as transfer learning does).
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

#include "common/argparse.hpp"

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {
examples::ArgumentParser parser(
    "cats_vs_dogs",
    "Trains a small CNN (or, with --model mobilenet_v2, MobileNetV2 with a new head) to tell\n"
    "cats from dogs, reading DATA_DIR/train/{cats,dogs}/*.jpg\n"
    "through tf::data (list_files, decode_jpeg, resize, shuffle, batch, prefetch) and\n"
    "reporting accuracy on DATA_DIR/valid. DATA_DIR: --data_dir (the cats_vs_dogs folder or one\n"
    "holding it), else cats_vs_dogs found as tf::keras::utils::get_file finds datasets.");
auto& image_size = parser.add_argument("--image_size", std::int64_t{256});
auto& max_steps = parser.add_argument("--max_steps", std::int64_t{-1}, "batches per epoch");
auto& data_dir_flag = parser.add_data_dir();
auto& model_name = parser.add_argument("--model", std::string("cnn"), "cnn or mobilenet_v2");
auto& weights_file =
    parser.add_argument("--weights", std::string(),
                        "mobilenet_v2: a weights file of MobileNetV2(include_top=False), frozen");

// MobileNetV2 without its classifier, average-pooled, and a new Dense head (the transfer-learning
// shape: base = MobileNetV2(include_top=False, pooling='avg'); outputs = Dense(2)(base(x))).
struct MobileNetClassifier : tf::keras::Model<MobileNetClassifier> {
  tf::keras::applications::MobileNetV2 base;
  layers::Dense head{2, {.activation = tf::nn::softmax}};
  explicit MobileNetClassifier(std::int64_t size)
      : base({.input_shape = {{size, size, 3}},
              .include_top = false,
              .weights = weights_file,
              .pooling = "avg"}) {
    TAPEFLOW_TRACK(base, head);
    base.set_trainable(weights_file.empty());  // a pretrained base stays frozen
  }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& images, bool training) {
    // MobileNetV2 takes pixels in [-1, 1] (keras.applications.mobilenet_v2.preprocess_input)
    return head(base(images * 2.0f - 1.0f, {.training = training}).as<float, 2>());
  }
};

// [seed:cats_vs_dogs begin]
auto& num_epochs = parser.add_argument("--epochs", 10);
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{32});
auto& learning_rate = parser.add_argument("--learning_rate", 0.001);

// [snippet:cats_vs_dogs]
// [snippet:decode_and_resize]
auto decode_and_resize(const tf::Tensor<std::string, 0>& filename,
                       const tf::Tensor<std::int32_t, 0>& label) {
  auto image_string = tf::io::read_file(filename);
  auto image_decoded = tf::image::decode_jpeg(image_string, {.channels = 3});
  auto image_resized = tf::image::resize(image_decoded, {image_size, image_size}) / 255.0f;
  return std::tuple{image_resized, label};
}
// [snippet:decode_and_resize]

template <class Model, class Train, class Test>
void fit_and_evaluate(Model& model, Train& train, Test& test) {
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = learning_rate}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy(),
                 .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  const auto t0 = std::chrono::steady_clock::now();
  if (max_steps >= 0) {  // a quick check: only the first max_steps batches of each epoch
    model.fit(train | tf::data::take(max_steps), {.epochs = num_epochs, .verbose = 2});
  } else {
    model.fit(train, {.epochs = num_epochs, .verbose = 2});
  }
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - t0;
  std::cout << "training: " << seconds.count() << " s\n";
  auto logs = model.evaluate(test, {.verbose = 0});
  std::cout << "validation loss: " << logs["loss"]
            << ", validation accuracy: " << logs["sparse_categorical_accuracy"] << "\n";
}

void train_and_test() {
  auto data_dir = tf::keras::utils::get_file("cats_vs_dogs/train", {.cache_dir = data_dir_flag})
                      .parent_path()
                      .string();
  // the file names of cats (label 0) and of dogs (label 1), concatenated
  auto filenames = [&](const std::string& split) {
    auto labelled = [&](const std::string& animal, std::int32_t label) {
      return tf::data::list_files(data_dir + "/" + split + "/" + animal + "/*.jpg",
                                  {.shuffle = false}) |
             tf::data::map([label](const tf::Tensor<std::string, 0>& f) {
               return std::tuple{f, tf::Tensor<std::int32_t, 0>(label)};
             });
    };
    return labelled("cats", 0) | tf::data::concatenate(labelled("dogs", 1));
  };
  auto train_dataset = filenames("train");
  std::cout << "training images: " << train_dataset.cardinality() << "\n";
  auto train = train_dataset |
               tf::data::map(decode_and_resize, {.num_parallel_calls = tf::data::autotune}) |
               tf::data::shuffle(23000) | tf::data::batch(batch_size) |
               tf::data::prefetch(tf::data::autotune);

  auto test_dataset = filenames("valid") |
                      tf::data::map(decode_and_resize, {.num_parallel_calls = tf::data::autotune}) |
                      tf::data::batch(batch_size) | tf::data::prefetch(tf::data::autotune);
  if (model_name == "mobilenet_v2") {
    MobileNetClassifier model(image_size);
    fit_and_evaluate(model, train, test_dataset);
    return;
  }
  if (model_name != "cnn") {
    throw tf::invalid_argument("--model must be cnn or mobilenet_v2, not '" + model_name + "'");
  }
  // the chapter's CNN, strided so that an epoch takes seconds on a CPU
  auto model = tf::keras::Sequential(
      layers::Conv2D(16, 3, {.strides = 2, .activation = tf::nn::relu}), layers::MaxPooling2D(4),
      layers::Conv2D(32, 3, {.activation = tf::nn::relu}), layers::MaxPooling2D(4),
      layers::Flatten(), layers::Dense(64, {.activation = tf::nn::relu}),
      layers::Dense(2, {.activation = tf::nn::softmax}));
  fit_and_evaluate(model, train, test_dataset);
}
// [snippet:cats_vs_dogs]
// [seed:cats_vs_dogs end]
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    train_and_test();
    return 0;
  });
}
