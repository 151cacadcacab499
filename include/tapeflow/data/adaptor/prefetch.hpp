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

struct PrefetchOptions {
  /// Bytes of prefetched elements the autotuner may hold.
  std::int64_t memory_budget = std::int64_t{256} << 20;
};

template <dataset D>
class PrefetchDataset : public DatasetBase<PrefetchDataset<D>, element_t<D>> {
 public:
  using element_type = element_t<D>;
  using stage = detail::ParallelStage<iterator_impl_t<D>, detail::identity_fn, element_type>;

  PrefetchDataset() = default;
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
  [[nodiscard]] std::int64_t cardinality() const { return ds_.cardinality(); }

 private:
  D ds_;
  std::int64_t n_ = 0;  // default-constructed: a pass-through
  PrefetchOptions o_{};
};

struct prefetch_base_fn {
  template <dataset D>
  auto operator()(D&& ds, std::int64_t buffer_size, PrefetchOptions o = {}) const {
    return PrefetchDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), buffer_size, o);
  }
};
struct prefetch_fn : prefetch_base_fn {
  using prefetch_base_fn::operator();
  auto operator()(std::int64_t buffer_size, PrefetchOptions o = {}) const {
    return ranges::make_view_closure(ranges::bind_back(prefetch_base_fn{}, buffer_size, o));
  }
};
/// `ds | prefetch(tf::data::autotune)`, `ds | prefetch(4)`.
inline constexpr prefetch_fn prefetch{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
