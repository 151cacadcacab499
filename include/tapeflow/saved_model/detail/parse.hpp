// Reading `saved_model.pb` into the structs of saved_model/detail/proto.hpp (docs/formats.md 12):
// the first step of tf::saved_model::load.
//
// Files come from TensorFlow, so the reader takes what TensorFlow writes and what protobuf allows
// (docs/formats.md 1, 12.8): fields in any order, unknown fields skipped, repeated scalars packed
// or not, a repeated oneof member where the last one wins. Anything malformed throws
// tf::data_loss naming the file, the message being read and the absolute byte offset; nothing is
// allocated beyond what the input's bytes account for, except the elements of splat constants,
// which share a per-file budget (docs/formats.md 12.8).
// IWYU pragma: private
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>
#include <tapeflow/saved_model/detail/proto.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace saved_model::detail {

using graph_proto::AttrListProto;
using graph_proto::AttrValueProto;
using graph_proto::NameAttrListProto;
using graph_proto::TensorProtoValue;

/// State shared by one parse: how deep messages nest and how many bytes splat constants may
/// still expand to.
struct ParseContext {
  /// Deepest nesting of recursive messages (StructuredValue, AttrValue in a func's attrs);
  /// protobuf's own default limit.
  static constexpr int max_depth = 100;
  int depth = 0;             ///< current nesting of recursive messages
  std::uint64_t budget = 0;  ///< bytes splat constants may still allocate

  /// A context for an input of `input_bytes`: splats may expand to 64 MiB or 16 times the input.
  [[nodiscard]] static ParseContext for_input(std::size_t input_bytes) {
    ParseContext c;
    c.budget = std::max<std::uint64_t>(std::uint64_t{1} << 26,
                                       16 * static_cast<std::uint64_t>(input_bytes));
    return c;
  }
};

