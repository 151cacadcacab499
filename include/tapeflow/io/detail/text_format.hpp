// Protobuf text format ("pbtxt") of the graph messages: what `tf.io.write_graph(graph_def, dir,
// name, as_text=True)` writes, i.e. Python protobuf's `text_format.MessageToString`
// (docs/formats.md 8.4).
//
// It prints the same structs the binary writers encode (graph_proto.hpp, graph_def.hpp), so a
// graph is built once and written either way. The rules are the Python printer's: fields in
// number order, two spaces per level, map entries sorted by key (bytewise, unlike the binary
// MapKeyOrder), enums by name, string fields with non-ASCII UTF-8 kept and bytes fields
// C-escaped (octal `\ooo`, `\n`, `\t`, `\r`, `\"`, `\'`, `\\`), floats as the shortest decimal
// that reads back as the same float32, in Python's float notation (`1.0`, `1e-07`).
// IWYU pragma: private, include <tapeflow/io.hpp>
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/graph_def.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::graph_proto::text {

/// A double as Python's `repr` writes it: the shortest digits that read back, fixed notation
/// for decimal exponents -4..16 (`0.0001`, `1.0`, `123456790.0`), else `1e-05`, `1e+20`.
inline std::string python_float(double v) {
  if (std::isnan(v)) {
    return "nan";
  }
  if (std::isinf(v)) {
    return v < 0 ? "-inf" : "inf";
  }
  std::array<char, 64> buf{};
  const auto end =
      std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::scientific).ptr;
  std::string_view s(buf.data(), static_cast<std::size_t>(end - buf.data()));
  std::string out;
  if (s.front() == '-') {
    out = "-";
    s.remove_prefix(1);
  }
  const std::size_t e = s.find('e');
  std::string digits;
  for (char c : s.substr(0, e)) {
    if (c != '.') {
      digits += c;
    }
  }
  int exp = 0;
  std::from_chars(s.data() + e + 1 + (s[e + 1] == '+' ? 1 : 0), s.data() + s.size(), exp);
  const int point = exp + 1;  // digits before the decimal point
  const auto n = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      return out + "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
    }
    if (point >= n) {
      return out + digits + std::string(static_cast<std::size_t>(point - n), '0') + ".0";
    }
    return out + digits.substr(0, static_cast<std::size_t>(point)) + "." +
           digits.substr(static_cast<std::size_t>(point));
  }
  out += digits.substr(0, 1);
  if (n > 1) {
    out += "." + digits.substr(1);
  }
  const int a = exp < 0 ? -exp : exp;
  return out + (exp < 0 ? "e-" : "e+") + (a < 10 ? "0" : "") + std::to_string(a);
}

/// A float field as Python protobuf prints it: the fewest significant digits (6 to 9) that
/// read back as the same float32, in Python's notation (`0.1`, `3.4028235e+38`).
inline std::string float_text(float v) {
  if (std::isnan(v) || std::isinf(v)) {
    return python_float(static_cast<double>(v));
  }
  double rounded = static_cast<double>(v);
  for (int precision = 6; precision <= 9; ++precision) {
    std::array<char, 64> buf{};
    std::snprintf(buf.data(), buf.size(), "%.*g", precision, static_cast<double>(v));
    rounded = std::strtod(buf.data(), nullptr);
    if (static_cast<float>(rounded) == v) {
      break;
    }
  }
  return python_float(rounded);
}

/// The length of the valid UTF-8 sequence at `s[i]` (as Python's strict decoder accepts it:
/// no overlong forms, surrogates or code points above U+10FFFF), 0 when it is not one.
inline std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t len = c < 0x80                   ? 1
                    : (c >= 0xC2 && c <= 0xDF) ? 2
                    : (c >= 0xE0 && c <= 0xEF) ? 3
                    : (c >= 0xF0 && c <= 0xF4) ? 4
                                               : 0;
  if (len == 0 || i + len > s.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) {
      return 0;
    }
  }
  const unsigned char d = len > 1 ? b(i + 1) : 0;
  if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F) || (c == 0xF0 && d < 0x90) ||
      (c == 0xF4 && d > 0x8F)) {
    return 0;
  }
  return len;
}

