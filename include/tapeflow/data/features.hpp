// `tf::data::Features`: a dataset element that is a named structure, the C++ counterpart of the
// dicts TensorFlow users pass to `from_tensor_slices({"image": x, "label": y})`.
//
//     auto ds = tf::data::from_tensor_slices({{"image", images}, {"label", labels}})
//             | tf::data::map([](tf::data::Features x) {
//                 return x.set("image", tf::image::flip_left_right(x.get<float, 3>("image")));
//               })
//             | tf::data::shuffle(1000) | tf::data::batch(32);
//     for (auto&& x : ds) {
//       auto images = x.get<float, 4>("image");   // typed access, checked
//       const tf::AnyTensor& labels = x["label"];  // type-erased access
//     }
//
// Design. A Features is an insertion-ordered list of (key, AnyTensor): keys and component types
// are run-time values, like a Python dict, so one type serves every schema (parsed TFRecords,
// CSV columns, a model's named inputs) and a pipeline's type does not change when a feature is
// added. Reading a component back is a checked cast: `get<T, R>(key)` or a typed key
// (`FeatureKey<T, R>`); an unknown key is `not_found` naming it and the keys present, a wrong
// dtype or rank is `invalid_argument` naming the key. Tuples remain the statically typed
// alternative (structured bindings, no casts); a user aggregate of tensors can become an
// element type too by specialising `element_traits` (element.hpp).
//
// Every stage works on Features elements: from_tensor_slices (components must agree on dim 0,
// else invalid_argument naming the keys), from_tensors, map, filter, batch/unbatch,
// padded_batch (per-key `FeaturesPadding`), shuffle, cache, prefetch, take/skip, zip, and
// iterator save/restore (the encoding stores the keys). Batching stacks per key; the elements
// of a batch must have the same keys (any order; the batch keeps the first element's order).
//
// Customization points: none beyond `element_traits<Features>`, defined here.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/detail/any_element.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/data/source/from_tensor_slices.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// A key whose component type is known at compile time: `x[image]` returns `Tensor<T, R>`.
///
///     inline constexpr tf::data::FeatureKey<float, 3> image{"image"};
///     auto img = x[image];   // Tensor<float, 3>; throws like get<float, 3>("image")
template <class T, std::size_t R>
struct FeatureKey {
  std::string_view name;  ///< the key (must outlive the FeatureKey: typically a literal)
};

/// A named structure of tensors, the dict element of tf.data (see the file comment).
///
///     tf::data::Features x{{"image", tf::zeros<float>({28, 28})}, {"label", tf::constant(3)}};
///     x.get<float, 2>("image");          // Tensor<float, 2>
///     x["label"];                        // const AnyTensor&
///     x.set("weight", tf::constant(1.0f));
class Features {
 public:
  using value_type = std::pair<std::string, AnyTensor>;  ///< one (key, tensor) entry
  /// Iterates the entries in insertion order.
  using const_iterator = std::vector<value_type>::const_iterator;

  /// No features.
  Features() = default;
  /// `{{"image", x}, {"label", y}}`; a repeated key is invalid_argument.
  Features(std::initializer_list<value_type> entries) {
    entries_.reserve(entries.size());
    for (const auto& [key, value] : entries) {
      if (contains(key)) {
        throw invalid_argument("tf::data::Features: key '" + key + "' given twice");
      }
      entries_.emplace_back(key, value);
    }
  }

