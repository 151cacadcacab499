// The GPU instantiation of filter_layout.hpp's rewrites, on the op's stream.
#include <cuda_runtime.h>
#include <thrust/system/cuda/execution_policy.h>

#include "filter_layout.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

void launch_hwio_to_krsc(const float* hwio, float* krsc, const FilterDims& d, void* stream) {
  std::int64_t const n = d.kh * d.kw * d.in * d.out;
  if (n > 0) {
    transform_filter(thrust::cuda::par_nosync.on(static_cast<cudaStream_t>(stream)), n, krsc,
                     HwioToKrsc<float>{hwio, d});
  }
}

void launch_krsc_to_hwio(const float* krsc, float* hwio, const FilterDims& d, void* stream) {
  std::int64_t const n = d.kh * d.kw * d.in * d.out;
  if (n > 0) {
    transform_filter(thrust::cuda::par_nosync.on(static_cast<cudaStream_t>(stream)), n, hwio,
                     KrscToHwio<float>{krsc, d});
  }
}

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
