// `ds | tf::data::repeat(count)`: the dataset `count` times, each repetition a new epoch of the
// input (so shuffles reshuffle); `repeat()` repeats forever (`Dataset.repeat`).
#pragma once

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

/// The dataset `repeat` returns (`Dataset.repeat`): `count` epochs of `ds` in a row.
template <dataset D>
class RepeatDataset : public DatasetBase<RepeatDataset<D>, element_t<D>> {
 public:
  RepeatDataset() = default;
  /// Repeats `ds` `count` times; count < 0: forever (but an empty `ds` stays empty).
  RepeatDataset(D ds, std::int64_t count) : ds_(std::move(ds)), count_(count) {}
  struct iterator {
    using element_type = element_t<D>;
    D ds;  // a copy: each repetition starts a new epoch of it
    std::int64_t count;
    std::int64_t done = 0;
    std::optional<iterator_impl_t<D>> input{};
    std::optional<element_type> next() {
      while (count < 0 || done < count) {
        if (!input) {
          input.emplace(ds.make_iterator());
        }
        if (auto e = input->next()) {
          return e;
        }
        input.reset();
        ++done;
        if (ds.cardinality() == 0) {
          return std::nullopt;  // repeating an empty dataset forever would spin
        }
      }
      return std::nullopt;
    }
    void save_state(IteratorState& s, const std::string& p) const {
      s.put_int(p + "repeat/done", done);
      s.put_int(p + "repeat/active", input ? 1 : 0);
      if (input) {
        detail::save_state_of(*input, s, p + "repeat/");
      }
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      done = s.get_int(p + "repeat/done");
      input.reset();
      if (s.get_int(p + "repeat/active") != 0) {
        input.emplace(ds.make_iterator());
        detail::restore_state_of(*input, s, p + "repeat/");
      }
    }
    void collect_stats(std::vector<StageStats>& out) const {
      if (input) {
        detail::collect_stats_of(*input, out);
      }
    }
  };
  /// Starts an epoch; each repetition starts a new epoch of (a copy of) `ds`.
  [[nodiscard]] iterator make_iterator() const { return iterator{ds_, count_}; }
  /// input x count; 0 if either is 0; infinite when repeating forever or the input is infinite
  /// (unknown if the input's count is unknown).
  [[nodiscard]] std::int64_t cardinality() const {
    const std::int64_t c = ds_.cardinality();
    if (c == 0 || count_ == 0) {
      return 0;
    }
    if (c == infinite_cardinality || count_ < 0) {
      return c == unknown_cardinality ? unknown_cardinality : infinite_cardinality;
    }
    return c < 0 ? c : c * count_;
  }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] RepeatDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &RepeatDataset::ds_, f);
  }

 private:
  D ds_;
  std::int64_t count_ = 0;
};

/// The dataset-first form of `repeat` (`repeat(ds, count)`); repeat_fn adds the pipeable one.
struct repeat_base_fn {
  /// A RepeatDataset of `ds`, `count` times (default -1: forever).
  template <dataset D>
  auto operator()(D&& ds, std::int64_t count = -1) const {
    return RepeatDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), count);
  }
};
/// The type of `repeat`: both the dataset-first and the pipeable form.
struct repeat_fn : repeat_base_fn {
  using repeat_base_fn::operator();
  /// A closure repeating the dataset piped into it: `ds | repeat(3)`, `ds | repeat()`.
  auto operator()(std::int64_t count = -1) const {
    return ranges::make_view_closure(ranges::bind_back(repeat_base_fn{}, count));
  }
};
/// `ds | repeat(count)`, `ds | repeat()` (forever), `repeat(ds, count)`.
inline constexpr repeat_fn repeat{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
