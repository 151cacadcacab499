// `tapeflow::AnyTensor`: a tensor whose dtype and rank are run-time values.
//
// For heterogeneous containers (checkpoints, graphs, gradients of mixed variables, dataset
// elements read from files). Converting back to a typed tensor is checked.
#pragma once

#include <concepts>
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// A type-erased tensor: shares the buffer of the typed tensor it was made from.
///
///     tf::AnyTensor any = tf::constant<float>({1, 2});
///     auto back = any.as<float, 1>();   // throws invalid_argument if dtype or rank differ
class AnyTensor {
 public:
  AnyTensor() noexcept = default;
  /// Erases the type of `t` (implicit): shares its buffer and keeps its id.
  template <class T, std::size_t Rank>
  AnyTensor(const Tensor<T, Rank>& t)  // NOLINT(google-explicit-constructor): erasure is lossless
      : dtype_(dtype_v<T>),
        shape_(t.dims()),
        buffer_(detail::tensor_access::buffer(t)),
        id_(t.id()) {
    if (buffer_ != nullptr) {
      buffer_->retain();
    }
  }
  /// Shares `other`'s buffer (no element copy).
  AnyTensor(const AnyTensor& other) noexcept
      : dtype_(other.dtype_), shape_(other.shape_), buffer_(other.buffer_), id_(other.id_) {
    if (buffer_ != nullptr) {
      buffer_->retain();
    }
  }
  /// Takes `other`'s buffer; `other` is left without a value.
  AnyTensor(AnyTensor&& other) noexcept
      : dtype_(other.dtype_),
        shape_(other.shape_),
        buffer_(std::exchange(other.buffer_, nullptr)),
        id_(other.id_) {}
  /// Makes this share `other`'s buffer (copy-and-swap).
  AnyTensor& operator=(AnyTensor other) noexcept {
    std::swap(dtype_, other.dtype_);
    std::swap(shape_, other.shape_);
    std::swap(buffer_, other.buffer_);
    std::swap(id_, other.id_);
    return *this;
  }
  ~AnyTensor() {
    if (buffer_ != nullptr) {
      buffer_->release();
    }
  }
  /// A symbolic tensor (no value) whose type is known at run time: the stand-in for an
  /// AnyTensor argument of a tf::function being traced (Note [Tracing]).
  [[nodiscard]] static AnyTensor symbolic(DType dtype, const Shape& shape) {
    AnyTensor t;
    t.dtype_ = dtype;
    t.shape_ = shape;
    t.id_ = detail::new_tensor_id() | detail::symbolic_id_bit;
    return t;
  }
  /// A new tensor of `dtype` and `shape` where new buffers go now (Note [Placement]), numeric
  /// elements unset and strings empty, as Tensor::uninitialized. Allocated flat and given the
  /// shape: one instantiation per dtype, not per dtype and rank (compile time).
  [[nodiscard]] static AnyTensor uninitialized(DType dtype, const Shape& shape) {
    for (std::size_t i = 0; i < shape.rank(); ++i) {
      if (shape[i] < 0) {
        throw invalid_argument("AnyTensor::uninitialized: negative dimension in shape " +
                               shape.to_string());
      }
    }
    return visit_dtype(dtype, [&]<class T>() {
      AnyTensor out(Tensor<T, 1>::uninitialized({shape.num_elements()}));
      out.shape_ = shape;
      return out;
    });
  }
  /// Drops the value, as assigning `AnyTensor{}` does, without building a temporary.
  void reset() noexcept {
    if (buffer_ != nullptr) {
      buffer_->release();
      buffer_ = nullptr;
    }
    dtype_ = DType::invalid;
    shape_ = Shape{};
    id_ = 0;
  }

  /// Element type (a run-time value).
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  /// Dimensions.
  [[nodiscard]] const Shape& shape() const noexcept { return shape_; }
  /// Number of dimensions.
  [[nodiscard]] std::size_t rank() const noexcept { return shape_.rank(); }
  /// Number of elements (product of dims).
  [[nodiscard]] std::int64_t num_elements() const noexcept { return shape_.num_elements(); }
  /// Whether this holds elements (false when default-constructed or symbolic).
  [[nodiscard]] bool has_value() const noexcept { return buffer_ != nullptr; }
  /// Whether this is the only handle to its elements, so writing them in place is unseen.
  [[nodiscard]] bool sole_owner() const noexcept { return buffer_ != nullptr && buffer_->unique(); }
  /// The full name of the device holding the value (Tensor::device); empty without one.
  [[nodiscard]] std::string device() const {
    return buffer_ ? std::string(detail::devices::name(buffer_->device)) : std::string();
  }
  /// Identity of the tensor it was made from (Tensor::id), used by GradientTape.
  [[nodiscard]] std::int64_t id() const noexcept { return id_; }
  /// Whether this stands for a value inside a tf::function being traced.
  [[nodiscard]] bool is_symbolic() const noexcept { return (id_ & detail::symbolic_id_bit) != 0; }
  /// Whether this holds a tensor, real or symbolic (false when default-constructed).
  [[nodiscard]] bool engaged() const noexcept { return has_value() || is_symbolic(); }
  /// Raw element bytes (strings: std::string objects), for formats and kernels.
  [[nodiscard]] const void* raw_data() const { return buffer_ ? buffer_->bytes() : nullptr; }
  /// Writable raw element bytes of a tensor the caller just made (not yet shared), for host
  /// code filling it.
  [[nodiscard]] void* mutable_raw_data() {
    return buffer_ ? static_cast<void*>(buffer_->writable_data<std::byte>()) : nullptr;
  }
  /// Writable element bytes in a buffer this handle alone holds: a shared buffer's elements
  /// are first copied (copy-on-write, as Tensor::mutable_data does), and the handle gets a
  /// fresh identity. For host code that computes a result in place, such as a collective.
  [[nodiscard]] void* unshared_raw_data() {
    if (buffer_ == nullptr) {
      return nullptr;
    }
    visit_dtype(dtype_, [&]<class T>() { detail::unshare<T>(buffer_); });
    id_ = detail::new_tensor_id();
    return buffer_->writable_data<std::byte>();
  }
  /// Element bytes where the tensor's device reads them (device memory for a tensor on a GPU,
  /// brought up to date with host writes), for the kernels of registered backends.
  [[nodiscard]] const void* device_data() const {
    return buffer_ ? buffer_->device_bytes() : nullptr;
  }
  /// Element bytes where the tensor's device writes them, for a registered kernel filling its
  /// output or updating a buffer in place (any host copy is dropped as stale).
  [[nodiscard]] void* mutable_device_data() const {
    if (buffer_ == nullptr) {
      return nullptr;
    }
    void* elements = buffer_->device_bytes();
    buffer_->device_written();
    return elements;
  }

