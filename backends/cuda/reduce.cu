// The GPU instantiation of reduce_outputs.hpp's Thrust reduction: the CUDA system on the op's
// stream, without the synchronization Thrust's plain `par` adds (the executor orders the stream).
#include <cstdint>

#include <cuda_runtime.h>
#include <thrust/system/cuda/execution_policy.h>

#include "reduce_outputs.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

template <ReduceOp Op, class T>
void launch_reduce(const T* in, T* out, const ReduceIndex& index, void* stream) {
  if (index.outputs == 0) {
    return;
  }
  reduce_outputs<Op>(thrust::cuda::par_nosync.on(static_cast<cudaStream_t>(stream)), in, out,
                     index);
}

#define TAPEFLOW_CUDA_REDUCE(T)                                                            \
  template void launch_reduce<ReduceOp::sum, T>(const T*, T*, const ReduceIndex&, void*);  \
  template void launch_reduce<ReduceOp::mean, T>(const T*, T*, const ReduceIndex&, void*); \
  template void launch_reduce<ReduceOp::max, T>(const T*, T*, const ReduceIndex&, void*);  \
  template void launch_reduce<ReduceOp::min, T>(const T*, T*, const ReduceIndex&, void*);
TAPEFLOW_CUDA_REDUCE(float)
TAPEFLOW_CUDA_REDUCE(double)
TAPEFLOW_CUDA_REDUCE(std::int32_t)
TAPEFLOW_CUDA_REDUCE(std::int64_t)
#undef TAPEFLOW_CUDA_REDUCE

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
