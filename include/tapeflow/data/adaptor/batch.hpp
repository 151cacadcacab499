// `ds | tf::data::batch(n, {.drop_remainder})`: stacks n consecutive elements on a new dim 0
// (`Dataset.batch`); the last batch is smaller unless drop_remainder. Also `padded_batch(n)`,
// which pads every dim to the largest in the batch (or to `padded_shapes`) with `padding_value`.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

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

template <dataset D>
class BatchDataset
    : public DatasetBase<BatchDataset<D>, typename element_traits<element_t<D>>::batched_type> {
 public:
  using element_type = typename element_traits<element_t<D>>::batched_type;
  BatchDataset(D ds, std::int64_t n, BatchOptions o) : ds_(std::move(ds)), n_(n), o_(o) {
    detail::check_batch_size(n, "batch");
  }
  struct iterator {
    using element_type = BatchDataset::element_type;
    iterator_impl_t<D> input;
    std::int64_t n;
    BatchOptions o;
    std::optional<element_type> next() {
      std::vector<element_t<D>> items;
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
      return element_traits<element_t<D>>::stack(std::span<const element_t<D>>(items));
    }
    void save_state(IteratorState& s, const std::string& p) const {
      detail::save_state_of(input, s, p + "batch/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      detail::restore_state_of(input, s, p + "batch/");
    }
    void collect_stats(std::vector<StageStats>& out) const { detail::collect_stats_of(input, out); }
  };
  [[nodiscard]] iterator make_iterator() const { return iterator{ds_.make_iterator(), n_, o_}; }
  [[nodiscard]] std::int64_t cardinality() const {
    return detail::batched_cardinality(ds_.cardinality(), n_, o_.drop_remainder);
  }

 private:
  D ds_;
  std::int64_t n_;
  BatchOptions o_;
};

struct batch_fn {
  template <dataset D>
  auto operator()(D&& ds, std::int64_t batch_size, BatchOptions o = {}) const {
    return BatchDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), batch_size, o);
  }
  auto operator()(std::int64_t batch_size, BatchOptions o = {}) const {
    return make_closure(
        [=]<class D>(D&& ds) { return batch_fn{}(std::forward<D>(ds), batch_size, o); });
  }
};
/// `ds | batch(32)`, `batch(ds, 32, {.drop_remainder = true})`.
inline constexpr batch_fn batch{};

// ---- padded_batch ----------------------------------------------------------------------------

template <class T, std::size_t R>
struct PaddedBatchOptions {
  bool drop_remainder = false;
  /// Target shape per dim; -1 (default) pads to the largest element in the batch.
  std::optional<std::array<std::int64_t, R>> padded_shapes{};
  T padding_value{};
};

template <dataset D>
class PaddedBatchDataset;

template <dataset D>
  requires is_tensor<element_t<D>>::value
class PaddedBatchDataset<D>
    : public DatasetBase<PaddedBatchDataset<D>,
                         typename element_traits<element_t<D>>::batched_type> {
  using E = element_t<D>;
  using T = typename E::value_type;
  static constexpr std::size_t R = E::rank_v;

 public:
  using element_type = typename element_traits<E>::batched_type;
  using options_type = PaddedBatchOptions<T, R>;
  PaddedBatchDataset(D ds, std::int64_t n, options_type o) : ds_(std::move(ds)), n_(n), o_(o) {
    detail::check_batch_size(n, "padded_batch");
  }
  struct iterator {
    using element_type = PaddedBatchDataset::element_type;
    iterator_impl_t<D> input;
    std::int64_t n;
    options_type o;
    std::optional<element_type> next() {
      std::vector<E> items;
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
      std::array<std::int64_t, R> shape{};
      shape.fill(-1);
      if (o.padded_shapes) {
        shape = *o.padded_shapes;
      }
      return element_traits<E>::padded_stack(std::span<const E>(items), shape, o.padding_value);
    }
    void save_state(IteratorState& s, const std::string& p) const {
      detail::save_state_of(input, s, p + "padded_batch/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      detail::restore_state_of(input, s, p + "padded_batch/");
    }
    void collect_stats(std::vector<StageStats>& out) const { detail::collect_stats_of(input, out); }
  };
  [[nodiscard]] iterator make_iterator() const { return iterator{ds_.make_iterator(), n_, o_}; }
  [[nodiscard]] std::int64_t cardinality() const {
    return detail::batched_cardinality(ds_.cardinality(), n_, o_.drop_remainder);
  }

 private:
  D ds_;
  std::int64_t n_;
  options_type o_;
};

/// Options of padded_batch without a typed padding value (zero / empty string padding).
struct PaddedBatchSimpleOptions {
  bool drop_remainder = false;
};

struct padded_batch_fn {
  template <dataset D>
  auto operator()(D&& ds, std::int64_t batch_size, PaddedBatchSimpleOptions o = {}) const {
    using P = PaddedBatchDataset<std::remove_cvref_t<D>>;
    typename P::options_type po{};
    po.drop_remainder = o.drop_remainder;
    return P(std::forward<D>(ds), batch_size, po);
  }
  template <dataset D, class T, std::size_t R>
  auto operator()(D&& ds, std::int64_t batch_size, PaddedBatchOptions<T, R> o) const {
    return PaddedBatchDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), batch_size, o);
  }
  auto operator()(std::int64_t batch_size, PaddedBatchSimpleOptions o = {}) const {
    return make_closure(
        [=]<class D>(D&& ds) { return padded_batch_fn{}(std::forward<D>(ds), batch_size, o); });
  }
  template <class T, std::size_t R>
  auto operator()(std::int64_t batch_size, PaddedBatchOptions<T, R> o) const {
    return make_closure(
        [=]<class D>(D&& ds) { return padded_batch_fn{}(std::forward<D>(ds), batch_size, o); });
  }
};
/// `ds | padded_batch(4)`: batches tensors of different shapes, padding with zeros
/// (`Dataset.padded_batch`). Elements must be single tensors.
inline constexpr padded_batch_fn padded_batch{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
