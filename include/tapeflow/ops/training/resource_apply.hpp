// The fused optimizer updates, TensorFlow's training ops: ResourceApplyGradientDescent,
// ResourceApplyKerasMomentum, ResourceApplyAdam, ResourceApplyRMSProp. Each updates a variable
// and its slot variables in place from a gradient; the Keras optimizers run them through
// `detail::execute`, so an update traced in a tf::function is a node of this name. Float32
// variables only (what the optimizers accept).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/detail/flush_denormals.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/op_concepts.hpp>
#include <tapeflow/ops/state/any_variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

// One block of each update: `old` is the variable's value, `out` receives the new one (often
// the same buffer), slots are updated in place. Defined with Eigen in
// ops/detail/resource_apply_kernels.hpp (compiled in tapeflow::instantiations under
// TAPEFLOW_PRECOMPILED); the formulas are on the ops below.
template <class T>
void gradient_descent_block(std::int64_t n, const T* old, T* out, const T* g, T lr);
template <class T>
void keras_momentum_block(std::int64_t n, const T* old, T* out, T* accum, const T* g, T lr, T mu,
                          bool nesterov);
template <class T>
void adam_block(std::int64_t n, const T* old, T* out, T* m, T* v, const T* g, T beta1, T beta2,
                T alpha, T epsilon);
template <class T>
void rmsprop_block(std::int64_t n, const T* old, T* out, T* ms, const T* g, T lr, T rho, T epsilon);

/// The checks every update shares: a float32 variable (and slots) with the gradient's shape.
template <class Op>
void check_apply_operands(const AnyVariable& var, std::initializer_list<const AnyVariable*> slots,
                          const Shape& grad_shape) {
  auto name = [](const AnyVariable& v) { return v.has_value() ? "'" + v.name() + "'" : "none"; };
  for (const AnyVariable* v : slots) {
    if (!v->has_value() || v->dtype() != DType::float32 || v->shape() != var.shape()) {
      throw invalid_argument(std::string(Op::name) + ": slot variable " + name(*v) +
                             " must be a float32 variable of the shape of " + name(var));
    }
  }
  if (!var.has_value() || var.dtype() != DType::float32) {
    throw invalid_argument(std::string(Op::name) + ": variable " + name(var) +
                           " must be a float32 variable");
  }
  if (grad_shape != var.shape()) {
    throw invalid_argument(std::string(Op::name) + ": gradient of shape " + grad_shape.to_string() +
                           " for variable '" + var.name() + "' of shape " +
                           var.shape().to_string());
  }
}

/// Runs `rule(n, old, var, slots, g)` over the variable, its slots and the gradient `g`, in
/// place: `var[i]` is written from `old[i]`, the same buffer unless a reader or a tape holds
/// the variable's value, in which case `var` is a fresh buffer (copy-on-write without a
/// separate copy pass). The update is memory-bound, so large variables are split over the
/// thread pool, in blocks that stay in L1/L2 so the rule's several sweeps cost one pass.
template <std::size_t NumSlots, class Rule>
void apply_update_kernel(const AnyVariable& var, const std::array<AnyVariable, NumSlots>& slot_vars,
                         const float* g, Rule&& rule) {
  std::array<float*, NumSlots + 1> slots{};  // +1: no zero-length array
  for (std::size_t i = 0; i < NumSlots; ++i) {
    slots[i] = static_cast<float*>(slot_vars[i].writable_raw_data());
  }
  const auto [old_raw, out_raw] = var.overwrite_raw_data();
  const auto* old = static_cast<const float*>(old_raw);
  auto* out = static_cast<float*>(out_raw);
  constexpr std::int64_t grain = std::int64_t{1} << 15;  // below, a pool hand-off costs more
  backend::cpu::parallel_for(var.num_elements(), grain, [&](std::int64_t b, std::int64_t e) {
    const ScopedFlushDenormals flush;  // per thread: pool workers have their own mode
    constexpr std::int64_t block = 2048;
    std::array<float*, NumSlots + 1> part{};
    for (std::int64_t o = b; o < e; o += block) {
      for (std::size_t i = 0; i < NumSlots; ++i) {
        part[i] = slots[i] + o;
      }
      rule(std::min(block, e - o), old + o, out + o, part.data(), g + o);
    }
  });
}

inline float scalar(const Tensor<float, 0>& t) { return *t.data(); }

}  // namespace detail

