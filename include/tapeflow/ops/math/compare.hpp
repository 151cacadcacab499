// Comparisons and logical ops. Results are bool tensors; no gradient flows through them.
//
// `==` and `!=` are not overloaded (they stay value comparisons for C++ algorithms): use
// tf::equal / tf::not_equal. `< <= > >=`, `&`, `|`, `!` are elementwise as in TensorFlow.
#pragma once

#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/elementwise.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/detail/scalar_math.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// The dtypes comparisons accept: numbers and bools.
template <class T>
inline constexpr bool comparable_element = numeric_element<T> || std::same_as<T, bool>;

// `tf_type_attr`: TensorFlow's dtype attribute ("" for the logical ops, which have none);
// `tf_bool`: whether TensorFlow's op takes bool operands (its ordering ones take numbers only).
#define TAPEFLOW_DEFINE_COMPARISON(Op, tf_name, accepts, expression, tf_type_attr, tf_bool)   \
  struct Op : BinaryElementwise<Op> {                                                         \
    static constexpr std::string_view name = tf_name;                                         \
    static constexpr std::string_view type_attr = tf_type_attr;                               \
    static constexpr bool differentiable = false;                                             \
    template <class T>                                                                        \
    using result = bool;                                                                      \
    template <class T>                                                                        \
    static constexpr bool admits = accepts;                                                   \
    static auto expr(auto const& x, auto const& y) { return expression; }                     \
    template <class T, std::size_t A, std::size_t B>                                          \
    [[nodiscard]] std::string export_error(Tensor<T, A> const&, Tensor<T, B> const&) const {  \
      if constexpr (std::same_as<T, bool> && !(tf_bool)) {                                    \
        return std::string(name) + " of bool tensors: TensorFlow's op compares numbers only"; \
      } else {                                                                                \
        return {};                                                                            \
      }                                                                                       \
    }                                                                                         \
  };

TAPEFLOW_DEFINE_COMPARISON(Equal, "Equal", comparable_element<T>,
                           detail::scalar_math::Equal{}(x, y), "T", true)
TAPEFLOW_DEFINE_COMPARISON(NotEqual, "NotEqual", comparable_element<T>,
                           detail::scalar_math::NotEqual{}(x, y), "T", true)
TAPEFLOW_DEFINE_COMPARISON(Less, "Less", comparable_element<T>, detail::scalar_math::Less{}(x, y),
                           "T", false)
TAPEFLOW_DEFINE_COMPARISON(LessEqual, "LessEqual", comparable_element<T>,
                           detail::scalar_math::LessEqual{}(x, y), "T", false)
TAPEFLOW_DEFINE_COMPARISON(Greater, "Greater", comparable_element<T>,
                           detail::scalar_math::Greater{}(x, y), "T", false)
TAPEFLOW_DEFINE_COMPARISON(GreaterEqual, "GreaterEqual", comparable_element<T>,
                           detail::scalar_math::GreaterEqual{}(x, y), "T", false)
TAPEFLOW_DEFINE_COMPARISON(LogicalAnd, "LogicalAnd", (std::same_as<T, bool>), x&& y, "", true)
TAPEFLOW_DEFINE_COMPARISON(LogicalOr, "LogicalOr", (std::same_as<T, bool>), x || y, "", true)

#undef TAPEFLOW_DEFINE_COMPARISON

struct LogicalNot {
  static constexpr std::string_view name = "LogicalNot";
  static constexpr std::string_view output_arg = "y";  ///< TensorFlow's output argument
  static constexpr bool differentiable = false;
  template <std::size_t R>
  OutSpec<bool, R> infer(const Tensor<bool, R>& x) const {
    return {x.dims()};
  }
  template <std::size_t R>
  void compute(Tensor<bool, R>& out, const Tensor<bool, R>& x) const {
    bool* o = detail::tensor_access::mutable_data(out);
    const bool* v = x.data();
    for (std::int64_t i = 0; i < x.num_elements(); ++i) {
      o[i] = !v[i];
    }
  }
};

}  // namespace ops

