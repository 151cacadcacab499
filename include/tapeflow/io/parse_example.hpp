// `tf::io::parse_single_example` and `tf::io::parse_example` with `FixedLenFeature`,
// `VarLenFeature` and `FixedLenSequenceFeature` (docs/formats.md section 4.3), reading serialized
// `tf.train.Example`s directly off the wire (no intermediate Example object).
//
//     auto parsed = tf::io::parse_single_example(record, {
//         {"image", tf::io::FixedLenFeature<std::string>{}},
//         {"label", tf::io::FixedLenFeature<std::int64_t>{}},
//     });
//     auto label = parsed["label"].as<std::int64_t, 0>();
//
// Errors are `tf::invalid_argument` with TensorFlow's wording: a missing key without default
// ("Feature: y (data type: float) is required but could not be found."), a list of the wrong
// kind ("Key: x.  Data types don't match. ..."), a wrong value count ("Key: x, Index: 0.
// Number of float values != expected. ..."), bytes that are not an Example ("Could not parse
// example input ..."). Packed and unpacked lists are accepted, unknown fields skipped.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace io {

/// The three dtypes an Example can carry: float (FloatList), int64 (Int64List), string
/// (BytesList).
template <class T>
concept example_dtype =
    std::same_as<T, float> || std::same_as<T, std::int64_t> || std::same_as<T, std::string>;

/// An optional default of a FixedLenFeature: `.default_value = 0`, `.default_value = {1, 2}`.
template <example_dtype T>
class DefaultValue {
 public:
  DefaultValue() = default;
  /// A default of one value.
  DefaultValue(T v) : values_(std::vector<T>{std::move(v)}) {}  // NOLINT
  /// A default of these values (row-major).
  DefaultValue(std::initializer_list<T> v) : values_(std::vector<T>(v)) {}
  /// A default of these values (row-major).
  DefaultValue(std::vector<T> v) : values_(std::move(v)) {}  // NOLINT
  /// A string default of one value (string features only).
  DefaultValue(const char* v)  // NOLINT
    requires std::same_as<T, std::string>
      : values_(std::vector<T>{std::string(v)}) {}
  /// No default (Python's `default_value=None`), as when default-constructed.
  DefaultValue(std::nullopt_t) {}  // NOLINT

  /// Whether a default was given.
  [[nodiscard]] bool has_value() const noexcept { return values_.has_value(); }
  /// The default values, row-major; only valid when has_value().
  [[nodiscard]] const std::vector<T>& values() const { return *values_; }

 private:
  std::optional<std::vector<T>> values_{};
};

/// A feature with a fixed number of values, parsed into a dense tensor of `shape`
/// (TensorFlow: `tf.io.FixedLenFeature(shape, dtype, default_value)`).
template <example_dtype T>
struct FixedLenFeature {
  using value_type = T;  ///< dtype of the values (TensorFlow's `dtype`)
  /// Shape of one example's tensor (empty: a scalar); must be fully defined (no -1), else
  /// invalid_argument when parsing.
  std::vector<std::int64_t> shape{};
  /// Values used when an example lacks the feature, product(shape) of them; without one a
  /// missing feature is invalid_argument ("... is required but could not be found.").
  DefaultValue<T> default_value{};
};

/// A feature with any number of values, parsed into a SparseTensor
/// (TensorFlow: `tf.io.VarLenFeature(dtype)`).
template <example_dtype T>
struct VarLenFeature {
  using value_type = T;  ///< dtype of the values (TensorFlow's `dtype`)
};

