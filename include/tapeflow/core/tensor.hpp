// `tapeflow::Tensor<T, Rank>`: an immutable, typed, reference-counted n-dimensional array.
//
// dtype and rank are template parameters, so mixing them up is a compile error; the shape is a
// run-time value. Copies share one buffer (cheap), and no public member mutates elements:
// that keeps the gradient tape and graph capture free of aliasing questions. `Variable` is the
// one mutable holder. This header does not include Eigen: only op kernels do.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/detail/buffer.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

template <element_type T, std::size_t Rank>
class Tensor;

namespace detail {
struct tensor_access;
/// Number of elements of a dims array (1 for rank 0).
template <std::size_t Rank>
constexpr std::int64_t product(const std::array<std::int64_t, Rank>& dims) noexcept {
  std::int64_t n = 1;
  for (auto d : dims) {
    n *= d;
  }
  return n;
}
}  // namespace detail

/// A typed tensor of element type `T` (float, double, int32_t, int64_t, uint8_t, bool,
/// std::string) and static rank `Rank` (TensorFlow: `tf.Tensor`).
///
///     tf::Tensor<float, 2> a = tf::constant<float>({{1, 2}, {3, 4}});
///     std::cout << a;  // tf.Tensor(
///                      // [[1. 2.]
///                      //  [3. 4.]], shape=(2, 2), dtype=float32)
///
/// A default-constructed tensor holds no value; using it in an op throws failed_precondition.
template <element_type T, std::size_t Rank>
class Tensor {
  static_assert(Rank <= max_rank, "tf::Tensor<T, Rank>: Rank exceeds tapeflow's maximum rank (8)");

 public:
  using value_type = T;                              ///< element type
  static constexpr std::size_t rank_v = Rank;        ///< number of dimensions
  using dims_type = std::array<std::int64_t, Rank>;  ///< the dimensions

  Tensor() noexcept = default;
  /// Shares `other`'s buffer and identity (no element copy).
  Tensor(const Tensor& other) noexcept
      : buffer_(other.buffer_), id_(other.id_), dims_(other.dims_) {
    if (buffer_ != nullptr) {
      buffer_->retain();
    }
  }
  /// Takes `other`'s buffer; `other` is left without a value.
  Tensor(Tensor&& other) noexcept
      : buffer_(std::exchange(other.buffer_, nullptr)), id_(other.id_), dims_(other.dims_) {}
  /// Makes this share `other`'s buffer and identity.
  Tensor& operator=(const Tensor& other) noexcept {
    Tensor(other).swap(*this);
    return *this;
  }
  /// Takes `other`'s buffer; `other` is left without a value.
  Tensor& operator=(Tensor&& other) noexcept {
    Tensor(std::move(other)).swap(*this);
    return *this;
  }
  ~Tensor() {
    if (buffer_ != nullptr) {
      buffer_->release();
    }
  }
  /// Exchanges buffers, identities and dims with `other`.
  void swap(Tensor& other) noexcept {
    std::swap(buffer_, other.buffer_);
    std::swap(id_, other.id_);
    std::swap(dims_, other.dims_);
  }

  /// A tensor holding a single value (rank 0 only), e.g. `Tensor<float, 0> x = 1.0f;`.
  Tensor(T value)  // NOLINT(google-explicit-constructor): TF converts scalars implicitly
    requires(Rank == 0)
      : Tensor(uninitialized({})) {
    buffer_->template writable_data<T>()[0] = std::move(value);
  }

  /// Element type as a run-time value.
  [[nodiscard]] static constexpr DType dtype() noexcept { return dtype_v<T>; }
  /// Number of dimensions (`Rank`).
  [[nodiscard]] static constexpr std::size_t rank() noexcept { return Rank; }
  /// Dimensions as a run-time Shape (TensorFlow: `.shape`).
  [[nodiscard]] Shape shape() const { return Shape(dims_); }
  /// Dimensions as a fixed-size array.
  [[nodiscard]] const dims_type& dims() const noexcept { return dims_; }
  /// Size of dimension `axis`; `axis` is not checked.
  [[nodiscard]] std::int64_t dim(std::size_t axis) const noexcept { return dims_[axis]; }
  /// Number of elements (product of dims; 1 for a scalar).
  [[nodiscard]] std::int64_t num_elements() const noexcept { return detail::product(dims_); }
  /// Same as num_elements().
  [[nodiscard]] std::int64_t size() const noexcept { return num_elements(); }

