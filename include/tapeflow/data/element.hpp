// `tf::data::element_traits<E>`: what the pipeline needs to know about an element type:
// slicing on dim 0 (from_tensor_slices, unbatch), stacking on a new dim 0 (batch, padded_batch,
// the latter with a per-component `padding_type`), its size in bytes (shuffle byte budgets,
// autotune memory budget) and a byte encoding (cache to file, saved iterator state). Provided
// for `Tensor<T, R>`, `std::tuple<...>` and `std::pair` here, and for the named structure
// `tf::data::Features` in features.hpp.
//
// Customization point: `element_traits<E>` (a trait struct). A user type (e.g. an aggregate of
// tensors) becomes a dataset element by specialising it with the members below:
// `batched_type`, `leading_dim`, `slice`, `stack`, `byte_size`, `encode`, `decode`, and for
// padded_batch `padding_type` and `padded_stack`. Each stage needs only the members it calls.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

template <class E>
struct element_traits;  // primary: undefined

namespace detail {
inline void put_raw(std::string& out, const void* p, std::size_t n) {
  out.append(static_cast<const char*>(p), n);
}
inline void get_raw(std::string_view& in, void* p, std::size_t n) {
  if (in.size() < n) {
    throw data_loss("tf::data: truncated element encoding (need " + std::to_string(n) +
                    " bytes, have " + std::to_string(in.size()) + ")");
  }
  std::memcpy(p, in.data(), n);
  in.remove_prefix(n);
}

/// Copies a row-major block of shape `src_dims` into the leading corner of a block of shape
/// `dst_dims` (same rank, every dst dim >= the src dim), one contiguous row at a time.
template <class T>
void copy_into_padded(const T* src, std::span<const std::int64_t> src_dims, T* dst,
                      std::span<const std::int64_t> dst_dims) {
  const std::size_t r = src_dims.size();
  if (r == 0) {
    *dst = *src;
    return;
  }
  std::int64_t n = 1;
  for (auto d : src_dims) {
    n *= d;
  }
  const std::int64_t row = src_dims[r - 1];
  if (n == 0) {
    return;
  }
  std::array<std::int64_t, max_rank> idx{};  // multi-index over dims [0, r - 1)
  for (std::int64_t k = 0, rows = n / row; k < rows; ++k) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d + 1 < r; ++d) {
      off = off * dst_dims[d] + idx[d];
    }
    std::copy(src + k * row, src + (k + 1) * row, dst + off * dst_dims[r - 1]);
    for (std::size_t d = r - 1; d-- > 0;) {
      if (++idx[d] < src_dims[d]) {
        break;
      }
      idx[d] = 0;
    }
  }
}

/// The padded size of each dim: `target[k]` where >= 0, else the largest `dims_of(item)[k]`.
template <class Items, class DimsOf>
std::vector<std::int64_t> padded_dims(const Items& items, std::span<const std::int64_t> target,
                                      std::size_t rank, DimsOf dims_of) {
  std::vector<std::int64_t> out(rank, 0);
  for (std::size_t k = 0; k < rank; ++k) {
    std::int64_t m = 0;
    for (const auto& it : items) {
      m = std::max(m, dims_of(it)[k]);
    }
    if (k < target.size() && target[k] >= 0) {
      if (target[k] < m) {
        throw invalid_argument("tf::data::padded_batch: padded_shapes dim " + std::to_string(k) +
                               " = " + std::to_string(target[k]) +
                               " is smaller than an element's dim " + std::to_string(m));
      }
      m = target[k];
    }
    out[k] = m;
  }
  return out;
}

template <std::size_t R>
constexpr std::array<std::int64_t, R> unknown_dims() noexcept {
  std::array<std::int64_t, R> a{};
  a.fill(-1);
  return a;
}
}  // namespace detail

/// How `padded_batch` pads one tensor component (TensorFlow: one entry of `padded_shapes`
/// and of `padding_values`): each dim is padded to `padded_shape[k]`, or to the largest in the
/// batch where that is -1 (the default), with `padding_value`.
///
///     ds | tf::data::padded_batch(4, std::tuple{tf::data::Padding<std::int32_t, 1>{
///                                                   .padded_shape = {16}, .padding_value = -1},
///                                               tf::data::Padding<std::int64_t, 0>{}})
template <class T, std::size_t R>
struct Padding {
  /// Target size of each dim; -1 (the default for every dim): the largest in the batch.
  std::array<std::int64_t, R> padded_shape = detail::unknown_dims<R>();
  T padding_value{};  ///< value of the padded positions (default: T{}, 0 or "")
};

