// The `Collective` concept: what replicas of one training step exchange (TensorFlow's
// collective ops; NCCL's and MPI's calls). A strategy is written once against it; threads in
// one process, NCCL and MPI model it. Every replica calls the same operations in the same order
// with its own tensors, as NCCL and MPI require; an operation returns when every replica has
// called it, or throws for all of them.
#pragma once

#include <concepts>
#include <span>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// How values of the replicas combine (TensorFlow: `tf.distribute.ReduceOp`).
enum class ReduceOp {
  sum,   ///< elementwise sum over replicas
  mean,  ///< the sum divided by the number of replicas
};

/// One replica's handle on a group of replicas exchanging tensors.
template <class C>
concept Collective = requires(C& c, const C& cc, std::span<AnyTensor> tensors, const AnyTensor& t,
                              ReduceOp op, int root) {
  /// This replica's index in the group, 0 .. num_replicas() - 1.
  { cc.rank() } -> std::convertible_to<int>;
  /// How many replicas the group has.
  { cc.num_replicas() } -> std::convertible_to<int>;
  /// Replaces each tensor by the reduction of that tensor over the replicas (several small
  /// tensors in one call: the gradients of a step).
  c.all_reduce(tensors, op);
  /// Replaces each tensor by replica `root`'s.
  c.broadcast(tensors, root);
  /// Every replica's `t`, in rank order.
  { c.all_gather(t) } -> std::same_as<std::vector<AnyTensor>>;
  /// Returns when every replica has called it.
  c.barrier();
};

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
