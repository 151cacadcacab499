// add, subtract, multiply, divide, pow, maximum, minimum with NumPy broadcasting, and the
// operators + - * / on tensors, variables and plain numbers.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/elementwise.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/detail/forward.hpp>
#include <tapeflow/ops/math/detail/scalar_math.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE

template <tensor_like X, tensor_like Y>
auto operator+(const X& a, const Y& b);
template <tensor_like X, tensor_like Y>
auto operator-(const X& a, const Y& b);
template <tensor_like X, tensor_like Y>
auto operator*(const X& a, const Y& b);
template <tensor_like X, tensor_like Y>
auto operator/(const X& a, const Y& b);
template <tensor_like X>
tensor_type_of<X> operator-(const X& a);

namespace detail {
/// Sums `g` (shaped like a broadcast result) down to `dims`: the gradient of broadcasting.
template <class T, std::size_t R, std::size_t A>
Tensor<T, A> unbroadcast(const Tensor<T, R>& g, const std::array<std::int64_t, A>& dims);
}  // namespace detail

namespace ops {

/// Shared rules of binary elementwise ops: same dtype, NumPy broadcasting of shapes.
template <class Derived>
struct BinaryElementwise {
  static constexpr std::string_view type_attr = "T";   ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "z";  ///< TensorFlow's output argument
  template <class T>
  using result = T;
  /// The dtypes the op accepts (`Derived` may narrow or widen them).
  template <class T>
  static constexpr bool admits = numeric_element<T>;
  // The element rule as a rank-independent type: one Eigen kernel per (op, dtype).
  struct ElementRule {
    auto operator()(const auto& x, const auto& y) const { return Derived::expr(x, y); }
  };
  /// Whether a fused chain may give this op an operand repeated along leading axes (a bias):
  /// only where every element's result is exactly rounded, so that it cannot depend on which
  /// elements a kernel's vector loop or scalar tail computes (Note [Fusion]).
  static constexpr bool fused_rows = false;
  /// One run of n outputs for the executor's fused chains (a or b may be a single value).
  template <class T>
  static void fused_kernel(void* out, const void* a, bool a_vec, const void* b, bool b_vec,
                           std::int64_t n) {
    detail::binary_run<T, T, ElementRule>(static_cast<T*>(out), static_cast<const T*>(a), a_vec,
                                          static_cast<const T*>(b), b_vec, n);
  }

  template <class T, std::size_t A, std::size_t B>
  auto infer(const Tensor<T, A>& a, const Tensor<T, B>& b) const {
    static_assert(Derived::template admits<T>,
                  "tf binary op: this op does not accept the tensors' dtype");
    auto dims = detail::broadcast_dims(Derived::name, a.dims(), b.dims());
    return OutSpec<typename Derived::template result<T>, dims.size()>{dims};
  }
  template <class U, std::size_t R, class T, std::size_t A, std::size_t B>
  void compute(Tensor<U, R>& out, const Tensor<T, A>& a, const Tensor<T, B>& b) const {
    detail::binary_kernel<ElementRule>(out, a, b);
  }
};

struct Add : BinaryElementwise<Add> {
  static constexpr std::string_view name = "AddV2";
  static constexpr bool fused_rows = true;  // IEEE rounds it exactly
  static auto expr(const auto& x, const auto& y) { return detail::scalar_math::Add{}(x, y); }
  template <class T, std::size_t R, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, A>& a,
                const Tensor<T, B>& b) const {
    return std::tuple{[=] { return detail::unbroadcast(dy, a.dims()); },
                      [=] { return detail::unbroadcast(dy, b.dims()); }};
  }
};

struct Sub : BinaryElementwise<Sub> {
  static constexpr std::string_view name = "Sub";
  static constexpr bool fused_rows = true;  // IEEE rounds it exactly
  static auto expr(const auto& x, const auto& y) { return detail::scalar_math::Sub{}(x, y); }
  template <class T, std::size_t R, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, A>& a,
                const Tensor<T, B>& b) const {
    return std::tuple{[=] { return detail::unbroadcast(dy, a.dims()); },
                      [=] { return detail::unbroadcast(-dy, b.dims()); }};
  }
};