#define TAPEFLOW_DEFINE_COMPARE_FN(fn, Op) \
  template <class X, class Y>              \
    requires detail::binary_operands<X, Y> \
  auto fn(X const& a, Y const& b) {        \
    return detail::binary<ops::Op>(a, b);  \
  }

/// Elementwise a == b as a bool tensor (TensorFlow: `tf.equal`).
TAPEFLOW_DEFINE_COMPARE_FN(equal, Equal)
/// Elementwise a != b (TensorFlow: `tf.not_equal`).
TAPEFLOW_DEFINE_COMPARE_FN(not_equal, NotEqual)
/// Elementwise a < b (TensorFlow: `tf.less`, also `a < b`).
TAPEFLOW_DEFINE_COMPARE_FN(less, Less)
/// Elementwise a <= b (TensorFlow: `tf.less_equal`).
TAPEFLOW_DEFINE_COMPARE_FN(less_equal, LessEqual)
/// Elementwise a > b (TensorFlow: `tf.greater`).
TAPEFLOW_DEFINE_COMPARE_FN(greater, Greater)
/// Elementwise a >= b (TensorFlow: `tf.greater_equal`).
TAPEFLOW_DEFINE_COMPARE_FN(greater_equal, GreaterEqual)
/// Elementwise AND of bool tensors (TensorFlow: `tf.logical_and`, also `a & b`).
TAPEFLOW_DEFINE_COMPARE_FN(logical_and, LogicalAnd)
/// Elementwise OR of bool tensors (TensorFlow: `tf.logical_or`, also `a | b`).
TAPEFLOW_DEFINE_COMPARE_FN(logical_or, LogicalOr)

#undef TAPEFLOW_DEFINE_COMPARE_FN

/// Elementwise NOT of a bool tensor (TensorFlow: `tf.logical_not`, also `!a`).
template <tensor_like X>
  requires std::same_as<value_type_of<X>, bool>
tensor_type_of<X> logical_not(const X& x) {
  return detail::execute(ops::LogicalNot{}, detail::as_tensor(x));
}

/// Elementwise a < b as a bool tensor, with broadcasting (tf.less); a number operand is a constant
/// of the tensor's dtype.
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto operator<(const X& a, const Y& b) {
  return less(a, b);
}
/// Elementwise a <= b as a bool tensor, with broadcasting (tf.less_equal); a number operand is a
/// constant of the tensor's dtype.
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto operator<=(const X& a, const Y& b) {
  return less_equal(a, b);
}
/// Elementwise a > b as a bool tensor, with broadcasting (tf.greater); a number operand is a
/// constant of the tensor's dtype.
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto operator>(const X& a, const Y& b) {
  return greater(a, b);
}
/// Elementwise a >= b as a bool tensor, with broadcasting (tf.greater_equal); a number operand is a
/// constant of the tensor's dtype.
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto operator>=(const X& a, const Y& b) {
  return greater_equal(a, b);
}
/// Elementwise logical AND of bool tensors, with broadcasting (tf.logical_and).
template <tensor_like X, tensor_like Y>
  requires std::same_as<value_type_of<X>, bool> && std::same_as<value_type_of<Y>, bool>
auto operator&(const X& a, const Y& b) {
  return logical_and(a, b);
}
/// Elementwise logical OR of bool tensors, with broadcasting (tf.logical_or).
template <tensor_like X, tensor_like Y>
  requires std::same_as<value_type_of<X>, bool> && std::same_as<value_type_of<Y>, bool>
auto operator|(const X& a, const Y& b) {
  return logical_or(a, b);
}
/// Elementwise logical NOT of a bool tensor (tf.logical_not).
template <tensor_like X>
  requires std::same_as<value_type_of<X>, bool>
auto operator!(const X& a) {
  return logical_not(a);
}

TAPEFLOW_END_NAMESPACE
