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

template <dataset D, bool Take>
class TakeSkipDataset : public DatasetBase<TakeSkipDataset<D, Take>, element_t<D>> {
 public:
  TakeSkipDataset() = default;
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
  [[nodiscard]] iterator make_iterator() const { return iterator{ds_.make_iterator(), n_}; }
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

 private:
  D ds_;
  std::int64_t n_ = 0;
};

template <bool Take>
struct take_skip_base_fn {
  template <dataset D>
  auto operator()(D&& ds, std::int64_t n) const {
    return TakeSkipDataset<std::remove_cvref_t<D>, Take>(std::forward<D>(ds), n);
  }
};
template <bool Take>
struct take_skip_fn : take_skip_base_fn<Take> {
  using take_skip_base_fn<Take>::operator();
  auto operator()(std::int64_t n) const {
    return ranges::make_view_closure(ranges::bind_back(take_skip_base_fn<Take>{}, n));
  }
};
inline constexpr take_skip_fn<true> take{};
inline constexpr take_skip_fn<false> skip{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
