// A traced tf::function as a TensorFlow GraphDef, for TensorBoard's Graphs tab
// (TensorFlow: `concrete_function.graph.as_graph_def()`, `tf.summary.graph`).
//
// The graph is read, never changed: arguments become `_Arg` nodes, captured tensors `Const`
// nodes, every traced op a node named as in ConcreteFunction::to_string(), and each returned
// value a `_Retval` node, as in the pre-optimization graphs TensorFlow's trace_export writes.
// Every node carries `T` (its dtype) and `_output_shapes`, which TensorBoard uses to label
// edges. docs/formats.md 8.1.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/graph.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>
#include <tapeflow/summary/detail/encode.hpp>
#include <tapeflow/summary/writer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// GraphDef.versions.producer of the graphs we write (TensorBoard requires all graphs of one
/// trace to agree; the value only tells TensorFlow which op semantics to assume).
inline constexpr std::int32_t graph_def_producer = 1;

namespace detail {

/// AttrValue fields (docs/formats.md 8.1).
inline void attr_entry(wire::Writer& node, std::string_view key,
                       const std::function<void(wire::Writer&)>& value) {
  node.message_field(5, [&](wire::Writer& entry) {
    entry.string_field(1, key);
    entry.message_field(2, value);
  });
}
inline void attr_type(wire::Writer& node, std::string_view key, DType dtype) {
  attr_entry(node, key,
             [&](wire::Writer& v) { v.int32_field(6, static_cast<std::int32_t>(dtype)); });
}
inline void attr_int(wire::Writer& node, std::string_view key, std::int64_t i) {
  attr_entry(node, key, [&](wire::Writer& v) { v.int64_field(3, i); });
}
inline void attr_string(wire::Writer& node, std::string_view key, std::string_view s) {
  attr_entry(node, key, [&](wire::Writer& v) { v.bytes_field(2, s); });
}
inline void attr_output_shapes(wire::Writer& node, const Shape& shape) {
  attr_entry(node, "_output_shapes", [&](wire::Writer& v) {
    v.message_field(1, [&](wire::Writer& list) {
      list.message_field(7, [&](wire::Writer& s) {
        for (auto d : shape.dims()) {
          s.message_field(2, [&](wire::Writer& dim) { dim.int64_field_if_nonzero(1, d); });
        }
      });
    });
  });
}

/// The value of a small constant as a TensorProto (larger ones keep only dtype and shape:
/// the Graphs tab shows no values, and GraphDefs stay small).
inline void attr_const_value(wire::Writer& node, const AnyTensor& value) {
  attr_entry(node, "value", [&](wire::Writer& v) {
    v.message_field(8, [&](wire::Writer& t) {
      t.int32_field(1, static_cast<std::int32_t>(value.dtype()));
      t.message_field(2, [&](wire::Writer& s) { write_shape(s, value.shape().dims()); });
      if (!value.has_value() || value.num_elements() > 16) {
        return;
      }
      if (value.dtype() == DType::string) {
        const auto* strings = static_cast<const std::string*>(value.raw_data());
        for (std::int64_t i = 0; i < value.num_elements(); ++i) {
          t.bytes_field(8, strings[i]);
        }
      } else {
        t.bytes_field(4, std::string_view(static_cast<const char*>(value.raw_data()),
                                          static_cast<std::size_t>(value.num_elements()) *
                                              dtype_size(value.dtype())));
      }
    });
  });
}

}  // namespace detail

/// The serialized GraphDef of a traced function (TensorFlow: `graph.as_graph_def()`).
inline std::string graph_def(const ConcreteFunction& fn) {
  namespace wire = tapeflow::detail::wire;
  const auto& g = fn.graph();
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
  std::string out;
  wire::Writer w(out);
  for (std::size_t i = 0; i < g.arg_slots.size(); ++i) {
    const std::string name = fresh("arg" + std::to_string(i));
    slot_names[static_cast<std::size_t>(g.arg_slots[i])] = name;
    w.message_field(1, [&](wire::Writer& n) {
      n.string_field(1, name);
      n.string_field(2, "_Arg");
      detail::attr_type(n, "T", g.arg_dtypes()[i]);
      detail::attr_output_shapes(n, g.arg_shapes()[i]);
      detail::attr_int(n, "index", static_cast<std::int64_t>(i));
    });
  }
  // Named references, not structured bindings, wherever a lambda captures them: Clang < 16
  // cannot capture structured bindings (C++20 P1091/P1381).
  for (const auto& constant : g.constants) {
    const AnyTensor& value = constant.second;
    const std::string name = fresh("Const");
    slot_names[static_cast<std::size_t>(constant.first)] = name;
    w.message_field(1, [&](wire::Writer& n) {
      n.string_field(1, name);
      n.string_field(2, "Const");
      detail::attr_output_shapes(n, value.shape());
      detail::attr_type(n, "dtype", value.dtype());
      detail::attr_const_value(n, value);
    });
  }
  for (const auto& node : g.nodes) {
    if (node.output >= 0) {
      slot_names[static_cast<std::size_t>(node.output)] = node.name;
    }
  }
  for (const auto& node : g.nodes) {
    w.message_field(1, [&](wire::Writer& n) {
      n.string_field(1, node.name);
      n.string_field(2, node.op);
      for (auto slot : node.inputs) {
        n.string_field(3, slot_names[static_cast<std::size_t>(slot)]);
      }
      if (node.output >= 0) {
        detail::attr_type(n, "T", node.dtype);
        detail::attr_output_shapes(n, node.shape);
      }
      for (const auto& [key, value] : node.attrs) {
        detail::attr_string(n, key, value.to_string());  // as text, for TensorBoard's labels
      }
    });
  }
  for (std::size_t i = 0; i < g.output_slots.size(); ++i) {
    const auto slot = static_cast<std::size_t>(g.output_slots[i]);
    const std::string name =
        fresh(i == 0 ? "output_RetVal" : "output_" + std::to_string(i) + "_RetVal");
    w.message_field(1, [&](wire::Writer& n) {
      n.string_field(1, name);
      n.string_field(2, "_Retval");
      n.string_field(3, slot_names[slot]);
      detail::attr_int(n, "index", static_cast<std::int64_t>(i));
    });
  }
  w.message_field(4, [](wire::Writer& v) { v.int32_field(1, graph_def_producer); });
  return out;
}

/// Writes a function's graph as the run graph (TensorFlow: `tf.summary.graph`): an Event
/// with `graph_def`, shown in TensorBoard's Graphs tab. Returns false without a default writer.
inline bool graph(const ConcreteFunction& fn) {
  detail::WriterState* writer = detail::active_writer();
  if (writer == nullptr) {
    return false;
  }
  detail::Item item;
  item.kind = detail::Item::Kind::event;
  item.bytes = detail::graph_event(detail::wall_time_now(), 0, graph_def(fn));
  writer->push(std::move(item));
  return true;
}

}  // namespace summary
TAPEFLOW_END_NAMESPACE