/// A feature with any number of rows of a fixed `shape`, parsed into a dense tensor of shape
/// `[rows] + shape`; `parse_example` gives `[batch, most rows] + shape`, shorter examples padded
/// with `default_value` (one value; 0 or "" when unset) (TensorFlow:
/// `tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing, default_value)`). A missing
/// feature has no rows. As in TensorFlow, parsing Examples requires `allow_missing = true`:
///
///     {"tokens", tf::io::FixedLenSequenceFeature<std::int64_t>{.allow_missing = true}}
template <example_dtype T>
struct FixedLenSequenceFeature {
  using value_type = T;  ///< dtype of the values (TensorFlow's `dtype`)
  /// Shape of one row; fully defined (no -1) and with at least one element, else
  /// invalid_argument when parsing.
  std::vector<std::int64_t> shape{};
  /// Must be true to parse Examples (false is invalid_argument, as TensorFlow's ValueError).
  bool allow_missing = false;
  /// The padding value: a single value (others are invalid_argument); unset pads with 0 / "".
  DefaultValue<T> default_value{};
};

/// One entry of a feature description.
using FeatureSpec =
    std::variant<FixedLenFeature<float>, FixedLenFeature<std::int64_t>,
                 FixedLenFeature<std::string>, VarLenFeature<float>, VarLenFeature<std::int64_t>,
                 VarLenFeature<std::string>, FixedLenSequenceFeature<float>,
                 FixedLenSequenceFeature<std::int64_t>, FixedLenSequenceFeature<std::string>>;
/// `{name: FixedLenFeature | VarLenFeature | FixedLenSequenceFeature}` (TensorFlow's
/// `features` dict).
using FeatureDescription = std::map<std::string, FeatureSpec, std::less<>>;

/// A sparse result (TensorFlow: `tf.SparseTensor`): `values[i]` sits at `indices[i]` in a
/// dense tensor of `dense_shape`.
template <class T>
struct SparseTensor {
  Tensor<std::int64_t, 2> indices;      ///< [N, dense rank]: the position of each value
  Tensor<T, 1> values;                  ///< [N]: the values, in row-major order of position
  Tensor<std::int64_t, 1> dense_shape;  ///< shape of the dense tensor they belong to
};

/// One parsed feature: a dense tensor (FixedLenFeature, FixedLenSequenceFeature) or a
/// SparseTensor (VarLenFeature).
class ParsedFeature {
 public:
  /// A dense tensor or a SparseTensor of one of the three Example dtypes.
  using Storage = std::variant<AnyTensor, SparseTensor<float>, SparseTensor<std::int64_t>,
                               SparseTensor<std::string>>;
  ParsedFeature() = default;
  /// A parsed feature holding `s`.
  explicit ParsedFeature(Storage s) : value_(std::move(s)) {}

  /// Whether this is a SparseTensor (a VarLenFeature's result).
  [[nodiscard]] bool is_sparse() const noexcept { return value_.index() != 0; }
  /// The dense result, type-erased.
  [[nodiscard]] const AnyTensor& dense() const {
    if (const auto* t = std::get_if<AnyTensor>(&value_)) {
      return *t;
    }
    throw invalid_argument(
        "tf::io::ParsedFeature::dense(): the feature was parsed as sparse "
        "(VarLenFeature); use sparse<T>()");
  }
  /// The dense result as a typed tensor; throws invalid_argument on a dtype/rank mismatch.
  template <class T, std::size_t Rank>
  [[nodiscard]] Tensor<T, Rank> as() const {
    return dense().as<T, Rank>();
  }
  /// The sparse result of a VarLenFeature of dtype T.
  template <class T>
  [[nodiscard]] const SparseTensor<T>& sparse() const {
    if (const auto* s = std::get_if<SparseTensor<T>>(&value_)) {
      return *s;
    }
    throw invalid_argument("tf::io::ParsedFeature::sparse<" + std::string(dtype_traits<T>::name) +
                           ">(): the feature is dense or of another dtype");
  }
  /// The result as a variant, for std::visit.
  [[nodiscard]] const Storage& storage() const noexcept { return value_; }

 private:
  Storage value_{};
};

