// The ops that read and write a variable (TensorFlow's ReadVariableOp, AssignVariableOp,
// AssignAddVariableOp, AssignSubVariableOp). `tf::Variable` runs them through
// `detail::execute` like any other op, so reads and writes trace into graphs under these names.
// IWYU pragma: private, include <tapeflow/ops/state/variable.hpp>
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <tapeflow/backend/cpu/generic_vec.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// The replica whose copies of mirrored variables this thread reads and writes (Note [Mirrored
/// variables]): its index inside `strategy.run`, -1 elsewhere (cross-replica context).
inline int& current_replica() noexcept {
  thread_local int replica = -1;
  return replica;
}

/// The devices a variable created on this thread is mirrored on (one copy each), or null: set
/// by a distribution strategy's scope (Note [Mirrored variables]).
inline const std::vector<devices::DeviceId>*& mirroring_devices() noexcept {
  thread_local const std::vector<devices::DeviceId>* devices = nullptr;
  return devices;
}

/// Agrees a new variable's initial value among processes before it is stored: called with the
/// variable's name and initial value, it may replace the value. A multi-worker strategy's scope
/// sets it so every worker starts from the chief's values (TensorFlow's variable creator under
/// MultiWorkerMirroredStrategy broadcasts them from worker 0); null elsewhere.
using InitialValueSync = std::function<void(const std::string& name, AnyTensor& value)>;
inline const InitialValueSync*& initial_value_sync() noexcept {
  thread_local const InitialValueSync* sync = nullptr;
  return sync;
}

/// What a variable is (TensorFlow's resource): its current value, name and identity. Variable
/// handles and the ops reading or writing it share one.
template <class T, std::size_t Rank>
struct VariableState {
  Tensor<T, Rank> value;  // its id is `id`, so tapes see reads as the variable
  std::string name;
  // The variable's identity for its whole life: Variable::id() and AnyVariable::id() return
  // it, and the variable ops' resources() list it, so an exporter matches graph nodes to the
  // variables a checkpoint walk finds.
  std::int64_t id = 0;
  // A mirrored variable's copies for replicas 1, 2, ... (`value` is replica 0's); empty for
  // every other variable, which is all the fast path checks.
  std::vector<Tensor<T, Rank>> mirrors;
};

/// The copy of the variable this thread works on: `value`, or the current replica's mirror.
template <class T, std::size_t Rank>
Tensor<T, Rank>& local_value(VariableState<T, Rank>& s) {
  if (s.mirrors.empty()) {
    return s.value;
  }
  const int r = current_replica();
  if (r <= 0) {
    return s.value;
  }
  if (static_cast<std::size_t>(r) > s.mirrors.size()) {
    throw invalid_argument("mirrored variable '" + s.name + "' has " +
                           std::to_string(s.mirrors.size() + 1) + " copies; replica " +
                           std::to_string(r) + " belongs to another strategy");
  }
  return s.mirrors[static_cast<std::size_t>(r) - 1];
}

/// Gives `value` the variable's identity (tapes watch trainable variables by their id) and
/// makes it this thread's copy.
template <class T, std::size_t Rank>
void set_variable_value(VariableState<T, Rank>& s, Tensor<T, Rank> value) {
  Tensor<T, Rank>& local = local_value(s);
  local = std::move(value);
  tensor_access::set_id(local, s.id);
}

/// A copy of `value`'s elements in a fresh buffer on `device`.
template <class T, std::size_t Rank>
Tensor<T, Rank> copy_on_device(const Tensor<T, Rank>& value, devices::DeviceId device) {
  devices::AllocationScope const on_device(device);
  auto fresh = Tensor<T, Rank>::uninitialized(value.dims());
  if constexpr (std::is_trivially_copyable_v<T>) {
    copy_elements(*tensor_access::buffer(value), *tensor_access::buffer(fresh));
  } else {
    std::copy_n(value.data(), value.num_elements(), tensor_access::mutable_data(fresh));
  }
  return fresh;
}

/// Makes the variable's buffer its own before an in-place write: a reader or a tape may still
/// hold the current value, which must stay intact.
/// `v[i] += d[i]` (`add`) or `v[i] -= d[i]`, in SIMD vectors for float and double: GCC's -O2
/// leaves the plain loop scalar (it would need a run-time aliasing check), and an SGD update of
/// a 784x100 kernel was then a sixth of an MNIST MLP training step.
template <bool add, class T>
void update_elements(T* v, const T* d, std::int64_t n) {
  std::int64_t i = 0;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using Vec = backend::cpu::GenericVec<T>;
    for (; i + Vec::kLanes <= n; i += Vec::kLanes) {
      const auto a = Vec::load(v + i);
      const auto b = Vec::load(d + i);
      Vec::store(v + i, add ? Vec::add(a, b) : Vec::sub(a, b));
    }
  }
  for (; i < n; ++i) {
    v[i] = add ? static_cast<T>(v[i] + d[i]) : static_cast<T>(v[i] - d[i]);
  }
}

template <class T, std::size_t Rank>
void make_variable_buffer_unique(VariableState<T, Rank>& s) {
  const Tensor<T, Rank>& local = local_value(s);
  if (tensor_access::buffer(local)->unique()) {
    return;
  }
  // The copy stays where the variable lives, even when the writing op fell back to the CPU.
  set_variable_value(s, copy_on_device(local, tensor_access::buffer(local)->device));
}

