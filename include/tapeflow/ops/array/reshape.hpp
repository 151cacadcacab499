// reshape, expand_dims, squeeze, stop_gradient, identity: ops that share their input's
// buffer under a new shape and id (no copy).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/detail/forward.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// Same elements, new shape of rank OutRank (TensorFlow op "Reshape"). One dim may be -1.
template <std::size_t OutRank>
struct Reshape {
  static constexpr std::string_view name = "Reshape";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  std::array<std::int64_t, OutRank> dims;

  /// TensorFlow's attributes: the type of the `shape` input.
  [[nodiscard]] OpAttributes attributes() const { return {{"Tshape", DType::int32}}; }
  /// TensorFlow's `shape` input, held here as `dims`.
  [[nodiscard]] GraphInputs graph_inputs() const { return {{"shape", detail::int32_vector(dims)}}; }

  /// The output dims for an input of `n` elements and shape `from` (not a template over the
  /// input's type: compiled once per output rank).
  std::array<std::int64_t, OutRank> resolve(std::int64_t n, const Shape& from) const {
    std::int64_t known = 1;
    int unknown = -1;
    for (std::size_t i = 0; i < OutRank; ++i) {
      if (dims[i] == -1 && unknown < 0) {
        unknown = static_cast<int>(i);
      } else if (dims[i] < 0) {
        throw invalid_argument("Reshape: invalid target shape " + Shape(dims).to_string() +
                               " (only one -1 allowed, no other negative dims)");
      } else {
        known *= dims[i];
      }
    }
    auto out = dims;
    if (unknown >= 0) {
      if (known == 0 || n % known != 0) {
        throw invalid_argument("Reshape: cannot reshape a tensor of shape " + from.to_string() +
                               " (" + std::to_string(n) + " elements) into " +
                               Shape(dims).to_string());
      }
      out[static_cast<std::size_t>(unknown)] = n / known;
    } else if (known != n) {
      throw invalid_argument("Reshape: cannot reshape a tensor of shape " + from.to_string() +
                             " (" + std::to_string(n) + " elements) into " +
                             Shape(dims).to_string() + " (" + std::to_string(known) + " elements)");
    }
    return out;
  }
  template <class T, std::size_t R>
  Tensor<T, OutRank> forward(const Tensor<T, R>& x) const {
    return detail::tensor_access::wrap<T, OutRank>(detail::tensor_access::buffer(x),
                                                   resolve(x.num_elements(), x.shape()),
                                                   detail::new_tensor_id());
  }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, OutRank>& dy, const Tensor<T, OutRank>&,
                const Tensor<T, R>& x) const {
    return detail::execute(Reshape<R>{x.dims()}, dy);
  }

  /// The value is the input's elements in their order, whatever the input's shape: a fused
  /// elementwise chain (Note [Fusion]) goes on through a reshape, copying its chunk of them, and
  /// the graph passes fold a reshape of a reshape into one (Note [Graph passes]).
  static constexpr bool same_elements = true;
  /// One run of n outputs for the executor's fused chains: a copy.
  template <class T>
  static void fused_kernel(void* out, const void* x, bool, const void*, bool, std::int64_t n) {
    if (out != x) {
      std::memcpy(out, x, static_cast<std::size_t>(n) * sizeof(T));
    }
  }
};

/// A new identity for the same value that gradients do not flow through
/// (TensorFlow op "StopGradient").
struct StopGradient {
  static constexpr std::string_view name = "StopGradient";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  static constexpr bool differentiable = false;
  template <class T, std::size_t R>
  Tensor<T, R> forward(const Tensor<T, R>& x) const {
    return detail::tensor_access::wrap<T, R>(detail::tensor_access::buffer(x), x.dims(),
                                             detail::new_tensor_id());
  }
};

