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
  DistributedDataset(Dataset dataset, std::vector<std::string> devices)
      : dataset_(std::move(dataset)), devices_(std::move(devices)) {}

  /// One element: replica r's part of one global batch.
  class iterator {
   public:
    using value_type = PerReplica<Element>;
    using difference_type = std::ptrdiff_t;

    iterator() = default;
    iterator(std::ranges::iterator_t<Dataset> it, const std::vector<std::string>* devices)
        : it_(std::move(it)), devices_(devices) {}
    value_type operator*() const {
      const Element global = *it_;
      const int n = static_cast<int>(devices_->size());
      value_type out;
      out.values.reserve(devices_->size());
      for (int r = 0; r < n; ++r) {
        const config::DeviceScope on_replica(
            DeviceSpec::from_string((*devices_)[static_cast<std::size_t>(r)]));
        out.values.push_back(detail::replica_piece(global, n, r));
      }
      return out;
    }
    iterator& operator++() {
      ++it_;
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const iterator& a, const std::ranges::sentinel_t<Dataset>& end) {
      return a.it_ == end;
    }

   private:
    std::ranges::iterator_t<Dataset> it_{};
    const std::vector<std::string>* devices_ = nullptr;
  };

  /// Starts an epoch of the underlying dataset.
  iterator begin() { return iterator(std::ranges::begin(dataset_), &devices_); }
  /// The underlying dataset's end.
  auto end() { return std::ranges::end(dataset_); }
  /// How many replicas each batch is split across.
  [[nodiscard]] int num_replicas_in_sync() const noexcept {
    return static_cast<int>(devices_.size());
  }

 private:
  Dataset dataset_;
  std::vector<std::string> devices_;
};

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
