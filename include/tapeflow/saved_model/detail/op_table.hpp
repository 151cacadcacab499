// The one table tf::saved_model::load reads TensorFlow's function bodies with: TensorFlow op
// name -> which of our op definitions it becomes, its output arguments (how `node:outarg:i`
// resolves, docs/formats.md 12.5) and the attribute defaults TensorFlow strips from the files
// it writes (docs/formats.md 12.1, MetaInfoDef.stripped_default_attrs).
//
// Each entry calls the PUBLIC typed op function (tf::matmul, tf::nn::relu, ...) on the inputs
// after a narrow dtype x rank dispatch, while a trace is active: the node it appends is our own
// op, so the loaded graph is an ordinary tf::function graph (Note [One definition per op]; no
// op learns about the loader). The dispatch admits only what the op and the seed models need
// (float32, ranks 1-4): every (dtype, rank) it admits instantiates the op, and compile time is
// this project's scarcest resource (MAINTAINERS.md, "Compile time").
// IWYU pragma: private, include <tapeflow/saved_model/load.hpp>
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/linalg/matmul.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/softmax.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace saved_model::detail {

/// A node's attributes as the file gives them, with the op's stripped defaults behind them.
class NodeAttrs {
 public:
  /// `attrs` from the NodeDef, `defaults` from the op's table entry.
  NodeAttrs(const tapeflow::detail::graph_proto::Attributes& attrs, const OpAttributes& defaults)
      : attrs_(&attrs), defaults_(&defaults) {}

  /// The attribute `name` (from the node, else the default); invalid_argument when neither
  /// has it or it has another kind.
  template <class V>
  [[nodiscard]] const V& get(std::string_view name) const {
    const AttrValue* found = find(attrs_->values, name);
    if (found == nullptr) {
      found = find(*defaults_, name);
    }
    if (found == nullptr) {
      throw invalid_argument("attribute '" + std::string(name) + "' is missing and has no default");
    }
    const V* v = std::get_if<V>(&found->value());
    if (v == nullptr) {
      throw invalid_argument("attribute '" + std::string(name) + "' has kind " +
                             found->to_string() + ", not the one the op takes");
    }
    return *v;
  }
  /// The tensor attribute `name` (a Const's `value`); unimplemented when the file's tensor has
  /// a dtype or rank tapeflow has no tensor type for.
  [[nodiscard]] const AnyTensor& tensor(std::string_view name) const {
    for (const auto& [k, v] : attrs_->tensors) {
      if (k == name) {
        return v;
      }
    }
    throw unimplemented("tensor attribute '" + std::string(name) +
                        "' is missing or has a dtype/rank tapeflow cannot hold");
  }

 private:
  static const AttrValue* find(const OpAttributes& list, std::string_view name) {
    for (const auto& [k, v] : list) {
      if (k == name) {
        return &v;
      }
    }
    return nullptr;
  }
  const tapeflow::detail::graph_proto::Attributes* attrs_;
  const OpAttributes* defaults_;
};

/// What an entry computes: the node's outputs (in output-arg order; a list argument's elements
/// in order) from its data inputs.
using OpRun = std::vector<AnyTensor> (*)(std::span<const AnyTensor> inputs, const NodeAttrs&);

/// One TensorFlow op the loader knows.
struct OpEntry {
  /// TensorFlow's output argument names (OpDef.output_arg). One name and several outputs: a
  /// list argument (`split:output:3`).
  std::vector<std::string_view> output_args;
  /// The attributes TensorFlow strips when they equal the op's default.
  OpAttributes defaults;
  /// How many data inputs the op takes (-1: any, a list argument).
  int num_inputs;
  /// Runs (traces) the op.
  OpRun run;
};

namespace dispatch {

/// invalid_argument (becomes unimplemented in the caller's message) for an input the table
/// does not admit.
[[noreturn]] inline void not_admitted(const AnyTensor& x, std::string_view what) {
  throw unimplemented("input of dtype " + std::string(dtype_name(x.dtype())) + " and rank " +
                      std::to_string(x.rank()) + " is not admitted (" + std::string(what) + ")");
}

/// Calls `f(typed)` for a float32 tensor of rank 1 to 4.
template <class F>
AnyTensor float_r1_4(const AnyTensor& x, F&& f) {
  if (x.dtype() == DType::float32) {
    switch (x.rank()) {
      case 1:
        return f(x.unchecked_as<float, 1>());
      case 2:
        return f(x.unchecked_as<float, 2>());
      case 3:
        return f(x.unchecked_as<float, 3>());
      case 4:
        return f(x.unchecked_as<float, 4>());
      default:
        break;
    }
  }
  not_admitted(x, "float32, rank 1-4");
}

/// Calls `f(a, b)` for float32 tensors whose ranks broadcast the way the seed models use:
/// equal ranks 1-4, or either one a scalar or a vector (a bias).
template <class F>
AnyTensor float_broadcast(const AnyTensor& a, const AnyTensor& b, F&& f) {
  if (a.dtype() != DType::float32 || b.dtype() != DType::float32) {
    not_admitted(a.dtype() != DType::float32 ? a : b, "float32 operands");
  }
  auto by_b = [&](const auto& ta) -> AnyTensor {
    if (b.rank() == ta.rank_v) {
      return f(ta, b.unchecked_as<float, std::remove_cvref_t<decltype(ta)>::rank_v>());
    }
    if (b.rank() == 1) {
      return f(ta, b.unchecked_as<float, 1>());
    }
    if (b.rank() == 0) {
      return f(ta, b.unchecked_as<float, 0>());
    }
    not_admitted(b, "second operand of the first one's rank, a vector or a scalar");
  };
  if (a.rank() == 0 && b.rank() >= 1) {
    return float_r1_4(
        b, [&](const auto& tb) -> AnyTensor { return f(a.unchecked_as<float, 0>(), tb); });
  }
  if (a.rank() == 1 && b.rank() > 1) {
    return float_r1_4(
        b, [&](const auto& tb) -> AnyTensor { return f(a.unchecked_as<float, 1>(), tb); });
  }
  return float_r1_4(a, by_b);
}

/// The dims of a constant 1-D int32/int64 tensor (a Reshape's `shape`).
template <std::size_t N>
std::array<std::int64_t, N> dims_of(const AnyTensor& shape) {
  std::array<std::int64_t, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    out[i] = shape.dtype() == DType::int32 ? shape.unchecked_as<std::int32_t, 1>().data()[i]
                                           : shape.unchecked_as<std::int64_t, 1>().data()[i];
  }
  return out;
}

}  // namespace dispatch

