// The GPU instantiation of reduce_outputs.hpp's Thrust reduction: the CUDA system on the op's
// stream, without the synchronization Thrust's plain `par` adds (the executor orders the stream).
#include <cstdint>
#include <utility>
#include <vector>

#include <cuda_runtime.h>
#include <thrust/system/cuda/execution_policy.h>

#include "reduce_outputs.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

template <ReduceOp Op, class T>
void launch_reduce(const T* in, T* out, const ReduceIndex& index, const ScratchMemory& scratch,
                   void* stream) {
  if (index.outputs == 0) {
    return;
  }
  // Partials are returned to the stream-ordered allocator once the work is queued: the
  // memory is reused only by work queued after it.
  std::vector<std::pair<void*, std::size_t>> taken;
  auto allocate = [&](std::int64_t count) {
    std::size_t const bytes = static_cast<std::size_t>(count) * sizeof(T);
    void* p = scratch.allocate(scratch.context, bytes);
    taken.emplace_back(p, bytes);
    return static_cast<T*>(p);
  };
  try {
    reduce_outputs<Op>(thrust::cuda::par_nosync.on(static_cast<cudaStream_t>(stream)), in, out,
                       index, allocate);
  } catch (...) {
    for (auto [p, bytes] : taken) {
      scratch.deallocate(scratch.context, p, bytes);
    }
    throw;
  }
  for (auto [p, bytes] : taken) {
    scratch.deallocate(scratch.context, p, bytes);
  }
}

#define TAPEFLOW_CUDA_REDUCE_OP(Op, T)                                           \
  template void launch_reduce<ReduceOp::Op, T>(const T*, T*, const ReduceIndex&, \
                                               const ScratchMemory&, void*);
#define TAPEFLOW_CUDA_REDUCE(T)    \
  TAPEFLOW_CUDA_REDUCE_OP(sum, T)  \
  TAPEFLOW_CUDA_REDUCE_OP(mean, T) \
  TAPEFLOW_CUDA_REDUCE_OP(max, T)  \
  TAPEFLOW_CUDA_REDUCE_OP(min, T)
TAPEFLOW_CUDA_REDUCE(float)
TAPEFLOW_CUDA_REDUCE(double)
TAPEFLOW_CUDA_REDUCE(std::int32_t)
TAPEFLOW_CUDA_REDUCE(std::int64_t)
#undef TAPEFLOW_CUDA_REDUCE
#undef TAPEFLOW_CUDA_REDUCE_OP

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
