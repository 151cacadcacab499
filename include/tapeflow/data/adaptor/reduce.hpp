// `tf::data::reduce(ds, init, f)` / `ds | reduce(init, f)`: folds one epoch into a value,
// `state = f(state, element)` (`Dataset.reduce`). Tuple elements are passed as one argument.
#pragma once

#include <utility>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/functional/pipeable.hpp>

#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// The dataset-first form of `reduce` (`reduce(ds, init, f)`); reduce_fn adds the pipeable
/// one.
struct reduce_base_fn {
  /// Runs one epoch of `ds`, folding each element into `state = f(std::move(state), element)`
  /// from `init`; returns the final state (`init` for an empty dataset).
  template <dataset D, class S, class F>
  S operator()(const D& ds, S init, F f) const {
    auto it = ds.make_iterator();
    while (auto e = it.next()) {
      init = f(std::move(init), std::move(*e));
    }
    return init;
  }
};
/// The type of `reduce`: both the dataset-first and the pipeable form.
struct reduce_fn : reduce_base_fn {
  using reduce_base_fn::operator();
  /// A value, not a view: pipeable (range-v3's make_pipeable) rather than a view closure.
  template <class S, class F>
    requires(!dataset<S>)
  auto operator()(S init, F f) const {
    return ranges::make_pipeable(
        ranges::bind_back(reduce_base_fn{}, std::move(init), std::move(f)));
  }
};
/// `reduce(ds, init, f)`, `ds | reduce(init, f)` (`Dataset.reduce`): a value, not a dataset.
inline constexpr reduce_fn reduce{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