  /// Whether this tensor holds a value (false for default-constructed and symbolic tensors).
  [[nodiscard]] bool has_value() const noexcept { return buffer_ != nullptr; }
  /// Whether this stands for a value inside a tf::function being traced (Note [Tracing]).
  [[nodiscard]] bool is_symbolic() const noexcept { return (id_ & detail::symbolic_id_bit) != 0; }
  explicit operator bool() const = delete;  // ambiguous for bool tensors: use has_value()

  /// The full name of the device holding the value, as TensorFlow's `.device`:
  /// "/job:localhost/replica:0/task:0/device:CPU:0"; empty without a value (symbolic tensors).
  [[nodiscard]] std::string device() const {
    return buffer_ ? std::string(detail::devices::name(buffer_->device)) : std::string();
  }

  /// Identity used by GradientTape (copies share it).
  [[nodiscard]] std::int64_t id() const noexcept { return id_; }

  /// Read-only view of the elements in row-major order (of a tensor on a GPU, a host copy
  /// made on first use).
  [[nodiscard]] const T* data() const { return buffer_ ? buffer_->template data<T>() : nullptr; }
  /// Read-only view of the elements in row-major order (empty when there is no value).
  [[nodiscard]] std::span<const T> values() const {
    return {data(), static_cast<std::size_t>(buffer_ ? num_elements() : 0)};
  }
  /// A copy of the elements in row-major order (TensorFlow: `.numpy()`, flattened).
  /// A symbolic tensor (inside a tf::function being traced) has no values: failed_precondition.
  [[nodiscard]] std::vector<T> numpy() const {
    if (is_symbolic()) {
      require_value("numpy()");
    }
    return {values().begin(), values().end()};
  }
  /// The same as `numpy()`: the elements, row-major, as a `std::vector`.
  [[nodiscard]] std::vector<T> to_vector() const { return numpy(); }

  /// Writable elements (row-major) of the tensor this handle holds, for filling a tensor made
  /// with `uninitialized` (or editing one) before handing it on:
  ///
  ///     auto t = tf::Tensor<float, 2>::uninitialized({n, 3});
  ///     float* p = t.mutable_data();  // take the pointer once, then fill
  ///
  /// Tensors are values (MAINTAINERS.md, "Tensor identity"): other handles never see the
  /// change. When the buffer is shared (a copy, a variable's value, a reshape), the elements
  /// are first copied into a buffer of this handle's own (copy-on-write). Either way the handle
  /// gets a fresh identity, so a gradient tape or a cache that saw the old value never mistakes
  /// the edited one for it. Throws failed_precondition when the tensor holds no value.
  [[nodiscard]] T* mutable_data() {
    require_value("mutable_data()");
    detail::unshare<T>(buffer_);
    id_ = detail::new_tensor_id();
    return buffer_->template writable_data<T>();
  }
  /// `mutable_data()` as a span of `num_elements()` elements.
  [[nodiscard]] std::span<T> mutable_values() {
    T* p = mutable_data();
    return {p, static_cast<std::size_t>(num_elements())};
  }
  /// The single value of a rank-0 (or one-element) tensor (PyTorch: `.item()`).
  [[nodiscard]] const T& item() const {
    require_value("item()");
    if (num_elements() != 1) {
      throw invalid_argument("Tensor::item(): tensor of shape " + shape().to_string() + " has " +
                             std::to_string(num_elements()) + " elements, not 1");
    }
    return data()[0];
  }
  /// Element at a multi-index, bounds-checked.
  template <std::integral... Index>
    requires(sizeof...(Index) == Rank)
  [[nodiscard]] const T& operator()(Index... index) const {
    require_value("operator()");
    const std::array<std::int64_t, Rank> at{static_cast<std::int64_t>(index)...};
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < Rank; ++i) {
      if (at[i] < 0 || at[i] >= dims_[i]) {
        throw out_of_range("Tensor::operator(): index " + std::to_string(at[i]) +
                           " is out of range for axis " + std::to_string(i) + " of shape " +
                           shape().to_string());
      }
      offset = offset * dims_[i] + at[i];
    }
    return data()[offset];
  }

  /// Throws failed_precondition, naming `what` (the calling member), when the tensor holds no
  /// value (default-constructed, or symbolic inside a tf::function being traced).
  void require_value(const char* what) const {
    if (buffer_ == nullptr && is_symbolic()) {
      throw failed_precondition(
          std::string("tf::Tensor::") + what +
          ": the tensor is symbolic (it stands for a value inside a tf::function "
          "being traced, and has no value until the function runs)");
    }
    if (buffer_ == nullptr) {
      throw failed_precondition(std::string("tf::Tensor::") + what +
                                ": the tensor holds no value (it was default-constructed)");
    }
  }

  /// A new tensor with the given dims and uninitialised trivial elements (kernels fill it).
  [[nodiscard]] static Tensor uninitialized(const dims_type& dims) {
    for (auto d : dims) {
      if (d < 0) {
        throw invalid_argument("tf::Tensor: negative dimension in shape " +
                               Shape(dims).to_string());
      }
    }
    Tensor t;
    t.buffer_ = detail::Buffer::allocate<T>(detail::product(dims));
    t.id_ = detail::new_tensor_id();
    t.dims_ = dims;
    return t;
  }

 private:
  friend struct detail::tensor_access;
  template <element_type, std::size_t>
  friend class Tensor;

  detail::Buffer* buffer_ = nullptr;
  std::int64_t id_ = 0;
  dims_type dims_{};
};