namespace table_ops {

using Outs = std::vector<AnyTensor>;

inline Outs identity(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_r1_4(in[0],
                               [](const auto& x) -> AnyTensor { return tapeflow::identity(x); })};
}
inline Outs constant(std::span<const AnyTensor>, const NodeAttrs& attrs) {
  return {attrs.tensor("value")};
}
inline Outs mat_mul(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (in[0].dtype() != DType::float32 || in[1].dtype() != DType::float32 || in[0].rank() != 2 ||
      in[1].rank() != 2) {
    dispatch::not_admitted(in[0].rank() != 2 ? in[0] : in[1], "float32 matrices");
  }
  return {matmul(in[0].unchecked_as<float, 2>(), in[1].unchecked_as<float, 2>(),
                 {.transpose_a = attrs.get<bool>("transpose_a"),
                  .transpose_b = attrs.get<bool>("transpose_b")})};
}
/// Batched MatMul over equal ranks 2-4 (adj_x/adj_y are transposes for real dtypes).
inline Outs batch_mat_mul_v2(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (in[0].rank() != in[1].rank() || in[0].rank() < 2 || in[1].dtype() != DType::float32) {
    dispatch::not_admitted(in[1], "float32 operands of equal rank 2-4");
  }
  const MatMulOptions options{.transpose_a = attrs.get<bool>("adj_x"),
                              .transpose_b = attrs.get<bool>("adj_y")};
  return {dispatch::float_r1_4(in[0], [&](const auto& a) -> AnyTensor {
    constexpr std::size_t R = std::remove_cvref_t<decltype(a)>::rank_v;
    if constexpr (R >= 2) {
      return matmul(a, in[1].unchecked_as<float, R>(), options);
    } else {
      dispatch::not_admitted(in[0], "rank 2-4");
    }
  })};
}
/// BiasAdd is AddV2 with the bias broadcast along the last axis (data_format NHWC).
inline Outs bias_add(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (attrs.get<std::string>("data_format") != "NHWC") {
    throw unimplemented("data_format " + attrs.get<std::string>("data_format") +
                        " (only NHWC: the bias on the last axis)");
  }
  if (in[1].rank() != 1) {
    dispatch::not_admitted(in[1], "a bias vector");
  }
  return {dispatch::float_r1_4(
      in[0], [&](const auto& x) -> AnyTensor { return x + in[1].unchecked_as<float, 1>(); })};
}
inline Outs add_v2(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_broadcast(
      in[0], in[1], [](const auto& a, const auto& b) -> AnyTensor { return a + b; })};
}
inline Outs sub(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_broadcast(
      in[0], in[1], [](const auto& a, const auto& b) -> AnyTensor { return a - b; })};
}
inline Outs mul(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_broadcast(
      in[0], in[1], [](const auto& a, const auto& b) -> AnyTensor { return a * b; })};
}
inline Outs relu(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_r1_4(in[0], [](const auto& x) -> AnyTensor { return nn::relu(x); })};
}
inline Outs sigmoid(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_r1_4(in[0], [](const auto& x) -> AnyTensor { return nn::sigmoid(x); })};
}
inline Outs tanh(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_r1_4(in[0], [](const auto& x) -> AnyTensor { return nn::tanh(x); })};
}
inline Outs softmax(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_r1_4(in[0], [](const auto& x) -> AnyTensor { return nn::softmax(x); })};
}
/// Reshape to a constant shape (what Keras writes for a static batch). A shape computed from
/// the input's dynamic dims (Shape/StridedSlice/Pack) is not constant while tracing.
inline Outs reshape_op(std::span<const AnyTensor> in, const NodeAttrs&) {
  const AnyTensor& shape = in[1];
  if (shape.is_symbolic() || !shape.has_value()) {
    throw unimplemented("a shape computed at run time (only constant shapes)");
  }
  if (shape.rank() != 1 || (shape.dtype() != DType::int32 && shape.dtype() != DType::int64)) {
    dispatch::not_admitted(shape, "an int32/int64 vector shape");
  }
  return {dispatch::float_r1_4(in[0], [&](const auto& x) -> AnyTensor {
    switch (shape.num_elements()) {
      case 1:
        return reshape(x, dispatch::dims_of<1>(shape));
      case 2:
        return reshape(x, dispatch::dims_of<2>(shape));
      case 3:
        return reshape(x, dispatch::dims_of<3>(shape));
      case 4:
        return reshape(x, dispatch::dims_of<4>(shape));
      default:
        dispatch::not_admitted(shape, "an output rank of 1-4");
    }
  })};
}

}  // namespace table_ops

