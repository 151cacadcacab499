// A tiny Keras model, in one file for Compiler Explorer (README, "Compiler Explorer"): two
// Gaussian blobs, a Sequential MLP, compile, fit, evaluate. There: add the libraries Eigen and
// range-v3, compile with -std=c++20 -O2, and include single_include/tapeflow/all.hpp by its URL.
// [snippet:program]
#include <cstdint>
#include <iostream>
#include <vector>

#include <tapeflow/all.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

int main() {
  tf::random::set_seed(1);
  const std::int64_t n = 256;
  auto x = tf::random::normal<float>({n, 2}, {.seed = 1});
  std::vector<std::int32_t> labels(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    labels[static_cast<std::size_t>(i)] = x(i, 0) + x(i, 1) > 0 ? 1 : 0;
  }
  auto y = tf::constant<std::int32_t>(labels);

  auto model =
      tf::keras::Sequential(layers::Dense(8, {.activation = tf::nn::relu}), layers::Dense(2));
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 1e-2}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                 .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  model.fit(x, y, {.batch_size = 32, .epochs = 10, .verbose = 0, .seed = 2});
  model.summary();
  auto logs = model.evaluate(x, y, {.verbose = 0});
  std::cout << "accuracy: " << logs.at("sparse_categorical_accuracy") << "\n";
  return logs.at("sparse_categorical_accuracy") > 0.9 ? 0 : 1;
}
// [snippet:program]