/// The result of parsing: feature name -> ParsedFeature (Python: a dict of tensors).
class ParsedExample {
 public:
  /// The feature `key`; throws not_found for names not in the description.
  [[nodiscard]] const ParsedFeature& operator[](std::string_view key) const {
    auto it = values_.find(key);
    if (it == values_.end()) {
      throw not_found("tf::io::ParsedExample: no feature '" + std::string(key) +
                      "' in the feature description");
    }
    return it->second;
  }
  /// Same as `operator[]`: throws not_found for names not in the description.
  [[nodiscard]] const ParsedFeature& at(std::string_view key) const { return (*this)[key]; }
  /// Whether a feature named `key` was parsed.
  [[nodiscard]] bool contains(std::string_view key) const { return values_.contains(key); }
  /// Number of features.
  [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }
  /// Iterator to the first (name, ParsedFeature) pair, in name order.
  [[nodiscard]] auto begin() const noexcept { return values_.begin(); }
  /// Iterator past the last pair.
  [[nodiscard]] auto end() const noexcept { return values_.end(); }
  /// Adds (or replaces) the feature named `key`.
  void insert(std::string key, ParsedFeature value) {
    values_.insert_or_assign(std::move(key), std::move(value));
  }

 private:
  std::map<std::string, ParsedFeature, std::less<>> values_;
};

}  // namespace io

namespace detail::example_parse {

using io::FeatureDescription;
using io::FeatureSpec;

enum class Kind : std::uint8_t { none = 0, bytes = 1, floats = 2, int64s = 3 };

template <class T>
constexpr Kind kind_of() {
  if constexpr (std::is_same_v<T, float>) {
    return Kind::floats;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return Kind::int64s;
  } else {
    return Kind::bytes;
  }
}
// TensorFlow's DataTypeString names.
constexpr std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::bytes:
      return "string";
    case Kind::floats:
      return "float";
    case Kind::int64s:
      return "int64";
    case Kind::none:
      break;
  }
  return "none";
}

/// Values found for one described key in one Example (string values view the input).
struct Slot {
  Kind kind = Kind::none;  // none: absent
  std::vector<float> floats;
  std::vector<std::int64_t> int64s;
  std::vector<std::string_view> bytes;
  void reset() {
    kind = Kind::none;
    floats.clear();
    int64s.clear();
    bytes.clear();
  }
  [[nodiscard]] std::size_t size() const {
    switch (kind) {
      case Kind::floats:
        return floats.size();
      case Kind::int64s:
        return int64s.size();
      case Kind::bytes:
        return bytes.size();
      case Kind::none:
        break;
    }
    return 0;
  }
  template <class T>
  [[nodiscard]] auto& values() {
    if constexpr (std::is_same_v<T, float>) {
      return floats;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      return int64s;
    } else {
      return bytes;
    }
  }
};

/// Reads a Feature message into `slot` (last kind wins, as protobuf's oneof; an empty
/// Feature leaves the slot absent).
inline void read_feature(wire::Reader& r, Slot& slot) {
  slot.reset();
  while (auto tag = r.next()) {
    if (tag->type != wire::WireType::len || tag->field < 1 || tag->field > 3) {
      r.skip(*tag);
      continue;
    }
    const auto kind = static_cast<Kind>(tag->field);
    if (slot.kind != kind) {
      slot.reset();
      slot.kind = kind;
    }
    auto list = r.message("tf.train.Feature list");
    while (auto t = list.next()) {
      if (t->field != 1) {
        list.skip(*t);
      } else if (kind == Kind::bytes) {
        if (t->type != wire::WireType::len) {
          list.fail("BytesList value with wire type " +
                    std::to_string(static_cast<unsigned>(t->type)));
        }
        slot.bytes.push_back(list.bytes());
      } else if (kind == Kind::floats) {
        list.repeated_fixed32(
            *t, [&](std::uint32_t v) { slot.floats.push_back(std::bit_cast<float>(v)); });
      } else {
        list.repeated_varint(
            *t, [&](std::uint64_t v) { slot.int64s.push_back(static_cast<std::int64_t>(v)); });
      }
    }
  }
}

