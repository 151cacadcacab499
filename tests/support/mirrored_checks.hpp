// What the MirroredStrategy tests share: logical CPUs for replicas, the seed MLP, one replica's
// reference training on the global batches, and float comparisons of variables' values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/config/config.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace tapeflow_test {

/// Splits the first physical CPU into `n` logical CPUs (one replica each). A process does this
/// once, before any device is used: CTest runs each case in its own process.
inline void logical_cpus(std::size_t n) {
  tapeflow::config::set_logical_device_configuration(
      tapeflow::config::list_physical_devices("CPU").at(0),
      std::vector<tapeflow::config::LogicalDeviceConfiguration>(n));
}

/// The elements of a float32 tensor.
inline std::vector<float> floats(const tapeflow::AnyTensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.num_elements()));
  std::copy_n(static_cast<const float*>(t.raw_data()), out.size(), out.begin());
  return out;
}

/// max |a - b| over two float32 tensors of the same size.
inline float max_abs_diff(const tapeflow::AnyTensor& a, const tapeflow::AnyTensor& b) {
  const auto x = floats(a);
  const auto y = floats(b);
  REQUIRE(x.size() == y.size());
  float worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, std::abs(x[i] - y[i]));
  }
  return worst;
}

/// The seed MLP (Dense(100, relu), Dense(10)) on 784 inputs, built, with the same initial
/// weights for every call.
inline auto seed_mlp() {
  tapeflow::random::set_seed(11);
  auto model = tapeflow::keras::Sequential(
      tapeflow::keras::layers::Dense(100, {.activation = tapeflow::nn::relu}),
      tapeflow::keras::layers::Dense(10));
  (void)model(tapeflow::zeros<float>({1, 784}));
  return model;
}

/// The seed MLP trained eagerly by one replica with Adam (learning rate 1e-3) on `steps`
/// consecutive global batches of `x`, `y`: what distributed custom loops must reproduce.
inline auto seed_mlp_trained_on_global_batches(const tapeflow::Tensor<float, 2>& x,
                                               const tapeflow::Tensor<std::int32_t, 1>& y,
                                               std::int64_t global_batch, int steps) {
  auto loss_fn = tapeflow::keras::losses::SparseCategoricalCrossentropy({.from_logits = true});
  auto single = seed_mlp();
  tapeflow::keras::optimizers::Adam opt({.learning_rate = 1e-3});
  for (std::int64_t s = 0; s < steps; ++s) {
    auto bx = tapeflow::slice(x, {s * global_batch, 0}, {global_batch, 784});
    auto by = tapeflow::slice(y, {s * global_batch}, {global_batch});
    tapeflow::GradientTape tape;
    auto loss = loss_fn(tapeflow::AnyTensor(by), tapeflow::AnyTensor(single(bx)));
    tape.stop();
    auto vars = single.trainable_variables();
    opt.apply_gradients(tapeflow::keras::gradient(tape, loss, vars), vars);
  }
  return single;
}

}  // namespace tapeflow_test