namespace parse {

/// Raises one nesting level for the scope; throws data_loss past ParseContext::max_depth.
class DepthGuard {
 public:
  /// Enters one level; `r` names the message in the error.
  DepthGuard(ParseContext& ctx, const wire::Reader& r) : ctx_(&ctx) {
    if (++ctx_->depth > ParseContext::max_depth) {
      --ctx_->depth;
      r.fail("messages nest deeper than " + std::to_string(ParseContext::max_depth));
    }
  }
  ~DepthGuard() { --ctx_->depth; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  ParseContext* ctx_;
};

/// Throws data_loss unless field `name` arrived with wire type `type`.
inline void expect(const wire::Reader& r, const wire::Tag& t, wire::WireType type,
                   const char* name) {
  if (t.type != type) {
    r.fail("field " + std::to_string(t.field) + " (" + name + ") has wire type " +
           std::to_string(static_cast<unsigned>(t.type)) + ", expected " +
           std::to_string(static_cast<unsigned>(type)));
  }
}
/// A string or bytes field.
[[nodiscard]] inline std::string str(wire::Reader& r, const wire::Tag& t, const char* name) {
  parse::expect(r, t, wire::WireType::len, name);
  return std::string(r.bytes());
}
/// An embedded message's reader (offsets stay absolute).
[[nodiscard]] inline wire::Reader sub(wire::Reader& r, const wire::Tag& t, const char* name,
                                      const char* what) {
  parse::expect(r, t, wire::WireType::len, name);
  return r.message(what);
}
/// An int64 field.
[[nodiscard]] inline std::int64_t i64(wire::Reader& r, const wire::Tag& t, const char* name) {
  parse::expect(r, t, wire::WireType::varint, name);
  return r.int64();
}
/// An int32 or enum field.
[[nodiscard]] inline std::int32_t i32(wire::Reader& r, const wire::Tag& t, const char* name) {
  parse::expect(r, t, wire::WireType::varint, name);
  return r.int32();
}
/// A bool field.
[[nodiscard]] inline bool boolean(wire::Reader& r, const wire::Tag& t, const char* name) {
  parse::expect(r, t, wire::WireType::varint, name);
  return r.boolean();
}
/// A DataType field (any value: DType's fixed underlying type holds those it has no name for).
[[nodiscard]] inline DType dtype(wire::Reader& r, const wire::Tag& t, const char* name) {
  return static_cast<DType>(i32(r, t, name));
}

/// Reads the entries of a map<string, V> occurrence: `value(reader)` decodes the value message;
/// `sink(key, value)` receives the entry. A missing value is V's default, as in protobuf.
template <class V, class Decode, class Sink>
void map_entry(wire::Reader& r, const wire::Tag& t, const char* name, const char* what,
               Decode&& decode, Sink&& sink) {
  wire::Reader e = sub(r, t, name, what);
  std::string key;
  V value{};
  while (auto et = e.next()) {
    if (et->field == 1) {
      key = str(e, *et, "key");
    } else if (et->field == 2) {
      if constexpr (std::is_same_v<V, std::string>) {
        value = str(e, *et, "value");
      } else {
        wire::Reader v = sub(e, *et, "value", what);
        value = decode(v);
      }
    } else {
      e.skip(*et);
    }
  }
  sink(std::move(key), std::move(value));
}

}  // namespace parse

/// Decodes a TensorShapeProto (docs/formats.md 5.3). Throws data_loss on a dim below -1 or an
/// unknown rank with dims.
[[nodiscard]] inline TensorShapeProto decode_shape(wire::Reader r) {
  TensorShapeProto s;
  while (auto t = r.next()) {
    if (t->field == 2) {
      wire::Reader d = parse::sub(r, *t, "dim", "TensorShapeProto.Dim");
      std::int64_t size = 0;
      while (auto dt = d.next()) {
        if (dt->field == 1) {
          size = parse::i64(d, *dt, "size");
          if (size < -1) {
            d.fail("dim size " + std::to_string(size) + " is below -1");
          }
        } else {
          d.skip(*dt);
        }
      }
      s.dims.push_back(size);
    } else if (t->field == 3) {
      s.unknown_rank = parse::boolean(r, *t, "unknown_rank");
    } else {
      r.skip(*t);
    }
  }
  if (s.unknown_rank && !s.dims.empty()) {
    r.fail("a shape of unknown rank has " + std::to_string(s.dims.size()) + " dims");
  }
  return s;
}

namespace parse {

/// A tensor of `shape` whose `n` elements `fill(T*)` writes.
template <class T, class Fill>
[[nodiscard]] AnyTensor make_tensor(const Shape& shape, Fill&& fill) {
  AnyTensor out;
  [&]<std::size_t... R>(std::index_sequence<R...>) {
    (void)((shape.rank() == R ? (
                                    out =
                                        [&] {
                                          std::array<std::int64_t, R> dims{};
                                          for (std::size_t i = 0; i < R; ++i) {
                                            dims[i] = shape[i];
                                          }
                                          auto t = Tensor<T, R>::uninitialized(dims);
                                          fill(t.mutable_data());
                                          return AnyTensor(t);
                                        }(),
                                    true)
                              : false) ||
           ...);
  }(std::make_index_sequence<max_rank + 1>{});
  return out;
}

/// The typed value fields of a TensorProto as read (docs/formats.md 5.2).
struct TypedValues {
  std::vector<float> f{};           ///< float_val
  std::vector<double> d{};          ///< double_val
  std::vector<std::int64_t> i32{};  ///< int_val (uint8 and int32 tensors both use it)
  std::vector<std::int64_t> i64{};  ///< int64_val
  std::vector<bool> b{};            ///< bool_val
  std::vector<std::string> s{};     ///< string_val
  std::string_view content{};       ///< tensor_content (a view into the input)
  bool has_content = false;         ///< tensor_content was present
};

}  // namespace parse

/// Decodes a TensorProto (docs/formats.md 5.2, 12.6) whose message body is `body`, starting at
/// absolute offset `base`. float32, float64, int32, uint8, int64, bool and string tensors of rank
/// up to max_rank become a tensor, from `tensor_content` or from their typed field (packed or
/// not; fewer values than elements repeat the last one, none give zeros, extra ones are ignored);
/// other dtypes keep their bytes. Throws data_loss on negative or overflowing dims, a
/// tensor_content of the wrong size, or a splat past the context's budget.
[[nodiscard]] inline TensorProtoValue decode_tensor(std::string_view body, std::uint64_t base,
                                                    ParseContext& ctx) {
  wire::Reader r(body, "TensorProto", base);
  TensorProtoValue out;
  parse::TypedValues v;
  while (auto t = r.next()) {
    switch (t->field) {
      case 1:
        out.dtype = parse::dtype(r, *t, "dtype");
        break;
      case 2: {
        wire::Reader s = parse::sub(r, *t, "tensor_shape", "TensorShapeProto");
        out.shape = decode_shape(s);
        break;
      }
      case 4:
        parse::expect(r, *t, wire::WireType::len, "tensor_content");
        v.content = r.bytes();
        v.has_content = true;
        break;
      case 5:
        r.repeated_fixed32(*t, [&](std::uint32_t x) { v.f.push_back(std::bit_cast<float>(x)); });
        break;
      case 6:
        r.repeated_fixed64(*t, [&](std::uint64_t x) { v.d.push_back(std::bit_cast<double>(x)); });
        break;
      case 7:
        r.repeated_varint(*t, [&](std::uint64_t x) {
          v.i32.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(x)));
        });
        break;
      case 8:
        v.s.push_back(parse::str(r, *t, "string_val"));
        break;
      case 10:
        r.repeated_varint(*t,
                          [&](std::uint64_t x) { v.i64.push_back(static_cast<std::int64_t>(x)); });
        break;
      case 11:
        r.repeated_varint(*t, [&](std::uint64_t x) { v.b.push_back(x != 0); });
        break;
      default:
        r.skip(*t);
    }
  }
  // Dims must be known and their product representable (docs/formats.md 12.8).
  if (out.shape.unknown_rank) {
    r.fail_at(base, "a tensor's shape has unknown rank");
  }
  std::int64_t n = 1;
  for (auto d : out.shape.dims) {
    if (d < 0) {
      r.fail_at(base, "tensor dim " + std::to_string(d) + " is negative");
    }
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) {
      r.fail_at(base, "tensor element count overflows int64");
    }
    n *= d;
  }
  const auto dt = out.dtype;
  const bool known = dt == DType::float32 || dt == DType::float64 || dt == DType::int32 ||
                     dt == DType::uint8 || dt == DType::int64 || dt == DType::bool_ ||
                     dt == DType::string;
  if (!known || out.shape.dims.size() > max_rank || (dt == DType::string && v.has_content)) {
    out.encoded = std::string(body);
    return out;
  }
  const Shape shape{std::span<const std::int64_t>(out.shape.dims)};
  const auto count = static_cast<std::uint64_t>(n);
  out.tensor = visit_dtype(dt, [&]<class T>() -> AnyTensor {
    if constexpr (!std::is_same_v<T, std::string>) {
      if (v.has_content) {
        if (count > v.content.size() / sizeof(T) || v.content.size() != count * sizeof(T)) {
          r.fail_at(base,
                    "tensor_content holds " + std::to_string(v.content.size()) + " bytes; " +
                        std::to_string(n) + " " + std::string(dtype_name(dt)) + " elements need " +
                        (count > v.content.size() / sizeof(T) ? "more"
                                                              : std::to_string(count * sizeof(T))));
        }
        static_assert(std::endian::native == std::endian::little,
                      "tensor_content is little-endian; big-endian hosts are not supported");
        return parse::make_tensor<T>(shape, [&](T* p) {
          if constexpr (std::is_same_v<T, bool>) {
            for (std::uint64_t k = 0; k < count; ++k) {
              p[k] = v.content[k] != 0;
            }
          } else if (count > 0) {
            std::memcpy(p, v.content.data(), count * sizeof(T));
          }
        });
      }
    }
    // Typed values: the field of this dtype.
    auto fill_from = [&]<class Src>(const std::vector<Src>& src, std::uint64_t extra_per_elem) {
      // Values past the element count are ignored, as TensorFlow does (docs/formats.md 12.8).
      const std::uint64_t missing = count > src.size() ? count - src.size() : 0;
      if (missing > 0) {
        // A splat: charged to the parse's budget, since the input does not pay for it.
        const std::uint64_t per = sizeof(T) + extra_per_elem;
        if (missing > ctx.budget / per) {
          r.fail_at(base, "a splat of " + std::to_string(n) +
                              " elements exceeds what the file can justify");
        }
        ctx.budget -= missing * per;
      }
      return parse::make_tensor<T>(shape, [&](T* p) {
        for (std::uint64_t k = 0; k < count; ++k) {
          if (src.empty()) {
            p[k] = T{};
          } else {
            const auto& x = src[std::min<std::uint64_t>(k, src.size() - 1)];
            if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
              p[k] = x;
            } else {
              p[k] = static_cast<T>(x);
            }
          }
        }
      });
    };
    if constexpr (std::is_same_v<T, float>) {
      return fill_from(v.f, 0);
    } else if constexpr (std::is_same_v<T, double>) {
      return fill_from(v.d, 0);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      return fill_from(v.i64, 0);
    } else if constexpr (std::is_same_v<T, bool>) {
      return fill_from(v.b, 0);
    } else if constexpr (std::is_same_v<T, std::string>) {
      return fill_from(v.s, v.s.empty() ? 0 : v.s.back().size());
    } else {
      return fill_from(v.i32, 0);
    }
  });
  return out;
}

