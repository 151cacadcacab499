// `tapeflow::Variable<T, Rank>`: the one mutable holder of tensor state (TensorFlow:
// `tf.Variable`). It lives above core because its reads and writes are ops
// (ops/state/variable_ops.hpp) run by `detail::execute`; core declares it, so that every op
// accepts a variable as an operand.
#pragma once

#include <algorithm>
#include <concepts>
#include <memory>
#include <string>
#include <utility>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/state/variable_ops.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// Options of a Variable (TensorFlow's keyword arguments).
struct VariableOptions {
  std::string name = "Variable";  ///< the checkpoint key's last part for unnamed objects, errors
  bool trainable = true;          ///< whether tapes watch it automatically
};

/// A named, mutable tensor. Copies are handles to the same variable (as Python references to a
/// `tf.Variable` are), so layers, optimizers, checkpoints and tf::function share it.
///
///     tf::Variable<float, 2> w(tf::random::normal<float>({784, 10}, {.seed = 1}));
///     w.assign_sub(0.1f * grad);
///
/// Reading (`value()`, or passing the variable to an op) gives an immutable snapshot: later
/// assignments do not change tensors read before. A GradientTape watches trainable variables
/// read while it records. Inside a tf::function being traced, reads and assignments become
/// graph nodes that run, in program order, every time the function runs.
template <element_type T, std::size_t Rank>
class Variable {
 public:
  using value_type = T;                        ///< element type
  static constexpr std::size_t rank_v = Rank;  ///< rank (fixed at compile time)

  Variable() = default;  // holds no variable; assign a constructed one before use
  /// A new variable holding `initial_value` (which must hold a value, not be symbolic).
  explicit Variable(Tensor<T, Rank> initial_value, VariableOptions options = {})
      : state_(std::make_shared<State>()) {
    initial_value.require_value("Variable(initial_value)");
    state_->name = std::move(options.name);
    state_->id = detail::new_tensor_id() | detail::variable_id_bit |
                 (options.trainable ? detail::trainable_id_bit : 0);
    if (const auto* sync = detail::initial_value_sync(); sync != nullptr && *sync) {
      AnyTensor agreed(initial_value);
      (*sync)(state_->name, agreed);
      initial_value = agreed.as<T, Rank>();
    }
    // A variable lives on the device its creation is placed on (Note [Placement]); under a
    // distribution strategy's scope, one copy on each replica's device (Note [Mirrored
    // variables]).
    if (const auto* mirrored = detail::mirroring_devices(); mirrored && !mirrored->empty()) {
      state_->value = detail::copy_on_device(initial_value, mirrored->front());
      for (std::size_t r = 1; r < mirrored->size(); ++r) {
        state_->mirrors.push_back(detail::copy_on_device(initial_value, (*mirrored)[r]));
        detail::tensor_access::set_id(state_->mirrors.back(), state_->id);
      }
    } else {
      state_->value = detail::tensor_access::on_allocation_device(initial_value);
    }
    detail::tensor_access::set_id(state_->value, state_->id);
  }
  /// A scalar variable: `tf::Variable<float, 0> step(0.0f);`.
  explicit Variable(T initial_value, VariableOptions options = {})
    requires(Rank == 0)
      : Variable(Tensor<T, 0>(std::move(initial_value)), std::move(options)) {}

