// `tf::AnyVariable`: a type-erased handle to a `tf::Variable<T, R>` of any dtype and rank, so
// layers, optimizers, tapes and checkpoints can hold mixed lists of variables. It lives in core
// (not keras) because checkpoints and the tape take such lists below keras.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// A handle to a variable of any dtype and rank (copies share the variable, as Variable's do).
///
///     tf::AnyVariable any = kernel;           // a tf::Variable<float, 2>
///     auto back = any.as<float, 2>();                // throws invalid_argument on a mismatch
class AnyVariable {
 public:
  AnyVariable() = default;
  /// Erases a typed variable (shares it).
  template <class T, std::size_t R>
  AnyVariable(Variable<T, R> v)  // NOLINT(google-explicit-constructor): erasure is lossless
      : impl_(std::make_shared<Holder<T, R>>(std::move(v))) {}

  /// False for a default-constructed handle.
  [[nodiscard]] bool has_value() const noexcept { return impl_ != nullptr; }
  /// `Variable::id()` of the erased variable.
  [[nodiscard]] std::int64_t id() const { return get().id(); }
  /// `Variable::name()` of the erased variable.
  [[nodiscard]] const std::string& name() const { return get().name(); }
  /// `Variable::trainable()` of the erased variable.
  [[nodiscard]] bool trainable() const { return get().trainable(); }
  /// The element type.
  [[nodiscard]] DType dtype() const { return get().dtype(); }
  /// The rank.
  [[nodiscard]] std::size_t rank() const { return get().rank(); }
  /// The shape.
  [[nodiscard]] Shape shape() const { return get().shape(); }
  /// Number of elements.
  [[nodiscard]] std::int64_t num_elements() const { return get().shape().num_elements(); }
  /// The current value (a snapshot).
  [[nodiscard]] AnyTensor value() const { return get().value(); }
  /// `Variable::num_copies()`: the replicas of the strategy whose scope created it, else 1.
  [[nodiscard]] std::size_t num_copies() const { return get().num_copies(); }
  /// `Variable::copy_value(r)`: replica `r`'s copy, read directly.
  [[nodiscard]] AnyTensor copy_value(std::size_t r) const { return get().copy_value(r); }
  /// The device table id of the device the variable lives on (CPU:0 for an empty handle),
  /// where update ops are placed.
  [[nodiscard]] detail::devices::DeviceId device_id() const {
    return impl_ != nullptr ? get().device_id() : detail::devices::DeviceId{0};
  }
  /// The full name of the device the variable lives on (Variable::device).
  [[nodiscard]] std::string device() const { return value().device(); }
  /// Zeros of the variable's dtype and shape.
  [[nodiscard]] AnyTensor zeros_like() const { return get().zeros_like(); }
  /// Replaces the value; dtype, rank and shape must match (invalid_argument otherwise).
  void assign(const AnyTensor& v) const { get().assign(v); }
  /// Whether two handles name the same variable.
  [[nodiscard]] bool same_as(const AnyVariable& other) const { return id() == other.id(); }
  /// `Variable::writable_data()` of the erased variable (update kernels); `unimplemented` for
  /// string variables.
  [[nodiscard]] void* writable_raw_data() const { return get().writable_raw_data(); }
  /// `Variable::overwrite_data()` of the erased variable: {old values, buffer to write}.
  [[nodiscard]] std::pair<const void*, void*> overwrite_raw_data() const {
    return get().overwrite_raw_data();
  }
  /// `Variable::overwrite_device_data()` of the erased variable: {old values, buffer to
  /// write}, where the variable's device keeps them (device memory for a GPU variable).
  [[nodiscard]] std::pair<const void*, void*> overwrite_device_data() const {
    return get().overwrite_device_data();
  }

  /// The typed variable; throws invalid_argument naming both types when they differ.
  template <class T, std::size_t R>
  [[nodiscard]] Variable<T, R> as() const {
    auto* h = dynamic_cast<const Holder<T, R>*>(&get());
    if (h == nullptr) {
      throw invalid_argument("AnyVariable::as<" + std::string(dtype_traits<T>::name) + ", " +
                             std::to_string(R) + ">(): variable '" + name() + "' is a " +
                             std::string(dtype_name(dtype())) + " variable of shape " +
                             shape().to_string());
    }
    return h->v;
  }

