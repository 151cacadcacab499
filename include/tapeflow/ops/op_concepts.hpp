// What an op definition is.
//
// Note [One definition per op]: an op is one struct holding its TensorFlow name, its
// attributes (data members), its rules and its CPU kernel, and its gradient written in other
// ops. Eager execution, the tape, graph capture and graph export read only this struct:
//
//     struct Tanh {
//       static constexpr std::string_view name = "Tanh";
//       static constexpr std::string_view type_attr = "T";     // export: the dtype attribute
//       static constexpr std::string_view output_arg = "y";    // export: TensorFlow's output
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
// that flag raises `unimplemented` if a gradient is asked through it.
//
// What a SavedModel exporter needs to write the op as a TensorFlow NodeDef is read from the
// struct too (the traced node carries it, core/detail/trace_graph.hpp; TensorFlow's op
// registry rejects a NodeDef with an unknown attribute or a wrongly typed one; docs/formats.md
// 8.1):
//   - `name`: TensorFlow's op name.
//   - `attributes()`, or `attributes(inputs...)` when they depend on the inputs' dtypes or list
//     sizes (GatherV2's `Tindices`, ConcatV2's `N`): the NodeDef's attributes under TensorFlow's
//     names and AttrValue kinds (`tf::AttrValue`: a bool attr as bool, a list as
//     `std::vector<std::int64_t>`, a type as DType), and nothing TensorFlow's OpDef lacks. Type
//     attributes other than `type_attr` are listed (Cast's `DstT`, Reshape's `Tshape`);
//     attributes left at TensorFlow's default may be left out (TensorFlow's own files strip
//     them). ConcreteFunction::to_string shows the non-type ones.
//   - `type_attr`: the attribute holding the dtype of the op's first tensor input ("T",
//     "SrcT", "Tparams", ...), or of its output when it has no tensor input
//     (ReadVariableOp's "dtype"); the tracer sets it from that dtype. Absent (or empty, in an
//     op whose base declares one) when the op has none (LogicalAnd).
//   - `output_arg`: the name of TensorFlow's (first) output argument ("z", "product",
//     "activations", ...); `no_output_arg` for TensorFlow ops without outputs (assignments,
//     ResourceApply*, PrintV2), whose placeholder output here is no TensorFlow tensor. An op
//     without `output_arg` has no TensorFlow equivalent and does not export.
//   - `graph_inputs()` (optional): TensorFlow inputs that the op holds as members here (the
//     reduction axes, a reshape's shape, a transpose's perm), as (TensorFlow input name,
//     constant tensor) in TensorFlow's order. They follow the tensor inputs, unless the op says
//     `static constexpr std::size_t graph_inputs_at = k`: then they come before tensor input k
//     (Conv2DBackpropInput's `input_sizes`, the first input).
//   - `resources()` (optional): ids of the variables the op reads or writes (`Variable::id()`,
//     `AnyVariable::id()`), in TensorFlow's order; TensorFlow passes them as resource inputs
//     before all others.
//   - `export_error()`, or `export_error(inputs...)` (optional): empty when TensorFlow's op can
//     express this one, else why not (Softmax over an axis that is not the last).
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
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

/// TensorFlow inputs that an op holds as members (see Note [One definition per op]):
/// (TensorFlow input argument name, constant value), e.g. {"shape", [2, 3]} for Reshape.
using GraphInputs = std::vector<std::pair<std::string, AnyTensor>>;

/// The `output_arg` of an op whose TensorFlow op has no output (AssignVariableOp,
/// ResourceApply*, PrintV2): the node exports, but its placeholder output is no TensorFlow
/// tensor, so what depends on it depends on the node (a control input, "^name").
inline constexpr std::string_view no_output_arg = "^";

namespace detail {
/// An int32 vector constant (TensorFlow's default index type) for `graph_inputs()`. Values
/// beyond int32 saturate (TensorFlow's StridedSlice clamps its bounds the same way).
template <class Int>
AnyTensor int32_vector(const Int* values, std::size_t n) {
  auto t = Tensor<std::int32_t, 1>::uninitialized({static_cast<std::int64_t>(n)});
  std::int32_t* out = tensor_access::mutable_data(t);
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::int64_t>(values[i]);
    out[i] = static_cast<std::int32_t>(std::clamp<std::int64_t>(
        v, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
  }
  return t;
}
/// The same from an array.
template <class Int, std::size_t N>
AnyTensor int32_vector(const std::array<Int, N>& values) {
  return int32_vector(values.data(), N);
}
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
