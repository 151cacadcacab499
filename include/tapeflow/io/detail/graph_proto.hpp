// Graph-side protobuf messages written by hand: TensorShapeProto, TensorProto, VersionDef,
// AttrValue and NodeDef (docs/formats.md 5.2-5.4, 8.1, 12.6).
//
// They sit in io because every graph TensorFlow reads is made of them: SavedModel's GraphDef and
// FunctionDefs (saved_model/detail/proto.hpp) today, and any GraphDef writer after it. Output is
// what TensorFlow's deterministic serializer gives for the same message: fields in number order,
// proto3 defaults left out, map entries in TensorFlow's key order (docs/formats.md 12.6), so
// two saves of one model are equal files and tests can compare bytes.
// IWYU pragma: private, include <tapeflow/io.hpp>
#pragma once

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <initializer_list>
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
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::graph_proto {

/// DT_RESOURCE (docs/formats.md 5.1): the dtype of a variable handle in graphs. No tensor holds
/// one, so `DType` has no enumerator for it; the enum's fixed underlying type holds the value.
inline constexpr DType dt_resource = static_cast<DType>(20);

/// TensorShapeProto (docs/formats.md 5.3): dims outermost first, -1 for an unknown size, or an
/// unknown rank (then no dims). Converts from a `Shape`.
struct TensorShapeProto {
  std::vector<std::int64_t> dims{};  ///< sizes, -1 unknown; empty for a scalar
  bool unknown_rank = false;         ///< the rank itself is unknown (dims must be empty)

  TensorShapeProto() = default;
  /// The dims of `shape` (its -1 dims stay unknown).
  TensorShapeProto(const Shape& shape)  // NOLINT(google-explicit-constructor): lossless
      : dims(shape.begin(), shape.end()) {}
  /// Known rank, the given dims.
  TensorShapeProto(std::initializer_list<std::int64_t> d) : dims(d) {}
  /// A shape of unknown rank (TensorFlow: `TensorShape(None)`).
  [[nodiscard]] static TensorShapeProto unknown() {
    TensorShapeProto s;
    s.unknown_rank = true;
    return s;
  }
  friend bool operator==(const TensorShapeProto&, const TensorShapeProto&) = default;
};

/// VersionDef (docs/formats.md 5.4).
struct VersionDef {
  std::int32_t producer = 0;                  ///< version of the writer
  std::int32_t min_consumer = 0;              ///< oldest reader version that may read it
  std::vector<std::int32_t> bad_consumers{};  ///< reader versions that must not read it
};

/// A TensorProto as read from a file (docs/formats.md 5.2): its dtype and shape, and either the
/// value as a tensor (float32, float64, int32, uint8, int64, bool and string tensors of rank up
/// to `max_rank`) or, for what tapeflow has no tensor type for (DT_RESOURCE, DT_VARIANT, half,
/// int8, ...), the serialized message itself, kept so that a graph holding one still loads and
/// writes back, and fails only where its value is used.
struct TensorProtoValue {
  DType dtype = DType::invalid;  ///< the file's DataType (may be one DType has no name for)
  TensorShapeProto shape{};      ///< the declared shape
  AnyTensor tensor{};            ///< the value, when tapeflow can hold it
  std::string encoded{};         ///< the TensorProto's bytes, when it cannot
  /// Numeric values always go to `tensor_content`, even a single one (summary::graph_def's
  /// encoding, which TensorBoard graphs have always had); otherwise `make_tensor_proto`'s rule.
  /// Strings stay in `string_val`.
  bool tensor_content = false;

  /// Whether `tensor` holds the value.
  [[nodiscard]] bool supported() const noexcept { return tensor.has_value(); }
  /// The value; throws unimplemented for a dtype or rank tapeflow has no tensor for.
  [[nodiscard]] const AnyTensor& value() const {
    if (!supported()) {
      throw unimplemented("TensorProto of DataType " + std::to_string(static_cast<int>(dtype)) +
                          " and rank " + std::to_string(shape.dims.size()) +
                          ": tapeflow has no tensor type for it");
    }
    return tensor;
  }
};

struct AttrValueProto;

/// NameAttrList (docs/formats.md 8.1): a function and the attributes it is instantiated with.
struct NameAttrListProto {
  std::string name{};                                        ///< the function's name
  std::vector<std::pair<std::string, AttrValueProto>> attr;  ///< in file order
};

/// AttrValue.ListValue (docs/formats.md 8.1), every element kind.
struct AttrListProto {
  std::vector<std::string> s{};            ///< list(string)
  std::vector<std::int64_t> i{};           ///< list(int)
  std::vector<float> f{};                  ///< list(float)
  std::vector<bool> b{};                   ///< list(bool)
  std::vector<DType> type{};               ///< list(type)
  std::vector<TensorShapeProto> shape{};   ///< list(shape)
  std::vector<TensorProtoValue> tensor{};  ///< list(tensor)
  std::vector<NameAttrListProto> func{};   ///< list(func)
};

/// Any AttrValue (docs/formats.md 8.1), as read from a file: the attribute kinds that
/// `Attributes::values`, `tensors` and `shape_lists` have no room for (list(string),
/// list(float), mixed lists, a shape of unknown rank, a tensor tapeflow has no type for, a
/// function with attributes, a placeholder).
struct AttrValueProto {
  /// Which member of AttrValue's oneof is set.
  enum class Kind : std::uint8_t {
    unset,
    list,
    s,
    i,
    f,
    b,
    type,
    shape,
    tensor,
    placeholder,
    func
  };
  Kind kind = Kind::unset;      ///< the member set
  std::string s{};              ///< `s`, or the placeholder's name
  std::int64_t i = 0;           ///< `i`
  float f = 0.0F;               ///< `f`
  bool b = false;               ///< `b`
  DType type = DType::invalid;  ///< `type`
  TensorShapeProto shape{};     ///< `shape`
  TensorProtoValue tensor{};    ///< `tensor`
  NameAttrListProto func{};     ///< `func`
  AttrListProto list{};         ///< `list`
};

/// The attribute map of a NodeDef or FunctionDef (map<string, AttrValue>): the kinds
/// `tf::AttrValue` has, plus the two that traced ops never carry but graphs need: a tensor
/// (a Const's `value`) and a list of shapes (`_output_shapes`, `_input_shapes`). Keys must be
/// unique across the three lists; they are written in MapKeyOrder.
struct Attributes {
  OpAttributes values{};  ///< s, i, f, b, type, shape, lists, func
  std::vector<std::pair<std::string, AnyTensor>> tensors{};  ///< `tensor` attributes
  /// `list(shape)` attributes.
  std::vector<std::pair<std::string, std::vector<TensorShapeProto>>> shape_lists{};
  /// Any other attribute, as a reader finds it (empty in what tapeflow traces).
  std::vector<std::pair<std::string, AttrValueProto>> others{};
  /// Write the entries in the order of the lists (values, tensors, shape_lists, others, each in
  /// its own order) instead of MapKeyOrder: summary::graph_def keeps the order TensorBoard
  /// graphs have always been written in. The text format sorts by key either way.
  bool keep_order = false;

  /// Whether no attribute is set.
  [[nodiscard]] bool empty() const noexcept {
    return values.empty() && tensors.empty() && shape_lists.empty() && others.empty();
  }
};

/// NodeDef (docs/formats.md 8.1). Inputs are written as given: `node`, `node:k`, `^node` at the
/// top level; `node:outarg:i` or an argument name inside a function (docs/formats.md 12.5).
struct NodeDef {
  std::string name{};                 ///< unique in its graph or function
  std::string op{};                   ///< registered op name, or a library function's name
  std::vector<std::string> inputs{};  ///< data inputs first, then `^control` inputs
  std::string device{};               ///< e.g. `/device:CPU:0`; usually empty
  Attributes attrs{};                 ///< written in MapKeyOrder
};

/// The order TensorFlow writes string map keys in (docs/formats.md 12.6): bytewise, except that
/// a key that is a prefix of another comes after it ("Tshape" before "T"). TensorFlow 2.21
/// serializes SavedModels with Python protobuf's deterministic mode, whose sort has this quirk;
/// following it makes our files equal to TensorFlow's byte for byte.
struct MapKeyOrder {
  using is_transparent = void;  ///< compares any string-like keys
  /// Whether `a` is written before `b`.
  [[nodiscard]] bool operator()(std::string_view a, std::string_view b) const noexcept {
    const std::size_t common = std::min(a.size(), b.size());
    const int c = common == 0 ? 0 : std::memcmp(a.data(), b.data(), common);
    if (c != 0) {
      return c < 0;
    }
    return a.size() > b.size();
  }
};

/// Field numbers (docs/formats.md 5.2, 5.3, 5.4, 8.1).
namespace field {
inline constexpr std::uint32_t shape_dim = 2, shape_unknown_rank = 3, dim_size = 1;
inline constexpr std::uint32_t tensor_dtype = 1, tensor_shape = 2, tensor_content = 4,
                               tensor_float_val = 5, tensor_double_val = 6, tensor_int_val = 7,
                               tensor_string_val = 8, tensor_int64_val = 10, tensor_bool_val = 11;
inline constexpr std::uint32_t version_producer = 1, version_min_consumer = 2,
                               version_bad_consumers = 3;
inline constexpr std::uint32_t attr_list = 1, attr_s = 2, attr_i = 3, attr_f = 4, attr_b = 5,
                               attr_type = 6, attr_shape = 7, attr_tensor = 8, attr_func = 10;
inline constexpr std::uint32_t list_i = 3, list_type = 6, list_shape = 7;
inline constexpr std::uint32_t name_attr_list_name = 1;
inline constexpr std::uint32_t node_name = 1, node_op = 2, node_input = 3, node_device = 4,
                               node_attr = 5;
inline constexpr std::uint32_t map_key = 1, map_value = 2;
}  // namespace field

/// Writes a TensorShapeProto's fields: one Dim per dim (size left out when 0), or unknown_rank.
inline void write(wire::Writer& w, const TensorShapeProto& shape) {
  if (shape.unknown_rank && !shape.dims.empty()) {
    throw invalid_argument("TensorShapeProto: a shape of unknown rank cannot have dims");
  }
  for (auto d : shape.dims) {
    w.message_field(field::shape_dim,
                    [&](wire::Writer& dim) { dim.int64_field_if_nonzero(field::dim_size, d); });
  }
  w.bool_field_if_true(field::shape_unknown_rank, shape.unknown_rank);
}

/// Writes a VersionDef's fields (zeros left out, so {1, 0} is `08 01`).
inline void write(wire::Writer& w, const VersionDef& v) {
  w.int32_field_if_nonzero(field::version_producer, v.producer);
  w.int32_field_if_nonzero(field::version_min_consumer, v.min_consumer);
  w.packed_varint<std::int32_t>(field::version_bad_consumers, v.bad_consumers);
}

/// Writes a TensorProto's fields for a tensor with a value, as TensorFlow's `make_tensor_proto`
/// does (docs/formats.md 5.2, 12.6): dtype, shape, then strings in `string_val`, bools in
/// `bool_val`, other dtypes as `tensor_content` when they have more than one element and in their
/// typed field otherwise (an empty tensor has neither). `always_content`: every non-string
/// dtype in `tensor_content`, whatever the count (TensorProtoValue::tensor_content). Throws
/// invalid_argument for a tensor without a value (symbolic or default-constructed).
inline void write(wire::Writer& w, const AnyTensor& t, bool always_content = false) {
  if (!t.has_value()) {
    throw invalid_argument("TensorProto: the " + std::string(dtype_name(t.dtype())) +
                           " tensor of shape " + t.shape().to_string() + " has no value");
  }
  const DType dtype = t.dtype();
  w.int32_field_if_nonzero(field::tensor_dtype, static_cast<std::int32_t>(dtype));
  w.message_field(field::tensor_shape,
                  [&](wire::Writer& s) { write(s, TensorShapeProto(t.shape())); });
  const auto n = static_cast<std::size_t>(t.num_elements());
  visit_dtype(dtype, [&]<class T>() {
    std::span<const T> values(static_cast<const T*>(t.raw_data()), n);
    if constexpr (std::is_same_v<T, std::string>) {
      for (const auto& s : values) {
        w.bytes_field(field::tensor_string_val, s);
      }
    } else if (always_content) {
      static_assert(std::endian::native == std::endian::little,
                    "tensor_content is little-endian; big-endian hosts are not supported");
      w.bytes_field(field::tensor_content,
                    std::string_view(reinterpret_cast<const char*>(values.data()), n * sizeof(T)));
    } else if constexpr (std::is_same_v<T, bool>) {
      w.packed_varint<bool>(field::tensor_bool_val, values);
    } else if (n > 1) {
      static_assert(std::endian::native == std::endian::little,
                    "tensor_content is little-endian; big-endian hosts are not supported");
      w.bytes_field(field::tensor_content,
                    std::string_view(reinterpret_cast<const char*>(values.data()), n * sizeof(T)));
    } else if constexpr (std::is_same_v<T, float>) {
      w.packed_float(field::tensor_float_val, values);
    } else if constexpr (std::is_same_v<T, double>) {
      w.packed_double(field::tensor_double_val, values);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      w.packed_varint<std::int64_t>(field::tensor_int64_val, values);
    } else {
      // int32, uint8 (and the other small integer types): int_val.
      std::vector<std::int32_t> ints(values.begin(), values.end());
      w.packed_varint<std::int32_t>(field::tensor_int_val, ints);
    }
  });
}

/// Writes an AttrValue's fields: the one kind `value` holds (docs/formats.md 8.1). A oneof
/// member is written even when it holds its default (`s: ""` is `12 00`, an empty list
/// `0a 00`). A template so that a Shape or a string never converts to an AttrValue here.
template <std::same_as<AttrValue> Value>
void write(wire::Writer& w, const Value& value) {
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          w.bytes_field(field::attr_s, v);
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          w.int64_field(field::attr_i, v);
        } else if constexpr (std::is_same_v<V, float>) {
          w.float_field(field::attr_f, v);
        } else if constexpr (std::is_same_v<V, bool>) {
          w.bool_field(field::attr_b, v);
        } else if constexpr (std::is_same_v<V, DType>) {
          w.int32_field(field::attr_type, static_cast<std::int32_t>(v));
        } else if constexpr (std::is_same_v<V, Shape>) {
          w.message_field(field::attr_shape,
                          [&](wire::Writer& s) { write(s, TensorShapeProto(v)); });
        } else if constexpr (std::is_same_v<V, std::vector<std::int64_t>>) {
          w.message_field(field::attr_list, [&](wire::Writer& list) {
            list.packed_varint<std::int64_t>(field::list_i, v);
          });
        } else if constexpr (std::is_same_v<V, std::vector<DType>>) {
          w.message_field(field::attr_list, [&](wire::Writer& list) {
            list.packed_varint<DType>(field::list_type, v);
          });
        } else {
          static_assert(std::is_same_v<V, FunctionName>);
          w.message_field(field::attr_func, [&](wire::Writer& f) {
            f.bytes_field_if_nonempty(field::name_attr_list_name, v.name);
          });
        }
      },
      value.value());
}