/// TensorFlow op name -> entry. Output-arg names and defaults are TensorFlow's OpDefs' (the
/// stripped defaults of the serving graphs, docs/formats.md 12.8). Ops the interpreter
/// handles itself because they act on functions or variables rather than tensors
/// (StatefulPartitionedCall, PartitionedCall, ReadVariableOp, NoOp) are not here.
inline const std::map<std::string, OpEntry, std::less<>>& op_table() {
  static const std::map<std::string, OpEntry, std::less<>> table = {
      {"Const", {{"output"}, {}, 0, &table_ops::constant}},
      {"Identity", {{"output"}, {}, 1, &table_ops::identity}},
      {"MatMul",
       {{"product"}, {{"transpose_a", false}, {"transpose_b", false}}, 2, &table_ops::mat_mul}},
      {"BatchMatMulV2",
       {{"output"}, {{"adj_x", false}, {"adj_y", false}}, 2, &table_ops::batch_mat_mul_v2}},
      {"BiasAdd", {{"output"}, {{"data_format", "NHWC"}}, 2, &table_ops::bias_add}},
      {"AddV2", {{"z"}, {}, 2, &table_ops::add_v2}},
      {"Sub", {{"z"}, {}, 2, &table_ops::sub}},
      {"Mul", {{"z"}, {}, 2, &table_ops::mul}},
      {"Relu", {{"activations"}, {}, 1, &table_ops::relu}},
      {"Sigmoid", {{"y"}, {}, 1, &table_ops::sigmoid}},
      {"Tanh", {{"y"}, {}, 1, &table_ops::tanh}},
      {"Softmax", {{"softmax"}, {}, 1, &table_ops::softmax}},
      {"Reshape", {{"output"}, {{"Tshape", DType::int32}}, 2, &table_ops::reshape_op}},
  };
  return table;
}

}  // namespace saved_model::detail
TAPEFLOW_END_NAMESPACE