/// Decodes an AttrValue (docs/formats.md 8.1), every member of its oneof.
[[nodiscard]] AttrValueProto decode_attr_value(wire::Reader r, ParseContext& ctx);

/// Decodes a NameAttrList (a function and its attributes).
[[nodiscard]] inline NameAttrListProto decode_name_attr_list(wire::Reader r, ParseContext& ctx) {
  NameAttrListProto f;
  while (auto t = r.next()) {
    if (t->field == 1) {
      f.name = parse::str(r, *t, "name");
    } else if (t->field == 2) {
      parse::map_entry<AttrValueProto>(
          r, *t, "attr", "AttrValue", [&](wire::Reader& v) { return decode_attr_value(v, ctx); },
          [&](std::string k, AttrValueProto v) {
            f.attr.emplace_back(std::move(k), std::move(v));
          });
    } else {
      r.skip(*t);
    }
  }
  return f;
}

namespace parse {
/// A TensorProto field's value.
[[nodiscard]] inline TensorProtoValue tensor_field(wire::Reader& r, const wire::Tag& t,
                                                   const char* name, ParseContext& ctx) {
  parse::expect(r, t, wire::WireType::len, name);
  std::string_view body = r.bytes();
  return decode_tensor(body, r.offset() - body.size(), ctx);
}
}  // namespace parse

/// Decodes an AttrValue.ListValue.
[[nodiscard]] inline AttrListProto decode_attr_list(wire::Reader r, ParseContext& ctx) {
  AttrListProto l;
  while (auto t = r.next()) {
    switch (t->field) {
      case 2:
        l.s.push_back(parse::str(r, *t, "s"));
        break;
      case 3:
        r.repeated_varint(*t,
                          [&](std::uint64_t x) { l.i.push_back(static_cast<std::int64_t>(x)); });
        break;
      case 4:
        r.repeated_fixed32(*t, [&](std::uint32_t x) { l.f.push_back(std::bit_cast<float>(x)); });
        break;
      case 5:
        r.repeated_varint(*t, [&](std::uint64_t x) { l.b.push_back(x != 0); });
        break;
      case 6:
        r.repeated_varint(*t, [&](std::uint64_t x) {
          l.type.push_back(static_cast<DType>(static_cast<std::int32_t>(x)));
        });
        break;
      case 7: {
        wire::Reader s = parse::sub(r, *t, "shape", "TensorShapeProto");
        l.shape.push_back(decode_shape(s));
        break;
      }
      case 8:
        l.tensor.push_back(parse::tensor_field(r, *t, "tensor", ctx));
        break;
      case 9: {
        wire::Reader f = parse::sub(r, *t, "func", "NameAttrList");
        l.func.push_back(decode_name_attr_list(f, ctx));
        break;
      }
      default:
        r.skip(*t);
    }
  }
  return l;
}

inline AttrValueProto decode_attr_value(wire::Reader r, ParseContext& ctx) {
  const parse::DepthGuard guard(ctx, r);
  using K = AttrValueProto::Kind;
  AttrValueProto a;
  while (auto t = r.next()) {
    switch (t->field) {
      case 1: {
        wire::Reader l = parse::sub(r, *t, "list", "AttrValue.ListValue");
        a = AttrValueProto{};
        a.list = decode_attr_list(l, ctx);
        a.kind = K::list;
        break;
      }
      case 2:
        a = AttrValueProto{};
        a.s = parse::str(r, *t, "s");
        a.kind = K::s;
        break;
      case 3:
        a = AttrValueProto{};
        a.i = parse::i64(r, *t, "i");
        a.kind = K::i;
        break;
      case 4:
        parse::expect(r, *t, wire::WireType::i32, "f");
        a = AttrValueProto{};
        a.f = r.float32();
        a.kind = K::f;
        break;
      case 5:
        a = AttrValueProto{};
        a.b = parse::boolean(r, *t, "b");
        a.kind = K::b;
        break;
      case 6:
        a = AttrValueProto{};
        a.type = parse::dtype(r, *t, "type");
        a.kind = K::type;
        break;
      case 7: {
        wire::Reader s = parse::sub(r, *t, "shape", "TensorShapeProto");
        a = AttrValueProto{};
        a.shape = decode_shape(s);
        a.kind = K::shape;
        break;
      }
      case 8: {
        auto tensor = parse::tensor_field(r, *t, "tensor", ctx);
        a = AttrValueProto{};
        a.tensor = std::move(tensor);
        a.kind = K::tensor;
        break;
      }
      case 9:
        a = AttrValueProto{};
        a.s = parse::str(r, *t, "placeholder");
        a.kind = K::placeholder;
        break;
      case 10: {
        wire::Reader f = parse::sub(r, *t, "func", "NameAttrList");
        auto func = decode_name_attr_list(f, ctx);
        a = AttrValueProto{};
        a.func = std::move(func);
        a.kind = K::func;
        break;
      }
      default:
        r.skip(*t);
    }
  }
  return a;
}