/// Writes a TensorProtoValue: the tensor as `make_tensor_proto` would, or the bytes it was read
/// from.
inline void write(wire::Writer& w, const TensorProtoValue& t) {
  if (t.supported()) {
    write(w, t.tensor, t.tensor_content);
  } else {
    w.raw(t.encoded);
  }
}

void write(wire::Writer& w, const AttrValueProto& value);

/// Writes a NameAttrList's fields (1 name, 2 attr entries in file order).
inline void write(wire::Writer& w, const NameAttrListProto& f) {
  w.bytes_field_if_nonempty(field::name_attr_list_name, f.name);
  for (const auto& entry : f.attr) {
    w.message_field(2, [&](wire::Writer& e) {
      e.string_field(field::map_key, entry.first);
      e.message_field(field::map_value, [&](wire::Writer& v) { write(v, entry.second); });
    });
  }
}

/// Writes any AttrValue's fields (docs/formats.md 8.1): the member `kind` names, list elements
/// in field order (2 s, 3 i, 4 f, 5 b, 6 type packed, 7 shape, 8 tensor, 9 func).
inline void write(wire::Writer& w, const AttrValueProto& value) {
  using K = AttrValueProto::Kind;
  switch (value.kind) {
    case K::unset:
      return;
    case K::list:
      w.message_field(field::attr_list, [&](wire::Writer& l) {
        for (const auto& s : value.list.s) {
          l.bytes_field(2, s);
        }
        l.packed_varint<std::int64_t>(field::list_i, value.list.i);
        l.packed_float(4, value.list.f);
        const std::vector<std::uint8_t> bools(value.list.b.begin(), value.list.b.end());
        l.packed_varint<std::uint8_t>(5, bools);
        l.packed_varint<DType>(field::list_type, value.list.type);
        for (const auto& s : value.list.shape) {
          l.message_field(field::list_shape, [&](wire::Writer& m) { write(m, s); });
        }
        for (const auto& t : value.list.tensor) {
          l.message_field(8, [&](wire::Writer& m) { write(m, t); });
        }
        for (const auto& f : value.list.func) {
          l.message_field(9, [&](wire::Writer& m) { write(m, f); });
        }
      });
      return;
    case K::s:
      w.bytes_field(field::attr_s, value.s);
      return;
    case K::i:
      w.int64_field(field::attr_i, value.i);
      return;
    case K::f:
      w.float_field(field::attr_f, value.f);
      return;
    case K::b:
      w.bool_field(field::attr_b, value.b);
      return;
    case K::type:
      w.int32_field(field::attr_type, static_cast<std::int32_t>(value.type));
      return;
    case K::shape:
      w.message_field(field::attr_shape, [&](wire::Writer& m) { write(m, value.shape); });
      return;
    case K::tensor:
      w.message_field(field::attr_tensor, [&](wire::Writer& m) { write(m, value.tensor); });
      return;
    case K::placeholder:
      w.bytes_field(9, value.s);
      return;
    case K::func:
      w.message_field(field::attr_func, [&](wire::Writer& m) { write(m, value.func); });
      return;
  }
}

