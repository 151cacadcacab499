// Creating tensors from values: constant, from_vector, zeros, ones, fill, *_like, range.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace detail {
template <class T, std::size_t Depth>
struct nested_list {
  using type = std::initializer_list<typename nested_list<T, Depth - 1>::type>;
};
template <class T>
struct nested_list<T, 0> {
  using type = T;
};

// Records the extent of every level and rejects ragged lists.
template <class T, std::size_t Depth, std::size_t Rank>
void nested_dims(const typename nested_list<T, Depth>::type& list,
                 std::array<std::int64_t, Rank>& dims, std::size_t level) {
  if constexpr (Depth > 0) {
    const auto n = static_cast<std::int64_t>(list.size());
    if (dims[level] < 0) {
      dims[level] = n;
    } else if (dims[level] != n) {
      throw invalid_argument("tf::constant: ragged nested list: level " + std::to_string(level) +
                             " has lengths " + std::to_string(dims[level]) + " and " +
                             std::to_string(n));
    }
    for (const auto& inner : list) {
      nested_dims<T, Depth - 1, Rank>(inner, dims, level + 1);
    }
  }
}
template <class T, std::size_t Depth>
void nested_copy(const typename nested_list<T, Depth>::type& list, T*& out) {
  if constexpr (Depth == 0) {
    *out++ = list;
  } else {
    for (const auto& inner : list) {
      nested_copy<T, Depth - 1>(inner, out);
    }
  }
}
template <class T, std::size_t Rank>
Tensor<T, Rank> from_nested(const typename nested_list<T, Rank>::type& list) {
  std::array<std::int64_t, Rank> dims;
  dims.fill(-1);
  nested_dims<T, Rank, Rank>(list, dims, 0);
  for (auto& d : dims) {
    d = std::max<std::int64_t>(d, 0);  // an empty outer list leaves inner extents unknown
  }
  auto t = Tensor<T, Rank>::uninitialized(dims);
  T* out = tensor_access::mutable_data(t);
  nested_copy<T, Rank>(list, out);
  return t;
}
}  // namespace detail

/// A tensor from a value or nested braces (TensorFlow: `tf.constant`).
///
///     auto s = tf::constant(3.0f);                       // Tensor<float, 0>
///     auto v = tf::constant<int32_t>({1, 2, 3});          // Tensor<int32_t, 1>
///     auto m = tf::constant<float>({{1, 2}, {3, 4}});     // Tensor<float, 2>
///
/// Throws invalid_argument for ragged lists.
template <element_type T>
Tensor<T, 0> constant(T value) {
  return Tensor<T, 0>(std::move(value));
}
/// The same for a braced list: a rank-1 tensor.
template <element_type T>
Tensor<T, 1> constant(std::initializer_list<T> values) {
  return detail::from_nested<T, 1>(values);
}
/// The same for a rank-2 nested list; throws invalid_argument if the rows are ragged.
template <element_type T>
Tensor<T, 2> constant(std::initializer_list<std::initializer_list<T>> values) {
  return detail::from_nested<T, 2>(values);
}
/// The same for a rank-3 nested list; throws invalid_argument if it is ragged.
template <element_type T>
Tensor<T, 3> constant(
    std::initializer_list<std::initializer_list<std::initializer_list<T>>> values) {
  return detail::from_nested<T, 3>(values);
}
/// The same for a rank-4 nested list; throws invalid_argument if it is ragged.
template <element_type T>
Tensor<T, 4> constant(
    std::initializer_list<std::initializer_list<std::initializer_list<std::initializer_list<T>>>>
        values) {
  return detail::from_nested<T, 4>(values);
}
/// String literals make string tensors: `tf::constant("a")`, `tf::constant({"a", "b"})`.
inline Tensor<std::string, 0> constant(const char* value) {
  return Tensor<std::string, 0>(std::string(value));
}
/// A rank-1 string tensor from braced string literals: `tf::constant({"a", "b"})`.
inline Tensor<std::string, 1> constant(std::initializer_list<const char*> values) {
  auto t = Tensor<std::string, 1>::uninitialized({static_cast<std::int64_t>(values.size())});
  std::copy(values.begin(), values.end(), detail::tensor_access::mutable_data(t));
  return t;
}