/// Parses one serialized Example, filling `slots[i]` for the i-th described key (in the
/// description's order). Throws data_loss on malformed bytes.
inline void read_example(std::string_view bytes, const FeatureDescription& description,
                         std::vector<Slot>& slots) {
  for (auto& s : slots) {
    s.reset();
  }
  wire::Reader r(bytes, "tf.train.Example");
  while (auto tag = r.next()) {
    if (tag->field != 1 || tag->type != wire::WireType::len) {
      r.skip(*tag);
      continue;
    }
    auto features = r.message("tf.train.Features");
    while (auto ft = features.next()) {
      if (ft->field != 1 || ft->type != wire::WireType::len) {
        features.skip(*ft);
        continue;
      }
      auto entry = features.message("tf.train.Features entry");
      std::optional<std::string_view> key;
      std::optional<std::string_view> value;
      std::uint64_t value_offset = 0;
      while (auto et = entry.next()) {
        if (et->field == 1 && et->type == wire::WireType::len) {
          key = entry.bytes();
        } else if (et->field == 2 && et->type == wire::WireType::len) {
          value_offset = entry.offset();
          value = entry.bytes();
        } else {
          entry.skip(*et);
        }
      }
      const auto it = description.find(key.value_or(std::string_view()));
      if (it == description.end()) {
        continue;  // not asked for: not parsed further
      }
      Slot& slot = slots[static_cast<std::size_t>(std::distance(description.begin(), it))];
      if (!value) {
        slot.reset();
        continue;
      }
      // value_offset points at the length varint; the payload follows it.
      wire::Reader fr(*value, "tf.train.Feature", value_offset + wire::varint_size(value->size()));
      read_feature(fr, slot);
    }
  }
}

template <class S>
inline constexpr bool is_sequence = requires(const S& s) { s.allow_missing; };

inline std::string shape_string(std::span<const std::int64_t> dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    s += (i ? "," : "") + std::to_string(dims[i]);
  }
  return s + "]";
}

/// Checks a FixedLenFeature spec; returns product(shape).
template <class T>
std::int64_t check_fixed(std::string_view op, std::string_view key,
                         const io::FixedLenFeature<T>& spec, std::size_t extra_rank) {
  if (spec.shape.size() + extra_rank > max_rank) {
    throw invalid_argument(std::string(op) + ": Key: " + std::string(key) + ". shape " +
                           shape_string(spec.shape) + " has too many dimensions");
  }
  std::int64_t n = 1;
  for (auto d : spec.shape) {
    if (d < 0) {
      throw invalid_argument(std::string(op) + ": Key: " + std::string(key) +
                             ". FixedLenFeature shape must be fully defined, got " +
                             shape_string(spec.shape));
    }
    n *= d;
  }
  if (spec.default_value.has_value() &&
      static_cast<std::int64_t>(spec.default_value.values().size()) != n) {
    throw invalid_argument(std::string(op) + ": Key: " + std::string(key) + ". default_value has " +
                           std::to_string(spec.default_value.values().size()) +
                           " values, but shape " + shape_string(spec.shape) + " needs " +
                           std::to_string(n));
  }
  return n;
}