/// Writes the fields of an AttrValue holding a list of shapes (`list { shape ... }`).
inline void write_shape_list(wire::Writer& w, std::span<const TensorShapeProto> shapes) {
  w.message_field(field::attr_list, [&](wire::Writer& list) {
    for (const auto& s : shapes) {
      list.message_field(field::list_shape, [&](wire::Writer& m) { write(m, s); });
    }
  });
}

/// Writes a map<string, AttrValue> as entries {1 key, 2 value} under `field_number`, in
/// MapKeyOrder (docs/formats.md 1.4, 12.6). Throws invalid_argument on a repeated key.
inline void write_attr_map(wire::Writer& w, std::uint32_t field_number, const Attributes& attrs) {
  // (key, kind, index into that kind's list), sorted by key.
  struct Ref {
    std::string_view key;
    int kind;
    std::size_t index;
  };
  std::vector<Ref> refs;
  refs.reserve(attrs.values.size() + attrs.tensors.size() + attrs.shape_lists.size() +
               attrs.others.size());
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
  const auto by_key = [](const Ref& a, const Ref& b) { return MapKeyOrder{}(a.key, b.key); };
  std::vector<Ref> sorted = refs;
  std::sort(sorted.begin(), sorted.end(), by_key);
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].key == sorted[i - 1].key) {
      throw invalid_argument("attribute '" + std::string(sorted[i].key) + "' is set twice");
    }
  }
  if (!attrs.keep_order) {
    refs = std::move(sorted);
  }
  for (const Ref& ref : refs) {
    w.message_field(field_number, [&](wire::Writer& entry) {
      entry.string_field(field::map_key, ref.key);
      entry.message_field(field::map_value, [&](wire::Writer& v) {
        if (ref.kind == 0) {
          write(v, attrs.values[ref.index].second);
        } else if (ref.kind == 1) {
          v.message_field(field::attr_tensor,
                          [&](wire::Writer& t) { write(t, attrs.tensors[ref.index].second); });
        } else if (ref.kind == 2) {
          write_shape_list(v, attrs.shape_lists[ref.index].second);
        } else {
          write(v, attrs.others[ref.index].second);
        }
      });
    });
  }
}

/// Writes a NodeDef's fields: name, op, inputs, device, then the attributes in MapKeyOrder.
inline void write(wire::Writer& w, const NodeDef& node) {
  w.bytes_field_if_nonempty(field::node_name, node.name);
  w.bytes_field_if_nonempty(field::node_op, node.op);
  for (const auto& input : node.inputs) {
    w.string_field(field::node_input, input);
  }
  w.bytes_field_if_nonempty(field::node_device, node.device);
  write_attr_map(w, field::node_attr, node.attrs);
}

/// The serialized message: `serialize(node)`, `serialize(shape)`, `serialize(attr_value)`,
/// `serialize(tensor)`, `serialize(version)`.
template <class Message>
  requires requires(wire::Writer& w, const Message& m) { write(w, m); }
[[nodiscard]] std::string serialize(const Message& message) {
  std::string out{};
  wire::Writer w(out);
  write(w, message);
  return out;
}

}  // namespace detail::graph_proto
TAPEFLOW_END_NAMESPACE
