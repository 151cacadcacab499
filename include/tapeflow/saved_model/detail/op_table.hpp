// The one table tf::saved_model::load reads TensorFlow's function bodies with: TensorFlow op
// name -> which of our op definitions it becomes, its output arguments (how `node:outarg:i`
// resolves, docs/formats.md 12.5) and the attribute defaults TensorFlow strips from the files
// it writes (docs/formats.md 12.1, MetaInfoDef.stripped_default_attrs).
//
// Each entry calls the PUBLIC typed op function (tf::matmul, tf::nn::relu, ...) on the inputs
// after a narrow dtype x rank dispatch, while a trace is active: the node it appends is our own
// op, so the loaded graph is an ordinary tf::function graph (Note [One definition per op]; no
// op learns about the loader). The dispatch admits only what the op and the seed models need
// (mostly float32 of ranks 2-4, int32 ids of rank 2; each entry lists its dtypes and ranks):
// every (dtype, rank) it admits instantiates the op, and compile time is this project's
// scarcest resource (MAINTAINERS.md, "Compile time").
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
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/ops/array/gather.hpp>
#include <tapeflow/ops/array/one_hot.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/array/stack.hpp>
#include <tapeflow/ops/array/where.hpp>
#include <tapeflow/ops/linalg/matmul.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/math/compare.hpp>
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
  /// The data inputs that may hold the -1 of a dim unknown while tracing (bit i: input i): shape
  /// plumbing passes such a -1 on, Reshape's target infers it. Any other input holding one is
  /// refused (Note [Dims unknown while tracing], saved_model/detail/loader.hpp).
  std::uint32_t unknown_dim_inputs = 0;
  /// Whether the outputs are shapes whose -1 entries are unknown dims (Shape).
  bool makes_unknown_dims = false;
  /// Whether a DT_RESOURCE input is read (a traced read of the restored variable) before the op
  /// runs: ResourceGather is ReadVariableOp then GatherV2.
  bool reads_variables = false;
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

/// Calls `f(typed)` for a tensor of dtype T and one of the ranks `Rs`.
template <class T, std::size_t... Rs, class F>
AnyTensor typed_of(ranks<Rs...>, const AnyTensor& x, F&& f) {
  AnyTensor out;
  const bool done = x.dtype() == dtype_v<T> &&
                    ((x.rank() == Rs && (out = f(x.unchecked_as<T, Rs>()), true)) || ...);
  if (!done) {
    std::string list;
    ((list += (list.empty() ? "" : ", ") + std::to_string(Rs)), ...);
    not_admitted(x, std::string(dtype_name(dtype_v<T>)) + " of rank " + list);
  }
  return out;
}

/// Calls `f(typed)` for a float32 tensor of one of the ranks `Rs`.
template <std::size_t... Rs, class F>
AnyTensor float_of(ranks<Rs...> r, const AnyTensor& x, F&& f) {
  return typed_of<float>(r, x, std::forward<F>(f));
}

/// Calls `f(a, b)` for operands of dtype T and equal rank in `Rs`, or the second one a vector
/// (a bias) or a scalar.
template <class T, std::size_t... Rs, class F>
AnyTensor typed_broadcast(ranks<Rs...> r, const AnyTensor& a, const AnyTensor& b, F&& f) {
  if (b.dtype() != dtype_v<T>) {
    not_admitted(b, std::string(dtype_name(dtype_v<T>)) + " operands");
  }
  return typed_of<T>(r, a, [&](const auto& ta) -> AnyTensor {
    constexpr std::size_t R = std::remove_cvref_t<decltype(ta)>::rank_v;
    if (b.rank() == R) {
      return f(ta, b.unchecked_as<T, R>());
    }
    if (b.rank() == 1) {
      return f(ta, b.unchecked_as<T, 1>());
    }
    if (b.rank() == 0) {
      return f(ta, b.unchecked_as<T, 0>());
    }
    not_admitted(b, "a second operand of the first one's rank, a vector or a scalar");
  });
}

