// Custom Keras pieces, as in the TensorFlow 2 notes: a layer with build/call (MyLayer), a loss
// subclassing Loss (MeanSquaredError) and a metric subclassing Metric (a re-implemented
// SparseCategoricalAccuracy), used with compile/fit/evaluate.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"

namespace tf = tapeflow;

namespace {
examples::ArgumentParser parser(
    "keras_custom",
    "Trains Flatten, MyLayer(100), Dense(10, softmax) on MNIST with a custom MeanSquaredError\n"
    "loss and a custom accuracy metric (model.fit), then evaluates on the test set.");
auto& epochs = parser.add_argument("--epochs", 2);
auto& train_examples = parser.add_argument("--train_examples", std::int64_t{60000});
auto& data_dir = parser.add_data_dir();

// [seed:keras_custom begin]
// [snippet:layer]
// A fully connected layer whose weights are created from the first input's shape.
struct MyLayer : tf::keras::Layer<MyLayer> {
  std::int64_t units;
  tf::Variable<float, 2> w;
  tf::Variable<float, 1> b;

  explicit MyLayer(std::int64_t units) : units(units) {}
  void build(const tf::Shape& input_shape) override {  // input_shape: the first call's
    w = add_weight<float, 2>("w", {input_shape[1], units});
    b = add_weight<float, 1>("b", {units}, tf::keras::initializers::Zeros());
  }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 2>& inputs) {
    return tf::matmul(inputs, w) + b;
  }
};
// [snippet:layer]

// [snippet:loss]
// Mean squared error between the one-hot labels and the predicted probabilities.
struct MeanSquaredError : tf::keras::losses::Loss {
  MeanSquaredError() : Loss("mean_squared_error") {}
  tf::AnyTensor call(const tf::AnyTensor& y_true, const tf::AnyTensor& y_pred) const override {
    auto probs = y_pred.as<float, 2>();
    auto labels = tf::one_hot<float>(tf::cast<std::int32_t>(y_true.as<std::uint8_t, 1>()), 10);
    return tf::reduce_mean(tf::square(probs - labels));
  }
};
// [snippet:loss]

// [snippet:metric]
// SparseCategoricalAccuracy, re-implemented with two state variables.
struct SparseCategoricalAccuracy : tf::keras::metrics::Metric {
  tf::Variable<float, 0> total, count;
  SparseCategoricalAccuracy() : Metric("my_sparse_categorical_accuracy") {
    total = add_weight("total");
    count = add_weight("count");
  }
  void update_state(const tf::AnyTensor& y_true, const tf::AnyTensor& y_pred) override {
    auto pred = tf::argmax(y_pred.as<float, 2>(), -1);
    auto values =
        tf::cast<float>(tf::equal(tf::cast<std::int64_t>(y_true.as<std::uint8_t, 1>()), pred));
    total.assign_add(tf::Tensor<float, 0>(float(y_true.shape()[0])));
    count.assign_add(tf::reduce_sum(values));
  }
  float result() const override { return count.value().item() / total.value().item(); }
};
// [snippet:metric]
// [seed:keras_custom end]

void train_and_evaluate() {
  tf::random::set_seed(1);
  auto [x_train, y_train, x_test, y_test] = tf::keras::datasets::mnist::load_data(data_dir);
  const std::int64_t n = std::min(train_examples, x_train.dim(0));
  auto x = tf::slice(tf::cast<float>(x_train) / 255.0f, {0, 0, 0}, {n, -1, -1});
  auto y = tf::slice(y_train, {0}, {n});

  // [snippet:use]
  auto model = tf::keras::Sequential(
      tf::keras::layers::Flatten(), MyLayer(100),
      tf::keras::layers::Dense(10, {.activation = tf::nn::softmax,
                                    .kernel_initializer = tf::keras::initializers::HeNormal()}));
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 1e-3}),
                 .loss = MeanSquaredError(),
                 .metrics = {SparseCategoricalAccuracy()}});
  model.fit(x, y, {.batch_size = 50, .epochs = epochs, .seed = 1});
  // [snippet:use]
  model.summary();
  auto logs = model.evaluate(tf::cast<float>(x_test) / 255.0f, y_test, {.verbose = 0});
  std::cout << "test loss: " << logs["loss"]
            << "\ntest accuracy: " << logs["my_sparse_categorical_accuracy"] << "\n";
}
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    train_and_evaluate();
    return 0;
  });
}