/// Checks a FixedLenSequenceFeature spec; returns the values per row, product(shape).
template <class T>
std::int64_t check_sequence(std::string_view op, std::string_view key,
                            const io::FixedLenSequenceFeature<T>& spec, std::size_t extra_rank) {
  const std::string where = std::string(op) + ": Key: " + std::string(key) + ". ";
  if (!spec.allow_missing) {  // TensorFlow's ValueError when parsing Examples
    throw invalid_argument(where +
                           "Unsupported: FixedLenSequenceFeature requires allow_missing to be "
                           "True.");
  }
  if (spec.shape.size() + 1 + extra_rank > max_rank) {
    throw invalid_argument(where + "shape [?]+" + shape_string(spec.shape) +
                           " has too many dimensions");
  }
  std::int64_t n = 1;
  for (auto d : spec.shape) {
    if (d < 0) {
      throw invalid_argument(where + "FixedLenSequenceFeature shape must be fully defined, got " +
                             shape_string(spec.shape));
    }
    n *= d;
  }
  if (n == 0) {  // rows of no values: their number cannot be told
    throw invalid_argument(where + "FixedLenSequenceFeature shape " + shape_string(spec.shape) +
                           " has no elements per row");
  }
  if (spec.default_value.has_value() && spec.default_value.values().size() != 1) {
    throw invalid_argument(where +
                           "FixedLenSequenceFeature default_value is the padding value "
                           "and must be a single value, got " +
                           std::to_string(spec.default_value.values().size()));
  }
  return n;
}

/// Builds a Tensor<T, R> for the run-time rank of `dims`, type-erased.
template <class T>
AnyTensor make_dense(std::vector<T>&& values, const std::vector<std::int64_t>& dims) {
  return [&]<std::size_t... R>(std::index_sequence<R...>) {
    AnyTensor out;
    (void)((dims.size() == R ? (
                                   out =
                                       [&] {
                                         std::array<std::int64_t, R> d{};
                                         for (std::size_t i = 0; i < R; ++i) {
                                           d[i] = dims[i];
                                         }
                                         auto t = Tensor<T, R>::uninitialized(d);
                                         T* out_data = tensor_access::mutable_data(t);
                                         for (std::size_t i = 0; i < values.size(); ++i) {
                                           out_data[i] = std::move(values[i]);
                                         }
                                         return AnyTensor(t);
                                       }(),
                                   true)
                             : false) ||
           ...);
    return out;
  }(std::make_index_sequence<max_rank + 1>{});
}

template <class T>
void append_values(std::vector<T>& out, Slot& slot) {
  if constexpr (std::is_same_v<T, std::string>) {
    for (auto v : slot.bytes) {
      out.emplace_back(v);
    }
  } else {
    auto& v = slot.template values<T>();
    out.insert(out.end(), v.begin(), v.end());
  }
}

[[noreturn]] inline void rethrow_parse_error(std::string_view op, std::string_view prefix,
                                             const data_loss& e) {
  throw invalid_argument(std::string(op) + ": " + std::string(prefix) +
                         "Could not parse example input: " + e.what());
}

/// What parse() gathers over a batch, per key of the description (in its order).
struct ParseState {
  std::string_view op;
  bool batched = false;
  std::int64_t batch_size = 0;
  std::vector<std::int64_t> counts;  // values per row (fixed: per example)
  using Acc = std::variant<std::vector<float>, std::vector<std::int64_t>, std::vector<std::string>>;
  std::vector<Acc> acc;
  std::vector<std::vector<std::int64_t>> sparse_indices;
  std::vector<std::int64_t> sparse_max;
  std::vector<std::vector<std::int64_t>> sequence_rows;  // per example

  ParseState(std::string_view op_name, const FeatureDescription& description, bool is_batched,
             std::int64_t size)
      : op(op_name),
        batched(is_batched),
        batch_size(size),
        counts(description.size(), 0),
        acc(description.size()),
        sparse_indices(description.size()),
        sparse_max(description.size(), 0),
        sequence_rows(description.size()) {
    std::size_t k = 0;
    for (const auto& kv : description) {  // (clang 14 cannot capture structured bindings)
      std::visit(
          [&]<class S>(const S& spec) {
            acc[k] = std::vector<typename S::value_type>{};
            if constexpr (is_sequence<S>) {
              counts[k] = check_sequence(op, kv.first, spec, batched ? 1 : 0);
            } else if constexpr (requires { spec.shape; }) {
              counts[k] = check_fixed(op, kv.first, spec, batched ? 1 : 0);
            }
          },
          kv.second);
      ++k;
    }
  }