namespace ops {

/// var -= alpha * delta (TensorFlow op "ResourceApplyGradientDescent").
struct ResourceApplyGradientDescent {
  static constexpr std::string_view name = "ResourceApplyGradientDescent";
  static constexpr std::string_view type_attr = "T";             ///< TensorFlow's dtype attr
  static constexpr std::string_view output_arg = no_output_arg;  ///< TensorFlow's has none
  static constexpr bool stateful = true;
  static constexpr bool differentiable = false;
  AnyVariable var;

  /// TensorFlow's resource input: `var`.
  [[nodiscard]] std::vector<std::int64_t> resources() const { return {var.id()}; }
  /// Placed where the variable lives, as TensorFlow colocates updates with their variable.
  [[nodiscard]] detail::devices::DeviceId placement_device() const { return var.device_id(); }
  template <std::size_t R>
  OutSpec<bool, 0> infer(const Tensor<float, 0>&, const Tensor<float, R>& delta) const {
    detail::check_apply_operands<ResourceApplyGradientDescent>(var, {}, delta.shape());
    return {};
  }
  template <std::size_t R>
  void compute(Tensor<bool, 0>& done, const Tensor<float, 0>& alpha,
               const Tensor<float, R>& delta) const {
    const float lr = detail::scalar(alpha);
    detail::apply_update_kernel<0>(
        var, {}, delta.data(),
        [&](std::int64_t n, const float* old, float* v, float**, const float* g) {
          detail::gradient_descent_block(n, old, v, g, lr);
        });
    *detail::tensor_access::mutable_data(done) = true;
  }
};

/// Keras's momentum (TensorFlow op "ResourceApplyKerasMomentum"):
/// accum = momentum * accum - lr * grad; var += accum
/// (use_nesterov: var += momentum * accum - lr * grad).
struct ResourceApplyKerasMomentum {
  static constexpr std::string_view name = "ResourceApplyKerasMomentum";
  static constexpr std::string_view type_attr = "T";             ///< TensorFlow's dtype attr
  static constexpr std::string_view output_arg = no_output_arg;  ///< TensorFlow's has none
  static constexpr bool stateful = true;
  static constexpr bool differentiable = false;
  AnyVariable var;
  AnyVariable accum;
  bool use_nesterov = false;

  /// TensorFlow's attributes.
  [[nodiscard]] OpAttributes attributes() const { return {{"use_nesterov", use_nesterov}}; }
  /// TensorFlow's resource inputs: `var`, `accum`.
  [[nodiscard]] std::vector<std::int64_t> resources() const { return {var.id(), accum.id()}; }
  /// Placed where the variable lives, as TensorFlow colocates updates with their variable.
  [[nodiscard]] detail::devices::DeviceId placement_device() const { return var.device_id(); }
  template <std::size_t R>
  OutSpec<bool, 0> infer(const Tensor<float, 0>&, const Tensor<float, R>& grad,
                         const Tensor<float, 0>&) const {
    detail::check_apply_operands<ResourceApplyKerasMomentum>(var, {&accum}, grad.shape());
    return {};
  }
  template <std::size_t R>
  void compute(Tensor<bool, 0>& done, const Tensor<float, 0>& lr_t, const Tensor<float, R>& grad,
               const Tensor<float, 0>& momentum) const {
    const float lr = detail::scalar(lr_t);
    const float mu = detail::scalar(momentum);
    const bool nesterov = use_nesterov;
    detail::apply_update_kernel<1>(
        var, {accum}, grad.data(),
        [&](std::int64_t n, const float* old, float* v, float** s, const float* g) {
          detail::keras_momentum_block(n, old, v, s[0], g, lr, mu, nesterov);
        });
    *detail::tensor_access::mutable_data(done) = true;
  }
};

/// Adam (TensorFlow op "ResourceApplyAdam"): m = beta1 m + (1 - beta1) grad;
/// v = beta2 v + (1 - beta2) grad^2;
/// var -= lr * sqrt(1 - beta2_power) / (1 - beta1_power) * m / (sqrt(v) + epsilon).
struct ResourceApplyAdam {
  static constexpr std::string_view name = "ResourceApplyAdam";
  static constexpr std::string_view type_attr = "T";             ///< TensorFlow's dtype attr
  static constexpr std::string_view output_arg = no_output_arg;  ///< TensorFlow's has none
  static constexpr bool stateful = true;
  static constexpr bool differentiable = false;
  AnyVariable var;
  AnyVariable m;
  AnyVariable v;

