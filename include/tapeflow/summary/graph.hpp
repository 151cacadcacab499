// A traced tf::function as a TensorFlow GraphDef, for TensorBoard's Graphs tab
// (TensorFlow: `concrete_function.graph.as_graph_def()`, `tf.summary.graph`), and as the
// protobuf text a `tf.io.write_graph(..., as_text=True)` file holds (`graph_def_text`,
// `write_graph`).
//
// The graph is read, never changed: arguments become `_Arg` nodes, captured tensors `Const`
// nodes, every traced op a node named as in ConcreteFunction::to_string(), and each returned
// value a `_Retval` node, as in the pre-optimization graphs TensorFlow's trace_export writes.
// Every node carries `T` (its dtype) and `_output_shapes`, which TensorBoard uses to label
// edges. The graph is built once as io's GraphDef struct (io/detail/graph_def.hpp), then
// serialized or printed as text. docs/formats.md 8.1, 8.4.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/graph.hpp>
#include <tapeflow/io/detail/graph_def.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>
#include <tapeflow/io/detail/text_format.hpp>
#include <tapeflow/io/files.hpp>
#include <tapeflow/summary/detail/encode.hpp>
#include <tapeflow/summary/writer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// Which of a traced function's graphs to write.
struct GraphDefOptions {
  /// The graph that runs, after the graph passes (Note [Graph passes] in
  /// function/detail/graph_passes.hpp), instead of the graph as traced (TensorFlow's
  /// pre-optimization graph), so TensorBoard can show both.
  bool optimized = false;
};

/// GraphDef.versions.producer of the graphs we write (TensorBoard requires all graphs of one
/// trace to agree; the value only tells TensorFlow which op semantics to assume).
inline constexpr std::int32_t graph_def_producer = 1;

namespace detail {

namespace gp = tapeflow::detail::graph_proto;

/// AttrValue `type` (docs/formats.md 8.1).
inline gp::AttrValueProto type_attr(DType dtype) {
  gp::AttrValueProto v;
  v.kind = gp::AttrValueProto::Kind::type;
  v.type = dtype;
  return v;
}
/// AttrValue `i`.
inline gp::AttrValueProto int_attr(std::int64_t i) {
  gp::AttrValueProto v;
  v.kind = gp::AttrValueProto::Kind::i;
  v.i = i;
  return v;
}
/// AttrValue `s`.
inline gp::AttrValueProto string_attr(std::string s) {
  gp::AttrValueProto v;
  v.kind = gp::AttrValueProto::Kind::s;
  v.s = std::move(s);
  return v;
}
/// `_output_shapes`: AttrValue `list { shape { ... } }` with one shape.
inline gp::AttrValueProto output_shapes_attr(const Shape& shape) {
  gp::AttrValueProto v;
  v.kind = gp::AttrValueProto::Kind::list;
  v.list.shape.emplace_back(shape);
  return v;
}

/// The value of a Const node as a TensorProto, values in `tensor_content` (strings in
/// `string_val`); larger constants (over 16 elements) keep only dtype and shape: the Graphs
/// tab shows no values, and GraphDefs stay small.
inline gp::AttrValueProto const_value_attr(const AnyTensor& value) {
  gp::AttrValueProto v;
  v.kind = gp::AttrValueProto::Kind::tensor;
  v.tensor.dtype = value.dtype();
  v.tensor.shape = gp::TensorShapeProto(value.shape());
  if (value.has_value() && value.num_elements() <= 16) {
    v.tensor.tensor = value;
    v.tensor.tensor_content = true;
  } else {
    wire::Writer t(v.tensor.encoded);
    t.int32_field(gp::field::tensor_dtype, static_cast<std::int32_t>(value.dtype()));
    t.message_field(gp::field::tensor_shape,
                    [&](wire::Writer& s) { gp::write(s, v.tensor.shape); });
  }
  return v;
}

/// A node of the exported graph; its attributes are written in the order added.
inline gp::NodeDef node_def(std::string name, std::string op) {
  gp::NodeDef n;
  n.name = std::move(name);
  n.op = std::move(op);
  n.attrs.keep_order = true;
  return n;
}

/// The GraphDef of a traced function as a struct, which graph_def() serializes and
/// graph_def_text() prints (docs/formats.md 8.1, 8.4).
inline gp::GraphDef graph_def_proto(const ConcreteFunction& fn, const GraphDefOptions& options) {
  const auto& g = options.optimized ? fn.optimized_graph() : fn.graph();
  std::vector<std::string> slot_names(static_cast<std::size_t>(g.num_slots));
  std::unordered_set<std::string> taken;
  for (const auto& node : g.nodes) {
    taken.insert(node.name);
  }
  auto fresh = [&](std::string base) {
    std::string name = base;
    for (int k = 1; taken.count(name) > 0; ++k) {
      name = base + "_" + std::to_string(k);
    }
    taken.insert(name);
    return name;
  };
  gp::GraphDef out;
  for (std::size_t i = 0; i < g.arg_slots.size(); ++i) {
    gp::NodeDef n = node_def(fresh("arg" + std::to_string(i)), "_Arg");
    slot_names[static_cast<std::size_t>(g.arg_slots[i])] = n.name;
    n.attrs.others = {{"T", type_attr(g.arg_dtypes()[i])},
                      {"_output_shapes", output_shapes_attr(g.arg_shapes()[i])},
                      {"index", int_attr(static_cast<std::int64_t>(i))}};
    out.node.push_back(std::move(n));
  }
  for (const auto& [slot, value] : g.constants) {
    gp::NodeDef n = node_def(fresh("Const"), "Const");
    slot_names[static_cast<std::size_t>(slot)] = n.name;
    n.attrs.others = {{"_output_shapes", output_shapes_attr(value.shape())},
                      {"dtype", type_attr(value.dtype())},
                      {"value", const_value_attr(value)}};
    out.node.push_back(std::move(n));
  }
  for (const auto& node : g.nodes) {
    if (node.output >= 0) {
      slot_names[static_cast<std::size_t>(node.output)] = node.name;
    }
  }
  for (const auto& node : g.nodes) {
    gp::NodeDef n = node_def(node.name, node.op);
    for (auto slot : node.inputs) {
      n.inputs.push_back(slot_names[static_cast<std::size_t>(slot)]);
    }
    const bool op_sets_t = std::any_of(node.attrs.begin(), node.attrs.end(),
                                       [](const auto& a) { return a.first == "T"; });
    if (node.output >= 0) {
      if (!op_sets_t) {  // the op's own `T` (OneHot, the random ops) is the one kept
        n.attrs.others.emplace_back("T", type_attr(node.dtype));
      }
      n.attrs.others.emplace_back("_output_shapes", output_shapes_attr(node.shape));
    }
    for (const auto& [key, value] : node.attrs) {
      // As text, for TensorBoard's labels.
      n.attrs.others.emplace_back(key, string_attr(value.to_string()));
    }
    out.node.push_back(std::move(n));
  }
  for (std::size_t i = 0; i < g.output_slots.size(); ++i) {
    gp::NodeDef n = node_def(
        fresh(i == 0 ? "output_RetVal" : "output_" + std::to_string(i) + "_RetVal"), "_Retval");
    n.inputs.push_back(slot_names[static_cast<std::size_t>(g.output_slots[i])]);
    n.attrs.others = {{"index", int_attr(static_cast<std::int64_t>(i))}};
    out.node.push_back(std::move(n));
  }
  out.versions = gp::VersionDef{.producer = graph_def_producer};
  return out;
}

}  // namespace detail

