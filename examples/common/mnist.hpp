// What the TensorFlow handbook's MNIST programs import (zh/model/mnist/mlp.py, cnn.py and
// zh/model/utils.py): the MLP and CNN models and MNISTLoader, shared by the mnist, checkpoint,
// tensorboard and tf.function examples. The `[seed:...]` markers delimit what
// tools/line_counts.py compares with the Python (docs/line_counts.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <utility>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

namespace examples {
namespace tf = tapeflow;
namespace layers = tf::keras::layers;

// [seed:mlp begin]
// [snippet:mlp]
// Flatten, Dense(100, relu), Dense(10), softmax.
struct MLP : tf::keras::Model<MLP> {
  layers::Flatten flatten;  // flattens all but the batch axis
  layers::Dense dense1{100, {.activation = tf::nn::relu}};
  layers::Dense dense2{10};

  MLP() { TAPEFLOW_TRACK(flatten, dense1, dense2); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& inputs) {  // [batch_size, 28, 28, 1]
    auto x = flatten(inputs);                                      // [batch_size, 784]
    x = dense1(x);                                                 // [batch_size, 100]
    x = dense2(x);                                                 // [batch_size, 10]
    return tf::nn::softmax(x);
  }
};
// [snippet:mlp]
// [seed:mlp end]

// [seed:cnn begin]
// [snippet:cnn]
// Two 5x5 "same" convolutions (32, 64 filters), each followed by 2x2 max pooling, then
// Dense(1024, relu), Dense(10), softmax.
struct CNN : tf::keras::Model<CNN> {
  layers::Conv2D conv1{32, 5, {.padding = "same", .activation = tf::nn::relu}};
  layers::MaxPool2D pool1{2, {.strides = 2}};
  layers::Conv2D conv2{64, 5, {.padding = "same", .activation = tf::nn::relu}};
  layers::MaxPool2D pool2{2, {.strides = 2}};
  layers::Flatten flatten;  // the handbook's Reshape(target_shape=(7 * 7 * 64,))
  layers::Dense dense1{1024, {.activation = tf::nn::relu}};
  layers::Dense dense2{10};

  CNN() { TAPEFLOW_TRACK(conv1, pool1, conv2, pool2, flatten, dense1, dense2); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& inputs) {
    auto x = conv1(inputs);  // [batch_size, 28, 28, 32]
    x = pool1(x);            // [batch_size, 14, 14, 32]
    x = conv2(x);            // [batch_size, 14, 14, 64]
    x = pool2(x);            // [batch_size, 7, 7, 64]
    auto y = flatten(x);     // [batch_size, 7 * 7 * 64]
    y = dense1(y);           // [batch_size, 1024]
    y = dense2(y);           // [batch_size, 10]
    return tf::nn::softmax(y);
  }
};
// [snippet:cnn]
// [seed:cnn end]

// [seed:mnist_loader begin]
// [snippet:mnist_loader]
// MNIST scaled to [0, 1] with a channel axis, and random training batches.
struct MNISTLoader {
  tf::keras::datasets::ImageDataset mnist;  // x_train, y_train, x_test, y_test (uint8)
  tf::Tensor<float, 4> train_data = tf::expand_dims(tf::cast<float>(mnist.x_train) / 255.0f, -1);
  tf::Tensor<float, 4> test_data = tf::expand_dims(tf::cast<float>(mnist.x_test) / 255.0f, -1);
  tf::Tensor<std::int32_t, 1> train_label = tf::cast<std::int32_t>(mnist.y_train);  // [60000]
  tf::Tensor<std::int32_t, 1> test_label = tf::cast<std::int32_t>(mnist.y_test);    // [10000]
  std::int64_t num_train_data = train_data.dim(0), num_test_data = test_data.dim(0);

  explicit MNISTLoader(const std::optional<std::filesystem::path>& data_dir = std::nullopt)
      : mnist(tf::keras::datasets::mnist::load_data(data_dir)) {}
  // batch_size examples drawn at random from the training set
  std::pair<tf::Tensor<float, 4>, tf::Tensor<std::int32_t, 1>> get_batch(std::int64_t batch_size) {
    auto index = tf::random::uniform<std::int64_t>({batch_size}, {.maxval = num_train_data});
    return {tf::gather(train_data, index), tf::gather(train_label, index)};
  }
};
// [snippet:mnist_loader]
// [seed:mnist_loader end]

}  // namespace examples