/// `s` C-escaped between quotes. `utf8`: a string field (valid non-ASCII UTF-8 is kept, as
/// Python protobuf prints strings); otherwise a bytes field (every byte >= 0x80 is escaped).
inline std::string quoted(std::string_view s, bool utf8) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = utf8 && c >= 0x80 ? utf8_length(s, i) : 0;
    if (len > 0) {
      out.append(s.substr(i, len));
      i += len;
      continue;
    }
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 32 || c >= 127) {
          const std::array<char, 4> oct = {'\\', static_cast<char>('0' + (c >> 6)),
                                           static_cast<char>('0' + ((c >> 3) & 7)),
                                           static_cast<char>('0' + (c & 7))};
          out.append(oct.data(), oct.size());
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out + "\"";
}

/// A DataType as its enum name (`DT_FLOAT`, `DT_RESOURCE`, `DT_FLOAT_REF`), or its number
/// when it has none (docs/formats.md 5.1).
inline std::string dtype_enum(DType dtype) {
  static constexpr std::array<std::string_view, 34> names = {"DT_INVALID",
                                                             "DT_FLOAT",
                                                             "DT_DOUBLE",
                                                             "DT_INT32",
                                                             "DT_UINT8",
                                                             "DT_INT16",
                                                             "DT_INT8",
                                                             "DT_STRING",
                                                             "DT_COMPLEX64",
                                                             "DT_INT64",
                                                             "DT_BOOL",
                                                             "DT_QINT8",
                                                             "DT_QUINT8",
                                                             "DT_QINT32",
                                                             "DT_BFLOAT16",
                                                             "DT_QINT16",
                                                             "DT_QUINT16",
                                                             "DT_UINT16",
                                                             "DT_COMPLEX128",
                                                             "DT_HALF",
                                                             "DT_RESOURCE",
                                                             "DT_VARIANT",
                                                             "DT_UINT32",
                                                             "DT_UINT64",
                                                             "DT_FLOAT8_E5M2",
                                                             "DT_FLOAT8_E4M3FN",
                                                             "DT_FLOAT8_E4M3FNUZ",
                                                             "DT_FLOAT8_E4M3B11FNUZ",
                                                             "DT_FLOAT8_E5M2FNUZ",
                                                             "DT_INT4",
                                                             "DT_UINT4",
                                                             "DT_INT2",
                                                             "DT_UINT2",
                                                             "DT_FLOAT4_E2M1FN"};
  const auto v = static_cast<std::int32_t>(dtype);
  if (v >= 0 && static_cast<std::size_t>(v) < names.size()) {
    return std::string(names[static_cast<std::size_t>(v)]);
  }
  if (v > 100 && static_cast<std::size_t>(v - 100) < names.size()) {
    return std::string(names[static_cast<std::size_t>(v - 100)]) + "_REF";
  }
  return std::to_string(v);
}

/// Text output with indentation: `field: value` lines and `name {` ... `}` blocks.
class Printer {
 public:
  /// `name: value` (the value already formatted).
  void field(std::string_view name, std::string_view value) {
    line(std::string(name) + ": " + std::string(value));
  }
  /// `name {`, then `body()` one level deeper, then `}`.
  template <class Body>
  void message(std::string_view name, Body&& body) {
    line(std::string(name) + " {");
    indent_ += 2;
    body();
    indent_ -= 2;
    line("}");
  }
  /// The text so far.
  [[nodiscard]] const std::string& str() const noexcept { return out_; }

 private:
  void line(const std::string& text) {
    out_.append(static_cast<std::size_t>(indent_), ' ');
    out_ += text;
    out_ += '\n';
  }
  std::string out_;
  int indent_ = 0;
};

