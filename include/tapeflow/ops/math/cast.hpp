// cast<U>(x): converts element types (TensorFlow: `tf.cast`).
#pragma once

#include <cstddef>
#include <string_view>
#include <type_traits>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/elementwise.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/detail/scalar_math.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// Element type conversion to U (TensorFlow op "Cast"). Floats to integers truncate toward zero;
/// to bool, nonzero is true. Gradients flow between floating types only.
template <class U>
struct Cast {
  struct CastRule {  // rank-independent: one Eigen kernel per dtype pair
    auto operator()(const auto& v) const { return detail::scalar_math::CastTo<U>{}(v); }
  };
  static constexpr std::string_view name = "Cast";
  static constexpr std::string_view type_attr = "SrcT";  ///< TensorFlow's input dtype attribute
  static constexpr std::string_view output_arg = "y";    ///< TensorFlow's output argument
  /// TensorFlow's attributes: the output dtype (`Truncate` stays false, its default).
  [[nodiscard]] OpAttributes attributes() const { return {{"DstT", dtype_v<U>}}; }
  template <class T, std::size_t R>
  OutSpec<U, R> infer(const Tensor<T, R>& x) const {
    static_assert(numeric_element<T> || std::same_as<T, bool>,
                  "tf::cast: cannot cast string tensors");
    static_assert(numeric_element<U> || std::same_as<U, bool>, "tf::cast: cannot cast to string");
    return {x.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<U, R>& out, const Tensor<T, R>& x) const {
    if constexpr (std::same_as<U, bool>) {
      U* o = detail::tensor_access::mutable_data(out);
      const T* v = x.data();
      for (std::int64_t i = 0; i < x.num_elements(); ++i) {
        o[i] = detail::scalar_math::CastTo<bool>{}(v[i]);
      }
    } else {
      detail::unary_kernel<CastRule>(out, x);
    }
  }
  template <class T, std::size_t R>
  auto gradient(const Tensor<U, R>& dy, const Tensor<U, R>&, const Tensor<T, R>&) const {
    if constexpr (std::is_floating_point_v<T>) {
      return detail::execute(Cast<T>{}, dy);
    } else {
      return no_gradient;
    }
  }
};

}  // namespace ops

/// Converts `x` to element type U: `tf::cast<float>(labels)`.
template <class U, tensor_like X>
  requires element_type<U>
Tensor<U, rank_of<X>> cast(const X& x) {
  if constexpr (std::same_as<U, value_type_of<X>>) {
    return detail::as_tensor(x);
  } else {
    return detail::execute(ops::Cast<U>{}, detail::as_tensor(x));
  }
}

TAPEFLOW_END_NAMESPACE
