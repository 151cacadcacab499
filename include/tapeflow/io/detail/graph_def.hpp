// The function and graph messages of TensorFlow's graphs as plain structs, and their exact
// protobuf encoding: OpDef.ArgDef, OpDef (a function's signature), FunctionDef and GraphDef
// (docs/formats.md 8.1, 12.2).
//
// They sit in io beside NodeDef (graph_proto.hpp) because more than one module writes graphs:
// tf::saved_model::save (saved_model/detail/proto.hpp wraps them in a MetaGraphDef) and the
// GraphDef of a traced function for TensorBoard and for text output (summary/graph.hpp). Output
// follows graph_proto.hpp's rules: fields in number order, proto3 defaults left out, map
// entries in MapKeyOrder.
// IWYU pragma: private, include <tapeflow/io.hpp>
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::graph_proto {

/// A map<string, V> field: iterates in the order TensorFlow writes the entries
/// (graph_proto::MapKeyOrder, docs/formats.md 12.6).
template <class V>
using StringMap = std::map<std::string, V, graph_proto::MapKeyOrder>;

/// OpDef.ArgDef: one argument or result of a function, with a fixed dtype.
struct ArgDef {
  std::string name{};           ///< the name function nodes and `ret` refer to
  DType type = DType::invalid;  ///< its dtype (dt_resource for a captured variable)
};

/// OpDef, as a FunctionDef's signature.
struct OpDef {
  std::string name{};                         ///< the function's name in the library
  std::vector<ArgDef> input_arg{};            ///< arguments, in call order
  std::vector<ArgDef> output_arg{};           ///< results, in order
  bool is_stateful = false;                   ///< the body holds stateful ops
  std::vector<std::string> control_output{};  ///< the keys of FunctionDef.control_ret
};

/// FunctionDef: one function of the graph's library.
struct FunctionDef {
  OpDef signature{};  ///< name, arguments, results
  Attributes attr{};  ///< function attributes (`_input_shapes`, ...)
  /// Per argument index (`_user_specified_name`, ...); highest index first, as TensorFlow
  /// writes them (docs/formats.md 12.6).
  std::map<std::uint32_t, Attributes, std::greater<>> arg_attr{};
  std::vector<NodeDef> node_def{};       ///< the body; inputs as `node:outarg:i`
  StringMap<std::string> ret{};          ///< output_arg name -> `node:outarg:i` or an arg
  StringMap<std::string> control_ret{};  ///< control output -> node name
};

/// GraphDef: the top-level nodes and the function library.
struct GraphDef {
  std::vector<NodeDef> node{};           ///< top-level nodes (the TF1 view of the model)
  std::vector<FunctionDef> library{};    ///< FunctionDefLibrary.function; written when any
  std::optional<VersionDef> versions{};  ///< producer / min_consumer
};

/// Writes map<string, V> entries under `field_number`, `write_value` filling each value.
template <class Map, class WriteValue>
void write_string_map(wire::Writer& w, std::uint32_t field_number, const Map& map,
                      WriteValue&& write_value) {
  for (const auto& entry : map) {
    w.message_field(field_number, [&](wire::Writer& e) {
      e.string_field(field::map_key, entry.first);
      e.message_field(field::map_value, [&](wire::Writer& v) { write_value(v, entry.second); });
    });
  }
}

/// Writes map<string, string> entries under `field_number` (both always, as in every entry).
inline void write_string_string_map(wire::Writer& w, std::uint32_t field_number,
                                    const StringMap<std::string>& map) {
  for (const auto& entry : map) {
    w.message_field(field_number, [&](wire::Writer& e) {
      e.string_field(field::map_key, entry.first);
      e.string_field(field::map_value, entry.second);
    });
  }
}

/// Writes an ArgDef's fields.
inline void write(wire::Writer& w, const ArgDef& arg) {
  w.bytes_field_if_nonempty(1, arg.name);
  w.int32_field_if_nonzero(3, static_cast<std::int32_t>(arg.type));
}

/// Writes an OpDef's fields (1 name, 2 input_arg, 3 output_arg, 17 is_stateful,
/// 20 control_output).
inline void write(wire::Writer& w, const OpDef& op) {
  w.bytes_field_if_nonempty(1, op.name);
  for (const auto& a : op.input_arg) {
    w.message_field(2, [&](wire::Writer& m) { write(m, a); });
  }
  for (const auto& a : op.output_arg) {
    w.message_field(3, [&](wire::Writer& m) { write(m, a); });
  }
  w.bool_field_if_true(17, op.is_stateful);
  for (const auto& c : op.control_output) {
    w.string_field(20, c);
  }
}

/// Writes a FunctionDef's fields (1 signature, 3 node_def, 4 ret, 5 attr, 6 control_ret,
/// 7 arg_attr: map<uint32, ArgAttrs{1 attr}>, highest index first as TensorFlow writes it).
inline void write(wire::Writer& w, const FunctionDef& f) {
  w.message_field(1, [&](wire::Writer& m) { write(m, f.signature); });
  for (const auto& node : f.node_def) {
    w.message_field(3, [&](wire::Writer& m) { write(m, node); });
  }
  write_string_string_map(w, 4, f.ret);
  write_attr_map(w, 5, f.attr);
  write_string_string_map(w, 6, f.control_ret);
  for (const auto& entry : f.arg_attr) {
    w.message_field(7, [&](wire::Writer& e) {
      e.uint64_field(field::map_key, entry.first);
      e.message_field(field::map_value,
                      [&](wire::Writer& arg_attrs) { write_attr_map(arg_attrs, 1, entry.second); });
    });
  }
}

/// Writes a GraphDef's fields (1 node, 2 library when it has functions, 4 versions).
inline void write(wire::Writer& w, const GraphDef& g) {
  for (const auto& node : g.node) {
    w.message_field(1, [&](wire::Writer& m) { write(m, node); });
  }
  if (!g.library.empty()) {
    w.message_field(2, [&](wire::Writer& lib) {
      for (const auto& f : g.library) {
        lib.message_field(1, [&](wire::Writer& m) { write(m, f); });
      }
    });
  }
  if (g.versions) {
    w.message_field(4, [&](wire::Writer& m) { write(m, *g.versions); });
  }
}

}  // namespace detail::graph_proto
TAPEFLOW_END_NAMESPACE
