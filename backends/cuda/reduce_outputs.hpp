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

/// The identity of a reduction's combine (sum and mean: 0).
template <ReduceOp Op, class T>
TAPEFLOW_HOST_DEVICE T reduce_identity() {
  if constexpr (Op == ReduceOp::max) {
    return ::cuda::std::numeric_limits<T>::lowest();
  } else if constexpr (Op == ReduceOp::min) {
    return ::cuda::std::numeric_limits<T>::max();
  } else {
    return T(0);
  }
}

/// Combines the reduced elements [r0, r1) of output `o` (row-major order): their sum (sum and
/// mean), max or min.
template <ReduceOp Op, class T>
TAPEFLOW_HOST_DEVICE T reduce_range(const T* in, const ReduceIndex& index, std::int64_t o,
                                    std::int64_t r0, std::int64_t r1) {
  std::int64_t const base = strided_offset(index.kept_rank, index.kept_dims, index.kept_strides, o);
  T total = reduce_identity<Op, T>();
  for (std::int64_t r = r0; r < r1; ++r) {
    T const v =
        in[base + strided_offset(index.reduced_rank, index.reduced_dims, index.reduced_strides, r)];
    if constexpr (Op == ReduceOp::max) {
      total = v > total ? v : total;
    } else if constexpr (Op == ReduceOp::min) {
      total = v < total ? v : total;
    } else {
      total += v;
    }
  }
  return total;
}

/// Output element `o` of the reduction: all its reduced elements combined; a mean divides by
/// `mean_count` (the original reduction's count when this is the last of several levels). A
/// mean over nothing is NaN for floating types (0 for integers), as on the CPU.
template <ReduceOp Op, class T>
struct ReduceOutput {
  const T* in = nullptr;
  ReduceIndex index;
  std::int64_t mean_count = 0;

  TAPEFLOW_HOST_DEVICE T operator()(std::int64_t o) const {
    T const total = reduce_range<Op, T>(in, index, o, 0, index.reduced_count);
    if constexpr (Op == ReduceOp::mean) {
      if (mean_count == 0) {
        return ::cuda::std::numeric_limits<T>::quiet_NaN();
      }
      return static_cast<T>(total / static_cast<T>(mean_count));
    }
    return total;
  }
};

/// Partial `k` of a chunked level: chunk `k / outputs` of output `k % outputs`, so adjacent
/// threads read adjacent outputs' elements (coalesced where the kept axes are innermost).
template <ReduceOp Op, class T>
struct ReduceChunk {
  const T* in = nullptr;
  ReduceIndex index;
  std::int64_t chunk = 1;

  TAPEFLOW_HOST_DEVICE T operator()(std::int64_t k) const {
    std::int64_t const o = k % index.outputs;
    std::int64_t const r0 = (k / index.outputs) * chunk;
    std::int64_t const r1 = r0 + chunk < index.reduced_count ? r0 + chunk : index.reduced_count;
    return reduce_range < Op == ReduceOp::mean ? ReduceOp::sum : Op, T > (in, index, o, r0, r1);
  }
};

/// Elements one thread combines in a chunked level. A reduction of more elements per output
/// than `reduce_chunk * 4` goes in levels: each thread combines one chunk into a partial
/// ([chunks, outputs]), and the partials are reduced the same way, so no thread walks a long
/// run alone (a [50, 28, 28, 32] bias gradient's 39,200 elements per output took one thread
/// each otherwise).
inline constexpr std::int64_t reduce_chunk = 64;

/// Writes the reduction's `index.outputs` elements of `in` to `out` under Thrust `policy`.
/// `scratch(count)` returns room for `count` partials of T that stays valid until the work
/// queued under `policy` is done (a chunked level's partials).
template <ReduceOp Op, class T, class Policy, class Scratch>
void reduce_outputs(Policy&& policy, const T* in, T* out, const ReduceIndex& index,
                    Scratch&& scratch, std::int64_t mean_count = -1) {
  if (mean_count < 0) {
    mean_count = index.reduced_count;
  }
  if (index.reduced_count <= reduce_chunk * 4) {
    thrust::transform(policy, thrust::counting_iterator<std::int64_t>(0),
                      thrust::counting_iterator<std::int64_t>(index.outputs), out,
                      ReduceOutput<Op, T>{in, index, mean_count});
    return;
  }
  std::int64_t const chunks = (index.reduced_count + reduce_chunk - 1) / reduce_chunk;
  T* partials = scratch(chunks * index.outputs);
  thrust::transform(policy, thrust::counting_iterator<std::int64_t>(0),
                    thrust::counting_iterator<std::int64_t>(chunks * index.outputs), partials,
                    ReduceChunk<Op, T>{in, index, reduce_chunk});
  std::int64_t const dims[2] = {chunks, index.outputs};
  bool const reduced[2] = {true, false};
  reduce_outputs<Op>(policy, static_cast<const T*>(partials), out, make_reduce_index(dims, reduced),
                     scratch, mean_count);
}

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
