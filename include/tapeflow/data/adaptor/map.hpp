// `ds | tf::data::map(f, {.num_parallel_calls, .deterministic})` (`Dataset.map`).
//
// `f` takes the element (a tuple element is unpacked into f's arguments when f does not take the
// tuple) and returns the new element. Without num_parallel_calls, f runs on the consumer's
// thread. With num_parallel_calls = n (or autotune), n worker threads run f and results come out
// in input order unless `.deterministic = false`. An exception thrown by f reaches the consumer
// at that element, naming its position (element_error.hpp); iteration may continue after it.
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
#include <tapeflow/data/detail/box.hpp>
#include <tapeflow/data/detail/element_error.hpp>
#include <tapeflow/data/detail/invoke.hpp>
#include <tapeflow/data/detail/parallel_stage.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// Options of `map` (tf.data.Dataset.map's keyword arguments, plus the autotuner's budget).
struct MapOptions {
  /// None: sequential on the consumer's thread; n >= 1: n threads; autotune: tuned.
  std::optional<int> num_parallel_calls{};
  /// Keep input order (TensorFlow's default). false: elements come out as they finish.
  bool deterministic = true;
  /// Bytes of finished elements the autotuner may buffer.
  std::int64_t memory_budget = std::int64_t{256} << 20;
};

namespace detail {
template <class F, class E>
struct map_caller {
  F f;
  auto operator()(E e) { return invoke_on_element(f, std::move(e)); }
};
}  // namespace detail

/// The dataset `map` returns (`Dataset.map`): `f` applied to each element of `ds`.
template <dataset D, class F>
class MapDataset
    : public DatasetBase<MapDataset<D, F>, detail::invoke_result_on_element_t<F, element_t<D>>> {
 public:
  /// What `f` returns (decayed).
  using element_type = detail::invoke_result_on_element_t<F, element_t<D>>;
  /// Calls `f` on one element, unpacking a tuple element when f does not take the tuple.
  using caller = detail::map_caller<F, element_t<D>>;
  /// The worker threads of the parallel mode (num_parallel_calls set).
  using stage = detail::ParallelStage<iterator_impl_t<D>, caller, element_type>;

  MapDataset() = default;
  /// Maps `ds` through `f`; invalid_argument if num_parallel_calls is set to neither >= 1 nor
  /// autotune.
  MapDataset(D ds, F f, MapOptions o) : ds_(std::move(ds)), f_(std::move(f)), o_(o) {
    if (o.num_parallel_calls && *o.num_parallel_calls != autotune && *o.num_parallel_calls < 1) {
      throw invalid_argument("tf::data::map: num_parallel_calls must be >= 1 or autotune, got " +
                             std::to_string(*o.num_parallel_calls));
    }
  }

  struct iterator {
    using element_type = MapDataset::element_type;
    std::optional<iterator_impl_t<D>> input;  // sequential mode
    std::optional<caller> fn;
    std::unique_ptr<stage> parallel;  // parallel mode
    std::int64_t position = 0;        // of the next element, for error messages

    std::optional<element_type> next() {
      if (parallel) {
        return parallel->next();
      }
      auto e = input->next();
      if (!e) {
        return std::nullopt;
      }
      const std::int64_t at = position++;
      try {
        return (*fn)(std::move(*e));
      } catch (...) {
        std::rethrow_exception(detail::at_element(std::current_exception(), "map", at));
      }
    }
    void save_state(IteratorState& s, const std::string& p) const {
      if (parallel) {
        parallel->save_state(s, p);  // keys "map/buffer", "map/<input>"
        return;
      }
      detail::save_state_of(*input, s, p + "map/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      if (parallel) {
        parallel->restore_state(s, p);
        return;
      }
      detail::restore_state_of(*input, s, p + "map/");
    }
    void collect_stats(std::vector<StageStats>& out) const {
      if (parallel) {
        parallel->collect_stats(out);
      } else {
        detail::collect_stats_of(*input, out);
      }
    }
  };

  /// Starts an epoch of `ds`, with its worker threads if num_parallel_calls is set (n threads
  /// and 2n buffered elements; autotune: tuned up to the hardware threads); failed_precondition
  /// for a default-constructed MapDataset (it has no function).
  [[nodiscard]] iterator make_iterator() const {
    iterator it;
    if (!o_.num_parallel_calls) {
      it.input.emplace(ds_.make_iterator());
      it.fn.emplace(caller{f_.get("tf::data::map")});
      return it;
    }
    detail::StageConfig cfg;
    cfg.name = "map";
    cfg.deterministic = o_.deterministic;
    cfg.memory_budget = o_.memory_budget;
    if (*o_.num_parallel_calls == autotune) {
      cfg.tune_parallelism = true;
      cfg.tune_buffer = true;
      cfg.max_threads = detail::hardware_threads();
      cfg.parallelism = 1;
      cfg.buffer = 2;
    } else {
      cfg.parallelism = cfg.max_threads = *o_.num_parallel_calls;
      cfg.buffer = 2 * *o_.num_parallel_calls;
    }
    it.parallel = std::make_unique<stage>(ds_.make_iterator(), caller{f_.get("tf::data::map")},
                                          std::move(cfg));
    return it;
  }
  /// The input's cardinality.
  [[nodiscard]] std::int64_t cardinality() const { return ds_.cardinality(); }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] MapDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &MapDataset::ds_, f);
  }

 private:
  D ds_;
  detail::Box<F> f_{};
  MapOptions o_{};
};

/// The dataset-first form of `map` (`map(ds, f, o)`); map_fn adds the pipeable one.
struct map_base_fn {
  /// A MapDataset of `ds` through `f`.
  template <dataset D, class F>
  auto operator()(D&& ds, F f, MapOptions o = {}) const {
    return MapDataset<std::remove_cvref_t<D>, F>(std::forward<D>(ds), std::move(f), o);
  }
};
/// The type of `map`: both the dataset-first and the pipeable form.
struct map_fn : map_base_fn {
  using map_base_fn::operator();
  /// A closure mapping the dataset piped into it: `ds | map(f, o)`.
  template <class F>
    requires(!dataset<F>)
  auto operator()(F f, MapOptions o = {}) const {
    return ranges::make_view_closure(ranges::bind_back(map_base_fn{}, std::move(f), o));
  }
};
/// `ds | map(f)`, `ds | map(f, {.num_parallel_calls = tf::data::autotune})`.
inline constexpr map_fn map{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
