// The ops that read and write a variable (TensorFlow's ReadVariableOp, AssignVariableOp,
// AssignAddVariableOp, AssignSubVariableOp). `tf::Variable` runs them through
// `detail::execute` like any other op, so reads and writes trace into graphs under these names.
// IWYU pragma: private, include <tapeflow/ops/state/variable.hpp>
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

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
};

/// Gives `value` the variable's identity (tapes watch trainable variables by their id).
template <class T, std::size_t Rank>
void set_variable_value(VariableState<T, Rank>& s, Tensor<T, Rank> value) {
  s.value = std::move(value);
  tensor_access::set_id(s.value, s.id);
}

/// Makes the variable's buffer its own before an in-place write: a reader or a tape may still
/// hold the current value, which must stay intact.
template <class T, std::size_t Rank>
void make_variable_buffer_unique(VariableState<T, Rank>& s) {
  if (tensor_access::buffer(s.value)->unique()) {
    return;
  }
  // The copy stays where the variable lives, even when the writing op fell back to the CPU.
  devices::AllocationScope const on_variable_device(tensor_access::buffer(s.value)->device);
  auto fresh = Tensor<T, Rank>::uninitialized(s.value.dims());
  if constexpr (std::is_trivially_copyable_v<T>) {
    copy_elements(*tensor_access::buffer(s.value), *tensor_access::buffer(fresh));
  } else {
    std::copy_n(s.value.data(), s.value.num_elements(), tensor_access::mutable_data(fresh));
  }
  set_variable_value(s, std::move(fresh));
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
    return detail::tensor_access::buffer(resource->value)->device;
  }
  [[nodiscard]] Tensor<T, Rank> forward() const { return resource->value; }
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
    return detail::tensor_access::buffer(resource->value)->device;
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
    if (Kind == detail::VariableUpdate::assign &&
        !detail::tensor_access::buffer(s.value)->unique() &&
        detail::tensor_access::buffer(value)->device ==
            detail::tensor_access::buffer(s.value)->device) {
      detail::set_variable_value(s, value);  // share it; readers of the old value keep theirs
      return;
    }
    detail::make_variable_buffer_unique(s);
    T* v = detail::tensor_access::mutable_data(s.value);
    const T* d = value.data();
    const std::int64_t n = value.num_elements();
    if constexpr (Kind == detail::VariableUpdate::assign) {
      std::copy_n(d, n, v);
    } else {
      static_assert(numeric_element<T>, "assign_add/assign_sub need a numeric variable");
      for (std::int64_t i = 0; i < n; ++i) {
        v[i] = Kind == detail::VariableUpdate::add ? static_cast<T>(v[i] + d[i])
                                                   : static_cast<T>(v[i] - d[i]);
      }
    }
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
