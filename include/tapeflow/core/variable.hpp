// `tapeflow::Variable<T, Rank>`: the one mutable holder of tensor state (TensorFlow:
// `tf.Variable`).
#pragma once

#include <algorithm>
#include <concepts>
#include <memory>
#include <string>
#include <utility>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// Options of a Variable (TensorFlow's keyword arguments).
struct VariableOptions {
  std::string name = "Variable";
  bool trainable = true;
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
  using value_type = T;
  static constexpr std::size_t rank_v = Rank;

  Variable() = default;  // holds no variable; assign a constructed one before use
  explicit Variable(Tensor<T, Rank> initial_value, VariableOptions options = {})
      : state_(std::make_shared<State>()) {
    initial_value.require_value("Variable(initial_value)");
    state_->name = std::move(options.name);
    state_->id = detail::new_tensor_id() | detail::variable_id_bit |
                 (options.trainable ? detail::trainable_id_bit : 0);
    state_->value = std::move(initial_value);
    detail::tensor_access::set_id(state_->value, state_->id);
  }
  explicit Variable(T initial_value, VariableOptions options = {})
    requires(Rank == 0)
      : Variable(Tensor<T, 0>(std::move(initial_value)), std::move(options)) {}

  /// The current value (TensorFlow: `read_value()`); a read node while tracing.
  [[nodiscard]] Tensor<T, Rank> value() const {
    if (detail::trace::Graph* graph = detail::trace::active(); graph != nullptr) {
      return traced_read(*graph);
    }
    return state().value;
  }
  [[nodiscard]] Tensor<T, Rank> read_value() const { return value(); }
  operator Tensor<T, Rank>() const { return value(); }  // NOLINT: reads convert like TF's

  [[nodiscard]] const std::string& name() const { return state().name; }
  [[nodiscard]] bool trainable() const { return (state().id & detail::trainable_id_bit) != 0; }
  [[nodiscard]] std::int64_t id() const { return state().id; }
  [[nodiscard]] static constexpr DType dtype() noexcept { return dtype_v<T>; }
  [[nodiscard]] Shape shape() const { return state().value.shape(); }
  [[nodiscard]] const auto& dims() const { return state().value.dims(); }
  [[nodiscard]] std::int64_t num_elements() const { return state().value.num_elements(); }
  [[nodiscard]] bool has_value() const noexcept { return state_ != nullptr; }
  /// Whether two handles name the same variable.
  [[nodiscard]] bool same_as(const Variable& other) const noexcept {
    return state_ == other.state_;
  }

