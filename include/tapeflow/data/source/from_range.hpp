// `tf::data::from_range(r)`: the elements of any C++20 input range as a dataset, the other
// direction of "datasets are ranges" (MAINTAINERS.md, "Datasets are views"). The C++ cousin of
// `tf.data.Dataset.from_generator` for data that is already a range:
//
//     std::vector<float> xs{1, 2, 3};
//     auto a = tf::data::from_range(xs);  // Tensor<float, 0> elements
//     auto b = tf::data::from_range(std::views::iota(0, 100) | std::views::transform(f));
//
// Elements: tensors, tuples and pairs of tensors, `Features` (and any type with
// `element_traits`) pass through; values of a tensor element type (float, double, int32_t,
// int64_t, uint8_t, bool, std::string) become scalar tensors, also as tuple or pair components;
// other integers become int32 (signed, at most 32 bits) or int64 scalars (std::size_t from an
// enumerate, long long, unsigned), by static_cast.
//
// Ownership follows std::views::all: an lvalue range is referred to (it must outlive the dataset
// and its epochs), an rvalue container is moved into the dataset and shared by its copies (so
// copying the dataset stays cheap), a view is kept by value.
//
// Epochs: a std::ranges::forward_range is re-iterable; each epoch starts again from its begin().
// A single-pass input range (an istream view, a generator) can be iterated once, as a Python
// generator can: the dataset's copies share it, and starting a second epoch throws
// failed_precondition (TensorFlow's from_generator rule; to iterate such data again, put
// `| tf::data::cache()` after it, or use from_generator with a factory that makes a new range
// each epoch). Iterator state: a forward range saves the number of elements read and restores
// by advancing a fresh iterator that far (O(1) for random-access ranges); a single-pass range
// refuses with failed_precondition, as from_generator does.
//
// Cardinality: the size of a sized range; infinite_cardinality when the sentinel is
// std::unreachable_sentinel_t (an unbounded std::views::iota); unknown_cardinality otherwise.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <ranges>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/data/features.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

namespace detail {

/// The dataset element for a range value T, and the conversion to it. The primary template
/// passes through types that have element_traits (user element types) and marks the rest as
/// unsupported (`type` = void).
template <class T>
struct from_range_element {
  static constexpr bool supported = requires { sizeof(element_traits<T>); };
  using type = std::conditional_t<supported, T, void>;
  static T convert(T v) { return v; }
};
template <class T>
  requires ::tapeflow::element_type<T>
struct from_range_element<T> {
  static constexpr bool supported = true;
  using type = Tensor<T, 0>;
  static type convert(T v) { return type(std::move(v)); }
};
/// Character types are text, not numbers: no conversion.
template <class T>
concept character = std::same_as<T, char> || std::same_as<T, wchar_t> || std::same_as<T, char8_t> ||
                    std::same_as<T, char16_t> || std::same_as<T, char32_t>;
/// Other integers (std::size_t from an enumerate, long long, short, unsigned) become int32 when
/// signed and at most 32 bits wide, else int64 (as TensorFlow turns Python ints into int64), by
/// static_cast: an unsigned value above INT64_MAX wraps.
template <std::integral T>
  requires(!::tapeflow::element_type<T> && !character<T>)
struct from_range_element<T> {
  static constexpr bool supported = true;
  using U = std::conditional_t<std::is_signed_v<T> && sizeof(T) <= 4, std::int32_t, std::int64_t>;
  using type = Tensor<U, 0>;
  static type convert(T v) { return type(static_cast<U>(v)); }
};
template <class T, std::size_t R>
struct from_range_element<Tensor<T, R>> {
  static constexpr bool supported = true;
  using type = Tensor<T, R>;
  static type convert(Tensor<T, R> v) { return v; }
};
template <>
struct from_range_element<Features> {
  static constexpr bool supported = true;
  using type = Features;
  static type convert(Features v) { return v; }
};
template <class... Ts>
struct from_range_element<std::tuple<Ts...>> {
  static constexpr bool supported = (from_range_element<std::remove_cv_t<Ts>>::supported && ...);
  using type = std::tuple<typename from_range_element<std::remove_cv_t<Ts>>::type...>;
  static type convert(std::tuple<Ts...> v) {
    return std::apply(
        [](auto&&... c) {
          return type{from_range_element<std::remove_cvref_t<decltype(c)>>::convert(
              std::forward<decltype(c)>(c))...};
        },
        std::move(v));
  }
};
template <class A, class B>
struct from_range_element<std::pair<A, B>> {
  using EA = from_range_element<std::remove_cv_t<A>>;
  using EB = from_range_element<std::remove_cv_t<B>>;
  static constexpr bool supported = EA::supported && EB::supported;
  using type = std::pair<typename EA::type, typename EB::type>;
  static type convert(std::pair<A, B> v) {
    return type{EA::convert(std::move(v.first)), EB::convert(std::move(v.second))};
  }
};

/// An rvalue range moved into a dataset, shared by the dataset's copies: a copyable view over
/// it (std::ranges::owning_view is move-only, and datasets must be copyable).
template <class R>
class SharedRange : public std::ranges::view_interface<SharedRange<R>> {
 public:
  SharedRange() = default;
  explicit SharedRange(R&& r) : r_(std::make_shared<R>(std::move(r))) {}
  auto begin() const {
    if constexpr (std::ranges::range<const R>) {
      return std::ranges::begin(std::as_const(*r_));
    } else {
      return std::ranges::begin(*r_);  // e.g. a move-only generator: iterated once anyway
    }
  }
  auto end() const {
    if constexpr (std::ranges::range<const R>) {
      return std::ranges::end(std::as_const(*r_));
    } else {
      return std::ranges::end(*r_);
    }
  }
  auto size() const
    requires std::ranges::sized_range<const R>
  {
    return std::ranges::size(*r_);
  }