  /// This tensor where new buffers go now (Note [Placement]): itself when it is there (or
  /// holds no value), else a copy of its elements there, with the same identity.
  [[nodiscard]] AnyTensor on_allocation_device() const {
    if (buffer_ == nullptr || buffer_->device == detail::devices::allocation_device()) {
      return *this;
    }
    return visit_dtype(dtype_, [&]<class T>() {
      // Rank-independent: copy the elements flat, then give the copy this tensor's shape.
      AnyTensor out(detail::tensor_access::on_allocation_device(
          detail::tensor_access::wrap<T, 1>(buffer_, {num_elements()}, id_)));
      out.shape_ = shape_;
      return out;
    });
  }

  /// The same elements under `shape` (as many elements), as a new tensor to a tape: no copy
  /// and no op, so neither a tape nor a trace sees it. For rank-independent library code on
  /// values no gradient flows into (distribute's batch split); programs use tf::reshape.
  [[nodiscard]] AnyTensor with_shape(const Shape& shape) const {
    if (shape.num_elements() != num_elements() || !has_value()) {
      throw invalid_argument("AnyTensor::with_shape: a " + std::string(dtype_name(dtype_)) +
                             " tensor of shape " + shape_.to_string() +
                             (has_value() ? "" : " without a value") + " cannot be viewed as " +
                             shape.to_string());
    }
    AnyTensor out(*this);
    out.shape_ = shape;
    out.id_ = detail::new_tensor_id();
    return out;
  }

  /// Whether this holds a `Tensor<T, Rank>`.
  template <class T, std::size_t Rank>
  [[nodiscard]] bool holds() const noexcept {
    return dtype_ == dtype_v<T> && shape_.rank() == Rank;
  }

  /// The typed tensor; throws invalid_argument naming both types when they differ.
  template <class T, std::size_t Rank>
  [[nodiscard]] Tensor<T, Rank> as() const {
    if (!holds<T, Rank>()) {
      throw_not_held(dtype_v<T>, Rank);
    }
    return unchecked_as<T, Rank>();
  }
  /// As `as()`, for callers that already checked dtype and rank.
  template <class T, std::size_t Rank>
  [[nodiscard]] Tensor<T, Rank> unchecked_as() const noexcept {
    std::array<std::int64_t, Rank> dims{};
    for (std::size_t i = 0; i < Rank; ++i) {
      dims[i] = shape_[i];
    }
    return detail::tensor_access::wrap<T, Rank>(buffer_, dims, id_);
  }

  /// Prints as TensorFlow's repr does: `tf.Tensor(<values>, shape=(...), dtype=...)`.
  // A template (of AnyTensor only) so that formatting every dtype compiles only in programs
  // that print an AnyTensor.
  template <std::same_as<AnyTensor> Any>
  friend std::ostream& operator<<(std::ostream& os, const Any& t) {
    if (!t.has_value()) {
      return os << "tf.Tensor(<no value>, dtype=" << dtype_name(t.dtype_) << ")";
    }
    return visit_dtype(t.dtype_, [&]<class T>() -> std::ostream& {
      std::string text = detail::format::array_text<T>(
          std::span<T const>(static_cast<T const*>(t.raw_data()),
                             static_cast<std::size_t>(t.num_elements())),
          t.shape_);
      if (text.find('\n') != std::string::npos) {
        text.insert(0, "\n");
      }
      return os << "tf.Tensor(" << text << ", shape=" << t.shape_.to_string()
                << ", dtype=" << dtype_name(t.dtype_) << ")";
    });
  }

 private:
  // as()'s error, out of line: one copy, not one per type asked for (compile time).
  [[noreturn]] TAPEFLOW_COLD void throw_not_held(DType want, std::size_t rank) const {
    throw invalid_argument("AnyTensor::as<" + std::string(dtype_name(want)) + ", " +
                           std::to_string(rank) + ">(): holds a " +
                           std::string(dtype_name(dtype_)) + " tensor of shape " +
                           shape_.to_string());
  }
  DType dtype_ = DType::invalid;
  Shape shape_;
  detail::Buffer* buffer_ = nullptr;
  std::int64_t id_ = 0;
};

TAPEFLOW_END_NAMESPACE