/// The same value under a new identity (TensorFlow op "Identity").
struct Identity {
  static constexpr std::string_view name = "Identity";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  template <class T, std::size_t R>
  Tensor<T, R> forward(const Tensor<T, R>& x) const {
    return detail::tensor_access::wrap<T, R>(detail::tensor_access::buffer(x), x.dims(),
                                             detail::new_tensor_id());
  }
  template <class T, std::size_t R>
  Tensor<T, R> gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, R>&) const {
    return dy;
  }
};

}  // namespace ops

/// Reshapes to `dims` (one may be -1): `tf::reshape(x, {-1, 784})` (TensorFlow: `tf.reshape`).
/// Throws invalid_argument when the element counts differ.
template <tensor_like X, std::size_t N>
Tensor<value_type_of<X>, N> reshape(const X& x, std::int64_t const (&dims)[N]) {
  std::array<std::int64_t, N> d;
  std::copy(dims, dims + N, d.begin());
  return detail::execute(ops::Reshape<N>{d}, detail::as_tensor(x));
}
/// The same with the new shape as a `std::array`.
template <tensor_like X, std::size_t N>
Tensor<value_type_of<X>, N> reshape(const X& x, const std::array<std::int64_t, N>& dims) {
  return detail::execute(ops::Reshape<N>{dims}, detail::as_tensor(x));
}

/// Inserts a size-1 axis at `axis` (negative counts from the end, as in TensorFlow).
template <tensor_like X>
Tensor<value_type_of<X>, rank_of<X> + 1> expand_dims(const X& x, int axis) {
  constexpr int R = static_cast<int>(rank_of<X>);
  const auto& t = detail::as_tensor(x);
  if (axis < -(R + 1) || axis > R) {
    throw invalid_argument("ExpandDims: axis " + std::to_string(axis) +
                           " is out of range for a tensor of rank " + std::to_string(R));
  }
  std::size_t const at = static_cast<std::size_t>(axis < 0 ? axis + R + 1 : axis);
  std::array<std::int64_t, R + 1> dims{};
  for (std::size_t i = 0, j = 0; i < R + 1; ++i) {
    dims[i] = i == at ? 1 : t.dims()[j++];
  }
  return detail::execute(ops::Reshape<R + 1>{dims}, t);
}

/// Removes the size-1 axis `axis` (TensorFlow: `tf.squeeze(x, axis)`); the rank is static, so
/// the axis is named. Throws invalid_argument when that axis is not 1.
template <tensor_like X>
  requires(rank_of<X> >= 1)
Tensor<value_type_of<X>, rank_of<X> - 1> squeeze(const X& x, int axis) {
  constexpr int R = static_cast<int>(rank_of<X>);
  const auto& t = detail::as_tensor(x);
  if (axis < -R || axis >= R) {
    throw invalid_argument("Squeeze: axis " + std::to_string(axis) +
                           " is out of range for a tensor of rank " + std::to_string(R));
  }
  std::size_t const at = static_cast<std::size_t>(axis < 0 ? axis + R : axis);
  if (t.dims()[at] != 1) {
    throw invalid_argument("Squeeze: cannot squeeze axis " + std::to_string(axis) + " of shape " +
                           t.shape().to_string() + ": its size is not 1");
  }
  std::array<std::int64_t, R - 1> dims{};
  for (std::size_t i = 0, j = 0; i < static_cast<std::size_t>(R); ++i) {
    if (i != at) {
      dims[j++] = t.dims()[i];
    }
  }
  return detail::execute(ops::Reshape<R - 1>{dims}, t);
}

/// The value with gradients blocked (TensorFlow: `tf.stop_gradient`).
template <tensor_like X>
tensor_type_of<X> stop_gradient(const X& x) {
  return detail::execute(ops::StopGradient{}, detail::as_tensor(x));
}

/// The value under a new identity (TensorFlow: `tf.identity`).
template <tensor_like X>
tensor_type_of<X> identity(const X& x) {
  return detail::execute(ops::Identity{}, detail::as_tensor(x));
}

TAPEFLOW_END_NAMESPACE
