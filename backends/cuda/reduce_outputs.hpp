// The CUDA reductions as one Thrust algorithm: each output element is a transform of its
// index that walks the elements reduced into it (reduce.hpp's index). The functor is
// host-device code and `reduce_outputs` takes Thrust's execution policy, so the same code runs
// on a GPU (reduce.cu: the CUDA system on the op's stream) and on the CPU under Thrust's C++
// and OpenMP systems (tests/thrust_cpu/, every CI run). Needs the toolkit's CCCL headers.
// Internal to tapeflow::cuda.
#pragma once

#include <cstdint>

#include <cuda/std/limits>  // usable in device code as well
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include "reduce.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// Output element `o` of the reduction: its reduced elements combined in row-major order. A
/// mean over nothing is NaN for floating types (0 for integers), as on the CPU.
template <ReduceOp Op, class T>
struct ReduceOutput {
  const T* in = nullptr;
  ReduceIndex index;

  TAPEFLOW_HOST_DEVICE T operator()(std::int64_t o) const {
    std::int64_t const base =
        strided_offset(index.kept_rank, index.kept_dims, index.kept_strides, o);
    T total;
    if constexpr (Op == ReduceOp::max) {
      total = ::cuda::std::numeric_limits<T>::lowest();
    } else if constexpr (Op == ReduceOp::min) {
      total = ::cuda::std::numeric_limits<T>::max();
    } else {
      total = T(0);
    }
    for (std::int64_t r = 0; r < index.reduced_count; ++r) {
      T const v = in[base + strided_offset(index.reduced_rank, index.reduced_dims,
                                           index.reduced_strides, r)];
      if constexpr (Op == ReduceOp::max) {
        total = v > total ? v : total;
      } else if constexpr (Op == ReduceOp::min) {
        total = v < total ? v : total;
      } else {
        total += v;
      }
    }
    if constexpr (Op == ReduceOp::mean) {
      if (index.reduced_count == 0) {
        return ::cuda::std::numeric_limits<T>::quiet_NaN();
      }
      return static_cast<T>(total / static_cast<T>(index.reduced_count));
    }
    return total;
  }
};

/// Writes the reduction's `index.outputs` elements of `in` to `out` under Thrust `policy`.
template <ReduceOp Op, class T, class Policy>
void reduce_outputs(Policy&& policy, const T* in, T* out, const ReduceIndex& index) {
  thrust::transform(policy, thrust::counting_iterator<std::int64_t>(0),
                    thrust::counting_iterator<std::int64_t>(index.outputs), out,
                    ReduceOutput<Op, T>{in, index});
}

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
