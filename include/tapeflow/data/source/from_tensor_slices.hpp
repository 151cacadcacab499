// `tf::data::from_tensor_slices(t...)`: one element per index of dim 0 of the given tensors
// (TensorFlow: `tf.data.Dataset.from_tensor_slices`), and `from_tensors(t...)`: one element.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

namespace detail {
template <class... Ts>
struct slices_element {
  using type = std::tuple<decltype(element_traits<Ts>::slice(std::declval<const Ts&>(), 0))...>;
};
template <class T>
struct slices_element<T> {
  using type = decltype(element_traits<T>::slice(std::declval<const T&>(), 0));
};
}  // namespace detail

/// Slices tensors on dim 0: element i is `t[i]` (or a tuple `(t1[i], t2[i], ...)`).
template <class... Ts>
class TensorSliceDataset
    : public DatasetBase<TensorSliceDataset<Ts...>, typename detail::slices_element<Ts...>::type> {
 public:
  /// One slice: `element_traits<T>::slice` of the single input, or a tuple of slices.
  using element_type = typename detail::slices_element<Ts...>::type;

  TensorSliceDataset() = default;  // no elements
  /// Slices `ts...` (sharing their buffers); invalid_argument if their dim 0 sizes differ.
  explicit TensorSliceDataset(Ts... ts) : tensors_(std::move(ts)...) {
    n_ = element_traits<std::tuple_element_t<0, std::tuple<Ts...>>>::leading_dim(
        std::get<0>(tensors_));
    const auto check = [&](const auto& t) {
      const std::int64_t d = element_traits<std::decay_t<decltype(t)>>::leading_dim(t);
      if (d != n_) {
        std::string what = std::to_string(d);
        if constexpr (requires { t.shape(); }) {
          what += " (shape " + t.shape().to_string() + ")";
        }
        throw invalid_argument(
            "tf::data::from_tensor_slices: all tensors need the same dim 0; got " +
            std::to_string(n_) + " and " + what);
      }
    };
    std::apply([&](const auto&... t) { (check(t), ...); }, tensors_);
  }

  struct iterator {
    using element_type = TensorSliceDataset::element_type;
    std::tuple<Ts...> tensors;
    std::int64_t n = 0;
    std::int64_t pos = 0;

    std::optional<element_type> next() {
      if (pos >= n) {
        return std::nullopt;
      }
      const std::int64_t i = pos++;
      if constexpr (sizeof...(Ts) == 1) {
        return element_traits<std::tuple_element_t<0, std::tuple<Ts...>>>::slice(
            std::get<0>(tensors), i);
      } else {
        return std::apply(
            [&](const auto&... t) {
              return element_type{element_traits<std::decay_t<decltype(t)>>::slice(t, i)...};
            },
            tensors);
      }
    }
    void save_state(IteratorState& s, const std::string& prefix) const {
      s.put_int(prefix + "tensor_slices/pos", pos);
    }
    void restore_state(const IteratorState& s, const std::string& prefix) {
      pos = s.get_int(prefix + "tensor_slices/pos");
    }
  };

  /// Starts an epoch at index 0.
  [[nodiscard]] iterator make_iterator() const { return iterator{tensors_, n_, 0}; }
  /// The size of dim 0 (0 if default-constructed).
  [[nodiscard]] std::int64_t cardinality() const noexcept { return n_; }

 private:
  std::tuple<Ts...> tensors_{};  // shared buffers: copying the dataset is cheap
  std::int64_t n_ = 0;
};

/// `tf.data.Dataset.from_tensor_slices((a, b, ...))`: mismatched dim 0 is invalid_argument.
template <class T, class... Ts>
auto from_tensor_slices(T t, Ts... ts) {
  return TensorSliceDataset<T, Ts...>(std::move(t), std::move(ts)...);
}

/// A dataset of exactly one element: the given tensor or tuple (`from_tensors`).
template <class E>
class TensorDataset : public DatasetBase<TensorDataset<E>, E> {
 public:
  TensorDataset() = default;  // no elements
  /// The dataset whose one element is `e`.
  explicit TensorDataset(E e) : e_(std::move(e)), engaged_(true) {}
  struct iterator {
    using element_type = E;
    E e;
    bool done = false;
    std::optional<E> next() {
      if (done) {
        return std::nullopt;
      }
      done = true;
      return e;
    }
    void save_state(IteratorState& s, const std::string& prefix) const {
      s.put_int(prefix + "tensors/done", done ? 1 : 0);
    }
    void restore_state(const IteratorState& s, const std::string& prefix) {
      done = s.get_int(prefix + "tensors/done") != 0;
    }
  };
  /// Starts an epoch (which yields a copy of the element).
  [[nodiscard]] iterator make_iterator() const { return iterator{e_, !engaged_}; }
  /// 1 (0 if default-constructed).
  [[nodiscard]] std::int64_t cardinality() const noexcept { return engaged_ ? 1 : 0; }

 private:
  E e_{};
  bool engaged_ = false;  // false only when default-constructed
};

/// `tf.data.Dataset.from_tensors(t)` / `from_tensors(a, b, ...)` (a tuple element).
template <class T, class... Ts>
auto from_tensors(T t, Ts... ts) {
  if constexpr (sizeof...(Ts) == 0) {
    return TensorDataset<T>(std::move(t));
  } else {
    return TensorDataset<std::tuple<T, Ts...>>(
        std::tuple<T, Ts...>(std::move(t), std::move(ts)...));
  }
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
