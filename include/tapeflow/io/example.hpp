// `tf.train.Example` and its parts (docs/formats.md section 4): `Example`, `Features`, `Feature`,
// `BytesList`, `FloatList`, `Int64List`, with protobuf serialization that matches
// TensorFlow's `SerializeToString(deterministic=True)` byte for byte (map entries sorted by
// key; Python's default order is a hash order, which readers accept just the same).
//
//     tf::train::Example example({
//         {"image", tf::train::Feature(tf::train::BytesList{{image}})},
//         {"label", tf::train::Feature(tf::train::Int64List{{label}})},
//     });
//     writer.write(example.serialize());
//
// The types live in `tf::io` (the module that reads and writes them) and are also reachable
// under TensorFlow's names `tf::train::Example`, ...
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace io {

/// `tf.train.BytesList`: strings or raw bytes (an encoded image, ...).
struct BytesList {
  std::vector<std::string> value{};  ///< the elements
  /// Same elements in the same order.
  friend bool operator==(const BytesList&, const BytesList&) = default;
};
/// `tf.train.FloatList`.
struct FloatList {
  std::vector<float> value{};  ///< the elements
  /// Same elements in the same order.
  friend bool operator==(const FloatList&, const FloatList&) = default;
};
/// `tf.train.Int64List`.
struct Int64List {
  std::vector<std::int64_t> value{};  ///< the elements
  /// Same elements in the same order.
  friend bool operator==(const Int64List&, const Int64List&) = default;
};

/// `tf.train.Feature`: one of a BytesList, FloatList or Int64List, or nothing (a Feature with
/// no kind set counts as absent when parsed).
class Feature {
 public:
  /// Which list a Feature holds (the protobuf `oneof kind`); `none` when unset.
  enum class Kind { none, bytes_list, float_list, int64_list };

  Feature() = default;
  /// A Feature holding `v` (`tf.train.Feature(bytes_list=v)`).
  Feature(BytesList v) : kind_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  /// A Feature holding `v` (`tf.train.Feature(float_list=v)`).
  Feature(FloatList v) : kind_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  /// A Feature holding `v` (`tf.train.Feature(int64_list=v)`).
  Feature(Int64List v) : kind_(std::move(v)) {}  // NOLINT(google-explicit-constructor)

  /// Which list this Feature holds (protobuf: `WhichOneof("kind")`).
  [[nodiscard]] Kind kind() const noexcept { return static_cast<Kind>(kind_.index()); }
  /// The list if this Feature holds that kind, else nullptr.
  [[nodiscard]] const BytesList* bytes_list() const noexcept {
    return std::get_if<BytesList>(&kind_);
  }
  /// The list if this Feature holds that kind, else nullptr.
  [[nodiscard]] const FloatList* float_list() const noexcept {
    return std::get_if<FloatList>(&kind_);
  }
  /// The list if this Feature holds that kind, else nullptr.
  [[nodiscard]] const Int64List* int64_list() const noexcept {
    return std::get_if<Int64List>(&kind_);
  }
  /// The list of kind `List`, created (replacing another kind) if needed.
  template <class List>
  List& mutable_list() {
    if (!std::holds_alternative<List>(kind_)) {
      kind_ = List{};
    }
    return std::get<List>(kind_);
  }

  /// Appends this Feature's fields (not its own tag) to `w`.
  void serialize_to(detail::wire::Writer& w) const {
    switch (kind()) {
      case Kind::bytes_list:
        w.message_field(1, [&](detail::wire::Writer& list) {
          for (const auto& v : bytes_list()->value) {
            list.bytes_field(1, v);
          }
        });
        break;
      case Kind::float_list:
        w.message_field(
            2, [&](detail::wire::Writer& list) { list.packed_float(1, float_list()->value); });
        break;
      case Kind::int64_list:
        w.message_field(3, [&](detail::wire::Writer& list) {
          list.packed_varint<std::int64_t>(1, int64_list()->value);
        });
        break;
      case Kind::none:
        break;
    }
  }
  /// Protobuf merge semantics: a kind seen again appends; another kind replaces (oneof);
  /// unknown fields are skipped; packed and unpacked lists are accepted.
  void merge_from(detail::wire::Reader& r) {
    while (auto tag = r.next()) {
      if (tag->type != detail::wire::WireType::len || tag->field < 1 || tag->field > 3) {
        r.skip(*tag);
        continue;
      }
      auto list = r.message("tf.train.Feature list");
      if (tag->field == 1) {
        auto& out = mutable_list<BytesList>().value;
        while (auto t = list.next()) {
          if (t->field == 1 && t->type == detail::wire::WireType::len) {
            out.emplace_back(list.bytes());
          } else {
            list.skip(*t);
          }
        }
      } else if (tag->field == 2) {
        auto& out = mutable_list<FloatList>().value;
        while (auto t = list.next()) {
          if (t->field == 1) {
            list.repeated_fixed32(*t,
                                  [&](std::uint32_t v) { out.push_back(std::bit_cast<float>(v)); });
          } else {
            list.skip(*t);
          }
        }
      } else {
        auto& out = mutable_list<Int64List>().value;
        while (auto t = list.next()) {
          if (t->field == 1) {
            list.repeated_varint(
                *t, [&](std::uint64_t v) { out.push_back(static_cast<std::int64_t>(v)); });
          } else {
            list.skip(*t);
          }
        }
      }
    }
  }

  /// Same kind and the same elements.
  friend bool operator==(const Feature&, const Feature&) = default;

 private:
  std::variant<std::monostate, BytesList, FloatList, Int64List> kind_{};
};

/// A Feature holding the given strings/bytes (`tf.train.Feature(bytes_list=...)`).
inline Feature bytes_feature(std::string value) { return BytesList{{std::move(value)}}; }
/// A bytes Feature holding all of `values`.
inline Feature bytes_feature(std::vector<std::string> values) {
  return BytesList{std::move(values)};
}
/// A bytes Feature from a braced list: `bytes_feature({"a", "b"})`.
inline Feature bytes_feature(std::initializer_list<std::string> values) {
  return BytesList{std::vector<std::string>(values)};
}
/// A Feature holding the given floats.
inline Feature float_feature(float value) { return FloatList{{value}}; }
/// A float Feature holding all of `values`.
inline Feature float_feature(std::vector<float> values) { return FloatList{std::move(values)}; }
/// A float Feature from a braced list.
inline Feature float_feature(std::initializer_list<float> values) {
  return FloatList{std::vector<float>(values)};
}
/// A Feature holding the given int64 values.
inline Feature int64_feature(std::int64_t value) { return Int64List{{value}}; }
/// An int64 Feature holding all of `values`.
inline Feature int64_feature(std::vector<std::int64_t> values) {
  return Int64List{std::move(values)};
}
/// An int64 Feature from a braced list.
inline Feature int64_feature(std::initializer_list<std::int64_t> values) {
  return Int64List{std::vector<std::int64_t>(values)};
}

/// `tf.train.Features`: named Features, kept sorted by name.
struct Features {
  std::map<std::string, Feature, std::less<>> feature{};  ///< features by name

  Features() = default;
  /// Features with the given map.
  Features(std::map<std::string, Feature, std::less<>> f)  // NOLINT(google-explicit-constructor)
      : feature(std::move(f)) {}
  /// Features from `{name, feature}` pairs, e.g. `{{"label", tf::train::int64_feature(1)}}`.
  Features(std::initializer_list<std::pair<const std::string, Feature>> f) : feature(f) {}

  /// Appends this message's fields (its map entries) to `w`.
  void serialize_to(detail::wire::Writer& w) const {
    for (const auto& kv : feature) {  // (no structured bindings: clang 14 cannot capture them)
      const std::string& key = kv.first;
      const Feature& value = kv.second;
      w.message_field(1, [&](detail::wire::Writer& entry) {
        entry.string_field(1, key);
        entry.message_field(2, [&](detail::wire::Writer& f) { value.serialize_to(f); });
      });
    }
  }
  /// Merges map entries (a key seen again replaces the earlier value, as protobuf maps do).
  void merge_from(detail::wire::Reader& r) {
    while (auto tag = r.next()) {
      if (tag->field != 1 || tag->type != detail::wire::WireType::len) {
        r.skip(*tag);
        continue;
      }
      auto entry = r.message("tf.train.Features entry");
      std::string key;
      Feature value;
      while (auto t = entry.next()) {
        if (t->field == 1 && t->type == detail::wire::WireType::len) {
          key = entry.bytes();
        } else if (t->field == 2 && t->type == detail::wire::WireType::len) {
          auto f = entry.message("tf.train.Feature");
          value.merge_from(f);
        } else {
          entry.skip(*t);
        }
      }
      feature.insert_or_assign(std::move(key), std::move(value));
    }
  }

  /// Same names with equal features.
  friend bool operator==(const Features&, const Features&) = default;
};

/// `tf.train.Example`: the usual content of a TFRecord.
class Example {
 public:
  Example() = default;
  /// An Example whose `features` field is set (even if empty).
  explicit Example(Features f) : features_(std::move(f)) {}
  /// An Example with these `{name, feature}` pairs as its features.
  Example(std::initializer_list<std::pair<const std::string, Feature>> f)
      : features_(Features(f)) {}

  /// Whether the `features` field is set (protobuf: `HasField("features")`).
  [[nodiscard]] bool has_features() const noexcept { return features_.has_value(); }
  /// The features (an empty Features when the field is unset).
  [[nodiscard]] const Features& features() const noexcept {
    static const Features empty;
    return features_ ? *features_ : empty;
  }
  /// The features, writable; sets the field (empty) if it was unset.
  Features& mutable_features() {
    if (!features_) {
      features_.emplace();
    }
    return *features_;
  }
  /// Sets (or replaces) one feature.
  Example& set(std::string key, Feature value) {
    mutable_features().feature.insert_or_assign(std::move(key), std::move(value));
    return *this;
  }
  /// The feature named `key`, or nullptr.
  [[nodiscard]] const Feature* find(std::string_view key) const {
    const auto& f = features().feature;
    auto it = f.find(key);
    return it == f.end() ? nullptr : &it->second;
  }
  /// The feature named `key`; throws not_found.
  [[nodiscard]] const Feature& at(std::string_view key) const {
    if (const Feature* f = find(key)) {
      return *f;
    }
    throw not_found("tf.train.Example: no feature '" + std::string(key) + "'");
  }

  /// Protobuf bytes (`example.SerializeToString()`; deterministic map order).
  [[nodiscard]] std::string serialize() const {
    std::string out;
    if (features_) {
      detail::wire::Writer w(out);
      w.message_field(1, [&](detail::wire::Writer& f) { features_->serialize_to(f); });
    }
    return out;
  }
  /// Parses protobuf bytes (`tf.train.Example.FromString`); malformed input raises
  /// data_loss naming the byte offset. Unknown fields are skipped.
  [[nodiscard]] static Example parse(std::string_view bytes) {
    Example e;
    detail::wire::Reader r(bytes, "tf.train.Example");
    while (auto tag = r.next()) {
      if (tag->field == 1 && tag->type == detail::wire::WireType::len) {
        auto f = r.message("tf.train.Features");
        e.mutable_features().merge_from(f);  // repeated occurrences merge
      } else {
        r.skip(*tag);
      }
    }
    return e;
  }

  /// Same features, set or unset alike.
  friend bool operator==(const Example&, const Example&) = default;

 private:
  std::optional<Features> features_{};
};

}  // namespace io

namespace train {
// TensorFlow spells these `tf.train.*`.
using io::BytesList;
using io::Example;
using io::Feature;
using io::Features;
using io::FloatList;
using io::Int64List;
}  // namespace train

TAPEFLOW_END_NAMESPACE