  /// TensorFlow's attributes.
  [[nodiscard]] OpAttributes attributes() const { return {{"use_nesterov", false}}; }
  /// TensorFlow's resource inputs: `var`, `m`, `v`.
  [[nodiscard]] std::vector<std::int64_t> resources() const { return {var.id(), m.id(), v.id()}; }
  /// Placed where the variable lives, as TensorFlow colocates updates with their variable.
  [[nodiscard]] detail::devices::DeviceId placement_device() const { return var.device_id(); }
  template <std::size_t R>
  OutSpec<bool, 0> infer(const Tensor<float, 0>&, const Tensor<float, 0>&, const Tensor<float, 0>&,
                         const Tensor<float, 0>&, const Tensor<float, 0>&, const Tensor<float, 0>&,
                         const Tensor<float, R>& grad) const {
    detail::check_apply_operands<ResourceApplyAdam>(var, {&m, &v}, grad.shape());
    return {};
  }
  template <std::size_t R>
  void compute(Tensor<bool, 0>& done, const Tensor<float, 0>& beta1_power,
               const Tensor<float, 0>& beta2_power, const Tensor<float, 0>& lr,
               const Tensor<float, 0>& beta1, const Tensor<float, 0>& beta2,
               const Tensor<float, 0>& epsilon, const Tensor<float, R>& grad) const {
    const float b1 = detail::scalar(beta1), b2 = detail::scalar(beta2);
    const float eps = detail::scalar(epsilon);
    const float alpha = detail::scalar(lr) * std::sqrt(1.0f - detail::scalar(beta2_power)) /
                        (1.0f - detail::scalar(beta1_power));
    detail::apply_update_kernel<2>(
        var, {m, v}, grad.data(),
        [&](std::int64_t n, const float* old, float* out, float** s, const float* g) {
          detail::adam_block(n, old, out, s[0], s[1], g, b1, b2, alpha, eps);
        });
    *detail::tensor_access::mutable_data(done) = true;
  }
};

/// RMSprop without momentum, not centered (TensorFlow op "ResourceApplyRMSProp" without its
/// momentum accumulator, which Keras's RMSprop(momentum=0) does not create):
/// ms = rho ms + (1 - rho) grad^2; var -= lr grad / sqrt(ms + epsilon) (epsilon inside the
/// root, as TensorFlow's kernel, Keras 3 and tf_keras have it).
struct ResourceApplyRMSProp {
  static constexpr std::string_view name = "ResourceApplyRMSProp";
  static constexpr std::string_view type_attr = "T";             ///< TensorFlow's dtype attr
  static constexpr std::string_view output_arg = no_output_arg;  ///< TensorFlow's has none
  static constexpr bool stateful = true;
  static constexpr bool differentiable = false;
  AnyVariable var;
  AnyVariable ms;

  /// The resource inputs this op has: `var`, `ms` (TensorFlow's also takes `mom`).
  [[nodiscard]] std::vector<std::int64_t> resources() const { return {var.id(), ms.id()}; }
  /// Placed where the variable lives, as TensorFlow colocates updates with their variable.
  [[nodiscard]] detail::devices::DeviceId placement_device() const { return var.device_id(); }
  /// TensorFlow's ResourceApplyRMSProp always takes a momentum accumulator and a momentum.
  [[nodiscard]] std::string export_error() const {
    return "ResourceApplyRMSProp without momentum: TensorFlow's op needs the `mom` slot and "
           "`momentum` input, which Keras's RMSprop(momentum=0) does not create (Keras updates "
           "with plain ops there)";
  }
  template <std::size_t R>
  OutSpec<bool, 0> infer(const Tensor<float, 0>&, const Tensor<float, 0>&, const Tensor<float, 0>&,
                         const Tensor<float, R>& grad) const {
    detail::check_apply_operands<ResourceApplyRMSProp>(var, {&ms}, grad.shape());
    return {};
  }
  template <std::size_t R>
  void compute(Tensor<bool, 0>& done, const Tensor<float, 0>& lr_t, const Tensor<float, 0>& rho_t,
               const Tensor<float, 0>& epsilon, const Tensor<float, R>& grad) const {
    const float lr = detail::scalar(lr_t), rho = detail::scalar(rho_t);
    const float eps = detail::scalar(epsilon);
    detail::apply_update_kernel<1>(
        var, {ms}, grad.data(),
        [&](std::int64_t n, const float* old, float* v, float** s, const float* g) {
          detail::rmsprop_block(n, old, v, s[0], g, lr, rho, eps);
        });
    *detail::tensor_access::mutable_data(done) = true;
  }
};

}  // namespace ops
TAPEFLOW_END_NAMESPACE

#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/ops/detail/resource_apply_kernels.hpp>
#endif