 private:
  struct Base {
    virtual ~Base() = default;
    [[nodiscard]] virtual std::int64_t id() const = 0;
    [[nodiscard]] virtual const std::string& name() const = 0;
    [[nodiscard]] virtual bool trainable() const = 0;
    [[nodiscard]] virtual DType dtype() const = 0;
    [[nodiscard]] virtual std::size_t rank() const = 0;
    [[nodiscard]] virtual Shape shape() const = 0;
    [[nodiscard]] virtual AnyTensor value() const = 0;
    [[nodiscard]] virtual std::size_t num_copies() const = 0;
    [[nodiscard]] virtual AnyTensor copy_value(std::size_t r) const = 0;
    [[nodiscard]] virtual AnyTensor zeros_like() const = 0;
    virtual void assign(const AnyTensor& v) const = 0;
    [[nodiscard]] virtual void* writable_raw_data() const = 0;
    [[nodiscard]] virtual std::pair<const void*, void*> overwrite_raw_data() const = 0;
    [[nodiscard]] virtual std::pair<const void*, void*> overwrite_device_data() const = 0;
    [[nodiscard]] virtual detail::devices::DeviceId device_id() const = 0;
  };
  template <class T, std::size_t R>
  struct Holder final : Base {
    explicit Holder(Variable<T, R> var) : v(std::move(var)) {}
    std::int64_t id() const override { return v.id(); }
    const std::string& name() const override { return v.name(); }
    bool trainable() const override { return v.trainable(); }
    DType dtype() const override { return dtype_v<T>; }
    std::size_t rank() const override { return R; }
    Shape shape() const override { return v.shape(); }
    AnyTensor value() const override { return v.value(); }
    std::size_t num_copies() const override { return v.num_copies(); }
    AnyTensor copy_value(std::size_t r) const override { return v.copy_value(r); }
    detail::devices::DeviceId device_id() const override { return v.device_id(); }
    AnyTensor zeros_like() const override {
      if constexpr (numeric_element<T>) {
        return AnyTensor(tapeflow::zeros_like(v.value()));
      } else {
        throw unimplemented("AnyVariable::zeros_like: '" + v.name() + "' holds strings");
      }
    }
    void assign(const AnyTensor& t) const override {
      auto copy = v;  // handles share the variable
      copy.assign(t.as<T, R>());
    }
    void* writable_raw_data() const override {
      if constexpr (numeric_element<T>) {
        auto copy = v;
        return copy.writable_data();
      } else {
        throw unimplemented("AnyVariable::writable_raw_data: '" + v.name() +
                            "' holds strings, which update kernels do not write");
      }
    }
    std::pair<const void*, void*> overwrite_raw_data() const override {
      if constexpr (numeric_element<T>) {
        auto copy = v;
        auto [old, out] = copy.overwrite_data();
        return {old, out};
      } else {
        throw unimplemented("AnyVariable::overwrite_raw_data: '" + v.name() +
                            "' holds strings, which update kernels do not write");
      }
    }
    std::pair<const void*, void*> overwrite_device_data() const override {
      if constexpr (numeric_element<T>) {
        auto copy = v;
        return copy.overwrite_device_data();
      } else {
        throw unimplemented("AnyVariable::overwrite_device_data: '" + v.name() +
                            "' holds strings, which update kernels do not write");
      }
    }
    Variable<T, R> v;
  };
  const Base& get() const {
    if (impl_ == nullptr) {
      throw failed_precondition("tf::AnyVariable: empty handle");
    }
    return *impl_;
  }
  std::shared_ptr<const Base> impl_;
};

/// Ids of `vars`, in order (for `GradientTape::gradient_by_id`).
inline std::vector<std::int64_t> ids_of(std::span<const AnyVariable> vars) {
  std::vector<std::int64_t> ids;
  ids.reserve(vars.size());
  for (const auto& v : vars) {
    ids.push_back(v.id());
  }
  return ids;
}

TAPEFLOW_END_NAMESPACE
