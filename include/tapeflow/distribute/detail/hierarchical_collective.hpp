// The collective of a multi-worker job with several replicas per worker
// (MultiWorkerMirroredStrategy over several local devices): a worker's replicas combine through its
// in-process group, its first replica alone speaks for the worker across workers (MPI's calls stay
// on one thread), and the result reaches the worker's other replicas through memory its threads
// share. Replica r of worker w is global replica w * local + r.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/collective.hpp>
#include <tapeflow/distribute/in_process_collective.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute::detail {

/// What a worker's replicas share: the cross-worker collective and the result its first replica
/// hands out.
template <Collective Across>
struct HierarchicalShared {
  Across across;                  ///< the workers' collective, called by local replica 0 only
  int workers = 1;                ///< workers in the job
  int worker = 0;                 ///< this worker's index
  std::vector<AnyTensor> result;  ///< local replica 0's result of the current operation
};

/// One replica's handle; models Collective (every worker runs the same number of replicas).
template <Collective Across>
class HierarchicalCollective {
 public:
  HierarchicalCollective(InProcessCollective local,
                         std::shared_ptr<HierarchicalShared<Across>> shared)
      : local_(std::move(local)), shared_(std::move(shared)) {}

  /// The global replica index.
  [[nodiscard]] int rank() const { return shared_->worker * local_.num_replicas() + local_.rank(); }
  /// Every replica of every worker.
  [[nodiscard]] int num_replicas() const { return shared_->workers * local_.num_replicas(); }

  /// Sum (or mean) over the worker's replicas, then over the workers (means of equal-sized
  /// groups average to the global mean).
  void all_reduce(std::span<AnyTensor> tensors, ReduceOp op) {
    local_.all_reduce(tensors, op);
    std::vector<AnyTensor> values(tensors.begin(), tensors.end());
    hand_out(values, [&](std::vector<AnyTensor>& v) { shared_->across.all_reduce(v, op); });
    std::move(values.begin(), values.end(), tensors.begin());
  }
  /// Global replica `root`'s tensors: from its local rank within each worker, then from its
  /// worker across workers.
  void broadcast(std::span<AnyTensor> tensors, int root) {
    const int local = local_.num_replicas();
    if (root < 0 || root >= num_replicas()) {
      throw invalid_argument("broadcast: root " + std::to_string(root) + " is not a replica of " +
                             std::to_string(num_replicas()));
    }
    local_.broadcast(tensors, root % local);
    std::vector<AnyTensor> values(tensors.begin(), tensors.end());
    hand_out(values,
             [&](std::vector<AnyTensor>& v) { shared_->across.broadcast(v, root / local); });
    std::move(values.begin(), values.end(), tensors.begin());
  }
  /// Every replica's `t` in global order (shapes agree within a worker; across workers only
  /// dtype and rank must).
  std::vector<AnyTensor> all_gather(const AnyTensor& t) {
    std::vector<AnyTensor> values = local_.all_gather(t);
    hand_out(values, [&](std::vector<AnyTensor>& pieces) {
      const std::size_t local = pieces.size();
      std::vector<AnyTensor> all(local * std::size_t(shared_->workers));
      for (std::size_t r = 0; r < local; ++r) {
        auto across = shared_->across.all_gather(pieces[r]);
        for (std::size_t w = 0; w < across.size(); ++w) {
          all[w * local + r] = std::move(across[w]);
        }
      }
      pieces = std::move(all);
    });
    return values;
  }
  /// Returns when every replica of every worker has called it.
  void barrier() {
    local_.barrier();
    std::vector<AnyTensor> none;
    hand_out(none, [&](std::vector<AnyTensor>&) { shared_->across.barrier(); });
  }

 private:
  // Local replica 0 runs `across` on `values` and leaves the result for the others, who take it
  // after the worker's barrier. The next operation starts with a local one every replica must
  // join, so the result is never replaced while a replica still reads it.
  template <class F>
  void hand_out(std::vector<AnyTensor>& values, F&& across) {
    if (local_.rank() == 0) {
      across(values);
      shared_->result = values;
    }
    local_.barrier();
    if (local_.rank() != 0) {
      values = shared_->result;
    }
  }

  InProcessCollective local_;
  std::shared_ptr<HierarchicalShared<Across>> shared_;
};

}  // namespace distribute::detail
TAPEFLOW_END_NAMESPACE
