// `DistributedDataset`: a dataset of global batches seen as per-replica batches (TensorFlow:
// `strategy.experimental_distribute_dataset(ds)`). Iterating yields a PerReplica of the
// element type; replica r's part of each batch is sliced on its device
// (distribute/detail/split_batch.hpp gives the rule for short batches).
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <ranges>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/config/device_scope.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/detail/split_batch.hpp>
#include <tapeflow/distribute/per_replica.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// Global batches of `Dataset` split across replicas; one pass is one epoch of the dataset.
template <std::ranges::input_range Dataset>
class DistributedDataset {
  using Element = std::remove_cvref_t<std::ranges::range_reference_t<Dataset>>;

 public:
  /// Splits `dataset`'s batches across the replicas on `devices` (full names, replica order).
  /// Across workers, `dataset` gives either every worker the same global batches, of which this
  /// worker's replicas are the global replicas `first_replica`, ... of `num_replicas`
  /// (TensorFlow's AutoShardPolicy DATA), or, with `own_batches`, this worker's own batches
  /// (sharded by file, or by the program): each is split `num_replicas` ways as a global batch
  /// is, and consecutive steps hand its pieces to this worker's replicas in turn (TensorFlow's
  /// rebatching), so a replica's batch is the same size under every policy.
  DistributedDataset(Dataset dataset, std::vector<std::string> devices, int first_replica = 0,
                     int num_replicas = 0, bool own_batches = false)
      : dataset_(std::move(dataset)),
        devices_(std::move(devices)),
        first_replica_(first_replica),
        num_replicas_(num_replicas > 0 ? num_replicas : static_cast<int>(devices_.size())),
        steps_per_batch_(own_batches ? num_replicas_ / static_cast<int>(devices_.size()) : 1),
        own_batches_(own_batches) {}

  /// One element: replica r's part of one global batch.
  class iterator {
   public:
    using value_type = PerReplica<Element>;
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    iterator(std::ranges::iterator_t<Dataset> it, const DistributedDataset* owner)
        : it_(std::move(it)), owner_(owner) {}
    value_type operator*() const {
      const Element global = *it_;
      const auto& devices = owner_->devices_;
      value_type out;
      out.values.reserve(devices.size());
      for (std::size_t r = 0; r < devices.size(); ++r) {
        const config::DeviceScope on_replica(DeviceSpec::from_string(devices[r]));
        const int first = owner_->steps_per_batch_ > 1 ? piece_ * static_cast<int>(devices.size())
                                                       : owner_->first_replica_;
        out.values.push_back(
            detail::replica_piece(global, owner_->num_replicas_, first + static_cast<int>(r)));
      }
      return out;
    }
    iterator& operator++() {
      if (++piece_ == owner_->steps_per_batch_) {
        piece_ = 0;
        ++it_;
      }
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator& a, const std::ranges::sentinel_t<Dataset>& end) {
      return a.it_ == end;
    }

   private:
    std::ranges::iterator_t<Dataset> it_{};
    const DistributedDataset* owner_ = nullptr;
    int piece_ = 0;  // which group of pieces of the current batch (own_batches)
  };

  /// Starts an epoch of the underlying dataset.
  iterator begin() { return iterator(std::ranges::begin(dataset_), this); }
  /// The underlying dataset's end.
  auto end() { return std::ranges::end(dataset_); }
  /// How many replicas each batch is split across, on every worker.
  [[nodiscard]] int num_replicas_in_sync() const noexcept { return num_replicas_; }
  /// Whether this worker reads its own batches (AutoShardPolicy FILE or OFF), rather than the
  /// global batches every worker reads.
  [[nodiscard]] bool own_batches() const noexcept { return own_batches_; }

 private:
  Dataset dataset_;
  std::vector<std::string> devices_;
  int first_replica_;
  int num_replicas_;
  int steps_per_batch_;  // > 1: own batches, each split over this many steps
  bool own_batches_;
};

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