/// (a - b)^2 elementwise (TensorFlow op "SquaredDifference"): one pass and no temporary where
/// subtract-then-square takes two (tf.nn.moments' variance, BatchNormalization's).
struct SquaredDifference : BinaryElementwise<SquaredDifference> {
  static constexpr std::string_view name = "SquaredDifference";
  static constexpr bool fused_rows = true;  // IEEE rounds both steps exactly
  static auto expr(const auto& x, const auto& y) {
    return detail::scalar_math::SquaredDifference{}(x, y);
  }
  template <class T, std::size_t R, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, A>& a,
                const Tensor<T, B>& b) const {
    return std::tuple{[=] { return detail::unbroadcast(dy * (a - b) * T(2), a.dims()); },
                      [=] { return detail::unbroadcast(dy * (b - a) * T(2), b.dims()); }};
  }
};

struct Mul : BinaryElementwise<Mul> {
  static constexpr std::string_view name = "Mul";
  static constexpr bool fused_rows = true;  // IEEE rounds it exactly
  static auto expr(const auto& x, const auto& y) { return detail::scalar_math::Mul{}(x, y); }
  template <class T, std::size_t R, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, A>& a,
                const Tensor<T, B>& b) const {
    return std::tuple{[=] { return detail::unbroadcast(dy * b, a.dims()); },
                      [=] { return detail::unbroadcast(dy * a, b.dims()); }};
  }
};

/// Division; integer division truncates toward zero (as C++ does) and throws on a zero divisor.
struct Div : BinaryElementwise<Div> {
  static constexpr std::string_view name = "RealDiv";
  static constexpr bool fused_rows = true;  // IEEE rounds it exactly
  static auto expr(const auto& x, const auto& y) { return detail::scalar_math::Div{}(x, y); }
  /// TensorFlow's RealDiv has no integer kernel; integer division truncating toward zero is
  /// its "TruncateDiv".
  template <class T, std::size_t A, std::size_t B>
  [[nodiscard]] std::string export_error(const Tensor<T, A>&, const Tensor<T, B>&) const {
    if constexpr (std::is_integral_v<T>) {
      return "RealDiv of " + std::string(dtype_traits<T>::name) +
             " tensors: TensorFlow's RealDiv has no integer kernel (integer division is "
             "TruncateDiv there)";
    } else {
      return {};
    }
  }
  template <class U, std::size_t R, class T, std::size_t A, std::size_t B>
  void compute(Tensor<U, R>& out, const Tensor<T, A>& a, const Tensor<T, B>& b) const {
    if constexpr (std::is_integral_v<T>) {
      for (T v : b.values()) {
        if (v == T(0)) {
          throw invalid_argument("Div: integer division by zero");
        }
      }
    }
    BinaryElementwise<Div>::compute(out, a, b);
  }
  template <class T, std::size_t R, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, A>& a,
                const Tensor<T, B>& b) const {
    return std::tuple{[=] { return detail::unbroadcast(dy / b, a.dims()); },
                      [=] { return detail::unbroadcast(-dy * a / (b * b), b.dims()); }};
  }
};

/// a ** b (TensorFlow op "Pow").
struct Pow : BinaryElementwise<Pow> {
  static constexpr std::string_view name = "Pow";
  static auto expr(const auto& x, const auto& y) {
    return x.binaryExpr(y, detail::scalar_math::Pow{});
  }
  template <class T, std::size_t R, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>& y, const Tensor<T, A>& a,
                const Tensor<T, B>& b) const {
    // d/da = b * a^(b-1); d/db = a^b * log(a), taken as 0 where a <= 0 (TensorFlow does the same).
    return std::tuple{[=] { return detail::unbroadcast(dy * b * pow(a, b - T(1)), a.dims()); },
                      [=] {
                        auto positive = greater(a, T(0));
                        auto safe_a = where(positive, a, ones_like(a));
                        return detail::unbroadcast(
                            dy * y * where(positive, log(safe_a), zeros_like(safe_a)), b.dims());
                      }};
  }
};

