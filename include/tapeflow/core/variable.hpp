// `tapeflow::Variable<T, Rank>`: the one mutable holder of tensor state (TensorFlow:
// `tf.Variable`).
#pragma once

#include <algorithm>
#include <concepts>
#include <memory>
#include <string>
#include <utility>

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
/// `tf.Variable` are), so layers, optimizers and checkpoints can share it.
///
///     tf::Variable<float, 2> w(tf::random::normal<float>({784, 10}, {.seed = 1}));
///     w.assign_sub(0.1f * grad);
///
/// Reading (`value()`, or passing the variable to an op) gives an immutable snapshot: later
/// assignments do not change tensors read before. A GradientTape watches trainable variables
/// read while it records.
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

  /// The current value (TensorFlow: `read_value()`).
  [[nodiscard]] const Tensor<T, Rank>& value() const { return state().value; }
  [[nodiscard]] Tensor<T, Rank> read_value() const { return state().value; }
  operator Tensor<T, Rank>() const { return state().value; }  // NOLINT: reads convert like TF's

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
  Variable& assign(const Tensor<T, Rank>& new_value) {
    auto& s = state();
    check_shape("assign", new_value);
    if (detail::tensor_access::buffer(s.value)->unique()) {
      // Nobody else reads the old value: overwrite it instead of allocating.
      std::copy_n(new_value.data(), new_value.num_elements(),
                  detail::tensor_access::mutable_data(s.value));
    } else {
      s.value = new_value;
      detail::tensor_access::set_id(s.value, s.id);
    }
    return *this;
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
    return update("assign_add", delta, [](T a, T b) { return static_cast<T>(a + b); });
  }
  /// value -= delta (same shape).
  Variable& assign_sub(const Tensor<T, Rank>& delta)
    requires numeric_element<T>
  {
    return update("assign_sub", delta, [](T a, T b) { return static_cast<T>(a - b); });
  }

 private:
  struct State {
    Tensor<T, Rank> value;
    std::string name;
    std::int64_t id = 0;
  };

  State& state() const {
    if (state_ == nullptr) {
      throw failed_precondition(
          "tf::Variable: use of a default-constructed Variable that holds no variable");
    }
    return *state_;
  }
  void check_shape(const char* what, const Tensor<T, Rank>& other) const {
    other.require_value(what);
    if (other.dims() != state().value.dims()) {
      throw invalid_argument(std::string("Variable::") + what + " on '" + state().name +
                             "': shape " + other.shape().to_string() +
                             " does not match the variable's shape " +
                             state().value.shape().to_string());
    }
  }
  template <class Fun>
  Variable& update(const char* what, const Tensor<T, Rank>& delta, Fun f) {
    auto& s = state();
    check_shape(what, delta);
    const T* d = delta.data();
    std::int64_t const n = delta.num_elements();
    if (!detail::tensor_access::buffer(s.value)->unique()) {
      // Someone (a tape, a reader) holds the old value: keep it intact, write a new buffer.
      auto fresh = Tensor<T, Rank>::uninitialized(s.value.dims());
      std::copy_n(s.value.data(), n, detail::tensor_access::mutable_data(fresh));
      s.value = std::move(fresh);
      detail::tensor_access::set_id(s.value, s.id);
    }
    T* v = detail::tensor_access::mutable_data(s.value);
    for (std::int64_t i = 0; i < n; ++i) {
      v[i] = f(v[i], d[i]);
    }
    return *this;
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
