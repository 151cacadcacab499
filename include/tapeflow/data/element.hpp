// `tf::data::element_traits<E>`: what the pipeline needs to know about an element type:
// slicing on dim 0 (from_tensor_slices, unbatch), stacking on a new dim 0 (batch, padded_batch),
// its size in bytes (shuffle byte budgets, autotune memory budget) and a byte encoding (cache to
// file, saved iterator state). Provided for `Tensor<T, R>`, `std::tuple<...>` and `std::pair`;
// users may specialise it for their own named structures (customization point).
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
}  // namespace detail

template <class T, std::size_t R>
struct element_traits<Tensor<T, R>> {
  using type = Tensor<T, R>;
  using batched_type = Tensor<T, R + 1>;

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
  /// Stacks elements after padding each dim to the largest (or `shape`, where >= 0) with `pad`.
  static batched_type padded_stack(std::span<const type> items,
                                   const std::array<std::int64_t, R>& shape, const T& pad) {
    std::array<std::int64_t, R + 1> dims{};
    dims[0] = static_cast<std::int64_t>(items.size());
    for (std::size_t k = 0; k < R; ++k) {
      std::int64_t m = 0;
      for (const auto& it : items) {
        m = std::max(m, it.dim(k));
      }
      if (shape[k] >= 0) {
        if (shape[k] < m) {
          throw invalid_argument("tf::data::padded_batch: padded_shapes dim " + std::to_string(k) +
                                 " = " + std::to_string(shape[k]) +
                                 " is smaller than an element's dim " + std::to_string(m));
        }
        m = shape[k];
      }
      dims[k + 1] = m;
    }
    auto out = batched_type::uninitialized(dims);
    T* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
    const std::int64_t per =
        ::tapeflow::detail::product(out.dims()) / std::max<std::int64_t>(dims[0], 1);
    std::fill(dst, dst + out.num_elements(), pad);
    for (std::size_t b = 0; b < items.size(); ++b) {
      const auto& it = items[b];
      const T* src = it.data();
      const std::int64_t n = it.num_elements();
      // copy element by element through a multi-index (ranks are small)
      std::array<std::int64_t, R> idx{};
      for (std::int64_t flat = 0; flat < n; ++flat) {
        std::int64_t off = 0;
        for (std::size_t k = 0; k < R; ++k) {
          off = off * dims[k + 1] + idx[k];
        }
        dst[static_cast<std::int64_t>(b) * per + off] = src[flat];
        for (std::size_t k = R; k-- > 0;) {
          if (++idx[k] < it.dim(k)) {
            break;
          }
          idx[k] = 0;
        }
      }
    }
    return out;
  }
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

template <class... Es>
struct element_traits<std::tuple<Es...>> {
  using type = std::tuple<Es...>;
  using batched_type = std::tuple<typename element_traits<Es>::batched_type...>;

  static std::int64_t leading_dim(const type& t) {
    return element_traits<std::tuple_element_t<0, type>>::leading_dim(std::get<0>(t));
  }
  static auto slice(const type& t, std::int64_t i) {
    return std::apply(
        [&](const auto&... c) {
          return std::tuple{element_traits<std::decay_t<decltype(c)>>::slice(c, i)...};
        },
        t);
  }
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
  static batched_type stack(std::span<const type> items) {
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return batched_type{element_traits<Es>::stack(std::span<const Es>(component<K>(items)))...};
    }(std::index_sequence_for<Es...>{});
  }
  static std::size_t byte_size(const type& t) {
    return std::apply(
        [](const auto&... c) {
          return (std::size_t{0} + ... + element_traits<std::decay_t<decltype(c)>>::byte_size(c));
        },
        t);
  }
  static void encode(const type& t, std::string& out) {
    std::apply(
        [&](const auto&... c) { (element_traits<std::decay_t<decltype(c)>>::encode(c, out), ...); },
        t);
  }
  static type decode(std::string_view& in) {
    // braced init evaluates left to right
    return type{element_traits<Es>::decode(in)...};
  }
};

template <class A, class B>
struct element_traits<std::pair<A, B>> {
  using type = std::pair<A, B>;
  using tuple_traits = element_traits<std::tuple<A, B>>;
  using batched_type =
      std::pair<typename element_traits<A>::batched_type, typename element_traits<B>::batched_type>;
  static std::int64_t leading_dim(const type& t) { return element_traits<A>::leading_dim(t.first); }
  static auto slice(const type& t, std::int64_t i) {
    return std::pair{element_traits<A>::slice(t.first, i), element_traits<B>::slice(t.second, i)};
  }
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
  static std::size_t byte_size(const type& t) {
    return element_traits<A>::byte_size(t.first) + element_traits<B>::byte_size(t.second);
  }
  static void encode(const type& t, std::string& out) {
    element_traits<A>::encode(t.first, out);
    element_traits<B>::encode(t.second, out);
  }
  static type decode(std::string_view& in) {
    A a = element_traits<A>::decode(in);
    B b = element_traits<B>::decode(in);
    return {std::move(a), std::move(b)};
  }
};

/// Bytes an element occupies (0 when the type has no traits).
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
