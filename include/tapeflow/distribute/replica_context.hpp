// The replica context (TensorFlow: `tf.distribute.ReplicaContext`): what code running inside
// `strategy.run` knows about its replica, and the calls that involve every replica. Note
// [Mirrored variables] in distribute/strategy.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/any_collective.hpp>
#include <tapeflow/distribute/collective.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// One replica's view of the replicas running a step together (`strategy.run`).
class ReplicaContext {
 public:
  /// Replica `replica_id` of the group `collective` belongs to. `devices` are the strategy's
  /// (variables a merge_call creates are mirrored on them); `abort` breaks the group when this
  /// replica fails; `bytes_per_pack` bounds the bytes of one all-reduce of gradients. Across
  /// workers, `local_replica_id` is the replica's index in its process (it picks the copies of
  /// mirrored variables; -1: `replica_id`) and `sync` agrees the initial values of variables a
  /// merge_call creates.
  ReplicaContext(int replica_id, AnyCollective collective,
                 const std::vector<tapeflow::detail::devices::DeviceId>* devices,
                 std::function<void(const std::string&)> abort,
                 std::int64_t bytes_per_pack = std::int64_t{32} << 20, int local_replica_id = -1,
                 const tapeflow::detail::InitialValueSync* sync = nullptr)
      : replica_id_(replica_id),
        local_replica_id_(local_replica_id < 0 ? replica_id : local_replica_id),
        collective_(std::move(collective)),
        devices_(devices),
        abort_(std::move(abort)),
        bytes_per_pack_(bytes_per_pack),
        sync_(sync) {}

  /// This replica's index, 0 .. num_replicas_in_sync() - 1.
  [[nodiscard]] int replica_id_in_sync_group() const noexcept { return replica_id_; }
  /// This replica's index among its own process's replicas (the same on one machine).
  [[nodiscard]] int local_replica_id() const noexcept { return local_replica_id_; }
  /// How many replicas run in this process (num_replicas_in_sync() on one machine).
  [[nodiscard]] int num_local_replicas() const noexcept {
    return devices_ != nullptr ? static_cast<int>(devices_->size()) : 1;
  }
  /// How many replicas run the step.
  [[nodiscard]] int num_replicas_in_sync() const { return collective_.num_replicas(); }

  /// Replaces each value by its sum (or mean) over the replicas, in one collective call.
  void all_reduce(ReduceOp op, std::span<AnyTensor> values) { collective_.all_reduce(values, op); }
  /// The sum (or mean) of `value` over the replicas (TensorFlow: `ctx.all_reduce(op, value)`).
  /// An op (CollectiveReduceV2): tapes differentiate through it, every replica's input
  /// receiving the same all-reduce of the replicas' gradients, and tf::function traces it.
  template <class T, std::size_t R>
  [[nodiscard]] Tensor<T, R> all_reduce(ReduceOp op, const Tensor<T, R>& value);
  /// Every replica's `value`, in replica order.
  [[nodiscard]] std::vector<AnyTensor> all_gather(const AnyTensor& value) {
    return collective_.all_gather(value);
  }

  /// Runs `fn` once for all replicas (TensorFlow: `merge_call`): every replica calls it at the
  /// same point; replica 0 runs `fn` in cross-replica context (variables it creates are
  /// mirrored, as under `strategy.scope()`) while the others wait. If `fn` throws, replica 0
  /// rethrows it and the others throw `unavailable`.
  template <class F>
  void merge_call(F&& fn);

  /// The most bytes one all-reduce of gradients carries (the strategy's option).
  [[nodiscard]] std::int64_t bytes_per_pack() const noexcept { return bytes_per_pack_; }
  /// The group's collective (all_reduce, broadcast, all_gather, barrier).
  [[nodiscard]] AnyCollective& collective() noexcept { return collective_; }
  /// Breaks the group: the other replicas' collective calls throw `unavailable` naming this
  /// replica.
  void abort(const std::string& why) const {
    if (abort_) {
      abort_(why);
    }
  }

 private:
  int replica_id_;
  int local_replica_id_;
  AnyCollective collective_;
  const std::vector<tapeflow::detail::devices::DeviceId>* devices_;
  std::function<void(const std::string&)> abort_;
  std::int64_t bytes_per_pack_;
  const tapeflow::detail::InitialValueSync* sync_;
};

namespace detail {

inline ReplicaContext*& current_replica_context() noexcept {
  thread_local ReplicaContext* context = nullptr;
  return context;
}

/// Sets what this thread is while it lives, restoring it after: a replica (its context and
/// index, which picks its copies of mirrored variables, and no mirroring of variables it
/// creates: merge_call does that) or the cross-replica context (no context, index -1: replica
/// 0's copies are read and writes reach every copy, and new variables mirrored on `mirroring`,
/// their initial values agreed by `sync` across workers).
class ContextScope {
 public:
  /// Replica `context` (its local_replica_id picks the copies).
  explicit ContextScope(ReplicaContext& context)
      : ContextScope(&context, context.local_replica_id(), nullptr, nullptr) {}
  /// Cross-replica context; variables created are mirrored on `mirroring` (null: not).
  explicit ContextScope(const std::vector<tapeflow::detail::devices::DeviceId>* mirroring,
                        const tapeflow::detail::InitialValueSync* sync = nullptr)
      : ContextScope(nullptr, -1, mirroring, sync) {}
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  ~ContextScope() {
    current_replica_context() = previous_context_;
    tapeflow::detail::current_replica() = previous_replica_;
    tapeflow::detail::mirroring_devices() = previous_mirroring_;
    tapeflow::detail::initial_value_sync() = previous_sync_;
  }