  /// Adds `key` (at the end) or replaces its tensor; returns *this, so a map function may
  /// `return x.set("image", augmented);`.
  Features& set(std::string key, AnyTensor value) & {
    if (auto* e = find(key)) {
      e->second = std::move(value);
    } else {
      entries_.emplace_back(std::move(key), std::move(value));
    }
    return *this;
  }
  /// `set` on a temporary (`return std::move(x).set(...)`); returns it as an rvalue.
  Features&& set(std::string key, AnyTensor value) && {
    set(std::move(key), std::move(value));
    return std::move(*this);
  }
  /// Removes `key`; returns whether it was there (Python: `x.pop(key, None)`).
  bool erase(std::string_view key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.erase(it);
        return true;
      }
    }
    return false;
  }

  /// Whether `key` is present.
  [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
  /// The tensor under `key`; throws not_found naming the key and the keys present.
  [[nodiscard]] const AnyTensor& operator[](std::string_view key) const { return at(key); }
  /// The tensor under `key`, as `operator[]`; throws not_found naming the keys present.
  [[nodiscard]] const AnyTensor& at(std::string_view key) const {
    if (const auto* e = find(key)) {
      return e->second;
    }
    throw not_found("tf::data::Features: no key '" + std::string(key) + "' (keys: " + key_list() +
                    ")");
  }
  /// The tensor under `key` as `Tensor<T, R>`: not_found for an unknown key, invalid_argument
  /// naming the key when it holds another dtype or rank.
  template <class T, std::size_t R>
  [[nodiscard]] Tensor<T, R> get(std::string_view key) const {
    const AnyTensor& t = at(key);
    if (!t.holds<T, R>()) {
      throw invalid_argument("tf::data::Features: key '" + std::string(key) + "' holds a " +
                             detail::describe_any(t) + ", not Tensor<" +
                             std::string(dtype_traits<T>::name) + ", " + std::to_string(R) + ">");
    }
    return t.unchecked_as<T, R>();
  }
  /// `get<T, R>(key.name)`: typed access through a FeatureKey.
  template <class T, std::size_t R>
  [[nodiscard]] Tensor<T, R> operator[](const FeatureKey<T, R>& key) const {
    return get<T, R>(key.name);
  }

  /// Number of features (keys).
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  /// Whether there are no features.
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  /// (key, tensor) pairs in insertion order: `for (const auto& [key, t] : x)`.
  [[nodiscard]] const_iterator begin() const noexcept { return entries_.begin(); }
  /// End of the entries.
  [[nodiscard]] const_iterator end() const noexcept { return entries_.end(); }
  /// The keys in insertion order (Python: `list(x.keys())`).
  [[nodiscard]] std::vector<std::string> keys() const {
    std::vector<std::string> out;
    out.reserve(entries_.size());
    for (const auto& e : entries_) {
      out.push_back(e.first);
    }
    return out;
  }

  /// `{'image': tf.Tensor(...), 'label': tf.Tensor(...)}` (Python's dict printing).
  friend std::ostream& operator<<(std::ostream& os, const Features& f) {
    os << '{';
    bool first = true;
    for (const auto& [key, t] : f.entries_) {
      os << (first ? "" : ", ") << '\'' << key << "': " << t;
      first = false;
    }
    return os << '}';
  }

 private:
  [[nodiscard]] const value_type* find(std::string_view key) const noexcept {
    for (const auto& e : entries_) {
      if (e.first == key) {
        return &e;
      }
    }
    return nullptr;
  }
  [[nodiscard]] value_type* find(std::string_view key) noexcept {
    return const_cast<value_type*>(std::as_const(*this).find(key));
  }
  [[nodiscard]] std::string key_list() const {
    std::string out;
    for (const auto& e : entries_) {
      out += (out.empty() ? "'" : ", '") + e.first + "'";
    }
    return out.empty() ? "none" : out;
  }

  std::vector<value_type> entries_;
};

/// How padded_batch pads one feature: each dim to `padded_shape[k]` (-1, or an empty
/// padded_shape: the largest in the batch) with `padding_value` (a scalar of the feature's
/// dtype; none: zero or the empty string).
struct FeaturePadding {
  /// Target size of each dim (one per dim of the feature, else invalid_argument); -1 or empty:
  /// the largest in the batch.
  std::vector<std::int64_t> padded_shape{};
  AnyTensor padding_value{};  ///< scalar of the feature's dtype; empty: zero or ""
};
/// Per-key padding for a dataset of Features; keys not listed pad to the batch maximum with
/// zeros. A key that no element has is invalid_argument.
///
///     ds | tf::data::padded_batch(8, tf::data::FeaturesPadding{
///                                        {"tokens", {.padded_shape = {16},
///                                                    .padding_value = tf::constant(-1)}}})
using FeaturesPadding = std::map<std::string, FeaturePadding, std::less<>>;

namespace detail {
/// The tensors under `key` across a batch of Features (same keys checked by the caller).
inline std::vector<AnyTensor> feature_column(std::span<const Features> items,
                                             std::string_view key) {
  std::vector<AnyTensor> out;
  out.reserve(items.size());
  for (const auto& it : items) {
    out.push_back(it.at(key));
  }
  return out;
}
inline std::string key_set(const Features& f) {
  std::string out = "{";
  for (const auto& [k, v] : f) {
    out += (out.size() > 1 ? ", '" : "'") + k + "'";
  }
  return out + "}";
}
inline void check_same_keys(std::span<const Features> items, const char* op) {
  const Features& first = items.front();
  for (const auto& it : items) {
    bool same = it.size() == first.size();
    for (const auto& [k, v] : first) {
      same = same && it.contains(k);
    }
    if (!same) {
      throw invalid_argument(std::string("tf::data::") + op +
                             ": elements with different keys cannot be batched: " + key_set(first) +
                             " and " + key_set(it));
    }
  }
}
}  // namespace detail

// The members are templates (F is always Features) so that their bodies, and the type-erased
// operations they call, are instantiated only where a pipeline uses Features elements.
/// Element traits of Features: every operation applies per key; a batch is a Features of the
/// stacked tensors.
template <>
struct element_traits<Features> {
  using type = Features;                 ///< the element type
  using batched_type = Features;         ///< a batch: each key's tensors stacked on a new dim 0
  using padding_type = FeaturesPadding;  ///< padded_batch's per-key specification

