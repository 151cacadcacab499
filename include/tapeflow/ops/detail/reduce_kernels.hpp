// The Eigen body of the reductions' middle-axis run declared in ops/reduce/reduce.hpp.
// Header-only programs get it through that header; with TAPEFLOW_PRECOMPILED it is compiled
// once in tapeflow::instantiations (src/instantiations/kernels.cpp).
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <cstdint>

#include <tapeflow/core/eigen.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/forward.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

template <ops::ReduceKind Kind, class T>
void reduce_middle_run(const T* in, T* out, std::int64_t rows, std::int64_t red,
                       std::int64_t inner) {
  using In3 = Eigen::TensorMap<Eigen::Tensor<const T, 3, Eigen::RowMajor, Eigen::Index>>;
  using Out2 = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor, Eigen::Index>>;
  const Eigen::array<Eigen::Index, 1> along{1};
  In3 src(in, rows, red, inner);
  Out2 dst(out, rows, inner);
  if constexpr (Kind == ops::ReduceKind::max) {
    dst = src.maximum(along);
  } else if constexpr (Kind == ops::ReduceKind::min) {
    dst = src.minimum(along);
  } else {
    dst = src.sum(along);
  }
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
