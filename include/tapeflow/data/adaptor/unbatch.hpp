// `ds | tf::data::unbatch()`: splits each element along dim 0 into separate elements
// (`Dataset.unbatch`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <range/v3/view/view.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// The dataset `unbatch` returns (`Dataset.unbatch`): each element of `ds` split along dim 0.
template <dataset D>
class UnbatchDataset
    : public DatasetBase<UnbatchDataset<D>, decltype(element_traits<element_t<D>>::slice(
                                                std::declval<const element_t<D>&>(), 0))> {
 public:
  /// One slice of an input element (a tensor loses its leading dim).
  using element_type =
      decltype(element_traits<element_t<D>>::slice(std::declval<const element_t<D>&>(), 0));
  UnbatchDataset() = default;
  /// Unbatches the elements of `ds`.
  explicit UnbatchDataset(D ds) : ds_(std::move(ds)) {}
  struct iterator {
    using element_type = UnbatchDataset::element_type;
    iterator_impl_t<D> input;
    std::optional<element_t<D>> current{};
    std::int64_t pos = 0, n = 0;
    std::optional<element_type> next() {
      while (pos >= n) {
        current = input.next();
        if (!current) {
          return std::nullopt;
        }
        pos = 0;
        n = element_traits<element_t<D>>::leading_dim(*current);
      }
      return element_traits<element_t<D>>::slice(*current, pos++);
    }
    /// Saves the position inside the current input element and that element itself (the
    /// input is already past it).
    void save_state(IteratorState& s, const std::string& p) const {
      s.put_int(p + "unbatch/pos", pos);
      s.put_int(p + "unbatch/n", n);
      std::string cur;
      if (current) {
        element_traits<element_t<D>>::encode(*current, cur);
      }
      s.put_int(p + "unbatch/has_current", current ? 1 : 0);
      s.put(p + "unbatch/current", std::move(cur));
      detail::save_state_of(input, s, p + "unbatch/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      pos = s.get_int(p + "unbatch/pos");
      n = s.get_int(p + "unbatch/n");
      current.reset();
      if (s.get_int(p + "unbatch/has_current") != 0) {
        std::string_view in = s.get(p + "unbatch/current");
        current.emplace(element_traits<element_t<D>>::decode(in));
      }
      const bool consistent =
          current ? element_traits<element_t<D>>::leading_dim(*current) == n && pos >= 0 && pos <= n
                  : pos >= n;
      if (!consistent) {
        throw data_loss("tf::data::unbatch: inconsistent saved state (position " +
                        std::to_string(pos) + " of " + std::to_string(n) + ")");
      }
      detail::restore_state_of(input, s, p + "unbatch/");
    }
    void collect_stats(std::vector<StageStats>& out) const { detail::collect_stats_of(input, out); }
  };
  /// Starts an epoch of `ds`.
  [[nodiscard]] iterator make_iterator() const { return iterator{ds_.make_iterator()}; }
  /// infinite_cardinality if the input is infinite, else unknown_cardinality.
  [[nodiscard]] std::int64_t cardinality() const {
    return ds_.cardinality() == infinite_cardinality ? infinite_cardinality : unknown_cardinality;
  }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] UnbatchDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &UnbatchDataset::ds_, f);
  }

 private:
  D ds_;
};

/// The dataset-first form of `unbatch` (`unbatch(ds)`); unbatch_fn adds the pipeable one.
struct unbatch_base_fn {
  /// An UnbatchDataset of `ds`.
  template <dataset D>
  auto operator()(D&& ds) const {
    return UnbatchDataset<std::remove_cvref_t<D>>(std::forward<D>(ds));
  }
};
/// The type of `unbatch`: both the dataset-first and the pipeable form.
struct unbatch_fn : unbatch_base_fn {
  using unbatch_base_fn::operator();
  /// Nothing to bind: the closure is the base function itself.
  auto operator()() const { return ranges::make_view_closure(unbatch_base_fn{}); }
};
/// `ds | unbatch()`, `unbatch(ds)`.
inline constexpr unbatch_fn unbatch{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