/// A tensor of shape `dims` copying `values` (row-major); sizes must agree.
template <element_type T, std::size_t Rank>
Tensor<T, Rank> constant(std::span<const T> values, const std::array<std::int64_t, Rank>& dims) {
  auto t = Tensor<T, Rank>::uninitialized(dims);
  if (static_cast<std::int64_t>(values.size()) != t.num_elements()) {
    throw invalid_argument("tf::constant: " + std::to_string(values.size()) +
                           " values do not fill shape " + t.shape().to_string() + " (" +
                           std::to_string(t.num_elements()) + " elements)");
  }
  std::copy(values.begin(), values.end(), detail::tensor_access::mutable_data(t));
  return t;
}
/// The same copying from a `std::vector`; throws invalid_argument if the sizes disagree.
template <element_type T, std::size_t Rank>
Tensor<T, Rank> constant(const std::vector<T>& values, const std::array<std::int64_t, Rank>& dims) {
  return constant<T, Rank>(std::span<const T>(values), dims);
}
/// A rank-1 tensor copying all of `values`.
template <element_type T>
Tensor<T, 1> constant(const std::vector<T>& values) {
  return constant<T, 1>(std::span<const T>(values), {static_cast<std::int64_t>(values.size())});
}
/// The same with the shape in braces, its rank deduced: `tf::constant(pixels, {n, 28, 28, 1})`.
template <element_type T, std::size_t Rank>
Tensor<T, Rank> constant(std::span<const T> values, std::int64_t const (&dims)[Rank]) {
  std::array<std::int64_t, Rank> d;
  std::copy(dims, dims + Rank, d.begin());
  return constant<T, Rank>(values, d);
}
/// The same copying from a `std::vector`, the shape in braces.
template <element_type T, std::size_t Rank>
Tensor<T, Rank> constant(const std::vector<T>& values, std::int64_t const (&dims)[Rank]) {
  std::array<std::int64_t, Rank> d;
  std::copy(dims, dims + Rank, d.begin());
  return constant<T, Rank>(std::span<const T>(values), d);
}

/// A tensor of shape `dims` taking the elements of `values` (row-major), moved rather than
/// copied where that matters (strings). Throws invalid_argument naming both sizes when the
/// number of values is not the number of elements of `dims`.
///
///     std::vector<float> host(6);                                // filled elsewhere
///     auto t = tf::from_vector(std::move(host), {2, 3});         // Tensor<float, 2>
///     std::vector<float> back = t.to_vector();                   // and back
template <element_type T, std::size_t Rank>
Tensor<T, Rank> from_vector(std::vector<T> values, const std::array<std::int64_t, Rank>& dims) {
  auto t = Tensor<T, Rank>::uninitialized(dims);  // rejects negative dimensions
  if (static_cast<std::int64_t>(values.size()) != t.num_elements()) {
    throw invalid_argument("tf::from_vector: " + std::to_string(values.size()) +
                           " values do not fill shape " + t.shape().to_string() + " (" +
                           std::to_string(t.num_elements()) + " elements)");
  }
  std::move(values.begin(), values.end(), detail::tensor_access::mutable_data(t));
  return t;
}
/// The same with the shape in braces, its rank deduced: `tf::from_vector(std::move(v), {2, 3})`.
template <element_type T, std::size_t Rank>
Tensor<T, Rank> from_vector(std::vector<T> values, std::int64_t const (&dims)[Rank]) {
  std::array<std::int64_t, Rank> d;
  std::copy(dims, dims + Rank, d.begin());
  return from_vector<T, Rank>(std::move(values), d);
}
/// A rank-1 tensor of all of `values`.
template <element_type T>
Tensor<T, 1> from_vector(std::vector<T> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return from_vector<T, 1>(std::move(values), std::array<std::int64_t, 1>{n});
}

