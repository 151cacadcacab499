// `ds | tf::data::batch(n, {.drop_remainder})`: stacks n consecutive elements on a new dim 0
// (`Dataset.batch`); the last batch is smaller unless drop_remainder. Also `padded_batch(n)`,
// which pads every dim of every component to the largest in the batch (or to a per-component
// padded shape) with a per-component padding value.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// Options of `batch` (tf.data.Dataset.batch's keyword arguments).
struct BatchOptions {
  bool drop_remainder = false;  ///< drop a last batch smaller than batch_size
};

namespace detail {
inline std::int64_t batched_cardinality(std::int64_t c, std::int64_t n, bool drop) {
  if (c < 0) {
    return c;
  }
  return drop ? c / n : (c + n - 1) / n;
}
inline void check_batch_size(std::int64_t n, const char* op) {
  if (n <= 0) {
    throw invalid_argument(std::string("tf::data::") + op + ": batch_size must be > 0, got " +
                           std::to_string(n));
  }
}
}  // namespace detail

namespace detail {
/// The stacking policy of plain batch: equal shapes only.
template <class E>
struct plain_stack {
  static constexpr const char* name = "batch";
  auto operator()(std::span<const E> items) const { return element_traits<E>::stack(items); }
};
/// The stacking policy of padded_batch: pad every component per its padding spec.
template <class E>
struct padded_stack {
  static constexpr const char* name = "padded_batch";
  padding_t<E> padding{};
  auto operator()(std::span<const E> items) const {
    return element_traits<E>::padded_stack(items, padding);
  }
};
}  // namespace detail

/// `batch` and `padded_batch` (one class: they differ only in how the gathered elements are
/// stacked, the `Stack` policy).
template <dataset D, class Stack = detail::plain_stack<element_t<D>>>
class BatchDataset : public DatasetBase<BatchDataset<D, Stack>,
                                        typename element_traits<element_t<D>>::batched_type> {
  using E = element_t<D>;

 public:
  /// A batch: `element_traits<E>::batched_type` (a tensor gains a leading dim).
  using element_type = typename element_traits<E>::batched_type;
  BatchDataset() = default;
  /// Batches of `n` elements of `ds`, stacked by `stack`; invalid_argument if n <= 0.
  BatchDataset(D ds, std::int64_t n, BatchOptions o, Stack stack = {})
      : ds_(std::move(ds)), n_(n), o_(o), stack_(std::move(stack)) {
    detail::check_batch_size(n, Stack::name);
  }
  struct iterator {
    using element_type = BatchDataset::element_type;
    iterator_impl_t<D> input;
    std::int64_t n;
    BatchOptions o;
    Stack stack;
    std::optional<element_type> next() {
      std::vector<E> items;
      items.reserve(static_cast<std::size_t>(n));
      while (static_cast<std::int64_t>(items.size()) < n) {
        auto e = input.next();
        if (!e) {
          break;
        }
        items.push_back(std::move(*e));
      }
      if (items.empty() || (o.drop_remainder && static_cast<std::int64_t>(items.size()) < n)) {
        return std::nullopt;
      }
      return stack(std::span<const E>(items));
    }
    void save_state(IteratorState& s, const std::string& p) const {
      detail::save_state_of(input, s, p + Stack::name + "/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      detail::restore_state_of(input, s, p + Stack::name + "/");
    }
    void collect_stats(std::vector<StageStats>& out) const { detail::collect_stats_of(input, out); }
  };
  /// Starts an epoch: starts one of `ds` and gathers n of its elements per step.
  [[nodiscard]] iterator make_iterator() const {
    return iterator{ds_.make_iterator(), n_, o_, stack_};
  }
  /// ceil(input / n), or floor with drop_remainder; infinite and unknown stay so.
  [[nodiscard]] std::int64_t cardinality() const {
    return detail::batched_cardinality(ds_.cardinality(), n_, o_.drop_remainder);
  }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] BatchDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &BatchDataset::ds_, f);
  }

 private:
  D ds_;
  std::int64_t n_ = 1;
  BatchOptions o_{};
  Stack stack_{};
};

/// The dataset-first form of `batch` (`batch(ds, 32)`); batch_fn adds the pipeable one.
struct batch_base_fn {
  /// A BatchDataset of `ds` with `batch_size` (> 0, else invalid_argument) elements per batch.
  template <dataset D>
  auto operator()(D&& ds, std::int64_t batch_size, BatchOptions o = {}) const {
    return BatchDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), batch_size, o);
  }
};
/// The type of `batch`: both the dataset-first and the pipeable form.
struct batch_fn : batch_base_fn {
  using batch_base_fn::operator();
  /// A closure batching the dataset piped into it: `ds | batch(32)`.
  auto operator()(std::int64_t batch_size, BatchOptions o = {}) const {
    return ranges::make_view_closure(ranges::bind_back(batch_base_fn{}, batch_size, o));
  }
};
/// `ds | batch(32)`, `batch(ds, 32, {.drop_remainder = true})`.
inline constexpr batch_fn batch{};

// ---- padded_batch ----------------------------------------------------------------------------

/// Options of padded_batch for a dataset of single `Tensor<T, R>` (for tuples and Features,
/// pass a padding spec: see padded_batch).
template <class T, std::size_t R>
struct PaddedBatchOptions {
  bool drop_remainder = false;  ///< drop a last batch smaller than batch_size
  /// Target shape per dim; -1 (default) pads to the largest element in the batch.
  std::optional<std::array<std::int64_t, R>> padded_shapes{};
  T padding_value{};  ///< value of the padded positions (default T{}: 0 or "")
};

