// TrackableObjectGraph (docs/formats.md 11.2): the `_CHECKPOINTABLE_OBJECT_GRAPH` entry of a TF2
// object-based checkpoint, encoded and decoded field by field.
// IWYU pragma: private, include <tapeflow/train.hpp>
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::object_graph {

struct ObjectReference {
  std::int32_t node_id = 0;
  std::string local_name;
};
struct SerializedTensor {
  std::string name;
  std::string full_name;
  std::string checkpoint_key;
};
struct SlotVariableReference {
  std::int32_t original_variable_node_id = 0;
  std::string slot_name;
  std::int32_t slot_variable_node_id = 0;
};
struct Node {
  std::vector<ObjectReference> children;
  std::vector<SerializedTensor> attributes;
  std::vector<SlotVariableReference> slot_variables;
  std::optional<bool> has_checkpoint_values;
};
struct Graph {
  std::vector<Node> nodes;
};

/// TF's escaping of a local name in a checkpoint key: "." -> "..", "/" -> ".S".
inline std::string escape(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '.') {
      out += "..";
    } else if (c == '/') {
      out += ".S";
    } else {
      out += c;
    }
  }
  return out;
}

inline std::string encode(const Graph& g) {
  std::string out;
  wire::Writer w(out);
  for (const auto& n : g.nodes) {
    w.message_field(1, [&](wire::Writer& nw) {
      for (const auto& c : n.children) {
        nw.message_field(1, [&](wire::Writer& cw) {
          cw.int32_field_if_nonzero(1, c.node_id);
          cw.bytes_field_if_nonempty(2, c.local_name);
        });
      }
      for (const auto& a : n.attributes) {
        nw.message_field(2, [&](wire::Writer& aw) {
          aw.bytes_field_if_nonempty(1, a.name);
          aw.bytes_field_if_nonempty(2, a.full_name);
          aw.bytes_field_if_nonempty(3, a.checkpoint_key);
        });
      }
      for (const auto& s : n.slot_variables) {
        nw.message_field(3, [&](wire::Writer& sw) {
          sw.int32_field_if_nonzero(1, s.original_variable_node_id);
          sw.bytes_field_if_nonempty(2, s.slot_name);
          sw.int32_field_if_nonzero(3, s.slot_variable_node_id);
        });
      }
      if (n.has_checkpoint_values) {
        nw.message_field(
            5, [&](wire::Writer& bw) { bw.bool_field_if_true(1, *n.has_checkpoint_values); });
      }
    });
  }
  return out;
}

/// Decodes; data_loss (naming `file`) on malformed bytes or out-of-range node ids.
inline Graph decode(std::string_view bytes, const std::string& file) {
  Graph g;
  try {
    wire::Reader r(bytes, "TrackableObjectGraph");
    while (auto t = r.next()) {
      if (t->field != 1 || t->type != wire::WireType::len) {
        r.skip(*t);
        continue;
      }
      Node n;
      auto nr = r.message("TrackableObject");
      while (auto nt = nr.next()) {
        if (nt->type != wire::WireType::len) {
          nr.skip(*nt);
          continue;
        }
        if (nt->field == 1) {
          ObjectReference c;
          auto cr = nr.message("ObjectReference");
          while (auto ct = cr.next()) {
            if (ct->field == 1 && ct->type == wire::WireType::varint) {
              c.node_id = cr.int32();
            } else if (ct->field == 2 && ct->type == wire::WireType::len) {
              c.local_name = std::string(cr.bytes());
            } else {
              cr.skip(*ct);
            }
          }
          n.children.push_back(std::move(c));
        } else if (nt->field == 2) {
          SerializedTensor a;
          auto ar = nr.message("SerializedTensor");
          while (auto at = ar.next()) {
            if (at->type == wire::WireType::len && at->field >= 1 && at->field <= 3) {
              std::string v(ar.bytes());
              (at->field == 1 ? a.name : at->field == 2 ? a.full_name : a.checkpoint_key) = v;
            } else {
              ar.skip(*at);
            }
          }
          n.attributes.push_back(std::move(a));
        } else if (nt->field == 3) {
          SlotVariableReference s;
          auto sr = nr.message("SlotVariableReference");
          while (auto st = sr.next()) {
            if (st->field == 1 && st->type == wire::WireType::varint) {
              s.original_variable_node_id = sr.int32();
            } else if (st->field == 2 && st->type == wire::WireType::len) {
              s.slot_name = std::string(sr.bytes());
            } else if (st->field == 3 && st->type == wire::WireType::varint) {
              s.slot_variable_node_id = sr.int32();
            } else {
              sr.skip(*st);
            }
          }
          n.slot_variables.push_back(std::move(s));
        } else if (nt->field == 5) {
          auto br = nr.message("BoolValue");
          bool v = false;
          while (auto bt = br.next()) {
            if (bt->field == 1 && bt->type == wire::WireType::varint) {
              v = br.boolean();
            } else {
              br.skip(*bt);
            }
          }
          n.has_checkpoint_values = v;
        } else {
          nr.skip(*nt);
        }
      }
      g.nodes.push_back(std::move(n));
    }
  } catch (const data_loss& e) {
    throw data_loss("checkpoint '" + file + "': corrupt _CHECKPOINTABLE_OBJECT_GRAPH: " + e.what());
  }
  const auto count = static_cast<std::int32_t>(g.nodes.size());
  auto check = [&](std::int32_t id) {
    if (id < 0 || id >= count) {
      throw data_loss("checkpoint '" + file + "': object graph references node " +
                      std::to_string(id) + " of " + std::to_string(count));
    }
  };
  for (const auto& n : g.nodes) {
    for (const auto& c : n.children) {
      check(c.node_id);
    }
    for (const auto& s : n.slot_variables) {
      check(s.original_variable_node_id);
      check(s.slot_variable_node_id);
    }
  }
  return g;
}

}  // namespace detail::object_graph
TAPEFLOW_END_NAMESPACE