  /// The full name of the device the variable lives on (TensorFlow: `.device`).
  /// Inside `strategy.run`, a mirrored variable's copy for the current replica.
  [[nodiscard]] std::string device() const { return detail::local_value(state()).device(); }
  /// The device table id of the device it lives on, where ops updating it are placed. Reads
  /// the state directly: no ReadVariableOp is run, recorded or traced.
  [[nodiscard]] detail::devices::DeviceId device_id() const {
    return detail::tensor_access::buffer(detail::local_value(state()))->device;
  }
  /// How many copies it has: the replicas of the strategy whose scope created it, else 1.
  [[nodiscard]] std::size_t num_copies() const { return state().mirrors.size() + 1; }
  /// Replica `r`'s copy's value, read directly (no op runs): what tests and strategies use to
  /// check that replicas agree. invalid_argument outside 0 .. num_copies() - 1.
  [[nodiscard]] Tensor<T, Rank> copy_value(std::size_t r) const {
    if (r >= num_copies()) {
      throw invalid_argument("Variable '" + state().name + "' has " + std::to_string(num_copies()) +
                             " copies, not a copy " + std::to_string(r));
    }
    return r == 0 ? state().value : state().mirrors[r - 1];
  }
  /// The current value (TensorFlow: `read_value()`); a read node while tracing.
  [[nodiscard]] Tensor<T, Rank> value() const {
    return detail::execute(ops::ReadVariableOp<T, Rank>{resource()});
  }
  /// Same as `value()` (TensorFlow's name).
  [[nodiscard]] Tensor<T, Rank> read_value() const { return value(); }
  /// Reads the value: a variable passes wherever a tensor is expected, as in TensorFlow.
  operator Tensor<T, Rank>() const { return value(); }  // NOLINT: reads convert like TF's

  /// The name given in VariableOptions.
  [[nodiscard]] const std::string& name() const { return state().name; }
  /// Whether tapes watch it without `watch` (VariableOptions::trainable).
  [[nodiscard]] bool trainable() const { return (state().id & detail::trainable_id_bit) != 0; }
  /// The identity its values carry (tapes and gradients key on it); unique per variable.
  [[nodiscard]] std::int64_t id() const { return state().id; }
  /// The element type as a runtime DType.
  [[nodiscard]] static constexpr DType dtype() noexcept { return dtype_v<T>; }
  /// The (fixed) shape.
  // (Read from this thread's copy: another replica may be replacing replica 0's right now.)
  [[nodiscard]] Shape shape() const { return detail::local_value(state()).shape(); }
  /// The (fixed) dims as a `std::array<std::int64_t, Rank>`.
  [[nodiscard]] const auto& dims() const { return detail::local_value(state()).dims(); }
  /// Number of elements (product of dims).
  [[nodiscard]] std::int64_t num_elements() const {
    return detail::local_value(state()).num_elements();
  }
  /// False for a default-constructed handle, which names no variable.
  [[nodiscard]] bool has_value() const noexcept { return state_ != nullptr; }
  /// Whether two handles name the same variable.
  [[nodiscard]] bool same_as(const Variable& other) const noexcept {
    return state_ == other.state_;
  }

  /// Replaces the value; the shape must stay the same (TensorFlow's validate_shape).
  Variable& assign(const Tensor<T, Rank>& new_value) {
    return update<detail::VariableUpdate::assign>(new_value);
  }
  /// Assigning a tensor of another dtype or rank is a compile error with this message.
  template <class U, std::size_t OtherRank>
  Variable& assign(const Tensor<U, OtherRank>&) {
    static_assert(std::same_as<U, T> && OtherRank == Rank,
                  "tf::Variable::assign: the value must have the variable's dtype and rank");
    return *this;
  }
  /// value += delta (same shape).
  Variable& assign_add(const Tensor<T, Rank>& delta)
    requires numeric_element<T>
  {
    return update<detail::VariableUpdate::add>(delta);
  }
  /// value -= delta (same shape).
  Variable& assign_sub(const Tensor<T, Rank>& delta)
    requires numeric_element<T>
  {
    return update<detail::VariableUpdate::sub>(delta);
  }

