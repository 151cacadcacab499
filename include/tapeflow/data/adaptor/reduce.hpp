// `tf::data::reduce(ds, init, f)` / `ds | reduce(init, f)`: folds one epoch into a value,
// `state = f(state, element)` (`Dataset.reduce`). Tuple elements are passed as one argument.
#pragma once

#include <utility>

#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

struct reduce_fn {
  template <dataset D, class S, class F>
  S operator()(const D& ds, S init, F f) const {
    auto it = ds.make_iterator();
    while (auto e = it.next()) {
      init = f(std::move(init), std::move(*e));
    }
    return init;
  }
  template <class S, class F>
    requires(!dataset<S>)
  auto operator()(S init, F f) const {
    return make_closure([init = std::move(init), f = std::move(f)]<class D>(const D& ds) {
      return reduce_fn{}(ds, init, f);
    });
  }
};
inline constexpr reduce_fn reduce{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