/// Element traits of a tensor: slices and stacks on dim 0; its encoding is the dims, then the
/// values (strings length-prefixed).
template <class T, std::size_t R>
struct element_traits<Tensor<T, R>> {
  using type = Tensor<T, R>;              ///< the element type
  using batched_type = Tensor<T, R + 1>;  ///< a batch of elements: one more leading dim

  /// Size of dim 0 (the batch dimension), for slicing.
  static std::int64_t leading_dim(const type& t) {
    static_assert(R > 0, "tf::data: cannot slice a scalar tensor");
    return t.dim(0);
  }
  /// Element `i` along dim 0.
  static auto slice(const type& t, std::int64_t i) {
    static_assert(R > 0, "tf::data: cannot slice a scalar tensor");
    std::array<std::int64_t, R - 1> dims{};
    std::int64_t inner = 1;
    for (std::size_t k = 1; k < R; ++k) {
      dims[k - 1] = t.dim(k);
      inner *= t.dim(k);
    }
    auto out = Tensor<T, R - 1>::uninitialized(dims);
    const T* src = t.data() + i * inner;
    std::copy(src, src + inner, ::tapeflow::detail::tensor_access::mutable_data(out));
    return out;
  }
  /// Stacks equally shaped elements on a new dim 0 (tf.stack); else invalid_argument.
  static batched_type stack(std::span<const type> items) {
    std::array<std::int64_t, R + 1> dims{};
    dims[0] = static_cast<std::int64_t>(items.size());
    const auto& d0 = items.front().dims();
    for (std::size_t k = 0; k < R; ++k) {
      dims[k + 1] = d0[k];
    }
    for (const auto& it : items) {
      if (it.dims() != d0) {
        throw invalid_argument("tf::data::batch: cannot stack elements of shapes " +
                               items.front().shape().to_string() + " and " +
                               it.shape().to_string() + "; use padded_batch");
      }
    }
    auto out = batched_type::uninitialized(dims);
    T* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
    for (const auto& it : items) {
      dst = std::copy(it.data(), it.data() + it.num_elements(), dst);
    }
    return out;
  }
  using padding_type = Padding<T, R>;  ///< padded_batch's specification for this tensor
  /// Stacks elements after padding each dim to `p.padded_shape` (-1: the largest in the
  /// batch) with `p.padding_value`; a padded_shape smaller than an element is invalid_argument.
  static batched_type padded_stack(std::span<const type> items, const padding_type& p) {
    const auto dims_of = [](const type& t) -> const std::array<std::int64_t, R>& {
      return t.dims();
    };
    const auto padded = detail::padded_dims(items, p.padded_shape, R, dims_of);
    std::array<std::int64_t, R + 1> dims{};
    dims[0] = static_cast<std::int64_t>(items.size());
    std::copy(padded.begin(), padded.end(), dims.begin() + 1);
    auto out = batched_type::uninitialized(dims);
    T* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
    std::fill(dst, dst + out.num_elements(), p.padding_value);
    std::int64_t stride = 1;  // elements per padded item
    for (auto d : padded) {
      stride *= d;
    }
    for (std::size_t b = 0; b < items.size(); ++b) {
      detail::copy_into_padded(items[b].data(), std::span<const std::int64_t>(items[b].dims()),
                               dst + static_cast<std::int64_t>(b) * stride,
                               std::span<const std::int64_t>(padded));
    }
    return out;
  }
  /// As above, with the shape as an array and the value separately.
  static batched_type padded_stack(std::span<const type> items,
                                   const std::array<std::int64_t, R>& shape, const T& pad) {
    return padded_stack(items, padding_type{shape, pad});
  }
  /// Bytes of the values (for strings: their lengths plus sizeof(std::string) each).
  static std::size_t byte_size(const type& t) {
    if constexpr (std::is_same_v<T, std::string>) {
      std::size_t n = 0;
      for (const auto& s : t.values()) {
        n += s.size() + sizeof(std::string);
      }
      return n;
    } else {
      return static_cast<std::size_t>(t.num_elements()) * sizeof(T);
    }
  }
  /// Appends the encoding to `out`: the dims (int64 each), then the values in native byte
  /// order (a string as a uint64 length and its bytes). Not portable across byte orders.
  static void encode(const type& t, std::string& out) {
    for (std::size_t k = 0; k < R; ++k) {
      const std::int64_t d = t.dim(k);
      detail::put_raw(out, &d, sizeof d);
    }
    if constexpr (std::is_same_v<T, std::string>) {
      for (const auto& s : t.values()) {
        const std::uint64_t n = s.size();
        detail::put_raw(out, &n, sizeof n);
        out.append(s);
      }
    } else {
      detail::put_raw(out, t.data(), static_cast<std::size_t>(t.num_elements()) * sizeof(T));
    }
  }
  /// Reads one `encode`d tensor from the front of `in` and removes it from `in`; throws
  /// data_loss if `in` is truncated or a dim is negative or above 2^40.
  static type decode(std::string_view& in) {
    std::array<std::int64_t, R> dims{};
    for (std::size_t k = 0; k < R; ++k) {
      detail::get_raw(in, &dims[k], sizeof(std::int64_t));
      if (dims[k] < 0 || dims[k] > (std::int64_t{1} << 40)) {
        throw data_loss("tf::data: corrupt element encoding (dim " + std::to_string(dims[k]) + ")");
      }
    }
    const std::int64_t n = ::tapeflow::detail::product(dims);
    if constexpr (!std::is_same_v<T, std::string>) {
      if (static_cast<std::uint64_t>(n) * sizeof(T) > in.size()) {
        throw data_loss("tf::data: truncated element encoding");
      }
    }
    auto out = type::uninitialized(dims);
    T* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
    if constexpr (std::is_same_v<T, std::string>) {
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint64_t len = 0;
        detail::get_raw(in, &len, sizeof len);
        if (len > in.size()) {
          throw data_loss("tf::data: truncated string in element encoding");
        }
        dst[i].assign(in.data(), len);
        in.remove_prefix(len);
      }
    } else {
      detail::get_raw(in, dst, static_cast<std::size_t>(n) * sizeof(T));
    }
    return out;
  }
};

