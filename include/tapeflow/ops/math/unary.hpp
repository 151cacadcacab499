// Elementwise unary math: negative, exp, log, sqrt, square, abs, sign, tanh, sigmoid, relu
// (and relu's gradient op, ReluGrad).
// One struct per op, each with its Eigen element rule and its gradient side by side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <tapeflow/backend/cpu/generic_vec.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/elementwise.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>  // the gradients
#include <tapeflow/ops/math/detail/scalar_math.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {
/// out = features > 0 ? gradients : 0 over n elements (a NaN feature gives 0, as in
/// TensorFlow's select). Vector-extension code: GCC's -O2 leaves runtime-length loops scalar.
template <class T>
void relu_grad_kernel(const T* gradients, const T* features, T* out, std::int64_t n) {
  backend::cpu::parallel_for(n, parallel_grain, [&](std::int64_t b, std::int64_t e) {
    std::int64_t i = b;
    using Vec = backend::cpu::GenericVec<T>;
    using V = typename Vec::V;
    for (; i + Vec::kLanes <= e; i += Vec::kLanes) {
      V const f = Vec::load(features + i);
      Vec::store(out + i, f > V{} ? Vec::load(gradients + i) : V{});
    }
    for (; i < e; ++i) {
      out[i] = scalar_math::ReluGrad{}(gradients[i], features[i]);
    }
  });
}
}  // namespace detail

namespace ops {

/// Shared rules of unary elementwise ops: same shape; `Derived::admits<T>` restricts dtypes.
template <class Derived>
struct UnaryElementwise {
  static constexpr std::string_view type_attr = "T";   ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "y";  ///< TensorFlow's output argument
  // The element rule as a rank-independent type: one Eigen kernel per (op, dtype).
  struct ElementRule {
    auto operator()(const auto& x) const { return Derived::expr(x); }
  };
  /// One run of n outputs for the executor's fused chains.
  template <class T>
  static void fused_kernel(void* out, const void* a, bool, const void*, bool, std::int64_t n) {
    detail::unary_run<T, T, ElementRule>(static_cast<T*>(out), static_cast<const T*>(a), n);
  }
  template <class T, std::size_t R>
  OutSpec<T, R> infer(const Tensor<T, R>& x) const {
    static_assert(Derived::template admits<T>,
                  "tf unary op: this op does not accept the tensor's dtype");
    return {x.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& out, const Tensor<T, R>& x) const {
    detail::unary_kernel<ElementRule>(out, x);
  }
};

struct Neg : UnaryElementwise<Neg> {
  static constexpr std::string_view name = "Neg";
  template <class T>
  static constexpr bool admits = numeric_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Neg{}(x); }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, R>&) const {
    return -dy;
  }
};

struct Exp : UnaryElementwise<Exp> {
  static constexpr std::string_view name = "Exp";
  template <class T>
  static constexpr bool admits = floating_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Exp{}(x); }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>& y, const Tensor<T, R>&) const {
    return dy * y;
  }
};

struct Log : UnaryElementwise<Log> {
  static constexpr std::string_view name = "Log";
  template <class T>
  static constexpr bool admits = floating_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Log{}(x); }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, R>& x) const {
    return dy / x;
  }
};

struct Sqrt : UnaryElementwise<Sqrt> {
  static constexpr std::string_view name = "Sqrt";
  template <class T>
  static constexpr bool admits = floating_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Sqrt{}(x); }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>& y, const Tensor<T, R>&) const {
    return dy * T(0.5) / y;
  }
};

struct Square : UnaryElementwise<Square> {
  static constexpr std::string_view name = "Square";
  template <class T>
  static constexpr bool admits = numeric_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Square{}(x); }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, R>& x) const {
    return dy * (T(2) * x);
  }
};

struct Sign : UnaryElementwise<Sign> {
  static constexpr std::string_view name = "Sign";
  static constexpr bool differentiable = false;  // zero almost everywhere
  template <class T>
  static constexpr bool admits = numeric_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Sign{}(x); }
};

struct Abs : UnaryElementwise<Abs> {
  static constexpr std::string_view name = "Abs";
  template <class T>
  static constexpr bool admits = numeric_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Abs{}(x); }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, R>& x) const {
    return dy * detail::execute(Sign{}, x);
  }
};

struct Tanh : UnaryElementwise<Tanh> {
  static constexpr std::string_view name = "Tanh";
  template <class T>
  static constexpr bool admits = floating_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Tanh{}(x); }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>& y, const Tensor<T, R>&) const {
    return dy * (T(1) - square(y));
  }
};