  [[noreturn]] void type_mismatch(const std::string& where, Kind found, Kind want,
                                  bool sparse_wording) const {
    throw invalid_argument(
        std::string(op) + ": " + where +
        (sparse_wording ? "Data types don't match. Expected type: " + std::string(kind_name(want)) +
                              ", Actual type: " + std::string(kind_name(found))
                        : "Data types don't match. Data type: " + std::string(kind_name(found)) +
                              " but expected type: " + std::string(kind_name(want))));
  }

  // Example b's values of key k (`where` prefixes error messages), one function per kind.
  template <class S>
  void add_sequence(std::size_t k, const std::string& key, const S& s, Slot& slot,
                    const std::string& where) {
    using T = typename S::value_type;
    constexpr Kind want = kind_of<T>();
    if (slot.kind != Kind::none && slot.kind != want) {
      type_mismatch(where, slot.kind, want, false);
    }
    const auto n = static_cast<std::int64_t>(slot.size());
    if (n % counts[k] != 0) {
      if (!batched) {
        throw invalid_argument(std::string(op) + ": Error while parsing feature with key " + key +
                               ": number of elements should be divisible by " +
                               std::to_string(counts[k]) + ", found " + std::to_string(n) +
                               " instead");
      }
      throw invalid_argument(std::string(op) + ": " + where + "Number of " +
                             std::string(kind_name(want)) +
                             " values is not a multiple of stride length. Saw " +
                             std::to_string(n) + " values but output shape is: [?" +
                             (s.shape.empty() ? "]" : "," + shape_string(s.shape).substr(1)));
    }
    sequence_rows[k].push_back(n / counts[k]);
    if (n > 0) {
      append_values(std::get<std::vector<T>>(acc[k]), slot);
    }
  }

  template <class S>
  void add_fixed(std::size_t k, const std::string& key, const S& s, Slot& slot,
                 const std::string& where) {
    using T = typename S::value_type;
    constexpr Kind want = kind_of<T>();
    auto& out = std::get<std::vector<T>>(acc[k]);
    if (slot.kind == Kind::none) {
      if (!s.default_value.has_value()) {
        throw invalid_argument(std::string(op) + ": " +
                               (batched ? std::string("Name: <unknown>, ") : "") +
                               "Feature: " + key + " (data type: " + std::string(kind_name(want)) +
                               ") is required but could not be found.");
      }
      const auto& d = s.default_value.values();
      out.insert(out.end(), d.begin(), d.end());
      return;
    }
    if (slot.kind != want) {
      type_mismatch(where, slot.kind, want, false);
    }
    if (static_cast<std::int64_t>(slot.size()) != counts[k]) {
      std::vector<std::int64_t> full;
      if (batched) {
        full.push_back(batch_size);
      }
      full.insert(full.end(), s.shape.begin(), s.shape.end());
      throw invalid_argument(std::string(op) + ": " + where + "Number of " +
                             std::string(kind_name(want)) +
                             " values != expected.  Values size: " + std::to_string(slot.size()) +
                             " but output shape: " + shape_string(full));
    }
    append_values(out, slot);
  }

  template <class S>
  void add_sparse(std::size_t k, Slot& slot, std::int64_t b, const std::string& where) {
    using T = typename S::value_type;
    constexpr Kind want = kind_of<T>();
    if (slot.kind != Kind::none && slot.kind != want) {
      type_mismatch(where, slot.kind, want, true);
    }
    const auto n = static_cast<std::int64_t>(slot.size());
    for (std::int64_t i = 0; i < n; ++i) {
      if (batched) {
        sparse_indices[k].push_back(b);
      }
      sparse_indices[k].push_back(i);
    }
    sparse_max[k] = std::max(sparse_max[k], n);
    if (n > 0) {
      append_values(std::get<std::vector<T>>(acc[k]), slot);
    }
  }

