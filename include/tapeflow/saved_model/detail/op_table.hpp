// The one table tf::saved_model::load reads TensorFlow's function bodies with: TensorFlow op
// name -> which of our op definitions it becomes, its output arguments (how `node:outarg:i`
// resolves, docs/formats.md 12.5) and the attribute defaults TensorFlow strips from the files
// it writes (docs/formats.md 12.1, MetaInfoDef.stripped_default_attrs).
//
// Each entry calls the PUBLIC typed op function (tf::matmul, tf::nn::relu, ...) on the inputs
// after a narrow dtype x rank dispatch, while a trace is active: the node it appends is our own
// op, so the loaded graph is an ordinary tf::function graph (Note [One definition per op]; no
// op learns about the loader). The dispatch admits only what the op and the seed models need
// (mostly float32, ranks 2 and 4; each entry lists its ranks): every (dtype, rank) it admits
// instantiates the op, and compile time is this project's scarcest resource (MAINTAINERS.md,
// "Compile time").
// IWYU pragma: private, include <tapeflow/saved_model/load.hpp>
#pragma once

#include <algorithm>
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
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/array/stack.hpp>
#include <tapeflow/ops/linalg/matmul.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/conv2d.hpp>
#include <tapeflow/ops/nn/pooling.hpp>
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

/// Throws unimplemented for an input the table does not admit (the interpreter adds the op,
/// node and function to the message).
[[noreturn]] inline void not_admitted(const AnyTensor& x, std::string_view what) {
  throw unimplemented("input of dtype " + std::string(dtype_name(x.dtype())) + " and rank " +
                      std::to_string(x.rank()) + " is not admitted (" + std::string(what) + ")");
}

/// The ranks an entry admits, listed per op: each listed rank instantiates the op (and its
/// gradient's ops), so the lists hold what the seed models use, nothing more.
template <std::size_t... Rs>
struct ranks {};

/// Calls `f(typed)` for a float32 tensor of one of the ranks `Rs`.
template <std::size_t... Rs, class F>
AnyTensor float_of(ranks<Rs...>, const AnyTensor& x, F&& f) {
  AnyTensor out;
  const bool done = x.dtype() == DType::float32 &&
                    ((x.rank() == Rs && (out = f(x.unchecked_as<float, Rs>()), true)) || ...);
  if (!done) {
    std::string list;
    ((list += (list.empty() ? "" : ", ") + std::to_string(Rs)), ...);
    not_admitted(x, "float32 of rank " + list);
  }
  return out;
}

/// Calls `f(a, b)` for float32 operands of equal rank in `Rs`, or the second one a vector (a
/// bias) or a scalar.
template <std::size_t... Rs, class F>
AnyTensor float_broadcast(ranks<Rs...> r, const AnyTensor& a, const AnyTensor& b, F&& f) {
  if (b.dtype() != DType::float32) {
    not_admitted(b, "float32 operands");
  }
  return float_of(r, a, [&](const auto& ta) -> AnyTensor {
    constexpr std::size_t R = std::remove_cvref_t<decltype(ta)>::rank_v;
    if (b.rank() == R) {
      return f(ta, b.unchecked_as<float, R>());
    }
    if (b.rank() == 1) {
      return f(ta, b.unchecked_as<float, 1>());
    }
    if (b.rank() == 0) {
      return f(ta, b.unchecked_as<float, 0>());
    }
    not_admitted(b, "a second operand of the first one's rank, a vector or a scalar");
  });
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

/// The (height, width) of an NHWC four-entry attribute (strides, ksize, dilations), whose batch
/// and channel entries must be 1.
inline nn::Size2D hw_of(const std::vector<std::int64_t>& v, std::string_view name) {
  if (v.size() != 4 || v[0] != 1 || v[3] != 1) {
    throw unimplemented(std::string(name) + " must be [1, h, w, 1] (NHWC)");
  }
  return {v[1], v[2]};
}

/// The dims of `x` as a Reshape target: at most one unknown (-1) dim, which Reshape infers.
inline void require_one_unknown(const std::vector<std::int64_t>& dims) {
  if (std::count(dims.begin(), dims.end(), -1) > 1) {
    throw unimplemented("a shape with more than one dim unknown while tracing");
  }
}

}  // namespace dispatch