/// Files an attribute into the list of `attrs` that holds its kind: the typed kinds of
/// tf::AttrValue in `values`, a tensor of a supported dtype in `tensors`, a list of only shapes
/// in `shape_lists`, everything else in `others`. An empty list is taken as `list(int)` (the
/// bytes do not say which). The key must not be in `attrs` yet.
inline void add_attr(Attributes& attrs, std::string key, AttrValueProto a) {
  using K = AttrValueProto::Kind;
  const auto& l = a.list;
  const bool only_ints = l.s.empty() && l.f.empty() && l.b.empty() && l.type.empty() &&
                         l.shape.empty() && l.tensor.empty() && l.func.empty();
  const bool only_types = l.s.empty() && l.i.empty() && l.f.empty() && l.b.empty() &&
                          l.shape.empty() && l.tensor.empty() && l.func.empty();
  const bool only_shapes = l.s.empty() && l.i.empty() && l.f.empty() && l.b.empty() &&
                           l.type.empty() && l.tensor.empty() && l.func.empty();
  switch (a.kind) {
    case K::s:
      attrs.values.emplace_back(std::move(key), AttrValue(std::move(a.s)));
      return;
    case K::i:
      attrs.values.emplace_back(std::move(key), AttrValue(a.i));
      return;
    case K::f:
      attrs.values.emplace_back(std::move(key), AttrValue(a.f));
      return;
    case K::b:
      attrs.values.emplace_back(std::move(key), AttrValue(a.b));
      return;
    case K::type:
      attrs.values.emplace_back(std::move(key), AttrValue(a.type));
      return;
    case K::shape:
      if (!a.shape.unknown_rank && a.shape.dims.size() <= max_rank) {
        attrs.values.emplace_back(std::move(key),
                                  AttrValue(Shape(std::span<const std::int64_t>(a.shape.dims))));
        return;
      }
      break;
    case K::tensor:
      if (a.tensor.supported()) {
        attrs.tensors.emplace_back(std::move(key), std::move(a.tensor.tensor));
        return;
      }
      break;
    case K::list:
      if (only_ints) {
        attrs.values.emplace_back(std::move(key), AttrValue(std::move(a.list.i)));
        return;
      }
      if (only_types) {
        attrs.values.emplace_back(std::move(key), AttrValue(std::move(a.list.type)));
        return;
      }
      if (only_shapes) {
        attrs.shape_lists.emplace_back(std::move(key), std::move(a.list.shape));
        return;
      }
      break;
    case K::func:
      if (a.func.attr.empty()) {
        attrs.values.emplace_back(std::move(key), AttrValue(FunctionName{std::move(a.func.name)}));
        return;
      }
      break;
    default:
      break;
  }
  attrs.others.emplace_back(std::move(key), std::move(a));
}

namespace parse {
/// A message's attribute entries by key: a repeated key keeps its last value, as protobuf's map
/// parsing does.
using AttrMap = std::map<std::string, AttrValueProto, std::less<>>;
/// Reads one map<string, AttrValue> entry into `attrs`.
inline void attr_entry(wire::Reader& r, const wire::Tag& t, const char* name, AttrMap& attrs,
                       ParseContext& ctx) {
  map_entry<AttrValueProto>(
      r, t, name, "AttrValue", [&](wire::Reader& v) { return decode_attr_value(v, ctx); },
      [&](std::string k, AttrValueProto v) { attrs.insert_or_assign(std::move(k), std::move(v)); });
}
/// Files the collected entries into `out` (add_attr).
inline void finish_attrs(Attributes& out, AttrMap&& attrs) {
  for (auto& [key, value] : attrs) {
    add_attr(out, key, std::move(value));
  }
}
}  // namespace parse

/// Decodes a NodeDef (docs/formats.md 8.1).
[[nodiscard]] inline NodeDef decode_node(wire::Reader r, ParseContext& ctx) {
  NodeDef n;
  parse::AttrMap attrs;
  while (auto t = r.next()) {
    switch (t->field) {
      case 1:
        n.name = parse::str(r, *t, "name");
        break;
      case 2:
        n.op = parse::str(r, *t, "op");
        break;
      case 3:
        n.inputs.push_back(parse::str(r, *t, "input"));
        break;
      case 4:
        n.device = parse::str(r, *t, "device");
        break;
      case 5:
        parse::attr_entry(r, *t, "attr", attrs, ctx);
        break;
      default:
        r.skip(*t);
    }
  }
  parse::finish_attrs(n.attrs, std::move(attrs));
  return n;
}

/// Decodes a VersionDef (docs/formats.md 5.4).
[[nodiscard]] inline VersionDef decode_version(wire::Reader r) {
  VersionDef v;
  while (auto t = r.next()) {
    if (t->field == 1) {
      v.producer = parse::i32(r, *t, "producer");
    } else if (t->field == 2) {
      v.min_consumer = parse::i32(r, *t, "min_consumer");
    } else if (t->field == 3) {
      r.repeated_varint(*t, [&](std::uint64_t x) {
        v.bad_consumers.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(x)));
      });
    } else {
      r.skip(*t);
    }
  }
  return v;
}