  /// The common dim 0 of every feature; invalid_argument naming the keys that disagree.
  template <class F = Features>
  static std::int64_t leading_dim(const F& f) {
    if (f.empty()) {
      throw invalid_argument("tf::data: cannot slice a Features element without keys");
    }
    std::int64_t n = -1;
    std::string first_key;
    for (const auto& [key, t] : f) {
      detail::require_any_value(t, ("slice feature '" + key + "'").c_str());
      if (t.rank() == 0) {
        throw invalid_argument("tf::data: cannot slice feature '" + key +
                               "' on dim 0: it is a scalar");
      }
      if (n < 0) {
        n = t.shape()[0];
        first_key = key;
      } else if (t.shape()[0] != n) {
        throw invalid_argument("tf::data::from_tensor_slices: all features need the same dim 0; '" +
                               first_key + "' has " + std::to_string(n) + " but '" + key +
                               "' has " + std::to_string(t.shape()[0]) + " (shape " +
                               t.shape().to_string() + ")");
      }
    }
    return n;
  }
  /// Element `i` along dim 0 of every feature, under the same keys.
  template <class F = Features>
  static F slice(const F& f, std::int64_t i) {
    F out;
    for (const auto& [key, t] : f) {
      out.set(key, detail::any_element<F>::slice_any(t, i));
    }
    return out;
  }
  /// Stacks each key's tensors on a new dim 0 (keys in the first item's order); elements with
  /// different keys, dtypes or shapes are invalid_argument naming the feature.
  template <class F = Features>
  static F stack(std::span<const F> items) {
    detail::check_same_keys(items, "batch");
    F out;
    for (const auto& [key, t] : items.front()) {
      const auto column = detail::feature_column(items, key);
      out.set(key,
              detail::naming_component([&] { return detail::any_element<F>::stack_any(column); },
                                       "feature '" + key + "'"));
    }
    return out;
  }
  /// Pads (per `p`; unlisted keys to the batch maximum with zeros) and stacks each key's
  /// tensors; different keys, a padding for a missing key, or a dtype or rank mismatch are
  /// invalid_argument.
  template <class F = Features>
  static F padded_stack(std::span<const F> items, const FeaturesPadding& p) {
    detail::check_same_keys(items, "padded_batch");
    for (const auto& [key, spec] : p) {
      if (!items.front().contains(key)) {
        throw invalid_argument(
            "tf::data::padded_batch: padding given for key '" + key +
            "', which the elements do not have (keys: " + detail::key_set(items.front()) + ")");
      }
    }
    const FeaturePadding none{};
    F out;
    for (const auto& [key, t] : items.front()) {
      const auto it = p.find(key);
      const FeaturePadding& spec = it == p.end() ? none : it->second;
      const auto column = detail::feature_column(items, key);
      out.set(key, detail::naming_component(
                       [&] {
                         return detail::any_element<F>::padded_stack_any(column, spec.padded_shape,
                                                                         spec.padding_value);
                       },
                       "feature '" + key + "'"));
    }
    return out;
  }
  /// Bytes of the keys plus those of the tensors (strings: lengths plus sizeof(std::string)).
  template <class F = Features>
  static std::size_t byte_size(const F& f) {
    std::size_t n = 0;
    for (const auto& [key, t] : f) {
      n += key.size() + detail::any_element<F>::byte_size_any(t);
    }
    return n;
  }
  /// u64 count, then per feature: u64 key length, key, tensor (detail::any_element::encode_any).
  template <class F = Features>
  static void encode(const F& f, std::string& out) {
    const std::uint64_t n = f.size();
    detail::put_raw(out, &n, sizeof n);
    for (const auto& [key, t] : f) {
      const std::uint64_t len = key.size();
      detail::put_raw(out, &len, sizeof len);
      out.append(key);
      detail::any_element<F>::encode_any(t, out);
    }
  }
  /// Reads one `encode`d Features from the front of `in` and removes it from `in`; data_loss
  /// if the encoding is truncated or corrupt.
  template <class F = Features>
  static F decode(std::string_view& in) {
    std::uint64_t n = 0;
    detail::get_raw(in, &n, sizeof n);
    if (n > in.size()) {
      throw data_loss("tf::data: corrupt Features encoding (" + std::to_string(n) + " keys)");
    }
    F out;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t len = 0;
      detail::get_raw(in, &len, sizeof len);
      if (len > in.size()) {
        throw data_loss("tf::data: truncated key in Features encoding");
      }
      std::string key(in.substr(0, len));
      in.remove_prefix(len);
      out.set(std::move(key), detail::any_element<F>::decode_any(in));
    }
    return out;
  }
};

/// `from_tensor_slices({{"image", images}, {"label", labels}})`: element i is the Features
/// `{"image": images[i], "label": labels[i]}` (TensorFlow: a dict argument). Components with
/// different dim 0 are invalid_argument naming the keys.
/// (A template only so that it costs nothing where unused; F is always Features.)
template <class F = Features>
  requires std::same_as<F, Features>
TensorSliceDataset<F> from_tensor_slices(F features) {
  return TensorSliceDataset<F>(std::move(features));
}
/// `from_tensors({{"image", image}, {"label", label}})`: one Features element.
template <class F = Features>
  requires std::same_as<F, Features>
TensorDataset<F> from_tensors(F features) {
  return TensorDataset<F>(std::move(features));
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
