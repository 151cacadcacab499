// `AnyCollective`: any model of the `Collective` concept behind one type, so that replica
// contexts and strategies are written once (in-process threads today; NCCL and MPI are the
// other models).
#pragma once

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/collective.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// A type-erased Collective; copies share the erased handle.
class AnyCollective {
 public:
  /// Erases `c` (held by value).
  template <Collective C>
  explicit AnyCollective(C c) : impl_(std::make_shared<Holder<C>>(std::move(c))) {}

  /// This replica's index in the group.
  [[nodiscard]] int rank() const { return impl_->rank(); }
  /// How many replicas the group has.
  [[nodiscard]] int num_replicas() const { return impl_->num_replicas(); }
  /// Replaces each tensor by its reduction over the replicas.
  void all_reduce(std::span<AnyTensor> tensors, ReduceOp op) { impl_->all_reduce(tensors, op); }
  /// Replaces each tensor by replica `root`'s.
  void broadcast(std::span<AnyTensor> tensors, int root) { impl_->broadcast(tensors, root); }
  /// Every replica's `t`, in rank order.
  std::vector<AnyTensor> all_gather(const AnyTensor& t) { return impl_->all_gather(t); }
  /// Returns when every replica has called it.
  void barrier() { impl_->barrier(); }

 private:
  struct Base {
    virtual ~Base() = default;
    [[nodiscard]] virtual int rank() const = 0;
    [[nodiscard]] virtual int num_replicas() const = 0;
    virtual void all_reduce(std::span<AnyTensor> tensors, ReduceOp op) = 0;
    virtual void broadcast(std::span<AnyTensor> tensors, int root) = 0;
    virtual std::vector<AnyTensor> all_gather(const AnyTensor& t) = 0;
    virtual void barrier() = 0;
  };
  template <class C>
  struct Holder final : Base {
    explicit Holder(C collective) : c(std::move(collective)) {}
    int rank() const override { return c.rank(); }
    int num_replicas() const override { return c.num_replicas(); }
    void all_reduce(std::span<AnyTensor> tensors, ReduceOp op) override {
      c.all_reduce(tensors, op);
    }
    void broadcast(std::span<AnyTensor> tensors, int root) override { c.broadcast(tensors, root); }
    std::vector<AnyTensor> all_gather(const AnyTensor& t) override { return c.all_gather(t); }
    void barrier() override { c.barrier(); }
    C c;
  };
  std::shared_ptr<Base> impl_;
};

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