/// Decodes an OpDef as a function signature (docs/formats.md 12.2): name, args with fixed
/// types, is_stateful, control_output. Attr-typed args (type_attr, ...) are not modelled.
[[nodiscard]] inline OpDef decode_op_def(wire::Reader r) {
  OpDef op;
  auto arg = [](wire::Reader a) {
    ArgDef d;
    while (auto t = a.next()) {
      if (t->field == 1) {
        d.name = parse::str(a, *t, "name");
      } else if (t->field == 3) {
        d.type = parse::dtype(a, *t, "type");
      } else {
        a.skip(*t);
      }
    }
    return d;
  };
  while (auto t = r.next()) {
    switch (t->field) {
      case 1:
        op.name = parse::str(r, *t, "name");
        break;
      case 2:
        op.input_arg.push_back(arg(parse::sub(r, *t, "input_arg", "OpDef.ArgDef")));
        break;
      case 3:
        op.output_arg.push_back(arg(parse::sub(r, *t, "output_arg", "OpDef.ArgDef")));
        break;
      case 17:
        op.is_stateful = parse::boolean(r, *t, "is_stateful");
        break;
      case 20:
        op.control_output.push_back(parse::str(r, *t, "control_output"));
        break;
      default:
        r.skip(*t);
    }
  }
  return op;
}

/// Decodes a FunctionDef (docs/formats.md 12.2).
[[nodiscard]] inline FunctionDef decode_function(wire::Reader r, ParseContext& ctx) {
  FunctionDef f;
  parse::AttrMap attrs;
  auto put = [](StringMap<std::string>& m) {
    return [&m](std::string k, std::string v) { m.insert_or_assign(std::move(k), std::move(v)); };
  };
  auto none = [](wire::Reader&) { return std::string(); };
  while (auto t = r.next()) {
    switch (t->field) {
      case 1:
        f.signature = decode_op_def(parse::sub(r, *t, "signature", "OpDef"));
        break;
      case 3:
        f.node_def.push_back(decode_node(parse::sub(r, *t, "node_def", "NodeDef"), ctx));
        break;
      case 4:
        parse::map_entry<std::string>(r, *t, "ret", "FunctionDef.RetEntry", none, put(f.ret));
        break;
      case 5:
        parse::attr_entry(r, *t, "attr", attrs, ctx);
        break;
      case 6:
        parse::map_entry<std::string>(r, *t, "control_ret", "FunctionDef.ControlRetEntry", none,
                                      put(f.control_ret));
        break;
      case 7: {
        wire::Reader e = parse::sub(r, *t, "arg_attr", "FunctionDef.ArgAttrEntry");
        std::uint32_t index = 0;
        parse::AttrMap arg_attrs;
        while (auto et = e.next()) {
          if (et->field == 1) {
            parse::expect(e, *et, wire::WireType::varint, "key");
            index = static_cast<std::uint32_t>(e.varint());
          } else if (et->field == 2) {
            wire::Reader a = parse::sub(e, *et, "value", "FunctionDef.ArgAttrs");
            arg_attrs.clear();
            while (auto at = a.next()) {
              if (at->field == 1) {
                parse::attr_entry(a, *at, "attr", arg_attrs, ctx);
              } else {
                a.skip(*at);
              }
            }
          } else {
            e.skip(*et);
          }
        }
        Attributes filed;
        parse::finish_attrs(filed, std::move(arg_attrs));
        f.arg_attr.insert_or_assign(index, std::move(filed));
        break;
      }
      default:
        r.skip(*t);
    }
  }
  parse::finish_attrs(f.attr, std::move(attrs));
  return f;
}

/// Decodes a GraphDef (docs/formats.md 8.1, 12.2): nodes, the library's functions, versions.
[[nodiscard]] inline GraphDef decode_graph(wire::Reader r, ParseContext& ctx) {
  GraphDef g;
  while (auto t = r.next()) {
    if (t->field == 1) {
      g.node.push_back(decode_node(parse::sub(r, *t, "node", "NodeDef"), ctx));
    } else if (t->field == 2) {
      wire::Reader lib = parse::sub(r, *t, "library", "FunctionDefLibrary");
      while (auto lt = lib.next()) {
        if (lt->field == 1) {
          g.library.push_back(
              decode_function(parse::sub(lib, *lt, "function", "FunctionDef"), ctx));
        } else {
          lib.skip(*lt);
        }
      }
    } else if (t->field == 4) {
      g.versions = decode_version(parse::sub(r, *t, "versions", "VersionDef"));
    } else {
      r.skip(*t);
    }
  }
  return g;
}

/// Decodes a TensorInfo (docs/formats.md 12.1); sparse and composite encodings are skipped.
[[nodiscard]] inline TensorInfo decode_tensor_info(wire::Reader r) {
  TensorInfo info;
  while (auto t = r.next()) {
    if (t->field == 1) {
      info.name = parse::str(r, *t, "name");
    } else if (t->field == 2) {
      info.dtype = parse::dtype(r, *t, "dtype");
    } else if (t->field == 3) {
      info.tensor_shape = decode_shape(parse::sub(r, *t, "tensor_shape", "TensorShapeProto"));
    } else {
      r.skip(*t);
    }
  }
  return info;
}

/// Decodes a SignatureDef (docs/formats.md 12.1).
[[nodiscard]] inline SignatureDef decode_signature(wire::Reader r) {
  SignatureDef sig;
  auto info = [](wire::Reader& v) { return decode_tensor_info(v); };
  auto put = [](StringMap<TensorInfo>& m) {
    return [&m](std::string k, TensorInfo v) { m.insert_or_assign(std::move(k), std::move(v)); };
  };
  while (auto t = r.next()) {
    if (t->field == 1) {
      parse::map_entry<TensorInfo>(r, *t, "inputs", "TensorInfo", info, put(sig.inputs));
    } else if (t->field == 2) {
      parse::map_entry<TensorInfo>(r, *t, "outputs", "TensorInfo", info, put(sig.outputs));
    } else if (t->field == 3) {
      sig.method_name = parse::str(r, *t, "method_name");
    } else {
      r.skip(*t);
    }
  }
  return sig;
}

