// Concepts admitting tensor arguments, and the conversion every op applies to them.
#pragma once

#include <concepts>
#include <type_traits>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

// Declared here, defined above ops (its reads and writes are ops): an operand may be a
// variable wherever a tensor is accepted.
template <element_type T, std::size_t Rank>
class Variable;
template <class X>
struct is_variable : std::false_type {};
template <class T, std::size_t R>
struct is_variable<Variable<T, R>> : std::true_type {};

/// Anything an op accepts as a tensor operand: `Tensor<T, R>` or `Variable<T, R>` (read).
template <class X>
concept tensor_like =
    is_tensor<std::remove_cvref_t<X>>::value || is_variable<std::remove_cvref_t<X>>::value;

/// A tensor operand of element type `T` and rank `Rank`.
template <class X, class T, std::size_t Rank>
concept tensor_of =
    tensor_like<X> && std::same_as<typename std::remove_cvref_t<X>::value_type, T> &&
    std::remove_cvref_t<X>::rank_v == Rank;

/// Element type and rank of a tensor operand.
template <tensor_like X>
using value_type_of = typename std::remove_cvref_t<X>::value_type;
/// The rank of a tensor operand (a `Tensor` or `Variable`) as a compile-time constant.
template <tensor_like X>
inline constexpr std::size_t rank_of = std::remove_cvref_t<X>::rank_v;
/// The tensor type an operand reads as.
template <tensor_like X>
using tensor_type_of = Tensor<value_type_of<X>, rank_of<X>>;

namespace detail {
/// Reads an operand as a tensor: tensors pass through, variables give their current value.
template <class T, std::size_t R>
const Tensor<T, R>& as_tensor(const Tensor<T, R>& t) noexcept {
  return t;
}
template <class T, std::size_t R>
Tensor<T, R> as_tensor(const Variable<T, R>& v) {
  return v.value();  // a snapshot, or a read node while tracing
}
}  // namespace detail

TAPEFLOW_END_NAMESPACE