namespace detail {
/// Internal access for kernels and holders: writable data, sharing a buffer under a new
/// shape or id.
struct tensor_access {
  template <class T, std::size_t R>
  static T* mutable_data(Tensor<T, R>& t) {
    return t.buffer_->template writable_data<T>();
  }
  template <class T, std::size_t R>
  static Buffer* buffer(const Tensor<T, R>& t) noexcept {
    return t.buffer_;
  }
  /// A tensor sharing `buffer` (retained) with the given dims and id.
  template <class T, std::size_t R>
  static Tensor<T, R> wrap(Buffer* buffer, const std::array<std::int64_t, R>& dims,
                           std::int64_t id) noexcept {
    Tensor<T, R> t;
    if (buffer != nullptr) {
      buffer->retain();
    }
    t.buffer_ = buffer;
    t.dims_ = dims;
    t.id_ = id;
    return t;
  }
  template <class T, std::size_t R>
  static void set_id(Tensor<T, R>& t, std::int64_t id) noexcept {
    t.id_ = id;
  }
  /// `t` on the device new buffers go to now (Note [Placement]): `t` itself when it is there
  /// (or holds no value), else a copy of its elements there with the same identity, through
  /// the devices' memory where one is not the host's (Note [Device memory]).
  template <class T, std::size_t R>
  static Tensor<T, R> on_allocation_device(const Tensor<T, R>& t) {
    if (t.buffer_ == nullptr || t.buffer_->device == devices::allocation_device()) {
      return t;
    }
    auto copy = Tensor<T, R>::uninitialized(t.dims_);
    if (copy.buffer_->device == t.buffer_->device) {
      return t;  // strings asked onto a device stay in host memory
    }
    if constexpr (std::is_trivially_copyable_v<T>) {
      copy_elements(*t.buffer_, *copy.buffer_);
    } else {
      std::copy_n(t.data(), t.num_elements(), copy.buffer_->template data<T>());
    }
    copy.id_ = t.id_;
    return copy;
  }
  /// A symbolic tensor (no buffer) of the given dims, for tracing (Note [Tracing]).
  template <class T, std::size_t R>
  static Tensor<T, R> symbolic(const std::array<std::int64_t, R>& dims,
                               std::int64_t id = 0) noexcept {
    Tensor<T, R> t;
    t.dims_ = dims;
    t.id_ = (id != 0 ? id : new_tensor_id()) | symbolic_id_bit;
    return t;
  }
};
}  // namespace detail

/// Satisfied by `Tensor<T, R>` for any T, R.
template <class X>
struct is_tensor : std::false_type {};
template <class T, std::size_t R>
struct is_tensor<Tensor<T, R>> : std::true_type {};

TAPEFLOW_END_NAMESPACE

#include <tapeflow/core/detail/format.hpp>  // operator<< for tensors