/// Elementwise max (TensorFlow op "Maximum"); the gradient goes to the larger input (to `a` on
/// ties).
struct Maximum : BinaryElementwise<Maximum> {
  static constexpr std::string_view name = "Maximum";
  static auto expr(const auto& x, const auto& y) { return detail::scalar_math::Maximum{}(x, y); }
  template <class T, std::size_t R, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, A>& a,
                const Tensor<T, B>& b) const {
    return std::tuple{
        [=] { return detail::unbroadcast(dy * cast<T>(greater_equal(a, b)), a.dims()); },
        [=] { return detail::unbroadcast(dy * cast<T>(less(a, b)), b.dims()); }};
  }
};

/// Elementwise min (TensorFlow op "Minimum"); the gradient goes to the smaller input (to `a` on
/// ties).
struct Minimum : BinaryElementwise<Minimum> {
  static constexpr std::string_view name = "Minimum";
  static auto expr(const auto& x, const auto& y) { return detail::scalar_math::Minimum{}(x, y); }
  template <class T, std::size_t R, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, A>& a,
                const Tensor<T, B>& b) const {
    return std::tuple{[=] { return detail::unbroadcast(dy * cast<T>(less_equal(a, b)), a.dims()); },
                      [=] { return detail::unbroadcast(dy * cast<T>(greater(a, b)), b.dims()); }};
  }
};

}  // namespace ops

namespace detail {
/// Operands of a binary op: tensors/variables as they are, plain numbers as rank-0 tensors of
/// the other operand's dtype (TensorFlow converts Python numbers the same way).
template <class X, class Other>
decltype(auto) operand(const X& x) {
  if constexpr (tensor_like<X>) {
    return as_tensor(x);
  } else {
    return Tensor<value_type_of<Other>, 0>(static_cast<value_type_of<Other>>(x));
  }
}

template <class X, class Y>
concept binary_operands =
    (tensor_like<X> && tensor_like<Y>) || (tensor_like<X> && std::is_arithmetic_v<Y>) ||
    (std::is_arithmetic_v<X> && tensor_like<Y>);

template <class X, class Y>
using tensor_operand_of = std::conditional_t<tensor_like<X>, X, Y>;

template <class Op, class X, class Y>
auto binary(const X& a, const Y& b) {
  using A = tensor_operand_of<X, Y>;
  using B = tensor_operand_of<Y, X>;
  static_assert(
      std::same_as<value_type_of<A>, value_type_of<B>>,
      "tf binary op: both operands must have the same dtype (TensorFlow does not promote dtypes); "
      "convert one with tf::cast<T>(x)");
  return execute(Op{}, operand<X, B>(a), operand<Y, A>(b));
}

template <class T, std::size_t R, std::size_t A>
Tensor<T, A> unbroadcast(const Tensor<T, R>& g, const std::array<std::int64_t, A>& dims) {
  static_assert(A <= R);
  if constexpr (A == R) {
    if (g.dims() == dims) {
      return g;
    }
  }
  const auto aligned = align_dims<R>(dims);
  ops::Reduce<ops::ReduceKind::sum, R> sum;
  sum.keep_dims = true;
  for (std::size_t i = 0; i < R; ++i) {
    if (aligned[i] == 1 && g.dims()[i] != 1) {
      sum.axes[sum.num_axes++] = static_cast<int>(i);
    }
  }
  auto summed = sum.num_axes > 0 ? execute(sum, g) : g;
  return execute(ops::Reshape<A>{dims}, summed);
}

}  // namespace detail

