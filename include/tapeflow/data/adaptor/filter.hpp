// `ds | tf::data::filter(pred)`: keeps the elements for which `pred` returns true (a bool or a
// scalar bool tensor; tuple elements are unpacked into the arguments) (`Dataset.filter`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/detail/box.hpp>
#include <tapeflow/data/detail/invoke.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// The dataset `filter` returns (`Dataset.filter`): the elements of `ds` that `pred` accepts.
template <dataset D, class Pred>
class FilterDataset : public DatasetBase<FilterDataset<D, Pred>, element_t<D>> {
 public:
  FilterDataset() = default;
  /// Keeps the elements of `ds` for which `pred` returns true (a bool or a scalar bool tensor).
  FilterDataset(D ds, Pred pred) : ds_(std::move(ds)), pred_(std::move(pred)) {}
  struct iterator {
    using element_type = element_t<D>;
    iterator_impl_t<D> input;
    Pred pred;
    std::optional<element_type> next() {
      while (auto e = input.next()) {
        if (detail::to_bool(detail::invoke_on_element(pred, std::as_const(*e)))) {
          return e;
        }
      }
      return std::nullopt;
    }
    void save_state(IteratorState& s, const std::string& p) const {
      detail::save_state_of(input, s, p + "filter/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      detail::restore_state_of(input, s, p + "filter/");
    }
    void collect_stats(std::vector<StageStats>& out) const { detail::collect_stats_of(input, out); }
  };
  /// Starts an epoch of `ds`; failed_precondition for a default-constructed FilterDataset (it
  /// has no predicate).
  [[nodiscard]] iterator make_iterator() const {
    return iterator{ds_.make_iterator(), pred_.get("tf::data::filter")};
  }
  /// infinite_cardinality if the input is infinite, else unknown_cardinality.
  [[nodiscard]] std::int64_t cardinality() const {
    return ds_.cardinality() == infinite_cardinality ? infinite_cardinality : unknown_cardinality;
  }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] FilterDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &FilterDataset::ds_, f);
  }

 private:
  D ds_;
  detail::Box<Pred> pred_{};
};

/// The dataset-first form of `filter` (`filter(ds, pred)`); filter_fn adds the pipeable one.
struct filter_base_fn {
  /// A FilterDataset of `ds` with predicate `pred` (tuple elements unpacked into its arguments).
  template <dataset D, class Pred>
  auto operator()(D&& ds, Pred pred) const {
    return FilterDataset<std::remove_cvref_t<D>, Pred>(std::forward<D>(ds), std::move(pred));
  }
};
/// The type of `filter`: both the dataset-first and the pipeable form.
struct filter_fn : filter_base_fn {
  using filter_base_fn::operator();
  /// A closure filtering the dataset piped into it: `ds | filter(pred)`.
  template <class Pred>
    requires(!dataset<Pred>)
  auto operator()(Pred pred) const {
    return ranges::make_view_closure(ranges::bind_back(filter_base_fn{}, std::move(pred)));
  }
};
/// `ds | filter(pred)` or `filter(ds, pred)`.
inline constexpr filter_fn filter{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
