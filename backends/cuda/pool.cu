// The GPU instantiation of pool.hpp's functors: Thrust's CUDA system on the op's stream,
// without the synchronization its plain `par` adds (the executor orders the stream).
#include <cuda_runtime.h>
#include <thrust/system/cuda/execution_policy.h>

#include "pool.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

template <class T>
void launch_pool(PoolKernel kernel, const PoolGeometry& g, const T* x, const T* dy, T* out,
                 void* stream) {
  auto const policy = thrust::cuda::par_nosync.on(static_cast<cudaStream_t>(stream));
  std::int64_t const pooled = g.n * g.oh * g.ow * g.c;
  std::int64_t const input = g.n * g.h * g.w * g.c;
  switch (kernel) {
    case PoolKernel::max:
      return pooled == 0 ? void() : transform_indices(policy, pooled, out, MaxPoolOutput<T>{x, g});
    case PoolKernel::avg:
      return pooled == 0 ? void() : transform_indices(policy, pooled, out, AvgPoolOutput<T>{x, g});
    case PoolKernel::max_grad:
      return input == 0 ? void()
                        : transform_indices(policy, input, out, MaxPoolGradInput<T>{x, dy, g});
    case PoolKernel::avg_grad:
      return input == 0 ? void()
                        : transform_indices(policy, input, out, AvgPoolGradInput<T>{dy, g});
  }
}

template void launch_pool<float>(PoolKernel, const PoolGeometry&, const float*, const float*,
                                 float*, void*);
template void launch_pool<double>(PoolKernel, const PoolGeometry&, const double*, const double*,
                                  double*, void*);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
