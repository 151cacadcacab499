// Inputs and labels for the seed MLP (784 inputs, 10 classes), the same for the same seed in
// every process: what the distribution tests train on, in one process or several.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace tapeflow_test {

/// `n` uniform inputs of 784 floats and their labels in 0..9, drawn from `seed`.
inline std::pair<tapeflow::Tensor<float, 2>, tapeflow::Tensor<std::int32_t, 1>> seed_mlp_batch(
    std::int64_t n, std::int64_t seed) {
  auto x = tapeflow::random::uniform<float>({n, 784}, {.seed = seed});
  auto labels = tapeflow::random::uniform<float>({n}, {.seed = seed + 1}).numpy();
  std::vector<std::int32_t> y;
  for (float v : labels) {
    y.push_back(static_cast<std::int32_t>(v * 10) % 10);
  }
  return {x, tapeflow::constant<std::int32_t>(y)};
}

}  // namespace tapeflow_test