  /// Replaces the value; the shape must stay the same (TensorFlow's validate_shape).
  Variable& assign(const Tensor<T, Rank>& new_value) { return update(Update::assign, new_value); }
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
    return update(Update::add, delta);
  }
  /// value -= delta (same shape).
  Variable& assign_sub(const Tensor<T, Rank>& delta)
    requires numeric_element<T>
  {
    return update(Update::sub, delta);
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
    if (detail::tensor_access::buffer(s.value)->unique()) {
      T* data = detail::tensor_access::mutable_data(s.value);
      return {data, data};
    }
    const T* old = s.value.data();  // still owned by whoever holds it
    s.value = Tensor<T, Rank>::uninitialized(s.value.dims());
    detail::tensor_access::set_id(s.value, s.id);
    return {old, detail::tensor_access::mutable_data(s.value)};
  }

 private:
  struct State {
    Tensor<T, Rank> value;
    std::string name;
    std::int64_t id = 0;
  };
  enum class Update { assign, add, sub };

  State& state() const {
    if (state_ == nullptr) {
      throw failed_precondition(
          "tf::Variable: use of a default-constructed Variable that holds no variable");
    }
    return *state_;
  }

  static void check_shape(const State& s, const char* what, const Tensor<T, Rank>& other) {
    if (!other.is_symbolic()) {
      other.require_value(what);
    }
    if (other.dims() != s.value.dims()) {
      throw invalid_argument(std::string("Variable::") + what + " on '" + s.name + "': shape " +
                             other.shape().to_string() + " does not match the variable's shape " +
                             s.value.shape().to_string());
    }
  }

  Variable& update(Update kind, const Tensor<T, Rank>& operand) {
    auto& s = state();
    const char* what = kind == Update::assign ? "assign"
                       : kind == Update::add  ? "assign_add"
                                              : "assign_sub";
    check_shape(s, what, operand);
    if (detail::trace::Graph* graph = detail::trace::active(); graph != nullptr) {
      detail::trace::GraphNode node;
      node.op = kind == Update::assign ? "AssignVariableOp"
                : kind == Update::add  ? "AssignAddVariableOp"
                                       : "AssignSubVariableOp";
      node.attrs = {{"variable", s.name}};
      node.stateful = true;
      node.dtype = dtype_v<T>;
      node.shape = s.value.shape();
      node.inputs.push_back(graph->slot_of(operand));
      node.run = [state = state_, kind](std::span<const AnyTensor> values) {
        apply(*state, kind, values[0].template unchecked_as<T, Rank>());
        return AnyTensor{};
      };
      graph->add_node(std::move(node), 0);
      return *this;
    }
    apply(s, kind, operand);
    return *this;
  }

  // Someone (a tape, a reader) may hold the current value: keep it intact, write a new buffer.
  static void make_unique(State& s) {
    if (detail::tensor_access::buffer(s.value)->unique()) {
      return;
    }
    auto fresh = Tensor<T, Rank>::uninitialized(s.value.dims());
    std::copy_n(s.value.data(), s.value.num_elements(), detail::tensor_access::mutable_data(fresh));
    s.value = std::move(fresh);
    detail::tensor_access::set_id(s.value, s.id);
  }

  static void apply(State& s, Update kind, const Tensor<T, Rank>& operand) {
    const bool unique = detail::tensor_access::buffer(s.value)->unique();
    if (kind == Update::assign && !unique) {
      s.value = operand;  // share the new value; readers of the old one keep theirs
      detail::tensor_access::set_id(s.value, s.id);
      return;
    }
    make_unique(s);
    T* v = detail::tensor_access::mutable_data(s.value);
    const T* d = operand.data();
    const std::int64_t n = operand.num_elements();
    if (kind == Update::assign) {
      std::copy_n(d, n, v);
    } else if constexpr (numeric_element<T>) {
      if (kind == Update::add) {
        for (std::int64_t i = 0; i < n; ++i) {
          v[i] = static_cast<T>(v[i] + d[i]);
        }
      } else {
        for (std::int64_t i = 0; i < n; ++i) {
          v[i] = static_cast<T>(v[i] - d[i]);
        }
      }
    }
  }

  // A ReadVariableOp node: its output keeps the variable's id bits, so a GradientTape inside
  // the traced body watches and differentiates it as it would the variable.
  Tensor<T, Rank> traced_read(detail::trace::Graph& graph) const {
    auto& s = state();
    auto out = detail::tensor_access::symbolic<T, Rank>(s.value.dims(), s.id);
    detail::trace::GraphNode node;
    node.op = "ReadVariableOp";
    node.attrs = {{"variable", s.name}};
    node.stateful = true;
    node.dtype = dtype_v<T>;
    node.shape = s.value.shape();
    node.run = [state = state_](std::span<const AnyTensor>) { return AnyTensor(state->value); };
    graph.add_node(std::move(node), out.id());
    return out;
  }

  std::shared_ptr<State> state_;
};

template <class T, std::size_t Rank>
Variable(Tensor<T, Rank>, VariableOptions = {}) -> Variable<T, Rank>;
template <element_type T>
Variable(T, VariableOptions = {}) -> Variable<T, 0>;

template <class X>
struct is_variable : std::false_type {};
template <class T, std::size_t R>
struct is_variable<Variable<T, R>> : std::true_type {};

TAPEFLOW_END_NAMESPACE