/// Decodes a SaverDef (docs/formats.md 12.1).
[[nodiscard]] inline SaverDef decode_saver(wire::Reader r) {
  SaverDef s;
  s.version = SaverVersion::legacy;  // proto3 default when the field is left out
  while (auto t = r.next()) {
    switch (t->field) {
      case 1:
        s.filename_tensor_name = parse::str(r, *t, "filename_tensor_name");
        break;
      case 2:
        s.save_tensor_name = parse::str(r, *t, "save_tensor_name");
        break;
      case 3:
        s.restore_op_name = parse::str(r, *t, "restore_op_name");
        break;
      case 4:
        s.max_to_keep = parse::i32(r, *t, "max_to_keep");
        break;
      case 5:
        s.sharded = parse::boolean(r, *t, "sharded");
        break;
      case 6:
        parse::expect(r, *t, wire::WireType::i32, "keep_checkpoint_every_n_hours");
        s.keep_checkpoint_every_n_hours = r.float32();
        break;
      case 7:
        s.version = static_cast<SaverVersion>(parse::i32(r, *t, "version"));
        break;
      default:
        r.skip(*t);
    }
  }
  return s;
}

/// Decodes a StructuredValue (docs/formats.md 12.4). Kinds tapeflow does not model (type specs,
/// bounded specs, tensor and numpy values) are skipped, leaving None.
[[nodiscard]] inline StructuredValue decode_structured(wire::Reader r, ParseContext& ctx) {
  const parse::DepthGuard guard(ctx, r);
  StructuredValue v;
  auto items = [&](wire::Reader m) {
    std::vector<StructuredValue> out;
    while (auto t = m.next()) {
      if (t->field == 1) {
        out.push_back(decode_structured(parse::sub(m, *t, "values", "StructuredValue"), ctx));
      } else {
        m.skip(*t);
      }
    }
    return out;
  };
  while (auto t = r.next()) {
    switch (t->field) {
      case 1:
        (void)parse::sub(r, *t, "none_value", "NoneValue");
        v.kind = NoneValue{};
        break;
      case 11:
        parse::expect(r, *t, wire::WireType::i64, "float64_value");
        v.kind = r.float64();
        break;
      case 12: {
        parse::expect(r, *t, wire::WireType::varint, "int64_value");
        const std::uint64_t z = r.varint();  // sint64: ZigZag (docs/formats.md 12.4)
        v.kind = static_cast<std::int64_t>((z >> 1) ^ (~(z & 1) + 1));
        break;
      }
      case 13:
        v.kind = parse::str(r, *t, "string_value");
        break;
      case 14:
        v.kind = parse::boolean(r, *t, "bool_value");
        break;
      case 31:
        v.kind = decode_shape(parse::sub(r, *t, "tensor_shape_value", "TensorShapeProto"));
        break;
      case 32:
        v.kind = parse::dtype(r, *t, "tensor_dtype_value");
        break;
      case 33: {
        wire::Reader s = parse::sub(r, *t, "tensor_spec_value", "TensorSpecProto");
        TensorSpecProto spec;
        while (auto st = s.next()) {
          if (st->field == 1) {
            spec.name = parse::str(s, *st, "name");
          } else if (st->field == 2) {
            spec.shape = decode_shape(parse::sub(s, *st, "shape", "TensorShapeProto"));
          } else if (st->field == 3) {
            spec.dtype = parse::dtype(s, *st, "dtype");
          } else {
            s.skip(*st);
          }
        }
        v.kind = std::move(spec);
        break;
      }
      case 51:
        v.kind = ListValue{items(parse::sub(r, *t, "list_value", "ListValue"))};
        break;
      case 52:
        v.kind = TupleValue{items(parse::sub(r, *t, "tuple_value", "TupleValue"))};
        break;
      case 53: {
        wire::Reader d = parse::sub(r, *t, "dict_value", "DictValue");
        DictValue dict;
        while (auto dt = d.next()) {
          if (dt->field == 1) {
            parse::map_entry<StructuredValue>(
                d, *dt, "fields", "StructuredValue",
                [&](wire::Reader& x) { return decode_structured(x, ctx); },
                [&](std::string k, StructuredValue x) {
                  dict.fields.insert_or_assign(std::move(k), std::move(x));
                });
          } else {
            d.skip(*dt);
          }
        }
        v.kind = std::move(dict);
        break;
      }
      case 54: {
        wire::Reader m = parse::sub(r, *t, "named_tuple_value", "NamedTupleValue");
        NamedTupleValue nt;
        while (auto mt = m.next()) {
          if (mt->field == 1) {
            nt.name = parse::str(m, *mt, "name");
          } else if (mt->field == 2) {
            wire::Reader p = parse::sub(m, *mt, "values", "PairValue");
            PairValue pair;
            while (auto pt = p.next()) {
              if (pt->field == 1) {
                pair.key = parse::str(p, *pt, "key");
              } else if (pt->field == 2) {
                pair.value = decode_structured(parse::sub(p, *pt, "value", "StructuredValue"), ctx);
              } else {
                p.skip(*pt);
              }
            }
            nt.values.push_back(std::move(pair));
          } else {
            m.skip(*mt);
          }
        }
        v.kind = std::move(nt);
        break;
      }
      default:
        r.skip(*t);
    }
  }
  return v;
}

/// Decodes a FunctionSpec (docs/formats.md 12.3).
[[nodiscard]] inline FunctionSpec decode_function_spec(wire::Reader r, ParseContext& ctx) {
  FunctionSpec s;
  while (auto t = r.next()) {
    if (t->field == 1) {
      s.fullargspec = decode_structured(parse::sub(r, *t, "fullargspec", "StructuredValue"), ctx);
    } else if (t->field == 2) {
      s.is_method = parse::boolean(r, *t, "is_method");
    } else if (t->field == 5) {
      s.input_signature =
          decode_structured(parse::sub(r, *t, "input_signature", "StructuredValue"), ctx);
    } else if (t->field == 6) {
      s.jit_compile = static_cast<JitCompile>(parse::i32(r, *t, "jit_compile"));
    } else {
      r.skip(*t);
    }
  }
  return s;
}

/// Decodes an ObjectReference.
[[nodiscard]] inline ObjectReference decode_object_reference(wire::Reader r) {
  ObjectReference ref;
  while (auto t = r.next()) {
    if (t->field == 1) {
      ref.node_id = parse::i32(r, *t, "node_id");
    } else if (t->field == 2) {
      ref.local_name = parse::str(r, *t, "local_name");
    } else {
      r.skip(*t);
    }
  }
  return ref;
}