  /// The variable's own buffer, writable in place, for update kernels (TensorFlow's fused
  /// ResourceApply* ops): copied first when a reader or a tape still holds the current value,
  /// so their snapshots stay intact. Not recorded by tapes or traces; eager only.
  [[nodiscard]] T* writable_data()
    requires numeric_element<T>
  {
    auto [old, out] = overwrite_data();
    if (old != out) {
      std::copy_n(old, num_elements(), out);
    }
    return out;
  }
  /// For update kernels that compute every element from its old value: `{old, out}`, where
  /// `out` is the variable's buffer made writable WITHOUT copying. Usually `out == old` (in
  /// place); when a reader or a tape holds the current value, `out` is a fresh uninitialized
  /// buffer and `old` the held one (kept alive by its holder), so the copy-on-write costs no
  /// extra pass. Every element of `out` must be written. Eager only.
  [[nodiscard]] std::pair<const T*, T*> overwrite_data()
    requires numeric_element<T>
  {
    if (detail::trace::active() != nullptr) {
      throw unimplemented("tf::Variable::overwrite_data on '" + state().name +
                          "' inside a tf::function being traced: there is no buffer yet");
    }
    auto& s = state();
    require_replica_copy("overwrite_data");
    Tensor<T, Rank>& local = detail::local_value(s);
    if (detail::tensor_access::buffer(local)->unique()) {
      T* data = detail::tensor_access::mutable_data(local);
      return {data, data};
    }
    const T* old = local.data();  // still owned by whoever holds it
    // The fresh buffer stays where the variable lives.
    detail::devices::AllocationScope const on_variable_device(
        detail::tensor_access::buffer(local)->device);
    detail::set_variable_value(s, Tensor<T, Rank>::uninitialized(local.dims()));
    return {old, detail::tensor_access::mutable_data(local)};
  }
  /// overwrite_data() where the variable's device reads and writes its elements: device
  /// memory for a variable on a GPU (brought up to date with host writes; the host copy is
  /// dropped as stale), host memory otherwise. For the update kernels of registered backends.
  [[nodiscard]] std::pair<const void*, void*> overwrite_device_data()
    requires numeric_element<T>
  {
    if (detail::trace::active() != nullptr) {
      throw unimplemented("tf::Variable::overwrite_device_data on '" + state().name +
                          "' inside a tf::function being traced: there is no buffer yet");
    }
    auto& s = state();
    require_replica_copy("overwrite_device_data");
    Tensor<T, Rank>& local = detail::local_value(s);
    detail::Buffer* held = detail::tensor_access::buffer(local);
    if (held->unique()) {
      void* data = held->device_bytes();
      held->device_written();
      return {data, data};
    }
    const void* old = held->device_bytes();  // still owned by whoever holds it
    detail::devices::AllocationScope const on_variable_device(held->device);
    detail::set_variable_value(s, Tensor<T, Rank>::uninitialized(local.dims()));
    detail::Buffer* fresh = detail::tensor_access::buffer(local);
    void* out = fresh->device_bytes();
    fresh->device_written();
    return {old, out};
  }

 private:
  using State = detail::VariableState<T, Rank>;

  State& state() const { return *resource(); }
  const std::shared_ptr<State>& resource() const {
    if (state_ == nullptr) {
      throw failed_precondition(
          "tf::Variable: use of a default-constructed Variable that holds no variable");
    }
    return state_;
  }

  // A direct write to one copy of a mirrored variable outside `strategy.run` would leave the
  // replicas disagreeing; assign() (an op) updates every copy there instead.
  void require_replica_copy(const char* what) const {
    if (!state().mirrors.empty() && detail::current_replica() < 0) {
      throw failed_precondition("tf::Variable::" + std::string(what) + " on mirrored variable '" +
                                state().name +
                                "' outside strategy.run: write it with assign(), or inside a "
                                "replica");
    }
  }

  template <detail::VariableUpdate Kind>
  Variable& update(const Tensor<T, Rank>& operand) {
    (void)detail::execute(ops::VariableUpdateOp<T, Rank, Kind>{resource()}, operand);
    return *this;
  }

  std::shared_ptr<State> state_;
};

/// Deduces `Variable<T, Rank>` from an initial `Tensor<T, Rank>`.
template <class T, std::size_t Rank>
Variable(Tensor<T, Rank>, VariableOptions = {}) -> Variable<T, Rank>;
/// Deduces a scalar `Variable<T, 0>` from an initial value of element type `T`.
template <element_type T>
Variable(T, VariableOptions = {}) -> Variable<T, 0>;

TAPEFLOW_END_NAMESPACE