/// TensorShapeProto's fields: `dim { size: n }` (size left out when 0), `unknown_rank: true`.
inline void print(Printer& p, const TensorShapeProto& shape) {
  for (auto d : shape.dims) {
    p.message("dim", [&] {
      if (d != 0) {
        p.field("size", std::to_string(d));
      }
    });
  }
  if (shape.unknown_rank) {
    p.field("unknown_rank", "true");
  }
}

/// VersionDef's fields (zeros left out).
inline void print(Printer& p, const VersionDef& v) {
  if (v.producer != 0) {
    p.field("producer", std::to_string(v.producer));
  }
  if (v.min_consumer != 0) {
    p.field("min_consumer", std::to_string(v.min_consumer));
  }
  for (auto b : v.bad_consumers) {
    p.field("bad_consumers", std::to_string(b));
  }
}

/// TensorProto's fields, as `write(Writer&, const AnyTensor&, always_content)` encodes them:
/// dtype, shape, then the values in the one field that holds them.
inline void print(Printer& p, const AnyTensor& t, bool always_content = false) {
  if (t.dtype() != DType::invalid) {
    p.field("dtype", dtype_enum(t.dtype()));
  }
  p.message("tensor_shape", [&] { print(p, TensorShapeProto(t.shape())); });
  if (!t.has_value()) {
    return;
  }
  const auto n = static_cast<std::size_t>(t.num_elements());
  visit_dtype(t.dtype(), [&]<class T>() {
    std::span<const T> values(static_cast<const T*>(t.raw_data()), n);
    if constexpr (std::is_same_v<T, std::string>) {
      for (const auto& s : values) {
        p.field("string_val", quoted(s, false));
      }
    } else if (always_content) {
      if (n > 0) {  // an empty bytes field is not printed
        p.field(
            "tensor_content",
            quoted(std::string_view(reinterpret_cast<const char*>(values.data()), n * sizeof(T)),
                   false));
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      for (bool b : values) {
        p.field("bool_val", b ? "true" : "false");
      }
    } else if (n > 1) {
      p.field("tensor_content",
              quoted(std::string_view(reinterpret_cast<const char*>(values.data()), n * sizeof(T)),
                     false));
    } else if constexpr (std::is_same_v<T, float>) {
      for (float v : values) {
        p.field("float_val", float_text(v));
      }
    } else if constexpr (std::is_same_v<T, double>) {
      for (double v : values) {
        p.field("double_val", python_float(v));
      }
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      for (auto v : values) {
        p.field("int64_val", std::to_string(v));
      }
    } else {
      for (auto v : values) {
        p.field("int_val", std::to_string(static_cast<std::int32_t>(v)));
      }
    }
  });
}

/// A TensorProtoValue: the tensor's fields, or (for a dtype tapeflow has no tensor for) its
/// dtype and shape only.
inline void print(Printer& p, const TensorProtoValue& t) {
  if (t.supported()) {
    print(p, t.tensor, t.tensor_content);
    return;
  }
  p.field("dtype", dtype_enum(t.dtype));
  p.message("tensor_shape", [&] { print(p, t.shape); });
}

/// An AttrValue's one member (typed `tf::AttrValue`).
inline void print(Printer& p, const AttrValue& value) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          p.field("s", quoted(v, false));
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          p.field("i", std::to_string(v));
        } else if constexpr (std::is_same_v<V, float>) {
          p.field("f", float_text(v));
        } else if constexpr (std::is_same_v<V, bool>) {
          p.field("b", v ? "true" : "false");
        } else if constexpr (std::is_same_v<V, DType>) {
          p.field("type", dtype_enum(v));
        } else if constexpr (std::is_same_v<V, Shape>) {
          p.message("shape", [&] { print(p, TensorShapeProto(v)); });
        } else if constexpr (std::is_same_v<V, std::vector<std::int64_t>>) {
          p.message("list", [&] {
            for (auto i : v) {
              p.field("i", std::to_string(i));
            }
          });
        } else if constexpr (std::is_same_v<V, std::vector<DType>>) {
          p.message("list", [&] {
            for (auto d : v) {
              p.field("type", dtype_enum(d));
            }
          });
        } else {
          static_assert(std::is_same_v<V, FunctionName>);
          p.message("func", [&] {
            if (!v.name.empty()) {
              p.field("name", quoted(v.name, true));
            }
          });
        }
      },
      value.value());
}

