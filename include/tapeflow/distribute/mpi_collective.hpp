// The `Collective` of worker processes over MPI (MultiWorkerMirroredStrategy): declarations
// only, compiled in `tapeflow::mpi` (backends/mpi/), which a program using it links.
//
// One instance is one process's handle on MPI_COMM_WORLD; ranks are workers. Each operation
// starts with a nonblocking rendezvous waited on with a deadline, so a dead or hung worker is a
// typed error, never a hang: past the timeout the caller pings every peer, throws
// deadline_exceeded naming the workers that did not answer, and tells the live ones to stop
// (they throw `unavailable` naming this worker). Tensors are read through their host view;
// every worker must pass the same dtypes and shapes, checked at the rendezvous
// (invalid_argument on every worker otherwise). Docs: docs/guide/distribute.md, "The MPI
// collective".
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/collective.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// Options of an MpiCollective.
struct MpiOptions {
  /// How long one operation waits for the other workers before it fails with
  /// deadline_exceeded naming the workers that do not respond.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
};

/// This process's handle on the workers of its MPI job (MPI_COMM_WORLD). The first one made
/// initializes MPI (thread level MPI_THREAD_SERIALIZED) unless the program already did; MPI is
/// then finalized at exit, unless an operation failed (a dead peer would make that hang).
/// Copies share the handle; calls on one handle must not overlap.
class MpiCollective {
 public:
  /// Joins the job's workers (initializing MPI if needed).
  explicit MpiCollective(MpiOptions options = {});

  /// This worker's rank, 0 .. num_replicas() - 1.
  [[nodiscard]] int rank() const;
  /// How many workers the job has.
  [[nodiscard]] int num_replicas() const;
  /// The host this worker runs on (MPI_Get_processor_name).
  [[nodiscard]] std::string processor_name() const;

  /// Replaces each tensor by its sum (or mean) over the workers; tensors of one dtype travel
  /// in one MPI call.
  void all_reduce(std::span<AnyTensor> tensors, ReduceOp op);
  /// Replaces each tensor by worker `root`'s.
  void broadcast(std::span<AnyTensor> tensors, int root);
  /// Every worker's `t` (same dtype and rank; dims may differ), in rank order.
  std::vector<AnyTensor> all_gather(const AnyTensor& t);
  /// Returns when every worker has called it.
  void barrier();
  /// Tells the other workers this one failed: their pending and later operations throw
  /// `unavailable` naming this worker and `why`.
  void abort(const std::string& why);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
