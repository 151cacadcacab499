// `ds | tf::data::enumerate(start)`: pairs `(i, element)` with i a scalar int64 tensor
// (`Dataset.enumerate`), so `for (auto&& [i, x] : ds | enumerate())`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// The dataset `enumerate` returns (`Dataset.enumerate`): `(index, element)` tuples.
template <dataset D>
class EnumerateDataset
    : public DatasetBase<EnumerateDataset<D>, std::tuple<Tensor<std::int64_t, 0>, element_t<D>>> {
 public:
  /// `(i, element)`, i a scalar int64 tensor.
  using element_type = std::tuple<Tensor<std::int64_t, 0>, element_t<D>>;
  EnumerateDataset() = default;
  /// Numbers the elements of `ds` from `start`.
  EnumerateDataset(D ds, std::int64_t start) : ds_(std::move(ds)), start_(start) {}
  struct iterator {
    using element_type = EnumerateDataset::element_type;
    iterator_impl_t<D> input;
    std::int64_t i;
    std::optional<element_type> next() {
      auto e = input.next();
      if (!e) {
        return std::nullopt;
      }
      return element_type{Tensor<std::int64_t, 0>(i++), std::move(*e)};
    }
    void save_state(IteratorState& s, const std::string& p) const {
      s.put_int(p + "enumerate/i", i);
      detail::save_state_of(input, s, p + "enumerate/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      i = s.get_int(p + "enumerate/i");
      detail::restore_state_of(input, s, p + "enumerate/");
    }
    void collect_stats(std::vector<StageStats>& out) const { detail::collect_stats_of(input, out); }
  };
  /// Starts an epoch of `ds`, counting from `start` again.
  [[nodiscard]] iterator make_iterator() const { return iterator{ds_.make_iterator(), start_}; }
  /// The input's cardinality.
  [[nodiscard]] std::int64_t cardinality() const { return ds_.cardinality(); }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] EnumerateDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &EnumerateDataset::ds_, f);
  }

 private:
  D ds_;
  std::int64_t start_ = 0;
};

/// The dataset-first form of `enumerate` (`enumerate(ds, start)`); enumerate_fn adds the
/// pipeable one.
struct enumerate_base_fn {
  /// An EnumerateDataset of `ds` counting from `start` (default 0).
  template <dataset D>
  auto operator()(D&& ds, std::int64_t start = 0) const {
    return EnumerateDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), start);
  }
};
/// The type of `enumerate`: both the dataset-first and the pipeable form.
struct enumerate_fn : enumerate_base_fn {
  using enumerate_base_fn::operator();
  /// A closure numbering the dataset piped into it: `ds | enumerate()`.
  auto operator()(std::int64_t start = 0) const {
    return ranges::make_view_closure(ranges::bind_back(enumerate_base_fn{}, start));
  }
};
/// `ds | enumerate()`, `enumerate(ds, 1)`: pairs each element with its index.
inline constexpr enumerate_fn enumerate{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