/// `padded_batch` over a dataset D: a BatchDataset with the padded stacking policy.
template <dataset D>
using PaddedBatchDataset = BatchDataset<D, detail::padded_stack<element_t<D>>>;

/// Options of padded_batch beside a padding spec (or alone: zero / empty-string padding to
/// the largest element in the batch).
struct PaddedBatchSimpleOptions {
  bool drop_remainder = false;  ///< drop a last batch smaller than batch_size
};

namespace detail {
template <class P>
struct is_padded_batch_options : std::false_type {};
template <class T, std::size_t R>
struct is_padded_batch_options<PaddedBatchOptions<T, R>> : std::true_type {};
template <class P>
concept padding_spec_arg =
    !std::is_arithmetic_v<P> && !is_padded_batch_options<P>::value &&
    !std::is_same_v<P, PaddedBatchSimpleOptions> && !std::is_same_v<P, BatchOptions>;

template <class D, class P>
auto make_padded_batch(D&& ds, std::int64_t n, bool drop, P&& padding) {
  using Ds = std::remove_cvref_t<D>;
  using E = element_t<Ds>;
  static_assert(
      requires { typename element_traits<E>::padding_type; },
      "tf::data::padded_batch: this element type has no padding support "
      "(element_traits<E>::padding_type)");
  static_assert(std::is_convertible_v<P, padding_t<E>>,
                "tf::data::padded_batch: the padding spec does not match the element type: "
                "pass Padding<T, R> for a Tensor<T, R>, a std::tuple of Padding for a tuple "
                "element, FeaturesPadding for Features");
  return PaddedBatchDataset<Ds>(std::forward<D>(ds), n, BatchOptions{.drop_remainder = drop},
                                padded_stack<E>{padding_t<E>(std::forward<P>(padding))});
}
}  // namespace detail

/// The dataset-first form of `padded_batch` (`padded_batch(ds, 4, spec)`); padded_batch_fn
/// adds the pipeable one. Each overload throws invalid_argument if batch_size <= 0.
struct padded_batch_base_fn {
  /// Pads every component with zeros (empty strings) to the largest in the batch.
  template <dataset D>
  auto operator()(D&& ds, std::int64_t batch_size, PaddedBatchSimpleOptions o = {}) const {
    static_assert(
        requires { typename element_traits<element_t<D>>::padding_type; },
        "tf::data::padded_batch: this element type has no padding support "
        "(element_traits<E>::padding_type)");
    return detail::make_padded_batch(std::forward<D>(ds), batch_size, o.drop_remainder,
                                     padding_t<element_t<D>>{});
  }
  /// A dataset of single tensors, with a target shape and a padding value.
  template <dataset D, class T, std::size_t R>
  auto operator()(D&& ds, std::int64_t batch_size, PaddedBatchOptions<T, R> o) const {
    static_assert(std::is_same_v<element_t<D>, Tensor<T, R>>,
                  "tf::data::padded_batch: PaddedBatchOptions<T, R> needs a dataset of "
                  "Tensor<T, R>; for tuples and Features pass a padding spec");
    Padding<T, R> p{};
    if (o.padded_shapes) {
      p.padded_shape = *o.padded_shapes;
    }
    p.padding_value = o.padding_value;
    return detail::make_padded_batch(std::forward<D>(ds), batch_size, o.drop_remainder,
                                     std::move(p));
  }
  /// Any element type, with a padding spec of its `padding_t<E>` (Padding, a tuple of Padding,
  /// FeaturesPadding).
  template <dataset D, detail::padding_spec_arg P>
  auto operator()(D&& ds, std::int64_t batch_size, P padding,
                  PaddedBatchSimpleOptions o = {}) const {
    return detail::make_padded_batch(std::forward<D>(ds), batch_size, o.drop_remainder,
                                     std::move(padding));
  }
};
/// The type of `padded_batch`: both the dataset-first and the pipeable forms.
struct padded_batch_fn : padded_batch_base_fn {
  using padded_batch_base_fn::operator();
  /// A closure padding to the batch maximum with zeros: `ds | padded_batch(4)`.
  auto operator()(std::int64_t batch_size, PaddedBatchSimpleOptions o = {}) const {
    return ranges::make_view_closure(ranges::bind_back(padded_batch_base_fn{}, batch_size, o));
  }
  /// A closure for a dataset of `Tensor<T, R>`, with a target shape and padding value.
  template <class T, std::size_t R>
  auto operator()(std::int64_t batch_size, PaddedBatchOptions<T, R> o) const {
    return ranges::make_view_closure(ranges::bind_back(padded_batch_base_fn{}, batch_size, o));
  }
  /// A closure with a padding spec (`padding_t<E>` of the element type E it will meet).
  template <detail::padding_spec_arg P>
    requires(!dataset<P>)
  auto operator()(std::int64_t batch_size, P padding, PaddedBatchSimpleOptions o = {}) const {
    return ranges::make_view_closure(
        ranges::bind_back(padded_batch_base_fn{}, batch_size, std::move(padding), o));
  }
};
/// `ds | padded_batch(4)`: batches elements whose tensors differ in shape, padding each
/// component to the largest in the batch with zeros (`Dataset.padded_batch`). Per-component
/// shapes and values: `padded_batch(4, spec)` with `spec` a `Padding<T, R>` (one tensor), a
/// `std::tuple`/`std::pair` of them (tuple elements), or a `FeaturesPadding` (Features), and
/// optionally `{.drop_remainder = true}` after it.
///
///     ds | tf::data::padded_batch(2, std::tuple{tf::data::Padding<std::int64_t, 1>{
///                                                   .padded_shape = {5}, .padding_value = -1},
///                                               tf::data::Padding<float, 0>{}})
inline constexpr padded_batch_fn padded_batch{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