  void add_example(std::int64_t b, const FeatureDescription& description,
                   std::vector<Slot>& slots) {
    std::size_t k = 0;
    for (const auto& kv : description) {  // (clang 14 cannot capture structured bindings)
      const std::string& key = kv.first;
      const std::string where =
          batched ? "Name: <unknown>, Key: " + key + ", Index: " + std::to_string(b) + ".  "
                  : "Key: " + key + ".  ";
      std::visit(
          [&]<class S>(const S& s) {
            if constexpr (is_sequence<S>) {
              add_sequence(k, key, s, slots[k], where);
            } else if constexpr (requires { s.shape; }) {
              add_fixed(k, key, s, slots[k], where);
            } else {
              add_sparse<S>(k, slots[k], b, where);
            }
          },
          kv.second);
      ++k;
    }
  }

  // The output of key k, from what the batch gave.
  template <class S>
  io::ParsedFeature dense_sequence(std::size_t k, const S& s) {
    using T = typename S::value_type;
    auto& values = std::get<std::vector<T>>(acc[k]);
    const auto& rows = sequence_rows[k];
    const std::int64_t most = rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end());
    std::vector<std::int64_t> dims;
    if (batched) {
      dims.push_back(batch_size);
    }
    dims.push_back(most);
    dims.insert(dims.end(), s.shape.begin(), s.shape.end());
    if (batched) {  // pad every example to the most rows
      const T pad = s.default_value.has_value() ? s.default_value.values()[0] : T{};
      const auto stride = static_cast<std::size_t>(counts[k]);
      std::vector<T> padded;
      padded.reserve(rows.size() * static_cast<std::size_t>(most) * stride);
      std::size_t from = 0;
      for (const std::int64_t r : rows) {
        const std::size_t n = static_cast<std::size_t>(r) * stride;
        for (std::size_t i = 0; i < n; ++i) {
          padded.push_back(std::move(values[from + i]));
        }
        from += n;
        padded.resize(padded.size() + static_cast<std::size_t>(most - r) * stride, pad);
      }
      values = std::move(padded);
    }
    return io::ParsedFeature(make_dense<T>(std::move(values), dims));
  }

  template <class S>
  io::ParsedFeature dense_fixed(std::size_t k, const S& s) {
    using T = typename S::value_type;
    std::vector<std::int64_t> dims;
    if (batched) {
      dims.push_back(batch_size);
    }
    dims.insert(dims.end(), s.shape.begin(), s.shape.end());
    return io::ParsedFeature(make_dense<T>(std::move(std::get<std::vector<T>>(acc[k])), dims));
  }

  template <class S>
  io::ParsedFeature sparse(std::size_t k) {
    using T = typename S::value_type;
    auto& values = std::get<std::vector<T>>(acc[k]);
    const std::int64_t cols = batched ? 2 : 1;
    const auto nnz = static_cast<std::int64_t>(values.size());
    io::SparseTensor<T> sp;
    sp.indices = Tensor<std::int64_t, 2>::uninitialized({nnz, cols});
    std::int64_t* idx = tensor_access::mutable_data(sp.indices);
    for (std::size_t i = 0; i < sparse_indices[k].size(); ++i) {  // (std::copy trips
      idx[i] = sparse_indices[k][i];                              // GCC 12's -Wnonnull on
    }                                                             // empty tensors)
    sp.values = Tensor<T, 1>::uninitialized({nnz});
    T* vals = tensor_access::mutable_data(sp.values);
    for (std::size_t i = 0; i < values.size(); ++i) {
      vals[i] = std::move(values[i]);
    }
    sp.dense_shape = Tensor<std::int64_t, 1>::uninitialized({cols});
    auto* ds = tensor_access::mutable_data(sp.dense_shape);
    if (batched) {
      ds[0] = batch_size;
      ds[1] = sparse_max[k];
    } else {
      ds[0] = sparse_max[k];
    }
    return io::ParsedFeature(std::move(sp));
  }
};

