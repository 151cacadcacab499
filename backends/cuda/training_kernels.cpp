// The CUDA kernels of the optimizers' fused updates (ResourceApplyGradientDescent,
// ResourceApplyKerasMomentum, ResourceApplyAdam, ResourceApplyRMSProp). The ops are placed
// where their variable lives, so a GPU update finds the variable and its slots in its memory;
// the hyperparameters are scalars read from their host copies, as the CPU kernels read them.
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>

#include <cuda_runtime.h>

#include <tapeflow/backend/cuda/platform.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/ops/kernel_registry.hpp>
#include <tapeflow/ops/training/detail/update_rules.hpp>
#include <tapeflow/ops/training/resource_apply.hpp>

#include "device_memory.hpp"
#include "kernels.hpp"
#include "training.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {
namespace {

float scalar_of(const AnyTensor& t) { return *static_cast<const float*>(t.raw_data()); }

// Runs `rule` over `var` and `slots` (checked by the op's infer) with gradient `grad`.
// The op's output (TensorFlow's has none) is a `true` written on the device.
template <class Rule, std::size_t Slots>
void run_update(const Rule& rule, const AnyVariable& var,
                const std::array<const AnyVariable*, Slots>& slots, const AnyTensor& grad,
                AnyTensor& done) {
  // Slots created elsewhere than their variable would hand this kernel host memory.
  for (const AnyVariable* slot : slots) {
    if (slot->device_id() != var.device_id()) {
      throw invalid_argument("optimizer update of '" + var.name() + "' on " + var.device() +
                             ": its slot variable '" + slot->name() + "' lives on " +
                             slot->device());
    }
  }
  CudaMemory& device = current_device();
  UpdateBuffers buffers;
  buffers.n = grad.num_elements();
  buffers.gradient = static_cast<const float*>(grad.device_data());
  for (std::size_t i = 0; i < Slots; ++i) {
    auto const [old, out] = slots[i]->overwrite_device_data();
    buffers.slot_old[i] = static_cast<const float*>(old);
    buffers.slot_out[i] = static_cast<float*>(out);
  }
  auto const [old, out] = var.overwrite_device_data();
  buffers.old = static_cast<const float*>(old);
  buffers.out = static_cast<float*>(out);
  device.activate();
  launch_update(rule, buffers, device.stream());
  check(cudaGetLastError(), "optimizer update kernel launch");
  check(
      cudaMemsetAsync(done.mutable_device_data(), 1, 1, static_cast<cudaStream_t>(device.stream())),
      "cudaMemsetAsync");
}

inline constexpr std::array float_only{DType::float32};

}  // namespace
}  // namespace backend::cuda

template <>
struct kernel<ops::ResourceApplyGradientDescent, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::float_only;
  static void run(const ops::ResourceApplyGradientDescent& op, AnyTensor& done,
                  std::span<const AnyTensor> in) {
    detail::update_rules::GradientDescent<float> const rule{backend::cuda::scalar_of(in[0])};
    backend::cuda::run_update<decltype(rule), 0>(rule, op.var, {}, in[1], done);
  }
};
template <>
struct kernel<ops::ResourceApplyKerasMomentum, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::float_only;
  static void run(const ops::ResourceApplyKerasMomentum& op, AnyTensor& done,
                  std::span<const AnyTensor> in) {
    // inputs: lr, grad, momentum
    detail::update_rules::KerasMomentum<float> const rule{
        backend::cuda::scalar_of(in[0]), backend::cuda::scalar_of(in[2]), op.use_nesterov};
    backend::cuda::run_update<decltype(rule), 1>(rule, op.var, {&op.accum}, in[1], done);
  }
};
template <>
struct kernel<ops::ResourceApplyAdam, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::float_only;
  static void run(const ops::ResourceApplyAdam& op, AnyTensor& done,
                  std::span<const AnyTensor> in) {
    // inputs: beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad; the bias correction
    // as the CPU kernel computes it
    using backend::cuda::scalar_of;
    float const alpha =
        scalar_of(in[2]) * std::sqrt(1.0f - scalar_of(in[1])) / (1.0f - scalar_of(in[0]));
    detail::update_rules::Adam<float> const rule{scalar_of(in[3]), scalar_of(in[4]), alpha,
                                                 scalar_of(in[5])};
    backend::cuda::run_update<decltype(rule), 2>(rule, op.var, {&op.m, &op.v}, in[6], done);
  }
};
template <>
struct kernel<ops::ResourceApplyRMSProp, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::float_only;
  static void run(const ops::ResourceApplyRMSProp& op, AnyTensor& done,
                  std::span<const AnyTensor> in) {
    // inputs: lr, rho, epsilon, grad
    using backend::cuda::scalar_of;
    detail::update_rules::RmsProp<float> const rule{scalar_of(in[0]), scalar_of(in[1]),
                                                    scalar_of(in[2])};
    backend::cuda::run_update<decltype(rule), 1>(rule, op.var, {&op.ms}, in[3], done);
  }
};

namespace backend::cuda {

void register_training_kernels(BackendId id) {
  register_kernel<ops::ResourceApplyGradientDescent, Backend>(id);
  register_kernel<ops::ResourceApplyKerasMomentum, Backend>(id);
  register_kernel<ops::ResourceApplyAdam, Backend>(id);
  register_kernel<ops::ResourceApplyRMSProp, Backend>(id);
}

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
