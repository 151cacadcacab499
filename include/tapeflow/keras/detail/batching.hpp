// Row gathering for Model::fit/evaluate/predict on in-memory tensors, and float conversion of
// type-erased inputs.
// IWYU pragma: private, include <tapeflow/keras/model.hpp>
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/visit_rank.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::keras_impl {

/// Calls f.template operator()<R>() for a rank of 1 to 5 (batched Keras inputs and outputs).
template <class F>
decltype(auto) with_rank(std::size_t rank, const char* what, F&& f) {
  return visit_rank<1, 5>(rank, what, f);
}

/// The rows `rows` (indices into axis 0) of `src`, as a new tensor of the same dtype.
inline AnyTensor take_rows(const AnyTensor& src, std::span<const std::int64_t> rows) {
  if (src.rank() == 0) {
    throw invalid_argument("tf::keras: inputs must have a batch axis, got a scalar");
  }
  return visit_dtype(src.dtype(), [&]<class T>() -> AnyTensor {
    if constexpr (!std::is_arithmetic_v<T>) {
      throw invalid_argument("tf::keras: string inputs are not supported by fit/evaluate/predict");
    } else {
      // Flat, then given the batch's shape: one loop per dtype, not per dtype and rank.
      Shape shape = src.shape();
      const std::int64_t row = shape[0] == 0 ? 0 : src.num_elements() / shape[0];
      shape[0] = std::int64_t(rows.size());
      auto out = Tensor<T, 1>::uninitialized({shape.num_elements()});
      T* o = tensor_access::mutable_data(out);
      const T* s = static_cast<const T*>(src.raw_data());
      for (std::size_t r = 0; r < rows.size(); ++r) {
        std::memcpy(o + std::int64_t(r) * row, s + rows[r] * row, sizeof(T) * std::size_t(row));
      }
      return AnyTensor(out).with_shape(shape);
    }
  });
}

/// The elements of numeric `t` converted to U in a new tensor of rank R (a plain loop, not the
/// Cast op: inputs and labels are data, never differentiated, and one loop per dtype keeps
/// compile times down). Throws invalid_argument for strings or a rank mismatch.
template <class U, std::size_t R>
Tensor<U, R> convert(const AnyTensor& t, const char* what) {
  if (t.rank() != R) {
    throw invalid_argument(std::string(what) + ": expected a tensor of rank " + std::to_string(R) +
                           ", got shape " + t.shape().to_string());
  }
  if (t.dtype() == dtype_v<U>) {
    return t.as<U, R>();
  }
  if (!t.has_value()) {
    throw failed_precondition(std::string(what) + ": the tensor holds no value");
  }
  std::array<std::int64_t, R> dims{};
  for (std::size_t i = 0; i < R; ++i) {
    dims[i] = t.shape()[i];
  }
  auto out = Tensor<U, R>::uninitialized(dims);
  U* o = tensor_access::mutable_data(out);
  visit_dtype(t.dtype(), [&]<class T>() {
    if constexpr (std::is_arithmetic_v<T>) {
      const T* s = static_cast<const T*>(t.raw_data());
      for (std::int64_t i = 0; i < t.num_elements(); ++i) {
        o[i] = static_cast<U>(s[i]);
      }
    } else {
      throw invalid_argument(std::string(what) + ": string tensors are not supported");
    }
  });
  return out;
}

/// `t` as float32 (converted when it holds another numeric dtype), as Keras layers cast inputs.
template <std::size_t R>
Tensor<float, R> as_float(const AnyTensor& t) {
  return convert<float, R>(t, "tf::keras input");
}

/// Concatenates batches along axis 0 (all of one dtype and trailing shape).
inline AnyTensor concat_rows(const std::vector<AnyTensor>& parts) {
  if (parts.empty()) {
    return {};
  }
  const AnyTensor& first = parts.front();
  return visit_dtype(first.dtype(), [&]<class T>() -> AnyTensor {
    if constexpr (!std::is_arithmetic_v<T>) {
      throw invalid_argument("tf::keras: string outputs are not supported by predict");
    } else {
      Shape shape = first.shape();
      shape[0] = 0;
      for (const auto& p : parts) {
        shape[0] += p.shape()[0];
      }
      auto out = Tensor<T, 1>::uninitialized({shape.num_elements()});
      T* o = tensor_access::mutable_data(out);
      for (const auto& p : parts) {
        std::memcpy(o, p.raw_data(), sizeof(T) * std::size_t(p.num_elements()));
        o += p.num_elements();
      }
      return AnyTensor(out).with_shape(shape);
    }
  });
}

}  // namespace detail::keras_impl
TAPEFLOW_END_NAMESPACE
