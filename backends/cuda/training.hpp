// Launchers of the CUDA optimizer updates (backends/cuda/training.cu): the rules of
// ops/training/detail/update_rules.hpp, one element per thread, in place or copy-on-write.
// Internal to tapeflow::cuda.
#pragma once

#include <cstdint>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// A variable's and its slots' old values and where the new ones go (the same buffers unless
/// someone still holds the old ones), and the gradient, over `n` float elements.
struct UpdateBuffers {
  const float* old = nullptr;
  float* out = nullptr;
  const float* slot_old[2] = {nullptr, nullptr};
  float* slot_out[2] = {nullptr, nullptr};
  const float* gradient = nullptr;
  std::int64_t n = 0;
};

/// Applies `Rule` (a rule of update_rules.hpp with float parameters) on `stream`.
template <class Rule>
void launch_update(const Rule& rule, const UpdateBuffers& buffers, void* stream);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
