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

template <dataset D>
class RepeatDataset : public DatasetBase<RepeatDataset<D>, element_t<D>> {
 public:
  RepeatDataset() = default;
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
  [[nodiscard]] iterator make_iterator() const { return iterator{ds_, count_}; }
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

 private:
  D ds_;
  std::int64_t count_ = 0;
};

struct repeat_base_fn {
  template <dataset D>
  auto operator()(D&& ds, std::int64_t count = -1) const {
    return RepeatDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), count);
  }
};
struct repeat_fn : repeat_base_fn {
  using repeat_base_fn::operator();
  auto operator()(std::int64_t count = -1) const {
    return ranges::make_view_closure(ranges::bind_back(repeat_base_fn{}, count));
  }
};
inline constexpr repeat_fn repeat{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