/// a + b with broadcasting (TensorFlow: `tf.add`); also `a + b` on tensors, variables and numbers.
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto add(const X& a, const Y& b) {
  return detail::binary<ops::Add>(a, b);
}
/// a - b with broadcasting (TensorFlow: `tf.subtract`).
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto subtract(const X& a, const Y& b) {
  return detail::binary<ops::Sub>(a, b);
}
/// a * b elementwise with broadcasting (TensorFlow: `tf.multiply`).
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto multiply(const X& a, const Y& b) {
  return detail::binary<ops::Mul>(a, b);
}
/// a / b elementwise with broadcasting (TensorFlow: `tf.divide`).
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto divide(const X& a, const Y& b) {
  return detail::binary<ops::Div>(a, b);
}
/// a ** b elementwise (TensorFlow: `tf.pow`).
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto pow(const X& a, const Y& b) {
  return detail::binary<ops::Pow>(a, b);
}
/// Elementwise maximum (TensorFlow: `tf.maximum`).
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto maximum(const X& a, const Y& b) {
  return detail::binary<ops::Maximum>(a, b);
}
/// Elementwise minimum (TensorFlow: `tf.minimum`).
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto minimum(const X& a, const Y& b) {
  return detail::binary<ops::Minimum>(a, b);
}

namespace math {
/// (a - b)^2 elementwise with broadcasting, in one pass (TensorFlow:
/// `tf.math.squared_difference`).
///
///     auto variance = tf::reduce_mean(tf::math::squared_difference(x, mean), 0);
template <class X, class Y>
  requires detail::binary_operands<X, Y>
auto squared_difference(const X& a, const Y& b) {
  return detail::binary<ops::SquaredDifference>(a, b);
}
}  // namespace math

/// Elementwise a + b with NumPy broadcasting (tf.add); throws invalid_argument for shapes that do
/// not broadcast.
template <tensor_like X, tensor_like Y>
auto operator+(const X& a, const Y& b) {
  return add(a, b);
}
/// Elementwise a - b with NumPy broadcasting (tf.subtract); throws invalid_argument for shapes that
/// do not broadcast.
template <tensor_like X, tensor_like Y>
auto operator-(const X& a, const Y& b) {
  return subtract(a, b);
}
/// Elementwise a * b with NumPy broadcasting (tf.multiply); throws invalid_argument for shapes that
/// do not broadcast.
template <tensor_like X, tensor_like Y>
auto operator*(const X& a, const Y& b) {
  return multiply(a, b);
}
/// Elementwise a / b with NumPy broadcasting (tf.divide); throws invalid_argument for shapes that
/// do not broadcast.
template <tensor_like X, tensor_like Y>
auto operator/(const X& a, const Y& b) {
  return divide(a, b);
}
/// Tensor + number (tf.add); the number is a constant of the tensor's dtype.
template <tensor_like X, class S>
  requires std::is_arithmetic_v<S>
auto operator+(const X& a, S b) {
  return add(a, b);
}
/// Number + tensor (tf.add); the number is a constant of the tensor's dtype.
template <tensor_like X, class S>
  requires std::is_arithmetic_v<S>
auto operator+(S a, const X& b) {
  return add(a, b);
}
/// Tensor - number (tf.subtract); the number is a constant of the tensor's dtype.
template <tensor_like X, class S>
  requires std::is_arithmetic_v<S>
auto operator-(const X& a, S b) {
  return subtract(a, b);
}
/// Number - tensor (tf.subtract); the number is a constant of the tensor's dtype.
template <tensor_like X, class S>
  requires std::is_arithmetic_v<S>
auto operator-(S a, const X& b) {
  return subtract(a, b);
}
/// Tensor * number (tf.multiply); the number is a constant of the tensor's dtype.
template <tensor_like X, class S>
  requires std::is_arithmetic_v<S>
auto operator*(const X& a, S b) {
  return multiply(a, b);
}
/// Number * tensor (tf.multiply); the number is a constant of the tensor's dtype.
template <tensor_like X, class S>
  requires std::is_arithmetic_v<S>
auto operator*(S a, const X& b) {
  return multiply(a, b);
}
/// Tensor / number (tf.divide); the number is a constant of the tensor's dtype.
template <tensor_like X, class S>
  requires std::is_arithmetic_v<S>
auto operator/(const X& a, S b) {
  return divide(a, b);
}
/// Number / tensor (tf.divide); the number is a constant of the tensor's dtype.
template <tensor_like X, class S>
  requires std::is_arithmetic_v<S>
auto operator/(S a, const X& b) {
  return divide(a, b);
}

TAPEFLOW_END_NAMESPACE

#include <tapeflow/ops/array/where.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/math/compare.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>
