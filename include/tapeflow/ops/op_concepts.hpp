// What an op definition is.
//
// Note [One definition per op]: an op is one struct holding its TensorFlow name, its
// attributes (data members), its rules and its CPU kernel, and its gradient written in other
// ops. Eager execution, the tape and graph capture read only this struct:
//
//     struct Tanh {
//       static constexpr std::string_view name = "Tanh";
//       template <class T, std::size_t R>                      // dtype/rank rule: the return type
//       OutSpec<T, R> infer(Tensor<T, R> const& x) const;       // shape rule: the value (throws)
//       template <class T, std::size_t R>
//       void compute(Tensor<T, R>& y, Tensor<T, R> const& x) const;   // CPU kernel
//       template <class T, std::size_t R>                      // one entry per input: a tensor,
//       auto gradient(Tensor<T, R> const& dy, Tensor<T, R> const& y,  // a lambda computing one
//                     Tensor<T, R> const& x) const;           // lazily, or no_gradient
//     };
//
// An op may instead define `forward(inputs...)` returning its output directly (ops that share
// their input's buffer, such as reshape). `static constexpr bool differentiable = false` marks
// ops that stop gradients (stop_gradient, comparisons); an op that has neither a gradient nor
// that flag raises `unimplemented` if a gradient is asked through it. An op with attributes
// lists them, under TensorFlow's attribute names, in `attributes()`: graph export and
// ConcreteFunction::to_string show them.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// An op's output dtype and rank (types) and shape (value), returned by its `infer`.
template <class T, std::size_t Rank>
struct OutSpec {
  using value_type = T;                      ///< output element type
  static constexpr std::size_t rank = Rank;  ///< output rank
  std::array<std::int64_t, Rank> dims;       ///< output dimensions
};

/// An op's attributes as (TensorFlow attribute name, value text) pairs, e.g. {"padding", "SAME"}.
using OpAttributes = std::vector<std::pair<std::string, std::string>>;

namespace detail {
/// "[1, 2, 2, 1]": a list attribute's text.
template <class Int>
std::string list_text(const Int* values, std::size_t n) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) {
    out += (i ? ", " : "") + std::to_string(values[i]);
  }
  return out + "]";
}
inline std::string bool_text(bool b) { return b ? "true" : "false"; }
}  // namespace detail

/// Marks an input that has no gradient (integer indices, labels).
struct no_gradient_t {};
/// The value an op's gradient returns for an input that gets no gradient.
inline constexpr no_gradient_t no_gradient{};

/// Satisfied by op structs (see Note [One definition per op]).
template <class Op>
concept op_definition = requires {
  { Op::name } -> std::convertible_to<std::string_view>;
};

TAPEFLOW_END_NAMESPACE