/// The serialized GraphDef of a traced function (TensorFlow: `graph.as_graph_def()`).
inline std::string graph_def(const ConcreteFunction& fn, const GraphDefOptions& options = {}) {
  return tapeflow::detail::graph_proto::serialize(detail::graph_def_proto(fn, options));
}

/// The same GraphDef in protobuf text format, as `tf.io.write_graph(graph_def, logdir, name,
/// as_text=True)` writes it (docs/formats.md 8.4): `node { name: "arg0" op: "_Arg" ... }`,
/// map entries sorted by key. Tools that read `.pbtxt` graphs (and a person) read it.
inline std::string graph_def_text(const ConcreteFunction& fn, const GraphDefOptions& options = {}) {
  return tapeflow::detail::graph_proto::text::to_text(detail::graph_def_proto(fn, options));
}

/// Writes `fn`'s GraphDef to `logdir/name` (TensorFlow: `tf.io.write_graph(graph, logdir, name,
/// as_text)`; here because io sits below tf::function): text format when `as_text`, else the
/// serialized message. Creates `logdir` when missing; returns the file's path. Throws not_found
/// when the file cannot be created.
inline std::string write_graph(const ConcreteFunction& fn, const std::string& logdir,
                               const std::string& name, bool as_text = true,
                               const GraphDefOptions& options = {}) {
  std::error_code ec;
  std::filesystem::create_directories(logdir, ec);  // write_file reports a failure
  const std::string path = (std::filesystem::path(logdir) / name).string();
  const std::string contents = as_text ? graph_def_text(fn, options) : graph_def(fn, options);
  io::write_file(path, std::string_view(contents));
  return path;
}

/// Writes a function's graph as the run graph (TensorFlow: `tf.summary.graph`): an Event
/// with `graph_def`, shown in TensorBoard's Graphs tab. Returns false without a default writer.
inline bool graph(const ConcreteFunction& fn, const GraphDefOptions& options = {}) {
  detail::WriterState* writer = detail::active_writer();
  if (writer == nullptr) {
    return false;
  }
  detail::Item item;
  item.kind = detail::Item::Kind::event;
  item.bytes = detail::graph_event(detail::wall_time_now(), 0, graph_def(fn, options));
  writer->push(std::move(item));
  return true;
}

}  // namespace summary
TAPEFLOW_END_NAMESPACE