/// Decodes a SavedObject (docs/formats.md 12.3): children, dependencies, registered_name and
/// every kind but the never-seen slot and saveable extras.
[[nodiscard]] inline SavedObject decode_saved_object(wire::Reader r, ParseContext& ctx) {
  SavedObject o;
  while (auto t = r.next()) {
    switch (t->field) {
      case 1:
        o.children.push_back(
            decode_object_reference(parse::sub(r, *t, "children", "ObjectReference")));
        break;
      case 4: {
        wire::Reader m = parse::sub(r, *t, "user_object", "SavedUserObject");
        SavedUserObject u;
        u.version = VersionDef{};
        while (auto mt = m.next()) {
          if (mt->field == 1) {
            u.identifier = parse::str(m, *mt, "identifier");
          } else if (mt->field == 2) {
            u.version = decode_version(parse::sub(m, *mt, "version", "VersionDef"));
          } else if (mt->field == 3) {
            u.metadata = parse::str(m, *mt, "metadata");
          } else {
            m.skip(*mt);
          }
        }
        o.kind = std::move(u);
        break;
      }
      case 5: {
        wire::Reader m = parse::sub(r, *t, "asset", "SavedAsset");
        SavedAsset a;
        while (auto mt = m.next()) {
          if (mt->field == 1) {
            a.asset_file_def_index = parse::i32(m, *mt, "asset_file_def_index");
          } else {
            m.skip(*mt);
          }
        }
        o.kind = a;
        break;
      }
      case 6: {
        wire::Reader m = parse::sub(r, *t, "function", "SavedFunction");
        SavedFunction f;
        while (auto mt = m.next()) {
          if (mt->field == 1) {
            f.concrete_functions.push_back(parse::str(m, *mt, "concrete_functions"));
          } else if (mt->field == 2) {
            f.function_spec =
                decode_function_spec(parse::sub(m, *mt, "function_spec", "FunctionSpec"), ctx);
          } else {
            m.skip(*mt);
          }
        }
        o.kind = std::move(f);
        break;
      }
      case 7: {
        wire::Reader m = parse::sub(r, *t, "variable", "SavedVariable");
        SavedVariable v;
        while (auto mt = m.next()) {
          switch (mt->field) {
            case 1:
              v.dtype = parse::dtype(m, *mt, "dtype");
              break;
            case 2:
              v.shape = decode_shape(parse::sub(m, *mt, "shape", "TensorShapeProto"));
              break;
            case 3:
              v.trainable = parse::boolean(m, *mt, "trainable");
              break;
            case 4:
              v.synchronization =
                  static_cast<VariableSynchronization>(parse::i32(m, *mt, "synchronization"));
              break;
            case 5:
              v.aggregation = static_cast<VariableAggregation>(parse::i32(m, *mt, "aggregation"));
              break;
            case 6:
              v.name = parse::str(m, *mt, "name");
              break;
            case 7:
              v.device = parse::str(m, *mt, "device");
              break;
            default:
              m.skip(*mt);
          }
        }
        o.kind = std::move(v);
        break;
      }
      case 8: {
        wire::Reader m = parse::sub(r, *t, "bare_concrete_function", "SavedBareConcreteFunction");
        SavedBareConcreteFunction f;
        while (auto mt = m.next()) {
          if (mt->field == 1) {
            f.concrete_function_name = parse::str(m, *mt, "concrete_function_name");
          } else if (mt->field == 2) {
            f.argument_keywords.push_back(parse::str(m, *mt, "argument_keywords"));
          } else if (mt->field == 3) {
            f.allowed_positional_arguments = parse::i64(m, *mt, "allowed_positional_arguments");
          } else if (mt->field == 4) {
            f.function_spec =
                decode_function_spec(parse::sub(m, *mt, "function_spec", "FunctionSpec"), ctx);
          } else {
            m.skip(*mt);
          }
        }
        o.kind = std::move(f);
        break;
      }
      case 9:
      case 10: {
        const bool constant = t->field == 9;
        wire::Reader m = parse::sub(r, *t, constant ? "constant" : "resource",
                                    constant ? "SavedConstant" : "SavedResource");
        std::string s;
        while (auto mt = m.next()) {
          if (mt->field == 1) {
            s = parse::str(m, *mt, constant ? "operation" : "device");
          } else {
            m.skip(*mt);
          }
        }
        if (constant) {
          o.kind = SavedConstant{std::move(s)};
        } else {
          o.kind = SavedResource{std::move(s)};
        }
        break;
      }
      case 12: {
        wire::Reader m = parse::sub(r, *t, "captured_tensor", "CapturedTensor");
        CapturedTensor c;
        while (auto mt = m.next()) {
          if (mt->field == 1) {
            c.name = parse::str(m, *mt, "name");
          } else if (mt->field == 2) {
            c.concrete_function = parse::str(m, *mt, "concrete_function");
          } else {
            m.skip(*mt);
          }
        }
        o.kind = std::move(c);
        break;
      }
      case 13:
        o.registered_name = parse::str(r, *t, "registered_name");
        break;
      case 15:
        o.dependencies.push_back(
            decode_object_reference(parse::sub(r, *t, "dependencies", "ObjectReference")));
        break;
      default:
        r.skip(*t);
    }
  }
  return o;
}

/// Decodes a SavedConcreteFunction (docs/formats.md 12.3).
[[nodiscard]] inline SavedConcreteFunction decode_concrete_function(wire::Reader r,
                                                                    ParseContext& ctx) {
  SavedConcreteFunction f;
  while (auto t = r.next()) {
    if (t->field == 2) {
      r.repeated_varint(*t, [&](std::uint64_t x) {
        f.bound_inputs.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(x)));
      });
    } else if (t->field == 3) {
      f.canonicalized_input_signature = decode_structured(
          parse::sub(r, *t, "canonicalized_input_signature", "StructuredValue"), ctx);
    } else if (t->field == 4) {
      f.output_signature =
          decode_structured(parse::sub(r, *t, "output_signature", "StructuredValue"), ctx);
    } else {
      r.skip(*t);
    }
  }
  return f;
}

