// The collectives of one step's replicas as the strategy sees them: a group kept across steps
// (NCCL communicators, costly to make) behind one small interface, and the slot through which
// a linked `tapeflow::nccl` offers its group to MirroredStrategy without header code naming it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/any_collective.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute::detail {

/// One handle per replica on a group of replicas exchanging tensors.
class ReplicaGroup {
 public:
  ReplicaGroup() = default;
  ReplicaGroup(const ReplicaGroup&) = delete;
  ReplicaGroup& operator=(const ReplicaGroup&) = delete;
  virtual ~ReplicaGroup() = default;
  /// Replica `rank`'s collective.
  virtual AnyCollective replica(int rank) = 0;
  /// Breaks the group because replica `rank` failed (`why`): the others' pending and later
  /// operations throw `unavailable` naming it.
  virtual void abort(int rank, const std::string& why) = 0;
};

/// Makes a group over logical GPUs `devices` (one per card) whose operations fail past
/// `timeout`.
using GpuGroupFactory = std::shared_ptr<ReplicaGroup> (*)(const std::vector<std::string>& devices,
                                                          std::chrono::milliseconds timeout);

/// The NCCL group factory: set where `tapeflow::nccl` is linked (distribute/nccl_collective.hpp
/// registers it), else null.
inline std::atomic<GpuGroupFactory>& nccl_group_factory() noexcept {
  static std::atomic<GpuGroupFactory> factory{nullptr};
  return factory;
}

}  // namespace distribute::detail
TAPEFLOW_END_NAMESPACE