namespace table_ops {

/// An entry's outputs.
using Outs = std::vector<AnyTensor>;
using dispatch::ranks;

/// Identity: our Identity op.
inline Outs identity(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_of(ranks<1, 2, 3, 4>{}, in[0],
                             [](const auto& x) -> AnyTensor { return tapeflow::identity(x); })};
}
/// Const: the node's `value` tensor, captured as a constant where an op uses it.
inline Outs constant(std::span<const AnyTensor>, const NodeAttrs& attrs) {
  return {attrs.tensor("value")};
}
/// MatMul of float32 matrices.
inline Outs mat_mul(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (in[1].dtype() != DType::float32 || in[1].rank() != 2) {
    dispatch::not_admitted(in[1], "a float32 matrix");
  }
  const MatMulOptions options{.transpose_a = attrs.get<bool>("transpose_a"),
                              .transpose_b = attrs.get<bool>("transpose_b")};
  return {dispatch::float_of(ranks<2>{}, in[0], [&](const auto& a) -> AnyTensor {
    return matmul(a, in[1].unchecked_as<float, 2>(), options);
  })};
}
/// Batched MatMul over equal ranks (adj_x/adj_y are transposes for real dtypes); our exporter
/// writes every matmul as BatchMatMulV2.
inline Outs batch_mat_mul_v2(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (in[0].rank() != in[1].rank() || in[1].dtype() != DType::float32) {
    dispatch::not_admitted(in[1], "a float32 operand of the first one's rank");
  }
  const MatMulOptions options{.transpose_a = attrs.get<bool>("adj_x"),
                              .transpose_b = attrs.get<bool>("adj_y")};
  return {dispatch::float_of(ranks<2, 3>{}, in[0], [&](const auto& a) -> AnyTensor {
    constexpr std::size_t R = std::remove_cvref_t<decltype(a)>::rank_v;
    return matmul(a, in[1].unchecked_as<float, R>(), options);
  })};
}
/// BiasAdd is AddV2 with the bias broadcast along the last axis (data_format NHWC): Dense
/// (rank 2) and Conv2D (rank 4).
inline Outs bias_add(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (attrs.get<std::string>("data_format") != "NHWC") {
    throw unimplemented("data_format " + attrs.get<std::string>("data_format") +
                        " (only NHWC: the bias on the last axis)");
  }
  if (in[1].rank() != 1 || in[1].dtype() != DType::float32) {
    dispatch::not_admitted(in[1], "a float32 bias vector");
  }
  return {dispatch::float_of(ranks<2, 4>{}, in[0], [&](const auto& x) -> AnyTensor {
    return x + in[1].unchecked_as<float, 1>();
  })};
}
/// AddV2 (broadcasting as float_broadcast admits).
inline Outs add_v2(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {
      dispatch::float_broadcast(ranks<1, 2>{}, in[0], in[1],
                                [](const auto& a, const auto& b) -> AnyTensor { return a + b; })};
}
/// Sub (broadcasting as float_broadcast admits).
inline Outs sub(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {
      dispatch::float_broadcast(ranks<1, 2>{}, in[0], in[1],
                                [](const auto& a, const auto& b) -> AnyTensor { return a - b; })};
}
/// Mul (broadcasting as float_broadcast admits).
inline Outs mul(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {
      dispatch::float_broadcast(ranks<1, 2>{}, in[0], in[1],
                                [](const auto& a, const auto& b) -> AnyTensor { return a * b; })};
}
/// Relu: Dense (rank 2) and Conv2D (rank 4) activations.
inline Outs relu(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_of(ranks<2, 4>{}, in[0],
                             [](const auto& x) -> AnyTensor { return nn::relu(x); })};
}
/// Sigmoid: recurrent gates (rank 2).
inline Outs sigmoid(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_of(ranks<2>{}, in[0],
                             [](const auto& x) -> AnyTensor { return nn::sigmoid(x); })};
}
/// Tanh: recurrent cells (rank 2).
inline Outs tanh(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_of(ranks<2>{}, in[0],
                             [](const auto& x) -> AnyTensor { return nn::tanh(x); })};
}
/// Softmax over the last axis.
inline Outs softmax(std::span<const AnyTensor> in, const NodeAttrs&) {
  return {dispatch::float_of(ranks<2, 3>{}, in[0],
                             [](const auto& x) -> AnyTensor { return nn::softmax(x); })};
}
/// Reshape to a shape known while tracing: a Const, or Shape/StridedSlice/Pack folded to a
/// constant (-1 for the dynamic batch). A shape computed from run-time values is unimplemented.
inline Outs reshape_op(std::span<const AnyTensor> in, const NodeAttrs&) {
  const AnyTensor& shape = in[1];
  if (shape.is_symbolic() || !shape.has_value()) {
    throw unimplemented("a shape computed at run time (only constant shapes)");
  }
  if (shape.rank() != 1 || (shape.dtype() != DType::int32 && shape.dtype() != DType::int64)) {
    dispatch::not_admitted(shape, "an int32/int64 vector shape");
  }
  std::vector<std::int64_t> target(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < target.size(); ++i) {
    target[i] = shape.dtype() == DType::int32 ? shape.unchecked_as<std::int32_t, 1>().data()[i]
                                              : shape.unchecked_as<std::int64_t, 1>().data()[i];
  }
  dispatch::require_one_unknown(target);
  return {dispatch::float_of(ranks<1, 2, 3, 4>{}, in[0], [&](const auto& x) -> AnyTensor {
    switch (shape.num_elements()) {
      case 2:
        return reshape(x, dispatch::dims_of<2>(shape));
      case 3:
        return reshape(x, dispatch::dims_of<3>(shape));
      case 4:
        return reshape(x, dispatch::dims_of<4>(shape));
      default:
        dispatch::not_admitted(shape, "an output rank of 2-4");
    }
  })};
}