 private:
  ContextScope(ReplicaContext* context, int replica,
               const std::vector<tapeflow::detail::devices::DeviceId>* mirroring,
               const tapeflow::detail::InitialValueSync* sync)
      : previous_context_(std::exchange(current_replica_context(), context)),
        previous_replica_(std::exchange(tapeflow::detail::current_replica(), replica)),
        previous_mirroring_(std::exchange(tapeflow::detail::mirroring_devices(), mirroring)),
        previous_sync_(std::exchange(tapeflow::detail::initial_value_sync(), sync)) {}

  ReplicaContext* previous_context_;
  int previous_replica_;
  const std::vector<tapeflow::detail::devices::DeviceId>* previous_mirroring_;
  const tapeflow::detail::InitialValueSync* previous_sync_;
};

}  // namespace detail

/// The replica context of the calling thread inside `strategy.run`; null outside (TensorFlow's
/// cross-replica context).
[[nodiscard]] inline ReplicaContext* get_replica_context() noexcept {
  return detail::current_replica_context();
}
/// Whether the calling thread is outside any `strategy.run` replica.
[[nodiscard]] inline bool in_cross_replica_context() noexcept {
  return get_replica_context() == nullptr;
}

}  // namespace distribute

namespace ops {

/// The sum (or mean) of a tensor over the replicas running the current step, from inside
/// `strategy.run` (TensorFlow's `ctx.all_reduce`; "CollectiveReduceV2" is its graph op across
/// workers). The collective is the calling replica's at run time, so a traced graph replayed
/// in a later step talks to that step's replicas. Stateful: graphs must neither prune it nor
/// merge two of them. Gradient: replica r's input reaches every replica's output, so it
/// receives the same all-reduce of the replicas' incoming gradients (the mean's 1/n included).
/// Exported graphs cannot hold it: TensorFlow's op needs group and instance keys that only a
/// distributed runtime assigns. In cross-replica context (`strategy.reduce` of a
/// MultiWorkerMirroredStrategy) `across_workers` sums over the workers instead.
struct CollectiveReduceV2 {
  /// Sums tensors over the workers in place (the strategy's collective).
  using WorkersSum = std::function<void(std::span<AnyTensor>)>;
  static constexpr std::string_view name = "CollectiveReduceV2";
  static constexpr bool stateful = true;  // talks to the other replicas
  distribute::ReduceOp reduction = distribute::ReduceOp::sum;
  std::shared_ptr<const WorkersSum> across_workers;  ///< null: the calling replica's collective

  template <class T, std::size_t R>
  OutSpec<T, R> infer(const Tensor<T, R>& x) const {
    if (across_workers == nullptr && distribute::get_replica_context() == nullptr) {
      throw failed_precondition("CollectiveReduceV2: all_reduce of a tensor of shape " +
                                x.shape().to_string() +
                                " outside strategy.run (there is no replica to reduce over)");
    }
    return {x.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& out, const Tensor<T, R>& x) const {
    AnyTensor reduced(x);
    if (across_workers != nullptr) {
      (*across_workers)(std::span<AnyTensor>(&reduced, 1));
    } else {
      distribute::get_replica_context()->collective().all_reduce(std::span<AnyTensor>(&reduced, 1),
                                                                 reduction);
    }
    // A fresh output (its own id for tapes) rather than the collective's buffer, which may be
    // x's own.
    std::copy_n(static_cast<const T*>(reduced.raw_data()), x.num_elements(),
                tapeflow::detail::tensor_access::mutable_data(out));
  }
  template <class T, std::size_t R>
  Tensor<T, R> gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, R>&) const {
    return tapeflow::detail::execute(CollectiveReduceV2{reduction, across_workers}, dy);
  }
};

}  // namespace ops

namespace distribute {

template <class T, std::size_t R>
Tensor<T, R> ReplicaContext::all_reduce(ReduceOp op, const Tensor<T, R>& value) {
  return tapeflow::detail::execute(ops::CollectiveReduceV2{op, nullptr}, value);
}

template <class F>
void ReplicaContext::merge_call(F&& fn) {
  collective_.barrier();
  if (local_replica_id_ == 0) {  // one call per process: each worker has its own variables
    const detail::ContextScope cross_replica(devices_, sync_);
    try {
      std::forward<F>(fn)();
    } catch (const std::exception& e) {
      abort(std::string("merge_call: ") + e.what());
      throw;
    } catch (...) {
      abort("merge_call: an exception not derived from std::exception");
      throw;
    }
  }
  collective_.barrier();
}

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