/// Parses a batch of serialized Examples into the description's outputs.
inline io::ParsedExample parse(std::string_view op, std::span<const std::string_view> batch,
                               const FeatureDescription& description, bool batched) {
  const auto batch_size = static_cast<std::int64_t>(batch.size());
  ParseState state(op, description, batched, batch_size);
  std::vector<Slot> slots(description.size());
  for (std::int64_t b = 0; b < batch_size; ++b) {
    try {
      read_example(batch[static_cast<std::size_t>(b)], description, slots);
    } catch (const data_loss& e) {
      rethrow_parse_error(op, batched ? "Name: <unknown>, Index: " + std::to_string(b) + ". " : "",
                          e);
    }
    state.add_example(b, description, slots);
  }
  io::ParsedExample result;
  std::size_t k = 0;
  for (const auto& kv : description) {  // (clang 14 cannot capture structured bindings)
    std::visit(
        [&]<class S>(const S& s) {
          if constexpr (is_sequence<S>) {
            result.insert(kv.first, state.dense_sequence(k, s));
          } else if constexpr (requires { s.shape; }) {
            result.insert(kv.first, state.dense_fixed(k, s));
          } else {
            result.insert(kv.first, state.sparse<S>(k));
          }
        },
        kv.second);
    ++k;
  }
  return result;
}

}  // namespace detail::example_parse

namespace io {

/// Parses one serialized `tf.train.Example` (TensorFlow: `tf.io.parse_single_example`).
/// FixedLenFeature results have the spec's shape; VarLenFeature results are SparseTensors
/// with indices `[N, 1]`, values `[N]`, dense_shape `[N]`; FixedLenSequenceFeature results
/// have shape `[rows] + shape`.
[[nodiscard]] inline ParsedExample parse_single_example(std::string_view serialized,
                                                        const FeatureDescription& features) {
  const std::string_view one[1] = {serialized};
  return detail::example_parse::parse("tf::io::parse_single_example", one, features, false);
}
/// The same with the serialized Example as a `std::string`.
[[nodiscard]] inline ParsedExample parse_single_example(const std::string& serialized,
                                                        const FeatureDescription& features) {
  return parse_single_example(std::string_view(serialized), features);
}
/// The same with the serialized Example as a NUL-terminated string.
[[nodiscard]] inline ParsedExample parse_single_example(const char* serialized,
                                                        const FeatureDescription& features) {
  return parse_single_example(std::string_view(serialized), features);
}
/// The same with the serialized Example as a scalar string tensor.
[[nodiscard]] inline ParsedExample parse_single_example(const Tensor<std::string, 0>& serialized,
                                                        const FeatureDescription& features) {
  return parse_single_example(std::string_view(serialized.item()), features);
}

/// Parses a batch of serialized Examples (TensorFlow: `tf.io.parse_example`). FixedLenFeature
/// results get a leading batch dimension; VarLenFeature results have indices `[N, 2]`
/// (example, position) and dense_shape `[batch, longest list]`; FixedLenSequenceFeature
/// results have shape `[batch, most rows] + shape`, padded with the spec's default value.
[[nodiscard]] inline ParsedExample parse_example(std::span<const std::string_view> serialized,
                                                 const FeatureDescription& features) {
  return detail::example_parse::parse("tf::io::parse_example", serialized, features, true);
}
/// The same with the serialized Examples as `std::string`s.
[[nodiscard]] inline ParsedExample parse_example(std::span<const std::string> serialized,
                                                 const FeatureDescription& features) {
  std::vector<std::string_view> views(serialized.begin(), serialized.end());
  return parse_example(std::span<const std::string_view>(views), features);
}
/// The same with the serialized Examples as a rank-1 string tensor.
[[nodiscard]] inline ParsedExample parse_example(const Tensor<std::string, 1>& serialized,
                                                 const FeatureDescription& features) {
  return parse_example(serialized.values(), features);
}

}  // namespace io
TAPEFLOW_END_NAMESPACE
