// How a global batch splits across replicas (TensorFlow's rebatching for
// `experimental_distribute_dataset` and `fit` under a strategy): each replica takes
// ceil(rows / replicas) consecutive rows, in replica order, so a short final batch leaves the
// last replicas fewer rows or none (6 rows over 4 replicas: 2, 2, 2, 0).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/slice.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute::detail {

/// Rows [first, second) of a `rows`-row batch that replica `r` of `n` takes.
inline std::pair<std::int64_t, std::int64_t> replica_rows(std::int64_t rows, int n, int r) {
  const std::int64_t per = (rows + n - 1) / n;
  return {std::min(rows, per * r), std::min(rows, per * (r + 1))};
}

[[noreturn]] inline void throw_scalar_split() {
  throw invalid_argument(
      "tf::distribute: a scalar in a batch cannot be split across replicas; batch the dataset "
      "first");
}

/// Replica `r`'s rows of `x` (a Slice op: it runs on the device in scope).
template <class T, std::size_t R>
Tensor<T, R> replica_piece(const Tensor<T, R>& x, int n, int r) {
  if constexpr (R == 0) {
    throw_scalar_split();
  } else {
    const auto [first, last] = replica_rows(x.dims()[0], n, r);
    std::array<std::int64_t, R> begin{};
    std::array<std::int64_t, R> size = x.dims();
    begin[0] = first;
    size[0] = last - first;
    return tapeflow::slice(x, begin, size);
  }
}

/// Replica `r`'s rows of a batch of any dtype and rank: its elements viewed as a [rows, rest]
/// matrix, sliced, and viewed back. One Slice<2> per dtype, not a Slice<R> per dtype and rank
/// with their tape, trace and gradient paths (a fifth of a Keras program's compile time). The
/// views are no ops: a batch being split is a dataset's element or fit's input, which no
/// gradient flows into and no trace holds.
inline AnyTensor replica_piece(const AnyTensor& x, int n, int r) {
  if (x.rank() == 0) {
    throw_scalar_split();
  }
  if (!x.has_value()) {
    throw invalid_argument("tf::distribute: the batch to split across replicas (" +
                           std::string(dtype_name(x.dtype())) + ", shape " + x.shape().to_string() +
                           ") has no value; split batches outside tf::function");
  }
  const std::int64_t rows = x.shape()[0];
  std::int64_t rest = 1;
  for (std::size_t i = 1; i < x.rank(); ++i) {
    rest *= x.shape()[i];
  }
  const std::pair<std::int64_t, std::int64_t> piece_rows = replica_rows(rows, n, r);
  const std::int64_t first = piece_rows.first;  // no structured binding: the lambda uses it
  Shape piece_shape = x.shape();
  piece_shape[0] = piece_rows.second - first;
  return visit_dtype(x.dtype(), [&]<class T>() -> AnyTensor {
    const auto matrix = x.with_shape(Shape{rows, rest}).as<T, 2>();
    return AnyTensor(tapeflow::slice(matrix, {first, 0}, {piece_shape[0], rest}))
        .with_shape(piece_shape);
  });
}

template <class A, class B>
std::pair<A, B> replica_piece(const std::pair<A, B>& e, int n, int r) {
  return {replica_piece(e.first, n, r), replica_piece(e.second, n, r)};
}

template <class... Ts>
std::tuple<Ts...> replica_piece(const std::tuple<Ts...>& e, int n, int r) {
  return std::apply(
      [&](const auto&... parts) { return std::tuple<Ts...>(replica_piece(parts, n, r)...); }, e);
}

}  // namespace distribute::detail
TAPEFLOW_END_NAMESPACE