/// Calls `f(a, b)` for float32 operands as typed_broadcast admits them.
template <std::size_t... Rs, class F>
AnyTensor float_broadcast(ranks<Rs...> r, const AnyTensor& a, const AnyTensor& b, F&& f) {
  return typed_broadcast<float>(r, a, b, std::forward<F>(f));
}

/// The values of a constant int32/int64 scalar or vector (a shape, begin/size, an axis):
/// unimplemented when it is computed at run time.
inline std::vector<std::int64_t> const_ints(const AnyTensor& t, std::string_view what) {
  if (t.is_symbolic() || !t.has_value()) {
    throw unimplemented(std::string(what) + " computed at run time (only constants)");
  }
  if (t.rank() > 1 || (t.dtype() != DType::int32 && t.dtype() != DType::int64)) {
    not_admitted(t, "an int32/int64 scalar or vector " + std::string(what));
  }
  auto copy = [&]<class I>(const I* data) {
    return std::vector<std::int64_t>(data, data + t.num_elements());
  };
  if (t.dtype() == DType::int32) {
    return t.rank() == 0 ? copy(t.unchecked_as<std::int32_t, 0>().data())
                         : copy(t.unchecked_as<std::int32_t, 1>().data());
  }
  return t.rank() == 0 ? copy(t.unchecked_as<std::int64_t, 0>().data())
                       : copy(t.unchecked_as<std::int64_t, 1>().data());
}

/// The value of a constant int32/int64 scalar (an axis, a depth).
inline std::int64_t const_int(const AnyTensor& t, std::string_view what) {
  const auto v = const_ints(t, what);
  if (t.rank() != 0) {
    not_admitted(t, "an int32/int64 scalar " + std::string(what));
  }
  return v[0];
}

/// The value of a constant float32 scalar (OneHot's on/off values, Fill's value).
inline float const_float(const AnyTensor& t, std::string_view what) {
  if (t.is_symbolic() || !t.has_value()) {
    throw unimplemented(std::string(what) + " computed at run time (only constants)");
  }
  if (t.dtype() != DType::float32 || t.rank() != 0) {
    not_admitted(t, "a float32 scalar " + std::string(what));
  }
  return t.unchecked_as<float, 0>().data()[0];
}