/// After a write in cross-replica context, every replica's copy takes replica 0's value (a
/// mirrored variable assigned outside `strategy.run` changes on every replica, as in
/// TensorFlow). Each copy stays on its device.
template <class T, std::size_t Rank>
void sync_mirrors(VariableState<T, Rank>& s) {
  if (s.mirrors.empty() || current_replica() >= 0) {
    return;
  }
  for (auto& m : s.mirrors) {
    m = copy_on_device(s.value, tensor_access::buffer(m)->device);
    tensor_access::set_id(m, s.id);
  }
}

enum class VariableUpdate { assign, add, sub };

}  // namespace detail

namespace ops {

/// The variable's current value (TensorFlow op "ReadVariableOp"). The output shares the
/// variable's buffer and keeps its identity, so a tape recording inside a traced function
/// watches the read as it would the variable. Stateful: it must run after earlier assignments.
template <class T, std::size_t Rank>
struct ReadVariableOp {
  static constexpr std::string_view name = "ReadVariableOp";
  static constexpr std::string_view type_attr = "dtype";   ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "value";  ///< TensorFlow's output argument
  static constexpr bool stateful = true;
  std::shared_ptr<detail::VariableState<T, Rank>> resource;

  /// The variable read: TensorFlow's `resource` input.
  [[nodiscard]] std::vector<std::int64_t> resources() const { return {resource->id}; }
  /// Reads run where the variable lives (a consumer elsewhere reads it there).
  [[nodiscard]] detail::devices::DeviceId placement_device() const {
    return detail::tensor_access::buffer(detail::local_value(*resource))->device;
  }
  [[nodiscard]] Tensor<T, Rank> forward() const { return detail::local_value(*resource); }
};

/// Writes `value` into the variable: replaces it (TensorFlow op "AssignVariableOp"), adds to it
/// ("AssignAddVariableOp") or subtracts from it ("AssignSubVariableOp"). The shape must stay
/// the variable's (TensorFlow's validate_shape). The output is a placeholder scalar, as
/// PrintV2's is: these ops have no value to give.
template <class T, std::size_t Rank, detail::VariableUpdate Kind>
struct VariableUpdateOp {
  static constexpr std::string_view name =
      Kind == detail::VariableUpdate::assign ? "AssignVariableOp"
      : Kind == detail::VariableUpdate::add  ? "AssignAddVariableOp"
                                             : "AssignSubVariableOp";
  static constexpr std::string_view type_attr = "dtype";         ///< TensorFlow's dtype attr
  static constexpr std::string_view output_arg = no_output_arg;  ///< TensorFlow's has none
  static constexpr bool stateful = true;
  static constexpr bool differentiable = false;
  std::shared_ptr<detail::VariableState<T, Rank>> resource;

  /// The variable written: TensorFlow's `resource` input.
  [[nodiscard]] std::vector<std::int64_t> resources() const { return {resource->id}; }
  /// Writes run where the variable lives, so it stays there (Note [Placement]).
  [[nodiscard]] detail::devices::DeviceId placement_device() const {
    return detail::tensor_access::buffer(detail::local_value(*resource))->device;
  }

  OutSpec<bool, 0> infer(const Tensor<T, Rank>& value) const {
    if (value.dims() != resource->value.dims()) {
      constexpr std::string_view what = Kind == detail::VariableUpdate::assign ? "assign"
                                        : Kind == detail::VariableUpdate::add  ? "assign_add"
                                                                               : "assign_sub";
      throw invalid_argument("Variable::" + std::string(what) + " on '" + resource->name +
                             "': shape " + value.shape().to_string() +
                             " does not match the variable's shape " +
                             resource->value.shape().to_string());
    }
    return {};
  }

  void compute(Tensor<bool, 0>& done, const Tensor<T, Rank>& value) const {
    auto& s = *resource;
    *detail::tensor_access::mutable_data(done) = true;
    const Tensor<T, Rank>& local = detail::local_value(s);
    if (Kind == detail::VariableUpdate::assign && !detail::tensor_access::buffer(local)->unique() &&
        detail::tensor_access::buffer(value)->device ==
            detail::tensor_access::buffer(local)->device) {
      detail::set_variable_value(s, value);  // share it; readers of the old value keep theirs
      detail::sync_mirrors(s);
      return;
    }
    detail::make_variable_buffer_unique(s);
    T* v = detail::tensor_access::mutable_data(detail::local_value(s));
    const T* d = value.data();
    const std::int64_t n = value.num_elements();
    if constexpr (Kind == detail::VariableUpdate::assign) {
      std::copy_n(d, n, v);
    } else {
      static_assert(numeric_element<T>, "assign_add/assign_sub need a numeric variable");
      detail::update_elements<Kind == detail::VariableUpdate::add>(v, d, n);
    }
    detail::sync_mirrors(s);
  }
};

template <class T, std::size_t Rank>
using AssignVariableOp = VariableUpdateOp<T, Rank, detail::VariableUpdate::assign>;
template <class T, std::size_t Rank>
using AssignAddVariableOp = VariableUpdateOp<T, Rank, detail::VariableUpdate::add>;
template <class T, std::size_t Rank>
using AssignSubVariableOp = VariableUpdateOp<T, Rank, detail::VariableUpdate::sub>;

}  // namespace ops
TAPEFLOW_END_NAMESPACE
