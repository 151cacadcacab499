// `ds | tf::data::take(n)` (the first n elements; n = -1: all) and `ds | tf::data::skip(n)`
// (all but the first n) (`Dataset.take`, `Dataset.skip`).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// The dataset `take` (Take = true: `Dataset.take`) or `skip` (false: `Dataset.skip`)
/// returns.
template <dataset D, bool Take>
class TakeSkipDataset : public DatasetBase<TakeSkipDataset<D, Take>, element_t<D>> {
 public:
  TakeSkipDataset() = default;
  /// The first `n` elements of `ds` (take; n < 0: all), or all but them (skip; n < 0: none).
  TakeSkipDataset(D ds, std::int64_t n) : ds_(std::move(ds)), n_(n) {}
  struct iterator {
    using element_type = element_t<D>;
    iterator_impl_t<D> input;
    std::int64_t n;
    std::int64_t seen = 0;
    std::optional<element_type> next() {
      if constexpr (Take) {
        if (n >= 0 && seen >= n) {
          return std::nullopt;  // stop without pulling more input
        }
        ++seen;
        return input.next();
      } else {
        while (n < 0 || seen < n) {  // skip(-1) skips everything
          ++seen;
          if (!input.next()) {
            return std::nullopt;
          }
        }
        return input.next();
      }
    }
    void save_state(IteratorState& s, const std::string& p) const {
      s.put_int(p + "take_skip/seen", seen);
      detail::save_state_of(input, s, p + "take_skip/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      seen = s.get_int(p + "take_skip/seen");
      detail::restore_state_of(input, s, p + "take_skip/");
    }
    void collect_stats(std::vector<StageStats>& out) const { detail::collect_stats_of(input, out); }
  };
  /// Starts an epoch of `ds` (take stops without reading past the n-th element).
  [[nodiscard]] iterator make_iterator() const { return iterator{ds_.make_iterator(), n_}; }
  /// take: min(input, n) (n if the input is infinite); skip: max(0, input - n); an unknown
  /// input count stays unknown, and skip keeps an infinite one infinite.
  [[nodiscard]] std::int64_t cardinality() const {
    const std::int64_t c = ds_.cardinality();
    if constexpr (Take) {
      if (n_ < 0) {
        return c;
      }
      if (c == infinite_cardinality) {
        return n_;
      }
      return c < 0 ? c : std::min(c, n_);
    } else {
      if (c < 0) {
        return c;
      }
      return n_ < 0 ? 0 : std::max<std::int64_t>(0, c - n_);
    }
  }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] TakeSkipDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &TakeSkipDataset::ds_, f);
  }

 private:
  D ds_;
  std::int64_t n_ = 0;
};

/// The dataset-first form of `take` and `skip` (`take(ds, n)`); take_skip_fn adds the
/// pipeable one.
template <bool Take>
struct take_skip_base_fn {
  /// A TakeSkipDataset of `ds` taking or skipping `n` elements.
  template <dataset D>
  auto operator()(D&& ds, std::int64_t n) const {
    return TakeSkipDataset<std::remove_cvref_t<D>, Take>(std::forward<D>(ds), n);
  }
};
/// The type of `take` and `skip`: both the dataset-first and the pipeable form.
template <bool Take>
struct take_skip_fn : take_skip_base_fn<Take> {
  using take_skip_base_fn<Take>::operator();
  /// A closure for the dataset piped into it: `ds | take(10)`, `ds | skip(1)`.
  auto operator()(std::int64_t n) const {
    return ranges::make_view_closure(ranges::bind_back(take_skip_base_fn<Take>{}, n));
  }
};
/// `ds | take(n)`: the first n elements (n = -1: all) (`Dataset.take`).
inline constexpr take_skip_fn<true> take{};
/// `ds | skip(n)`: all but the first n elements (n = -1: none) (`Dataset.skip`).
inline constexpr take_skip_fn<false> skip{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
