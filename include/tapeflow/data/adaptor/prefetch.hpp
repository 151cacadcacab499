// `ds | tf::data::prefetch(n)`: runs the upstream pipeline on a background thread, keeping up
// to n elements ready (`Dataset.prefetch`); `prefetch(autotune)` sizes the buffer from measured
// producer/consumer rates within a memory budget (see detail/parallel_stage.hpp, Note
// [Autotune]); the iterator's `stats()` reports the choice and the input-bound fraction.
// Exceptions from upstream reach the consumer at their element. The thread starts with the
// epoch's first element and is joined when the iterator is destroyed (e.g. `break`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/detail/parallel_stage.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// Options of `prefetch` beside the buffer size (the autotuner's budget).
struct PrefetchOptions {
  /// Bytes of prefetched elements the autotuner may hold.
  std::int64_t memory_budget = std::int64_t{256} << 20;
};

/// The dataset `prefetch` returns (`Dataset.prefetch`): `ds`, read ahead on a background
/// thread.
template <dataset D>
class PrefetchDataset : public DatasetBase<PrefetchDataset<D>, element_t<D>> {
 public:
  using element_type = element_t<D>;  ///< the input's element type
  /// The background thread and its buffer.
  using stage = detail::ParallelStage<iterator_impl_t<D>, detail::identity_fn, element_type>;

  PrefetchDataset() = default;
  /// Prefetches up to `n` elements of `ds` (0: none, a pass-through; autotune: tuned within
  /// `o.memory_budget`); invalid_argument for any other negative n.
  PrefetchDataset(D ds, std::int64_t n, PrefetchOptions o) : ds_(std::move(ds)), n_(n), o_(o) {
    if (n < 0 && n != autotune) {
      throw invalid_argument("tf::data::prefetch: buffer_size must be >= 0 or autotune");
    }
  }
  struct iterator {
    using element_type = PrefetchDataset::element_type;
    std::optional<iterator_impl_t<D>> input;  // prefetch(0): pass-through
    std::unique_ptr<stage> parallel;
    std::optional<element_type> next() { return parallel ? parallel->next() : input->next(); }
    void save_state(IteratorState& s, const std::string& p) const {
      if (parallel) {
        parallel->save_state(s, p);  // keys "prefetch/buffer", "prefetch/<input>"
      } else {
        detail::save_state_of(*input, s, p + "prefetch/");
      }
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      if (parallel) {
        parallel->restore_state(s, p);
      } else {
        detail::restore_state_of(*input, s, p + "prefetch/");
      }
    }
    void collect_stats(std::vector<StageStats>& out) const {
      if (parallel) {
        parallel->collect_stats(out);
      } else {
        detail::collect_stats_of(*input, out);
      }
    }
  };
  /// Starts an epoch of `ds` and, unless n is 0, its background thread.
  [[nodiscard]] iterator make_iterator() const {
    iterator it;
    if (n_ == 0) {
      it.input.emplace(ds_.make_iterator());
      return it;
    }
    detail::StageConfig cfg;
    cfg.name = "prefetch";
    cfg.memory_budget = o_.memory_budget;
    cfg.parallelism = cfg.max_threads = 1;
    cfg.tune_buffer = n_ == autotune;
    cfg.buffer = n_ == autotune ? 2 : static_cast<int>(n_);
    it.parallel = std::make_unique<stage>(ds_.make_iterator(), detail::identity_fn{}, cfg);
    return it;
  }
  /// The input's cardinality.
  [[nodiscard]] std::int64_t cardinality() const { return ds_.cardinality(); }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] PrefetchDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &PrefetchDataset::ds_, f);
  }

 private:
  D ds_;
  std::int64_t n_ = 0;  // default-constructed: a pass-through
  PrefetchOptions o_{};
};

/// The dataset-first form of `prefetch` (`prefetch(ds, n)`); prefetch_fn adds the pipeable
/// one.
struct prefetch_base_fn {
  /// A PrefetchDataset of `ds` buffering `buffer_size` elements (>= 0, or autotune).
  template <dataset D>
  auto operator()(D&& ds, std::int64_t buffer_size, PrefetchOptions o = {}) const {
    return PrefetchDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), buffer_size, o);
  }
};
/// The type of `prefetch`: both the dataset-first and the pipeable form.
struct prefetch_fn : prefetch_base_fn {
  using prefetch_base_fn::operator();
  /// A closure prefetching the dataset piped into it: `ds | prefetch(autotune)`.
  auto operator()(std::int64_t buffer_size, PrefetchOptions o = {}) const {
    return ranges::make_view_closure(ranges::bind_back(prefetch_base_fn{}, buffer_size, o));
  }
};
/// `ds | prefetch(tf::data::autotune)`, `ds | prefetch(4)`.
inline constexpr prefetch_fn prefetch{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
