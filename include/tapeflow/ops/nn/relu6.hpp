// relu6(x) = min(max(x, 0), 6) (TensorFlow: `tf.nn.relu6`, ops "Relu6" and "Relu6Grad"),
// MobileNet's activation.
//
// Its own op rather than minimum(relu(x), 6): one pass instead of two, and a graph that
// exports as TensorFlow's Relu6, which is what Keras' ReLU(max_value=6) writes. The kernels
// are vector-extension loops (no Eigen, so nothing for tapeflow::instantiations to compile).
// Gradients, as TensorFlow's: Relu6(x) -> Relu6Grad(dy, y) (y in (0, 6) exactly where x is);
// Relu6Grad(g, f) -> (Relu6Grad(dz, f), zeros) (linear in g, piecewise constant in f).
#pragma once

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
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// out = min(max(x, 0), 6) over elements [b, e), on this thread (a NaN input gives 0 here, as
/// comparisons read it).
template <class T>
TAPEFLOW_ALWAYS_INLINE void relu6_run(const T* x, T* out, std::int64_t b, std::int64_t e) {
  std::int64_t i = b;
  using Vec = backend::cpu::GenericVec<T>;
  using V = typename Vec::V;
  V const six = Vec::broadcast(T(6));
  for (; i + Vec::kLanes <= e; i += Vec::kLanes) {
    V const v = Vec::load(x + i);
    V const low = v > V{} ? v : V{};
    Vec::store(out + i, low < six ? low : six);
  }
  for (; i < e; ++i) {
    T const low = x[i] > T(0) ? x[i] : T(0);
    out[i] = low < T(6) ? low : T(6);
  }
}

/// out = min(max(x, 0), 6) over n elements.
template <class T>
void relu6_kernel(const T* x, T* out, std::int64_t n) {
  backend::cpu::parallel_for(n, parallel_grain,
                             [&](std::int64_t b, std::int64_t e) { relu6_run(x, out, b, e); });
}

/// out = 0 < features < 6 ? gradients : 0 over elements [b, e), on this thread.
template <class T>
TAPEFLOW_ALWAYS_INLINE void relu6_grad_run(const T* gradients, const T* features, T* out,
                                           std::int64_t b, std::int64_t e) {
  std::int64_t i = b;
  using Vec = backend::cpu::GenericVec<T>;
  using V = typename Vec::V;
  V const six = Vec::broadcast(T(6));
  for (; i + Vec::kLanes <= e; i += Vec::kLanes) {
    V const f = Vec::load(features + i);
    V const g = Vec::load(gradients + i);
    V const inside = f > V{} ? g : V{};
    Vec::store(out + i, f < six ? inside : V{});
  }
  for (; i < e; ++i) {
    out[i] = features[i] > T(0) && features[i] < T(6) ? gradients[i] : T(0);
  }
}

/// out = 0 < features < 6 ? gradients : 0 over n elements.
template <class T>
void relu6_grad_kernel(const T* gradients, const T* features, T* out, std::int64_t n) {
  backend::cpu::parallel_for(n, parallel_grain, [&](std::int64_t b, std::int64_t e) {
    relu6_grad_run(gradients, features, out, b, e);
  });
}

}  // namespace detail

namespace ops {

/// The gradient of Relu6: `gradients` where 0 < `features` < 6, else 0 (TensorFlow op
/// "Relu6Grad"; `features` is Relu6's input or output, which agree on that interval).
struct Relu6Grad {
  static constexpr std::string_view name = "Relu6Grad";
  static constexpr std::string_view type_attr = "T";           ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "backprops";  ///< TensorFlow's output argument
  /// One run of n outputs for the executor's fused chains (Note [Fusion]); both operands are
  /// whole runs, as the op's shapes agree.
  template <class T>
  static void fused_kernel(void* out, const void* gradients, bool, const void* features, bool,
                           std::int64_t n) {
    detail::relu6_grad_run(static_cast<const T*>(gradients), static_cast<const T*>(features),
                           static_cast<T*>(out), 0, n);
  }
  template <class T, std::size_t R>
  OutSpec<T, R> infer(const Tensor<T, R>& gradients, const Tensor<T, R>& features) const {
    static_assert(floating_element<T>, "Relu6Grad: operands must be float or double");
    if (gradients.dims() != features.dims()) {
      throw invalid_argument("Relu6Grad: gradients of shape " + gradients.shape().to_string() +
                             " and features of shape " + features.shape().to_string() + " differ");
    }
    return {features.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& out, const Tensor<T, R>& gradients,
               const Tensor<T, R>& features) const {
    detail::relu6_grad_kernel(gradients.data(), features.data(),
                              detail::tensor_access::mutable_data(out), features.num_elements());
  }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dz, const Tensor<T, R>&, const Tensor<T, R>&,
                const Tensor<T, R>& features) const {
    return std::tuple{[=] { return detail::execute(Relu6Grad{}, dz, features); },
                      [=] { return zeros_like(features); }};
  }
};

/// min(max(x, 0), 6) elementwise (TensorFlow op "Relu6").
struct Relu6 {
  static constexpr std::string_view name = "Relu6";
  static constexpr std::string_view type_attr = "T";             ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "activations";  ///< TensorFlow's output argument
  /// One run of n outputs for the executor's fused chains (Note [Fusion]).
  template <class T>
  static void fused_kernel(void* out, const void* features, bool, const void*, bool,
                           std::int64_t n) {
    detail::relu6_run(static_cast<const T*>(features), static_cast<T*>(out), 0, n);
  }
  template <class T, std::size_t R>
  OutSpec<T, R> infer(const Tensor<T, R>& features) const {
    static_assert(floating_element<T>, "tf::nn::relu6(x): x must be float or double");
    return {features.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& out, const Tensor<T, R>& features) const {
    detail::relu6_kernel(features.data(), detail::tensor_access::mutable_data(out),
                         features.num_elements());
  }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>& y, const Tensor<T, R>&) const {
    return detail::execute(Relu6Grad{}, dy, y);
  }
};

}  // namespace ops

namespace nn {
/// min(max(x, 0), 6) (TensorFlow: `tf.nn.relu6`); float or double. The gradient is dy where
/// 0 < x < 6 and 0 elsewhere (at 0 and 6 too, as TensorFlow's).
///
///     tf::nn::relu6(tf::constant<float>({-1, 3, 7}));  // [0 3 6]
template <tensor_like X>
tensor_type_of<X> relu6(const X& x) {
  static_assert(floating_element<value_type_of<X>>, "tf::nn::relu6(x): x must be float or double");
  return detail::execute(ops::Relu6{}, detail::as_tensor(x));
}
}  // namespace nn

TAPEFLOW_END_NAMESPACE