namespace detail {
/// Marks a component type without padded_batch support (its traits have no padding_type).
struct no_padding {};
template <class E>
struct padding_of {
  using type = no_padding;
};
template <class E>
  requires requires { typename element_traits<E>::padding_type; }
struct padding_of<E> {
  using type = typename element_traits<E>::padding_type;
};
/// Runs `f()` (a padded stack of one component), naming the component in an invalid_argument.
template <class F>
auto naming_component(F&& f, const std::string& component) {
  try {
    return f();
  } catch (const invalid_argument& e) {
    throw invalid_argument(std::string(e.what()) + " (" + component + ")");
  }
}
}  // namespace detail

/// The per-component padding specification of element type E (see Padding).
template <class E>
using padding_t = typename element_traits<E>::padding_type;

/// Element traits of a tuple (TensorFlow: a tuple structure): every operation applies to each
/// component, in order.
template <class... Es>
struct element_traits<std::tuple<Es...>> {
  using type = std::tuple<Es...>;  ///< the element type
  /// A batch: the tuple of the components' batches.
  using batched_type = std::tuple<typename element_traits<Es>::batched_type...>;

  /// Size of dim 0 of the first component (the components should agree).
  static std::int64_t leading_dim(const type& t) {
    return element_traits<std::tuple_element_t<0, type>>::leading_dim(std::get<0>(t));
  }
  /// The tuple of each component's element `i` along dim 0.
  static auto slice(const type& t, std::int64_t i) {
    return std::apply(
        [&](const auto&... c) {
          return std::tuple{element_traits<std::decay_t<decltype(c)>>::slice(c, i)...};
        },
        t);
  }
  /// Copies of component K of every item (a helper of stack and padded_stack).
  template <std::size_t K>
  static auto component(std::span<const type> items) {
    using C = std::tuple_element_t<K, type>;
    std::vector<C> v;
    v.reserve(items.size());
    for (const auto& it : items) {
      v.push_back(std::get<K>(it));
    }
    return v;
  }
  /// Stacks each component separately (see element_traits<Tensor<T, R>>::stack).
  static batched_type stack(std::span<const type> items) {
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return batched_type{element_traits<Es>::stack(std::span<const Es>(component<K>(items)))...};
    }(std::index_sequence_for<Es...>{});
  }
  /// One padding per component (TensorFlow: tuples of padded_shapes and padding_values).
  using padding_type = std::tuple<typename detail::padding_of<Es>::type...>;
  /// Pads and stacks component K with padding `std::get<K>(p)`; an invalid_argument names
  /// the component.
  static batched_type padded_stack(std::span<const type> items, const padding_type& p) {
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return batched_type{detail::naming_component(
          [&] {
            return element_traits<Es>::padded_stack(std::span<const Es>(component<K>(items)),
                                                    std::get<K>(p));
          },
          "tuple component " + std::to_string(K))...};
    }(std::index_sequence_for<Es...>{});
  }
  /// Sum of the components' byte sizes.
  static std::size_t byte_size(const type& t) {
    return std::apply(
        [](const auto&... c) {
          return (std::size_t{0} + ... + element_traits<std::decay_t<decltype(c)>>::byte_size(c));
        },
        t);
  }
  /// Appends the components' encodings to `out`, in order.
  static void encode(const type& t, std::string& out) {
    std::apply(
        [&](const auto&... c) { (element_traits<std::decay_t<decltype(c)>>::encode(c, out), ...); },
        t);
  }
  /// Reads the components' encodings from the front of `in`, in order (data_loss if truncated).
  static type decode(std::string_view& in) {
    // braced init evaluates left to right
    return type{element_traits<Es>::decode(in)...};
  }
};

