// The `Collective` of replicas on several GPUs of one process over NCCL (MirroredStrategy's
// default across cards): declarations only, compiled in `tapeflow::nccl` (backends/nccl/),
// which a program using it links; linking it also offers the group to MirroredStrategy (the
// registration at the end of this file).
//
// An NcclGroup is one NCCL communicator per replica's GPU, made once (ncclCommInitRank in one
// group call) and kept across steps; each replica thread calls its own handle. Operations run
// on the device's stream, ordered after its kernels, and are waited on against the timeout:
// NCCL's nonblocking communicators let a replica that waits too long abort its communicator
// and throw deadline_exceeded naming the replicas that never joined, instead of hanging. Every
// operation first checks that the replicas passed the same dtypes and shapes (invalid_argument
// on every replica otherwise: NCCL itself would read past a buffer). Docs:
// docs/guide/distribute.md, "The NCCL collective".
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/collective.hpp>
#include <tapeflow/distribute/detail/replica_group.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// Options of an NcclGroup.
struct NcclOptions {
  /// How long an operation waits for the other replicas before it fails with
  /// deadline_exceeded.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
};

namespace detail {
struct NcclState;
}  // namespace detail

/// One replica's handle on an NcclGroup; models Collective. Tensors are read where their
/// device keeps them (copied to the replica's GPU first if elsewhere); results are new tensors
/// on the replica's GPU. Calls on one handle must not overlap.
class NcclCollective {
 public:
  /// This replica's index in the group.
  [[nodiscard]] int rank() const noexcept { return rank_; }
  /// How many replicas the group has.
  [[nodiscard]] int num_replicas() const;
  /// Replaces each tensor by its sum (or mean) over the replicas (float32, float64, int32,
  /// int64, uint8), all in one NCCL group call.
  void all_reduce(std::span<AnyTensor> tensors, ReduceOp op);
  /// Replaces each tensor by replica `root`'s.
  void broadcast(std::span<AnyTensor> tensors, int root);
  /// Every replica's `t` (same dtype and rank; dims may differ), in rank order.
  std::vector<AnyTensor> all_gather(const AnyTensor& t);
  /// Returns when every replica has called it.
  void barrier();

 private:
  friend class NcclGroup;
  NcclCollective(std::shared_ptr<detail::NcclState> state, int rank)
      : state_(std::move(state)), rank_(rank) {}
  std::shared_ptr<detail::NcclState> state_;
  int rank_;
};

/// One NCCL communicator per logical GPU in `devices`, each on its own card (NCCL refuses two
/// ranks on one GPU: logical GPUs sharing a card use the in-process collective).
class NcclGroup {
 public:
  /// Makes the communicators; invalid_argument for a device that is not a GPU of this process
  /// or two on one card, unavailable when NCCL fails (its message included).
  explicit NcclGroup(const std::vector<std::string>& devices, NcclOptions options = {});
  /// How many replicas the group has.
  [[nodiscard]] int num_replicas() const;
  /// Replica `rank`'s handle (invalid_argument outside 0 .. num_replicas() - 1).
  [[nodiscard]] NcclCollective replica(int rank) const;
  /// Breaks the group because replica `rank` failed (`why`): every replica waiting in, or
  /// later calling, an operation throws `unavailable` naming it.
  void abort(int rank, const std::string& why) const;

 private:
  std::shared_ptr<detail::NcclState> state_;
};

namespace detail {
/// An NcclGroup as a strategy's replica group (MirroredStrategy's cross_device_ops).
std::shared_ptr<ReplicaGroup> make_nccl_group(const std::vector<std::string>& devices,
                                              std::chrono::milliseconds timeout);
}  // namespace detail

}  // namespace distribute
TAPEFLOW_END_NAMESPACE

// Linking tapeflow::nccl defines TAPEFLOW_HAS_NCCL: MirroredStrategy then finds the group.
#if defined(TAPEFLOW_HAS_NCCL) && TAPEFLOW_HAS_NCCL
TAPEFLOW_BEGIN_NAMESPACE
namespace distribute::detail {
inline const bool nccl_registered = (nccl_group_factory().store(&make_nccl_group), true);
}  // namespace distribute::detail
TAPEFLOW_END_NAMESPACE
#endif
