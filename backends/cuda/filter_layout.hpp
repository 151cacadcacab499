// Convolution filters between TensorFlow's layout, HWIO [kh, kw, in, out], and the
// channels-last KRSC [out, kh, kw, in] that cuDNN's NHWC convolutions take: index functors for
// Thrust's transform, so the GPU (conv_layout.cu) and the CPU under Thrust's C++ system
// (tests/unit/thrust_cpu/) run the same code. Internal to tapeflow::cuda.
#pragma once

#include <cstdint>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/math/detail/scalar_math.hpp>  // TAPEFLOW_HOST_DEVICE

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// A filter's four extents.
struct FilterDims {
  std::int64_t kh = 1, kw = 1, in = 1, out = 1;
};

/// Element `i` of the KRSC filter, read from the HWIO one.
template <class T>
struct HwioToKrsc {
  const T* hwio = nullptr;
  FilterDims d;
  TAPEFLOW_HOST_DEVICE T operator()(std::int64_t i) const {
    std::int64_t const c = i % d.in;
    std::int64_t const s = (i / d.in) % d.kw;
    std::int64_t const r = (i / (d.in * d.kw)) % d.kh;
    std::int64_t const k = i / (d.in * d.kw * d.kh);
    return hwio[((r * d.kw + s) * d.in + c) * d.out + k];
  }
};

/// Element `i` of the HWIO filter, read from the KRSC one.
template <class T>
struct KrscToHwio {
  const T* krsc = nullptr;
  FilterDims d;
  TAPEFLOW_HOST_DEVICE T operator()(std::int64_t i) const {
    std::int64_t const k = i % d.out;
    std::int64_t const c = (i / d.out) % d.in;
    std::int64_t const s = (i / (d.out * d.in)) % d.kw;
    std::int64_t const r = i / (d.out * d.in * d.kw);
    return krsc[((k * d.kh + r) * d.kw + s) * d.in + c];
  }
};

/// out[i] = f(i) for i in [0, n) under Thrust `policy`.
template <class F, class T, class Policy>
void transform_filter(Policy&& policy, std::int64_t n, T* out, const F& f) {
  thrust::transform(policy, thrust::counting_iterator<std::int64_t>(0),
                    thrust::counting_iterator<std::int64_t>(n), out, f);
}

/// Rewrites a float filter between the layouts on `stream` (a cudaStream_t); conv_layout.cu.
void launch_hwio_to_krsc(const float* hwio, float* krsc, const FilterDims& d, void* stream);
void launch_krsc_to_hwio(const float* krsc, float* hwio, const FilterDims& d, void* stream);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