/// Element traits of a pair (`(features, label)`): as a two-component tuple.
template <class A, class B>
struct element_traits<std::pair<A, B>> {
  using type = std::pair<A, B>;                           ///< the element type
  using tuple_traits = element_traits<std::tuple<A, B>>;  ///< traits of the equivalent tuple
  /// A batch: the pair of the components' batches.
  using batched_type =
      std::pair<typename element_traits<A>::batched_type, typename element_traits<B>::batched_type>;
  /// Size of dim 0 of `first`.
  static std::int64_t leading_dim(const type& t) { return element_traits<A>::leading_dim(t.first); }
  /// The pair of each component's element `i` along dim 0.
  static auto slice(const type& t, std::int64_t i) {
    return std::pair{element_traits<A>::slice(t.first, i), element_traits<B>::slice(t.second, i)};
  }
  /// Stacks `first` and `second` separately.
  static batched_type stack(std::span<const type> items) {
    std::vector<A> a;
    std::vector<B> b;
    for (const auto& it : items) {
      a.push_back(it.first);
      b.push_back(it.second);
    }
    return {element_traits<A>::stack(std::span<const A>(a)),
            element_traits<B>::stack(std::span<const B>(b))};
  }
  /// One padding per component (TensorFlow: pairs of padded_shapes and padding_values).
  using padding_type =
      std::pair<typename detail::padding_of<A>::type, typename detail::padding_of<B>::type>;
  /// Pads and stacks `first` with `p.first` and `second` with `p.second`; an invalid_argument
  /// names the component.
  static batched_type padded_stack(std::span<const type> items, const padding_type& p) {
    std::vector<A> a;
    std::vector<B> b;
    for (const auto& it : items) {
      a.push_back(it.first);
      b.push_back(it.second);
    }
    auto pa = detail::naming_component(
        [&] { return element_traits<A>::padded_stack(std::span<const A>(a), p.first); },
        "pair component 0");
    auto pb = detail::naming_component(
        [&] { return element_traits<B>::padded_stack(std::span<const B>(b), p.second); },
        "pair component 1");
    return {std::move(pa), std::move(pb)};
  }
  /// Sum of the components' byte sizes.
  static std::size_t byte_size(const type& t) {
    return element_traits<A>::byte_size(t.first) + element_traits<B>::byte_size(t.second);
  }
  /// Appends the encodings of `first`, then `second`, to `out`.
  static void encode(const type& t, std::string& out) {
    element_traits<A>::encode(t.first, out);
    element_traits<B>::encode(t.second, out);
  }
  /// Reads `first`, then `second`, from the front of `in` (data_loss if truncated).
  static type decode(std::string_view& in) {
    A a = element_traits<A>::decode(in);
    B b = element_traits<B>::decode(in);
    return {std::move(a), std::move(b)};
  }
};

/// Bytes an element occupies (`sizeof(E)` when its traits have no byte_size).
template <class E>
std::size_t element_byte_size(const E& e) {
  if constexpr (requires { element_traits<E>::byte_size(e); }) {
    return element_traits<E>::byte_size(e);
  } else {
    return sizeof(E);
  }
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
