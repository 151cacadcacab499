// CUDA optimizer updates: each thread loads one element of the variable and its slots, applies
// the rule the CPU applies (update_rules.hpp) and stores them.
#include <cuda_runtime.h>

#include <tapeflow/ops/training/detail/update_rules.hpp>

#include "training.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {
namespace {

constexpr int threads_per_block = 256;

template <int Slots, class Rule>
__global__ void update_elements(Rule rule, UpdateBuffers b) {
  auto const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (auto i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < b.n;
       i += stride) {
    float value = 0;
    if constexpr (Slots == 0) {
      rule(value, b.old[i], b.gradient[i]);
    } else if constexpr (Slots == 1) {
      float s0 = b.slot_old[0][i];
      rule(value, b.old[i], s0, b.gradient[i]);
      b.slot_out[0][i] = s0;
    } else {
      float s0 = b.slot_old[0][i];
      float s1 = b.slot_old[1][i];
      rule(value, b.old[i], s0, s1, b.gradient[i]);
      b.slot_out[0][i] = s0;
      b.slot_out[1][i] = s1;
    }
    b.out[i] = value;
  }
}

template <class Rule>
constexpr int slots_of() {
  using namespace detail::update_rules;
  if constexpr (std::is_same_v<Rule, GradientDescent<float>>) {
    return 0;
  } else if constexpr (std::is_same_v<Rule, Adam<float>>) {
    return 2;
  } else {
    return 1;
  }
}

}  // namespace

template <class Rule>
void launch_update(const Rule& rule, const UpdateBuffers& buffers, void* stream) {
  if (buffers.n == 0) {
    return;
  }
  std::int64_t const wanted = (buffers.n + threads_per_block - 1) / threads_per_block;
  auto const blocks = static_cast<unsigned>(wanted < 65535 * 8 ? wanted : 65535 * 8);
  update_elements<slots_of<Rule>()>
      <<<blocks, threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(rule, buffers);
}

template void launch_update(const detail::update_rules::GradientDescent<float>&,
                            const UpdateBuffers&, void*);
template void launch_update(const detail::update_rules::KerasMomentum<float>&, const UpdateBuffers&,
                            void*);
template void launch_update(const detail::update_rules::Adam<float>&, const UpdateBuffers&, void*);
template void launch_update(const detail::update_rules::RmsProp<float>&, const UpdateBuffers&,
                            void*);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