struct Sigmoid : UnaryElementwise<Sigmoid> {
  static constexpr std::string_view name = "Sigmoid";
  template <class T>
  static constexpr bool admits = floating_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Sigmoid{}(x); }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>& y, const Tensor<T, R>&) const {
    return dy * y * (T(1) - y);
  }
};

struct Relu : UnaryElementwise<Relu> {
  static constexpr std::string_view name = "Relu";
  static constexpr std::string_view output_arg = "activations";  ///< TensorFlow's output
  template <class T>
  static constexpr bool admits = numeric_element<T>;
  static auto expr(const auto& x) { return detail::scalar_math::Relu{}(x); }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>& y, const Tensor<T, R>&) const;
};

/// The gradient of Relu, `gradients` where `features` > 0 and 0 elsewhere, in one pass
/// (TensorFlow op "ReluGrad"; `features` is Relu's input or output, which agree in sign).
struct ReluGrad {
  static constexpr std::string_view name = "ReluGrad";
  static constexpr std::string_view type_attr = "T";           ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "backprops";  ///< TensorFlow's output argument
  template <class T, std::size_t R>
  OutSpec<T, R> infer(const Tensor<T, R>& gradients, const Tensor<T, R>& features) const {
    static_assert(floating_element<T>, "ReluGrad: operands must be float or double");
    if (gradients.dims() != features.dims()) {
      throw invalid_argument("ReluGrad: gradients of shape " + gradients.shape().to_string() +
                             " and features of shape " + features.shape().to_string() + " differ");
    }
    return {features.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& out, const Tensor<T, R>& gradients,
               const Tensor<T, R>& features) const {
    detail::relu_grad_kernel(gradients.data(), features.data(),
                             detail::tensor_access::mutable_data(out), features.num_elements());
  }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dz, const Tensor<T, R>&, const Tensor<T, R>&,
                const Tensor<T, R>& features) const {
    // Linear in `gradients` with the same mask; piecewise constant in `features`.
    return std::tuple{[=] { return detail::execute(ReluGrad{}, dz, features); },
                      [=] { return zeros_like(features); }};
  }
};

template <class T, std::size_t R>
auto Relu::gradient(const Tensor<T, R>& dy, const Tensor<T, R>& y, const Tensor<T, R>&) const {
  return detail::execute(ReluGrad{}, dy, y);
}

}  // namespace ops

#define TAPEFLOW_DEFINE_UNARY(fn, Op)                        \
  template <tensor_like X>                                   \
  tensor_type_of<X> fn(X const& x) {                         \
    return detail::execute(ops::Op{}, detail::as_tensor(x)); \
  }

/// -x (TensorFlow: `tf.negative`, also unary `-`).
TAPEFLOW_DEFINE_UNARY(negative, Neg)
/// e^x (TensorFlow: `tf.exp`).
TAPEFLOW_DEFINE_UNARY(exp, Exp)
/// Natural logarithm (TensorFlow: `tf.math.log`).
TAPEFLOW_DEFINE_UNARY(log, Log)
/// Square root (TensorFlow: `tf.sqrt`).
TAPEFLOW_DEFINE_UNARY(sqrt, Sqrt)
/// x * x (TensorFlow: `tf.square`).
TAPEFLOW_DEFINE_UNARY(square, Square)
/// |x| (TensorFlow: `tf.abs`).
TAPEFLOW_DEFINE_UNARY(abs, Abs)
/// -1, 0 or 1 (TensorFlow: `tf.sign`); no gradient.
TAPEFLOW_DEFINE_UNARY(sign, Sign)
/// Hyperbolic tangent (TensorFlow: `tf.tanh`).
TAPEFLOW_DEFINE_UNARY(tanh, Tanh)
/// 1 / (1 + e^-x) (TensorFlow: `tf.sigmoid`).
TAPEFLOW_DEFINE_UNARY(sigmoid, Sigmoid)

#undef TAPEFLOW_DEFINE_UNARY

template <tensor_like X>
tensor_type_of<X> operator-(const X& x) {
  return negative(x);
}

namespace nn {
/// max(x, 0) (TensorFlow: `tf.nn.relu`).
template <tensor_like X>
tensor_type_of<X> relu(const X& x) {
  return detail::execute(ops::Relu{}, detail::as_tensor(x));
}
/// Also under tf::nn as in TensorFlow.
template <tensor_like X>
tensor_type_of<X> sigmoid(const X& x) {
  return tapeflow::sigmoid(x);
}
/// `tf::tanh`, also under tf::nn as in TensorFlow (`tf.nn.tanh`).
template <tensor_like X>
tensor_type_of<X> tanh(const X& x) {
  return tapeflow::tanh(x);
}
}  // namespace nn

TAPEFLOW_END_NAMESPACE