/// Conv2D (NHWC, no explicit paddings): Keras' Conv2D layer.
inline Outs conv_2d(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (attrs.get<std::string>("data_format") != "NHWC") {
    throw unimplemented("data_format " + attrs.get<std::string>("data_format") + " (only NHWC)");
  }
  if (in[1].dtype() != DType::float32 || in[1].rank() != 4) {
    dispatch::not_admitted(in[1], "float32 HWIO filters");
  }
  const nn::Conv2DOptions options{
      .strides = dispatch::hw_of(attrs.get<std::vector<std::int64_t>>("strides"), "strides"),
      .padding = std::string_view(attrs.get<std::string>("padding")),
      .dilations = dispatch::hw_of(attrs.get<std::vector<std::int64_t>>("dilations"), "dilations")};
  return {dispatch::float_of(ranks<4>{}, in[0], [&](const auto& x) -> AnyTensor {
    return nn::conv2d(x, in[1].unchecked_as<float, 4>(), options);
  })};
}
/// MaxPool (NHWC): Keras' MaxPooling2D.
inline Outs max_pool(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (attrs.get<std::string>("data_format") != "NHWC") {
    throw unimplemented("data_format " + attrs.get<std::string>("data_format") + " (only NHWC)");
  }
  const auto ksize = dispatch::hw_of(attrs.get<std::vector<std::int64_t>>("ksize"), "ksize");
  const auto strides = dispatch::hw_of(attrs.get<std::vector<std::int64_t>>("strides"), "strides");
  const std::string padding = attrs.get<std::string>("padding");
  return {dispatch::float_of(ranks<4>{}, in[0], [&](const auto& x) -> AnyTensor {
    return nn::max_pool2d(x, ksize, strides, std::string_view(padding));
  })};
}
/// Shape: the input's static shape, a constant (Note [SavedModel loading], constant folding).
/// tapeflow has no Shape op: dims are run-time values of a tensor, not tensors. A dim unknown
/// while tracing is -1, which only Reshape understands (it infers one -1 dim); every op that
/// could compute with such a value (Prod, Mul on int32) is outside this table, so a -1 never
/// becomes a wrong number silently.
inline Outs shape(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  const Shape& s = in[0].shape();
  if (attrs.get<DType>("out_type") == DType::int64) {
    auto t = Tensor<std::int64_t, 1>::uninitialized({static_cast<std::int64_t>(s.rank())});
    std::copy(s.begin(), s.end(), t.mutable_data());
    return {t};
  }
  std::vector<std::int64_t> dims(s.begin(), s.end());
  return {tapeflow::detail::int32_vector(dims.data(), dims.size())};
}
/// StridedSlice of an int32 vector (a shape): Keras' Flatten takes the batch dim with it
/// (shrink_axis_mask 1). Our strided_slice keeps the rank, so a shrink is a squeeze after it.
inline Outs strided_slice_op(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (attrs.get<std::int64_t>("ellipsis_mask") != 0 ||
      attrs.get<std::int64_t>("new_axis_mask") != 0) {
    throw unimplemented("ellipsis_mask / new_axis_mask");
  }
  for (int k = 0; k < 4; ++k) {
    if (in[k].dtype() != DType::int32 || in[k].rank() != 1 ||
        (k > 0 && in[k].num_elements() != 1)) {
      dispatch::not_admitted(in[k], "int32 vectors (a slice of a shape)");
    }
    if (k > 0 && !in[k].has_value()) {
      throw unimplemented("begin, end and strides computed at run time");
    }
  }
  auto at = [&](int k) { return std::int64_t{in[k].unchecked_as<std::int32_t, 1>().data()[0]}; };
  const std::int64_t begin[1] = {at(1)}, end[1] = {at(2)}, strides[1] = {at(3)};
  auto sliced = strided_slice(in[0].unchecked_as<std::int32_t, 1>(), begin, end, strides,
                              {.begin_mask = attrs.get<std::int64_t>("begin_mask"),
                               .end_mask = attrs.get<std::int64_t>("end_mask")});
  const std::int64_t shrink = attrs.get<std::int64_t>("shrink_axis_mask");
  if (shrink == 0) {
    return {sliced};
  }
  if (shrink != 1) {
    throw unimplemented("shrink_axis_mask " + std::to_string(shrink));
  }
  return {squeeze(sliced, 0)};
}
/// Pack of int32 scalars (a shape built from dims).
inline Outs pack(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (attrs.get<std::int64_t>("axis") != 0) {
    throw unimplemented("axis " + std::to_string(attrs.get<std::int64_t>("axis")));
  }
  std::vector<Tensor<std::int32_t, 0>> values;
  for (const auto& v : in) {
    if (v.dtype() != DType::int32 || v.rank() != 0) {
      dispatch::not_admitted(v, "int32 scalars (the dims of a shape)");
    }
    values.push_back(v.unchecked_as<std::int32_t, 0>());
  }
  return {stack(values)};
}
/// Squeeze is a Reshape to the dims it keeps (our Reshape op): Keras' Conv2D squeezes its bias
/// from [1, 1, 1, C] back to [C].
inline Outs squeeze_op(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  const auto& axes = attrs.get<std::vector<std::int64_t>>("squeeze_dims");
  const Shape& s = in[0].shape();
  const auto rank = static_cast<std::int64_t>(s.rank());
  std::vector<std::int64_t> kept;
  for (std::int64_t d = 0; d < rank; ++d) {
    const bool named = std::any_of(axes.begin(), axes.end(),
                                   [&](std::int64_t a) { return a == d || a + rank == d; });
    if (axes.empty() ? s[d] != 1 : !named) {
      kept.push_back(s[d]);
    } else if (s[d] != 1 && !(axes.empty() && s[d] == -1)) {
      throw invalid_argument("dim " + std::to_string(d) + " of " + s.to_string() + " is not 1");
    } else if (s[d] == -1) {
      throw unimplemented("squeezing all size-1 dims of " + s.to_string() +
                          " (a dim unknown while tracing)");
    }
  }
  dispatch::require_one_unknown(kept);
  return {dispatch::float_of(ranks<1, 2, 3, 4>{}, in[0], [&](const auto& x) -> AnyTensor {
    switch (kept.size()) {
      case 1:
        return reshape(x, std::array<std::int64_t, 1>{kept[0]});
      case 2:
        return reshape(x, std::array<std::int64_t, 2>{kept[0], kept[1]});
      default:
        throw unimplemented("a squeeze to rank " + std::to_string(kept.size()));
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
      {"Conv2D",
       {{"output"},
        {{"data_format", "NHWC"},
         {"dilations", std::vector<std::int64_t>{1, 1, 1, 1}},
         {"use_cudnn_on_gpu", true},
         {"explicit_paddings", std::vector<std::int64_t>{}}},
        2,
        &table_ops::conv_2d}},
      {"MaxPool",
       {{"output"},
        {{"T", DType::float32},
         {"data_format", "NHWC"},
         {"explicit_paddings", std::vector<std::int64_t>{}}},
        1,
        &table_ops::max_pool}},
      {"Shape", {{"output"}, {{"out_type", DType::int32}}, 1, &table_ops::shape}},
      {"StridedSlice",
       {{"output"},
        {{"begin_mask", std::int64_t{0}},
         {"end_mask", std::int64_t{0}},
         {"ellipsis_mask", std::int64_t{0}},
         {"new_axis_mask", std::int64_t{0}},
         {"shrink_axis_mask", std::int64_t{0}}},
        4,
        &table_ops::strided_slice_op}},
      {"Pack", {{"output"}, {{"axis", std::int64_t{0}}}, -1, &table_ops::pack}},
      {"Squeeze",
       {{"output"}, {{"squeeze_dims", std::vector<std::int64_t>{}}}, 1, &table_ops::squeeze_op}},
      {"Reshape", {{"output"}, {{"Tshape", DType::int32}}, 2, &table_ops::reshape_op}},
  };
  return table;
}

}  // namespace saved_model::detail
TAPEFLOW_END_NAMESPACE