/// A tensor of shape `dims` with every element `value` (TensorFlow: `tf.fill`).
template <element_type T, std::size_t Rank>
Tensor<T, Rank> fill(const std::array<std::int64_t, Rank>& dims, T value) {
  auto t = Tensor<T, Rank>::uninitialized(dims);
  std::fill_n(detail::tensor_access::mutable_data(t), t.num_elements(), value);
  return t;
}
/// Zeros of shape `dims` (TensorFlow: `tf.zeros`): `tf::zeros<float>({2, 3})`.
template <element_type T, std::size_t Rank>
Tensor<T, Rank> zeros(std::int64_t const (&dims)[Rank]) {
  std::array<std::int64_t, Rank> d;
  std::copy(dims, dims + Rank, d.begin());
  return fill<T, Rank>(d, T{});
}
/// The same with the shape as a `std::array`.
template <element_type T, std::size_t Rank>
Tensor<T, Rank> zeros(const std::array<std::int64_t, Rank>& dims) {
  return fill<T, Rank>(dims, T{});
}
/// Ones of shape `dims` (TensorFlow: `tf.ones`).
template <element_type T, std::size_t Rank>
Tensor<T, Rank> ones(std::int64_t const (&dims)[Rank]) {
  std::array<std::int64_t, Rank> d;
  std::copy(dims, dims + Rank, d.begin());
  return fill<T, Rank>(d, T(1));
}
/// The same with the shape as a `std::array`.
template <element_type T, std::size_t Rank>
Tensor<T, Rank> ones(const std::array<std::int64_t, Rank>& dims) {
  return fill<T, Rank>(dims, T(1));
}
/// The same with the shape in braces, its rank deduced: `tf::fill({2, 3}, 1.5f)`.
template <element_type T, std::size_t Rank>
Tensor<T, Rank> fill(std::int64_t const (&dims)[Rank], T value) {
  std::array<std::int64_t, Rank> d;
  std::copy(dims, dims + Rank, d.begin());
  return fill<T, Rank>(d, value);
}
/// Scalars need no braces: `tf::zeros<float>()`.
template <element_type T>
Tensor<T, 0> zeros() {
  return Tensor<T, 0>(T{});
}
/// A scalar one: `tf::ones<float>()`.
template <element_type T>
Tensor<T, 0> ones() {
  return Tensor<T, 0>(T(1));
}
/// Zeros with the shape and dtype of `like` (TensorFlow: `tf.zeros_like`).
template <class T, std::size_t Rank>
Tensor<T, Rank> zeros_like(const Tensor<T, Rank>& like) {
  return fill<T, Rank>(like.dims(), T{});
}
/// Ones with the shape and dtype of `like` (TensorFlow: `tf.ones_like`).
template <class T, std::size_t Rank>
Tensor<T, Rank> ones_like(const Tensor<T, Rank>& like) {
  return fill<T, Rank>(like.dims(), T(1));
}

/// [start, limit) in steps of `delta` (TensorFlow: `tf.range`): `tf::range<int32_t>(0, 10, 2)`.
template <element_type T>
  requires numeric_element<T>
Tensor<T, 1> range(T start, T limit, T delta = T(1)) {
  if (delta == T(0)) {
    throw invalid_argument("tf::range: delta must not be 0");
  }
  if ((delta > T(0) && start > limit) || (delta < T(0) && start < limit)) {
    throw invalid_argument("tf::range: start " + std::to_string(start) + " and limit " +
                           std::to_string(limit) + " do not match the sign of delta " +
                           std::to_string(delta));
  }
  const double span = static_cast<double>(limit) - static_cast<double>(start);
  const auto n = static_cast<std::int64_t>(std::ceil(span / static_cast<double>(delta)));
  auto t = Tensor<T, 1>::uninitialized({std::max<std::int64_t>(n, 0)});
  T* out = detail::tensor_access::mutable_data(t);
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  }
  return t;
}
/// [0, limit): `tf::range(5)` is int32 like TensorFlow's.
template <element_type T>
  requires numeric_element<T>
Tensor<T, 1> range(T limit) {
  return range<T>(T(0), limit, T(1));
}

TAPEFLOW_END_NAMESPACE