/// Decodes a SavedObjectGraph (docs/formats.md 12.3).
[[nodiscard]] inline SavedObjectGraph decode_object_graph(wire::Reader r, ParseContext& ctx) {
  SavedObjectGraph g;
  while (auto t = r.next()) {
    if (t->field == 1) {
      g.nodes.push_back(decode_saved_object(parse::sub(r, *t, "nodes", "SavedObject"), ctx));
    } else if (t->field == 2) {
      parse::map_entry<SavedConcreteFunction>(
          r, *t, "concrete_functions", "SavedConcreteFunction",
          [&](wire::Reader& v) { return decode_concrete_function(v, ctx); },
          [&](std::string k, SavedConcreteFunction v) {
            g.concrete_functions.insert_or_assign(std::move(k), std::move(v));
          });
    } else {
      r.skip(*t);
    }
  }
  return g;
}

/// Decodes a MetaGraphDef (docs/formats.md 12.1); stripped_op_list and asset_file_def are
/// skipped.
[[nodiscard]] inline MetaGraphDef decode_meta_graph(wire::Reader r, ParseContext& ctx) {
  MetaGraphDef mg;
  while (auto t = r.next()) {
    switch (t->field) {
      case 1: {
        wire::Reader m = parse::sub(r, *t, "meta_info_def", "MetaInfoDef");
        while (auto mt = m.next()) {
          if (mt->field == 4) {
            mg.meta_info_def.tags.push_back(parse::str(m, *mt, "tags"));
          } else if (mt->field == 5) {
            mg.meta_info_def.tensorflow_version = parse::str(m, *mt, "tensorflow_version");
          } else if (mt->field == 6) {
            mg.meta_info_def.tensorflow_git_version = parse::str(m, *mt, "tensorflow_git_version");
          } else if (mt->field == 7) {
            mg.meta_info_def.stripped_default_attrs =
                parse::boolean(m, *mt, "stripped_default_attrs");
          } else {
            m.skip(*mt);
          }
        }
        break;
      }
      case 2:
        mg.graph_def = decode_graph(parse::sub(r, *t, "graph_def", "GraphDef"), ctx);
        break;
      case 3:
        mg.saver_def = decode_saver(parse::sub(r, *t, "saver_def", "SaverDef"));
        break;
      case 4:
        parse::map_entry<CollectionDef>(
            r, *t, "collection_def", "CollectionDef",
            [](wire::Reader& v) {
              CollectionDef c;
              while (auto ct = v.next()) {
                if (ct->field == 1) {
                  wire::Reader l = parse::sub(v, *ct, "node_list", "CollectionDef.NodeList");
                  while (auto lt = l.next()) {
                    if (lt->field == 1) {
                      c.node_list.push_back(parse::str(l, *lt, "value"));
                    } else {
                      l.skip(*lt);
                    }
                  }
                } else {
                  v.skip(*ct);
                }
              }
              return c;
            },
            [&](std::string k, CollectionDef c) {
              mg.collection_def.insert_or_assign(std::move(k), std::move(c));
            });
        break;
      case 5:
        parse::map_entry<SignatureDef>(
            r, *t, "signature_def", "SignatureDef",
            [](wire::Reader& v) { return decode_signature(v); },
            [&](std::string k, SignatureDef s) {
              mg.signature_def.insert_or_assign(std::move(k), std::move(s));
            });
        break;
      case 7:
        mg.object_graph_def =
            decode_object_graph(parse::sub(r, *t, "object_graph_def", "SavedObjectGraph"), ctx);
        break;
      default:
        r.skip(*t);
    }
  }
  return mg;
}

/// Parses the content of `saved_model.pb` (docs/formats.md 12.1). `file` names it in errors.
/// Throws data_loss for malformed bytes ("SavedModel '<file>': <message>: <problem> at byte
/// offset <n>") and for an object graph whose edges or bound inputs name nodes it lacks.
[[nodiscard]] inline SavedModel parse_saved_model(std::string_view bytes, const std::string& file) {
  SavedModel sm;
  sm.saved_model_schema_version = 0;  // proto3 default when the field is left out
  try {
    ParseContext ctx = ParseContext::for_input(bytes.size());
    wire::Reader r(bytes, "SavedModel");
    while (auto t = r.next()) {
      if (t->field == 1) {
        sm.saved_model_schema_version = parse::i64(r, *t, "saved_model_schema_version");
      } else if (t->field == 2) {
        sm.meta_graphs.push_back(
            decode_meta_graph(parse::sub(r, *t, "meta_graphs", "MetaGraphDef"), ctx));
      } else {
        r.skip(*t);
      }
    }
  } catch (const data_loss& e) {
    throw data_loss("SavedModel '" + file + "': " + e.what());
  }
  // Edges must stay inside the object graph, so a loader can follow them unchecked.
  for (const auto& mg : sm.meta_graphs) {
    if (!mg.object_graph_def) {
      continue;
    }
    const auto& g = *mg.object_graph_def;
    const auto count = static_cast<std::int64_t>(g.nodes.size());
    auto check = [&](std::int32_t id, const std::string& where) {
      if (id < 0 || id >= count) {
        throw data_loss("SavedModel '" + file + "': " + where + " references object graph node " +
                        std::to_string(id) + " of " + std::to_string(count));
      }
    };
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      for (const auto& c : g.nodes[i].children) {
        check(c.node_id, "child '" + c.local_name + "' of node " + std::to_string(i));
      }
      for (const auto& d : g.nodes[i].dependencies) {
        check(d.node_id, "dependency '" + d.local_name + "' of node " + std::to_string(i));
      }
    }
    for (const auto& [name, f] : g.concrete_functions) {
      for (auto id : f.bound_inputs) {
        check(id, "bound input of concrete function '" + name + "'");
      }
    }
  }
  return sm;
}

}  // namespace saved_model::detail
TAPEFLOW_END_NAMESPACE