void print(Printer& p, const AttrValueProto& value);

/// `attr { key: ... value { ... } }` entries of a map<string, AttrValue>, sorted by key.
inline void print_attr_map(Printer& p, std::string_view name, const Attributes& attrs);

/// NameAttrList's fields.
inline void print(Printer& p, const NameAttrListProto& f) {
  if (!f.name.empty()) {
    p.field("name", quoted(f.name, true));
  }
  Attributes attrs;
  attrs.others = f.attr;
  print_attr_map(p, "attr", attrs);
}

/// Any AttrValue's member, list elements in field order.
inline void print(Printer& p, const AttrValueProto& value) {
  using K = AttrValueProto::Kind;
  switch (value.kind) {
    case K::unset:
      return;
    case K::list:
      p.message("list", [&] {
        const auto& l = value.list;
        for (const auto& s : l.s) {
          p.field("s", quoted(s, false));
        }
        for (auto i : l.i) {
          p.field("i", std::to_string(i));
        }
        for (auto f : l.f) {
          p.field("f", float_text(f));
        }
        for (bool b : l.b) {
          p.field("b", b ? "true" : "false");
        }
        for (auto t : l.type) {
          p.field("type", dtype_enum(t));
        }
        for (const auto& s : l.shape) {
          p.message("shape", [&] { print(p, s); });
        }
        for (const auto& t : l.tensor) {
          p.message("tensor", [&] { print(p, t); });
        }
        for (const auto& f : l.func) {
          p.message("func", [&] { print(p, f); });
        }
      });
      return;
    case K::s:
      p.field("s", quoted(value.s, false));
      return;
    case K::i:
      p.field("i", std::to_string(value.i));
      return;
    case K::f:
      p.field("f", float_text(value.f));
      return;
    case K::b:
      p.field("b", value.b ? "true" : "false");
      return;
    case K::type:
      p.field("type", dtype_enum(value.type));
      return;
    case K::shape:
      p.message("shape", [&] { print(p, value.shape); });
      return;
    case K::tensor:
      p.message("tensor", [&] { print(p, value.tensor); });
      return;
    case K::placeholder:
      p.field("placeholder", quoted(value.s, true));
      return;
    case K::func:
      p.message("func", [&] { print(p, value.func); });
      return;
  }
}

inline void print_attr_map(Printer& p, std::string_view name, const Attributes& attrs) {
  // (key, kind, index into that kind's list), sorted bytewise as Python's sorted() does.
  struct Ref {
    std::string_view key;
    int kind;
    std::size_t index;
  };
  std::vector<Ref> refs;
  for (std::size_t i = 0; i < attrs.values.size(); ++i) {
    refs.push_back({attrs.values[i].first, 0, i});
  }
  for (std::size_t i = 0; i < attrs.tensors.size(); ++i) {
    refs.push_back({attrs.tensors[i].first, 1, i});
  }
  for (std::size_t i = 0; i < attrs.shape_lists.size(); ++i) {
    refs.push_back({attrs.shape_lists[i].first, 2, i});
  }
  for (std::size_t i = 0; i < attrs.others.size(); ++i) {
    refs.push_back({attrs.others[i].first, 3, i});
  }
  std::stable_sort(refs.begin(), refs.end(),
                   [](const Ref& a, const Ref& b) { return a.key < b.key; });
  for (const Ref& ref : refs) {
    p.message(name, [&] {
      p.field("key", quoted(ref.key, true));
      p.message("value", [&] {
        if (ref.kind == 0) {
          print(p, attrs.values[ref.index].second);
        } else if (ref.kind == 1) {
          p.message("tensor", [&] { print(p, attrs.tensors[ref.index].second); });
        } else if (ref.kind == 2) {
          p.message("list", [&] {
            for (const auto& s : attrs.shape_lists[ref.index].second) {
              p.message("shape", [&] { print(p, s); });
            }
          });
        } else {
          print(p, attrs.others[ref.index].second);
        }
      });
    });
  }
}