 private:
  std::shared_ptr<R> r_;
};

/// std::views::all's ownership rules, with a copyable result: views by value, lvalues by
/// reference, rvalue containers (and move-only views) shared.
template <class R>
auto as_copyable_view(R&& r) {
  using T = std::remove_cvref_t<R>;
  if constexpr (std::ranges::view<T> && std::copy_constructible<T>) {
    return T(std::forward<R>(r));
  } else if constexpr (std::is_lvalue_reference_v<R>) {
    return std::ranges::ref_view<std::remove_reference_t<R>>(r);
  } else {
    return SharedRange<T>(std::move(r));
  }
}

}  // namespace detail

/// The dataset of `from_range(r)`; V is a copyable view (see detail::as_copyable_view).
template <std::ranges::view V>
  requires std::ranges::input_range<V> && std::copy_constructible<V>
class FromRangeDataset
    : public DatasetBase<FromRangeDataset<V>,
                         typename detail::from_range_element<std::ranges::range_value_t<V>>::type> {
  using Conv = detail::from_range_element<std::ranges::range_value_t<V>>;
  /// Multi-pass: each epoch iterates from begin(). Single-pass: one epoch, ever.
  static constexpr bool multi_pass = std::ranges::forward_range<V>;
  /// Epochs may iterate the one shared view when it is const-iterable (no per-epoch copy).
  static constexpr bool shared_const = multi_pass && std::ranges::forward_range<const V>;
  using Range = std::conditional_t<shared_const, const V, V>;
  using It = std::ranges::iterator_t<Range>;
  using Sent = std::ranges::sentinel_t<Range>;

  struct State {
    explicit State(V v) : view(std::move(v)) {}
    V view;
    std::atomic<bool> started{false};  // single-pass: an epoch has begun
  };

 public:
  /// The range's value type, or its scalar tensor where it is a number or a string.
  using element_type = typename Conv::type;

  FromRangeDataset() = default;  // no elements
  /// A dataset of the elements of `v`, which its copies share.
  explicit FromRangeDataset(V v) : state_(std::make_shared<State>(std::move(v))) {}

  struct iterator {
    using element_type = FromRangeDataset::element_type;
    std::shared_ptr<State> state{};  // keeps the view (and what it owns) alive
    std::unique_ptr<V> own{};        // this epoch's copy, when V is not const-iterable
    std::optional<It> it{};
    std::optional<Sent> end{};
    std::int64_t pos = 0;  // elements read (the saved position)

    std::optional<element_type> next() {
      if (!it || *it == *end) {
        return std::nullopt;
      }
      element_type e = Conv::convert(std::ranges::range_value_t<V>(**it));
      ++*it;
      ++pos;
      return e;
    }
    void start() {
      Range& r = range();
      it.emplace(std::ranges::begin(r));
      end.emplace(std::ranges::end(r));
      pos = 0;
    }
    Range& range() {
      if constexpr (shared_const) {
        return std::as_const(state->view);
      } else if constexpr (multi_pass) {
        return *own;
      } else {
        return state->view;
      }
    }
    void save_state(IteratorState& s, const std::string& p) const {
      if constexpr (multi_pass) {
        s.put_int(p + "from_range/pos", pos);
      } else {
        throw failed_precondition(
            "tf::data::from_range: the iterator state of a single-pass input range cannot be "
            "saved (" +
            p +
            "from_range): its position lives inside the range, which cannot be read again; use "
            "a forward range or save after a cache() stage has recorded the data");
      }
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      if constexpr (multi_pass) {
        const std::int64_t n = s.get_int(p + "from_range/pos");
        if (state) {
          if constexpr (!shared_const) {
            own = std::make_unique<V>(state->view);
          }
          start();
        }
        if (n < 0 || (n > 0 && (!state ||
                                std::ranges::advance(
                                    *it, static_cast<std::iter_difference_t<It>>(n), *end) != 0))) {
          throw data_loss("tf::data::from_range: saved position " + std::to_string(n) +
                          " is outside the range (" + p +
                          "from_range); was the state saved from another pipeline?");
        }
        pos = n;
      } else {
        throw failed_precondition(
            "tf::data::from_range: the iterator state of a single-pass input range cannot be "
            "restored (" +
            p + "from_range)");
      }
    }
  };

  /// Starts an epoch from the range's begin(); for a single-pass range, a second epoch throws
  /// failed_precondition.
  [[nodiscard]] iterator make_iterator() const {
    iterator i;
    if (!state_) {
      return i;
    }
    if constexpr (!multi_pass) {
      if (state_->started.exchange(true)) {
        throw failed_precondition(
            "tf::data::from_range: the range is a single-pass input range (not a "
            "std::ranges::forward_range) and an epoch of it has already started, so it cannot "
            "be iterated again (as a Python generator); iterate it once, put "
            "`| tf::data::cache()` after it to replay the first complete epoch, or use "
            "tf::data::from_generator with a factory that makes a new range per epoch");
      }
    }
    i.state = state_;
    if constexpr (multi_pass && !shared_const) {
      i.own = std::make_unique<V>(state_->view);
    }
    i.start();
    return i;
  }
  /// The size of a sized range; infinite for an unreachable_sentinel_t end; else unknown (0 if
  /// default-constructed).
  [[nodiscard]] std::int64_t cardinality() const {
    if (!state_) {
      return 0;
    }
    if constexpr (std::ranges::sized_range<const V>) {
      return static_cast<std::int64_t>(std::ranges::size(state_->view));
    } else if constexpr (std::same_as<std::ranges::sentinel_t<V>, std::unreachable_sentinel_t>) {
      return infinite_cardinality;
    } else {
      return unknown_cardinality;
    }
  }

 private:
  std::shared_ptr<State> state_{};  // null: default-constructed, empty
};

/// `tf::data::from_range(r)`: a dataset of the elements of the input range r (see the top of
/// this file for element types, ownership, single-pass ranges and iterator state). A dataset
/// passed as r is returned as it is (it is re-iterable although it is an input range).
template <std::ranges::input_range R>
auto from_range(R&& r) {
  using V = decltype(detail::as_copyable_view(std::forward<R>(r)));
  if constexpr (dataset<R>) {
    return std::remove_cvref_t<R>(std::forward<R>(r));
  } else if constexpr (!detail::from_range_element<std::ranges::range_value_t<V>>::supported) {
    static_assert(detail::from_range_element<std::ranges::range_value_t<V>>::supported,
                  "tf::data::from_range: the range's elements must be tensors, tuples or pairs "
                  "of tensors, tf::data::Features, or numbers and strings (float, double, "
                  "integers, bool, std::string), which become scalar tensors; specialise "
                  "tf::data::element_traits for other element types");
  } else {
    return FromRangeDataset<V>(detail::as_copyable_view(std::forward<R>(r)));
  }
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
