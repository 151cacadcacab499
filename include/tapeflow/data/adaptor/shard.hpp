// `ds | tf::data::shard(num_shards, index)`: every num_shards-th element, starting at `index`
// (`Dataset.shard`): what each worker of a multi-worker job reads, so that the workers see
// every element exactly once per epoch between them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// The dataset `shard` returns.
template <dataset D>
class ShardDataset : public DatasetBase<ShardDataset<D>, element_t<D>> {
 public:
  ShardDataset() = default;
  /// Elements index, index + num_shards, ... of `ds` (invalid_argument unless num_shards > 0
  /// and 0 <= index < num_shards, TensorFlow's checks).
  ShardDataset(D ds, std::int64_t num_shards, std::int64_t index)
      : ds_(std::move(ds)), num_shards_(num_shards), index_(index) {
    if (num_shards <= 0) {
      throw invalid_argument("Dataset.shard: num_shards must be > 0, got " +
                             std::to_string(num_shards));
    }
    if (index < 0 || index >= num_shards) {
      throw invalid_argument("Dataset.shard: index must be in [0, " + std::to_string(num_shards) +
                             "), got " + std::to_string(index));
    }
  }
  struct iterator {
    using element_type = element_t<D>;
    iterator_impl_t<D> input;
    std::int64_t num_shards;
    std::int64_t index;
    std::int64_t position = 0;  // of the next input element
    std::optional<element_type> next() {
      while (true) {
        auto element = input.next();
        if (!element) {
          return std::nullopt;
        }
        if (position++ % num_shards == index) {
          return element;
        }
      }
    }
    void save_state(IteratorState& s, const std::string& p) const {
      s.put_int(p + "shard/position", position);
      detail::save_state_of(input, s, p + "shard/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      position = s.get_int(p + "shard/position");
      detail::restore_state_of(input, s, p + "shard/");
    }
    void collect_stats(std::vector<StageStats>& out) const { detail::collect_stats_of(input, out); }
  };
  /// Starts an epoch of `ds`.
  [[nodiscard]] iterator make_iterator() const {
    return iterator{ds_.make_iterator(), num_shards_, index_};
  }
  /// This shard's share of a known count; unknown and infinite stay so.
  [[nodiscard]] std::int64_t cardinality() const {
    const std::int64_t c = ds_.cardinality();
    if (c < 0) {
      return c;
    }
    return c / num_shards_ + (index_ < c % num_shards_ ? 1 : 0);
  }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] ShardDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &ShardDataset::ds_, f);
  }

 private:
  D ds_;
  std::int64_t num_shards_ = 1;
  std::int64_t index_ = 0;
};

/// The dataset-first form of `shard` (`shard(ds, num_shards, index)`).
struct shard_base_fn {
  /// A ShardDataset of `ds`.
  template <dataset D>
  auto operator()(D&& ds, std::int64_t num_shards, std::int64_t index) const {
    return ShardDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), num_shards, index);
  }
};
/// The type of `shard`: both the dataset-first and the pipeable form.
struct shard_fn : shard_base_fn {
  using shard_base_fn::operator();
  /// A closure for the dataset piped into it: `ds | shard(2, worker)`.
  auto operator()(std::int64_t num_shards, std::int64_t index) const {
    return ranges::make_view_closure(ranges::bind_back(shard_base_fn{}, num_shards, index));
  }
};
/// `ds | shard(num_shards, index)`: elements index, index + num_shards, ... (`Dataset.shard`).
inline constexpr shard_fn shard{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