/// NodeDef's fields: name, op, inputs, device, attributes.
inline void print(Printer& p, const NodeDef& node) {
  if (!node.name.empty()) {
    p.field("name", quoted(node.name, true));
  }
  if (!node.op.empty()) {
    p.field("op", quoted(node.op, true));
  }
  for (const auto& input : node.inputs) {
    p.field("input", quoted(input, true));
  }
  if (!node.device.empty()) {
    p.field("device", quoted(node.device, true));
  }
  print_attr_map(p, "attr", node.attrs);
}

/// OpDef's fields (a function's signature).
inline void print(Printer& p, const OpDef& op) {
  if (!op.name.empty()) {
    p.field("name", quoted(op.name, true));
  }
  auto arg = [&](std::string_view field, const ArgDef& a) {
    p.message(field, [&] {
      if (!a.name.empty()) {
        p.field("name", quoted(a.name, true));
      }
      if (a.type != DType::invalid) {
        p.field("type", dtype_enum(a.type));
      }
    });
  };
  for (const auto& a : op.input_arg) {
    arg("input_arg", a);
  }
  for (const auto& a : op.output_arg) {
    arg("output_arg", a);
  }
  if (op.is_stateful) {
    p.field("is_stateful", "true");
  }
  for (const auto& c : op.control_output) {
    p.field("control_output", quoted(c, true));
  }
}

/// FunctionDef's fields: signature, node_def, ret, attr, control_ret, arg_attr (maps sorted
/// by key).
inline void print(Printer& p, const FunctionDef& f) {
  p.message("signature", [&] { print(p, f.signature); });
  for (const auto& node : f.node_def) {
    p.message("node_def", [&] { print(p, node); });
  }
  auto string_map = [&](std::string_view name, const StringMap<std::string>& map) {
    std::vector<std::pair<std::string_view, std::string_view>> sorted(map.begin(), map.end());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [key, value] : sorted) {
      p.message(name, [&, &k = key, &v = value] {
        p.field("key", quoted(k, true));
        p.field("value", quoted(v, true));
      });
    }
  };
  string_map("ret", f.ret);
  print_attr_map(p, "attr", f.attr);
  string_map("control_ret", f.control_ret);
  for (auto it = f.arg_attr.rbegin(); it != f.arg_attr.rend(); ++it) {
    const auto& entry = *it;
    p.message("arg_attr", [&] {
      p.field("key", std::to_string(entry.first));
      p.message("value", [&] { print_attr_map(p, "attr", entry.second); });
    });
  }
}

/// GraphDef's fields: node, library (when it has functions), versions.
inline void print(Printer& p, const GraphDef& g) {
  for (const auto& node : g.node) {
    p.message("node", [&] { print(p, node); });
  }
  if (!g.library.empty()) {
    p.message("library", [&] {
      for (const auto& f : g.library) {
        p.message("function", [&] { print(p, f); });
      }
    });
  }
  if (g.versions) {
    p.message("versions", [&] { print(p, *g.versions); });
  }
}

/// The message in text format: `to_text(graph_def)`, `to_text(node)`, ...
template <class Message>
  requires requires(Printer& p, const Message& m) { print(p, m); }
[[nodiscard]] std::string to_text(const Message& message) {
  Printer p;
  print(p, message);
  return p.str();
}

}  // namespace detail::graph_proto::text
TAPEFLOW_END_NAMESPACE