/// `v` as the std::array of rank R (the caller checked the size).
template <std::size_t R>
std::array<std::int64_t, R> array_of(const std::vector<std::int64_t>& v) {
  std::array<std::int64_t, R> out{};
  std::copy_n(v.begin(), R, out.begin());
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
/// AddV2 (broadcasting as typed_broadcast admits): float32 of rank 1, 2 and 4 (our exporter
/// writes a Conv2D's bias as AddV2 of the rank-4 output and the bias vector), and int32 of
/// rank 2 (Keras 3's Embedding adds the vocabulary size to negative ids).
inline Outs add_v2(std::span<const AnyTensor> in, const NodeAttrs&) {
  auto add = [](const auto& a, const auto& b) -> AnyTensor { return a + b; };
  if (in[0].dtype() == DType::int32) {
    return {dispatch::typed_broadcast<std::int32_t>(ranks<2>{}, in[0], in[1], add)};
  }
  return {dispatch::float_broadcast(ranks<1, 2, 4>{}, in[0], in[1], add)};
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
/// constant (-1 for the dynamic batch, which Reshape infers). A shape computed from run-time
/// values is unimplemented.
inline Outs reshape_op(std::span<const AnyTensor> in, const NodeAttrs&) {
  const AnyTensor& shape = in[1];
  if (shape.rank() != 1) {
    dispatch::not_admitted(shape, "an int32/int64 vector shape");
  }
  const std::vector<std::int64_t> target = dispatch::const_ints(shape, "a shape");
  dispatch::require_one_unknown(target);
  return {dispatch::float_of(ranks<1, 2, 3, 4>{}, in[0], [&](const auto& x) -> AnyTensor {
    switch (target.size()) {
      case 2:
        return reshape(x, dispatch::array_of<2>(target));
      case 3:
        return reshape(x, dispatch::array_of<3>(target));
      case 4:
        return reshape(x, dispatch::array_of<4>(target));
      default:
        dispatch::not_admitted(shape, "an output rank of 2-4");
    }
  })};
}

/// Conv2D (NHWC): Keras' Conv2D layer, and `tf.nn.conv2d` with explicit padding.
inline Outs conv_2d(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (attrs.get<std::string>("data_format") != "NHWC") {
    throw unimplemented("data_format " + attrs.get<std::string>("data_format") + " (only NHWC)");
  }
  if (in[1].dtype() != DType::float32 || in[1].rank() != 4) {
    dispatch::not_admitted(in[1], "float32 HWIO filters");
  }
  const std::string padding = attrs.get<std::string>("padding");
  auto padding_arg = [&]() -> nn::PaddingArg {
    if (padding != "EXPLICIT") {
      return std::string_view(padding);
    }
    const auto pairs = attrs.get<std::vector<std::int64_t>>("explicit_paddings");
    if (pairs.size() != 8) {
      throw invalid_argument("explicit_paddings must hold 8 values (a pair per NHWC axis), got " +
                             std::to_string(pairs.size()));
    }
    return {{pairs[0], pairs[1]}, {pairs[2], pairs[3]}, {pairs[4], pairs[5]}, {pairs[6], pairs[7]}};
  };
  const nn::Conv2DOptions options{
      .strides = dispatch::hw_of(attrs.get<std::vector<std::int64_t>>("strides"), "strides"),
      .padding = padding_arg(),
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
/// while tracing is -1, which only Reshape understands (it infers one -1 dim); the interpreter
/// marks such a result and refuses it anywhere but shape plumbing and Reshape's target (Note
/// [Dims unknown while tracing]), so a -1 never becomes a wrong number silently.
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
/// StridedSlice without ellipsis or new axes: of an int32 vector (a shape: Keras' Flatten and
/// Embedding take one dim with shrink_axis_mask 1) and of float32 rank 3 (the seed's text model
/// takes step t of its one-hot input, `inputs[:, t, :]`, shrinking axis 1). Our strided_slice
/// keeps the rank, so a shrunk axis is sliced to its one element at `begin` (TensorFlow ignores
/// `end`, the stride and the masks there) and squeezed after; one shrunk axis at most. Our
/// StridedSlice resolves begin and end against static dims, so an input with a dim unknown
/// while tracing is unimplemented rather than sliced wrongly.
inline Outs strided_slice_op(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  if (attrs.get<std::int64_t>("ellipsis_mask") != 0 ||
      attrs.get<std::int64_t>("new_axis_mask") != 0) {
    throw unimplemented("ellipsis_mask / new_axis_mask");
  }
  const AnyTensor& x = in[0];
  const std::size_t rank = x.rank();
  const Shape& dims = x.shape();
  for (std::size_t a = 0; a < rank; ++a) {
    if (dims[a] < 0) {
      throw unimplemented("a strided slice of " + dims.to_string() +
                          " (a dim unknown while tracing)");
    }
  }
  std::vector<std::int64_t> begin = dispatch::const_ints(in[1], "begin");
  std::vector<std::int64_t> end = dispatch::const_ints(in[2], "end");
  std::vector<std::int64_t> strides = dispatch::const_ints(in[3], "strides");
  if (in[1].rank() != 1 || begin.size() != rank || end.size() != rank || strides.size() != rank) {
    throw invalid_argument("begin, end and strides need " + std::to_string(rank) +
                           " entries for an input of shape " + dims.to_string());
  }
  std::int64_t begin_mask = attrs.get<std::int64_t>("begin_mask");
  std::int64_t end_mask = attrs.get<std::int64_t>("end_mask");
  const std::int64_t shrink = attrs.get<std::int64_t>("shrink_axis_mask");
  int shrunk = -1;
  for (std::size_t a = 0; a < rank; ++a) {
    if (((shrink >> a) & 1) == 0) {
      continue;
    }
    if (shrunk >= 0) {
      throw unimplemented("shrink_axis_mask " + std::to_string(shrink) + " (one shrunk axis)");
    }
    shrunk = static_cast<int>(a);
    const std::int64_t b = begin[a] < 0 ? begin[a] + dims[a] : begin[a];
    if (b < 0 || b >= dims[a]) {
      throw invalid_argument("index " + std::to_string(begin[a]) + " of axis " + std::to_string(a) +
                             " is out of range for shape " + dims.to_string());
    }
    begin[a] = b;
    end[a] = b + 1;
    strides[a] = 1;
    begin_mask &= ~(std::int64_t{1} << a);
    end_mask &= ~(std::int64_t{1} << a);
  }
  if ((shrink >> rank) != 0) {
    throw invalid_argument("shrink_axis_mask " + std::to_string(shrink) + " names an axis past " +
                           "the rank " + std::to_string(rank));
  }
  const StridedSliceOptions options{.begin_mask = begin_mask, .end_mask = end_mask};
  auto slice_of = [&]<std::size_t R>(const auto& t) {
    std::int64_t b[R], e[R], s[R];
    for (std::size_t a = 0; a < R; ++a) {
      b[a] = begin[a];
      e[a] = end[a];
      s[a] = strides[a];
    }
    return strided_slice(t, b, e, s, options);
  };
  if (x.dtype() == DType::int32 && rank == 1) {
    auto sliced = slice_of.template operator()<1>(x.unchecked_as<std::int32_t, 1>());
    return {shrunk < 0 ? AnyTensor(sliced) : AnyTensor(squeeze(sliced, 0))};
  }
  if (x.dtype() == DType::float32 && rank == 3) {
    auto sliced = slice_of.template operator()<3>(x.unchecked_as<float, 3>());
    return {shrunk < 0 ? AnyTensor(sliced) : AnyTensor(squeeze(sliced, shrunk))};
  }
  dispatch::not_admitted(x, "an int32 vector (a shape) or float32 of rank 3");
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

/// OneHot of int32 ids [batch, time] to float32 [batch, time, depth]: the seed's text model
/// (TensorFlow's files and our exporter's). depth, on_value and off_value must be constants.
inline Outs one_hot_op(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  const std::int64_t depth = dispatch::const_int(in[1], "depth");
  const float on = dispatch::const_float(in[2], "on_value");
  const float off = dispatch::const_float(in[3], "off_value");
  const auto axis = static_cast<int>(attrs.get<std::int64_t>("axis"));
  return {dispatch::typed_of<std::int32_t>(ranks<2>{}, in[0], [&](const auto& ids) -> AnyTensor {
    return one_hot<float>(ids, depth, on, off, axis);
  })};
}
/// Slice (constant begin and size, size -1 to the end) of float32 rank 2 and 3: our exporter
/// writes LSTMCell's gates (rank 2) and unstack's steps (rank 3) as Slice.
inline Outs slice_op(std::span<const AnyTensor> in, const NodeAttrs&) {
  const std::vector<std::int64_t> begin = dispatch::const_ints(in[1], "begin");
  const std::vector<std::int64_t> size = dispatch::const_ints(in[2], "size");
  return {dispatch::float_of(ranks<2, 3>{}, in[0], [&](const auto& x) -> AnyTensor {
    constexpr std::size_t R = std::remove_cvref_t<decltype(x)>::rank_v;
    if (begin.size() != R || size.size() != R) {
      throw invalid_argument("begin and size need " + std::to_string(R) + " entries");
    }
    return tapeflow::slice(x, dispatch::array_of<R>(begin), dispatch::array_of<R>(size));
  })};
}
/// Split into `num_split` equal pieces along a constant axis: one Slice each (tapeflow has no
/// Split op; a Slice of the whole of the other axes keeps a dynamic batch). float32 rank 2:
/// Keras' LSTMCell splits its gate pre-activations in four.
inline Outs split_op(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  const std::int64_t axis_in = dispatch::const_int(in[0], "split_dim");
  const std::int64_t n = attrs.get<std::int64_t>("num_split");
  const AnyTensor& value = in[1];
  Outs out;
  dispatch::float_of(ranks<2>{}, value, [&](const auto& x) -> AnyTensor {
    constexpr auto R = static_cast<std::int64_t>(std::remove_cvref_t<decltype(x)>::rank_v);
    if (axis_in < -R || axis_in >= R) {
      throw invalid_argument("split_dim " + std::to_string(axis_in) + " is out of range");
    }
    const auto axis = static_cast<std::size_t>(axis_in < 0 ? axis_in + R : axis_in);
    const std::int64_t dim = value.shape()[axis];
    if (dim < 0) {
      throw unimplemented("splitting axis " + std::to_string(axis) + " of " +
                          value.shape().to_string() + " (a dim unknown while tracing)");
    }
    if (n <= 0 || dim % n != 0) {
      throw invalid_argument("num_split " + std::to_string(n) + " does not divide dim " +
                             std::to_string(dim));
    }
    std::array<std::int64_t, R> begin{}, size{};
    size.fill(-1);
    size[axis] = dim / n;
    for (std::int64_t k = 0; k < n; ++k) {
      begin[axis] = k * (dim / n);
      out.emplace_back(tapeflow::slice(x, begin, size));
    }
    return {};
  });
  return out;
}
/// Cast of float32 rank 2 to int32 (truncating toward zero, as TensorFlow does; Truncate only
/// changes float-to-float casts): Keras 3's Embedding casts float ids.
inline Outs cast_op(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  const DType to = attrs.get<DType>("DstT");
  if (to != DType::int32) {
    throw unimplemented("a cast to " + std::string(dtype_name(to)) +
                        " (only float32 to int32: Keras' Embedding)");
  }
  return {dispatch::float_of(ranks<2>{}, in[0],
                             [](const auto& x) -> AnyTensor { return cast<std::int32_t>(x); })};
}
/// Less of int32 rank 2 and an int32 scalar (Keras 3's Embedding: `ids < 0`).
inline Outs less_op(std::span<const AnyTensor> in, const NodeAttrs&) {
  if (in[1].dtype() != DType::int32 || in[1].rank() != 0) {
    dispatch::not_admitted(in[1], "an int32 scalar");
  }
  return {dispatch::typed_of<std::int32_t>(ranks<2>{}, in[0], [&](const auto& a) -> AnyTensor {
    return less(a, in[1].unchecked_as<std::int32_t, 0>());
  })};
}
/// SelectV2 of a bool rank-2 condition between int32 rank-2 tensors (Keras 3's Embedding:
/// negative ids wrap around).
inline Outs select_v2(std::span<const AnyTensor> in, const NodeAttrs&) {
  if (in[0].dtype() != DType::bool_ || in[0].rank() != 2) {
    dispatch::not_admitted(in[0], "a bool condition of rank 2");
  }
  if (in[2].dtype() != DType::int32 || in[2].rank() != 2) {
    dispatch::not_admitted(in[2], "int32 of rank 2");
  }
  return {dispatch::typed_of<std::int32_t>(ranks<2>{}, in[1], [&](const auto& t) -> AnyTensor {
    return where(in[0].unchecked_as<bool, 2>(), t, in[2].unchecked_as<std::int32_t, 2>());
  })};
}
/// A gather of float32 rows (an embedding table [vocabulary, width]) by int32 ids of rank 2:
/// GatherV2 and ResourceGather (batch_dims 0 only).
inline AnyTensor gather_rows(const AnyTensor& params, const AnyTensor& ids, std::int64_t axis,
                             const NodeAttrs& attrs) {
  if (attrs.get<std::int64_t>("batch_dims") != 0) {
    throw unimplemented("batch_dims " + std::to_string(attrs.get<std::int64_t>("batch_dims")));
  }
  if (ids.dtype() != DType::int32 || ids.rank() != 2) {
    dispatch::not_admitted(ids, "int32 indices of rank 2");
  }
  return dispatch::float_of(ranks<2>{}, params, [&](const auto& p) -> AnyTensor {
    return gather(p, ids.unchecked_as<std::int32_t, 2>(), static_cast<int>(axis));
  });
}
/// GatherV2 with a constant axis: Keras 3's Embedding.
inline Outs gather_v2(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  return {gather_rows(in[0], in[1], dispatch::const_int(in[2], "axis"), attrs)};
}
/// ResourceGather: the variable read (the entry's reads_variables), then GatherV2 on axis 0
/// (tf_keras' Embedding).
inline Outs resource_gather(std::span<const AnyTensor> in, const NodeAttrs& attrs) {
  return {gather_rows(in[0], in[1], 0, attrs)};
}
/// Fill of constant dims with a constant float32 value: a constant (tf.zeros of more than 1000
/// elements is Fill, e.g. the seed's LSTM state). Constant folding runs it; dims or a value
/// computed at run time are unimplemented, and so are dims holding an unknown -1 (the
/// interpreter refuses them first: Note [Dims unknown while tracing]).
inline Outs fill_op(std::span<const AnyTensor> in, const NodeAttrs&) {
  if (in[0].rank() != 1) {
    dispatch::not_admitted(in[0], "an int32/int64 vector of dims");
  }
  const std::vector<std::int64_t> dims = dispatch::const_ints(in[0], "dims");
  const float value = dispatch::const_float(in[1], "value");
  for (std::int64_t d : dims) {
    if (d < 0) {
      throw invalid_argument("dims " + Shape(dims).to_string() + " hold a negative dim");
    }
  }
  switch (dims.size()) {
    case 1:
      return {tapeflow::fill(dispatch::array_of<1>(dims), value)};
    case 2:
      return {tapeflow::fill(dispatch::array_of<2>(dims), value)};
    case 3:
      return {tapeflow::fill(dispatch::array_of<3>(dims), value)};
    case 4:
      return {tapeflow::fill(dispatch::array_of<4>(dims), value)};
    default:
      dispatch::not_admitted(in[0], "1 to 4 dims");
  }
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
      {"Shape", {{"output"}, {{"out_type", DType::int32}}, 1, &table_ops::shape, 0, true}},
      {"StridedSlice",
       {{"output"},
        {{"begin_mask", std::int64_t{0}},
         {"end_mask", std::int64_t{0}},
         {"ellipsis_mask", std::int64_t{0}},
         {"new_axis_mask", std::int64_t{0}},
         {"shrink_axis_mask", std::int64_t{0}}},
        4,
        &table_ops::strided_slice_op,
        0b1}},
      {"Pack", {{"output"}, {{"axis", std::int64_t{0}}}, -1, &table_ops::pack, ~0U}},
      {"Squeeze",
       {{"output"}, {{"squeeze_dims", std::vector<std::int64_t>{}}}, 1, &table_ops::squeeze_op}},
      {"Reshape", {{"output"}, {{"Tshape", DType::int32}}, 2, &table_ops::reshape_op, 0b10}},
      {"OneHot",
       {{"output"}, {{"axis", std::int64_t{-1}}, {"TI", DType::int64}}, 4, &table_ops::one_hot_op}},
      {"Slice", {{"output"}, {}, 3, &table_ops::slice_op}},
      {"Split", {{"output"}, {}, 2, &table_ops::split_op}},
      {"Cast", {{"y"}, {{"Truncate", false}}, 1, &table_ops::cast_op}},
      {"Less", {{"z"}, {}, 2, &table_ops::less_op}},
      {"SelectV2", {{"output"}, {}, 3, &table_ops::select_v2}},
      {"GatherV2", {{"output"}, {{"batch_dims", std::int64_t{0}}}, 3, &table_ops::gather_v2}},
      {"ResourceGather",
       {{"output"},
        {{"batch_dims", std::int64_t{0}}, {"validate_indices", true}},
        2,
        &table_ops::resource_gather,
        0,
        false,
        true}},
      {"Fill", {{"output"}, {{"index_type", DType::int32}}, 2, &table_ops::fill_op}},
  };
  return table;
}

}  // namespace saved_model::detail
TAPEFLOW_END_NAMESPACE
