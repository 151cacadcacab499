// The CUDA pooling kernels (MaxPool, AvgPool and their gradients, NHWC) as element functors:
// each output element is a function of its index, run by Thrust's transform. Gradients
// gather: an input element sums, in output order, what the windows that contain it send
// (the CPU kernels scatter in the same order), so results are deterministic and equal the
// CPU's. Host-device code under any Thrust policy: the GPU (pool.cu) and the CPU under
// Thrust's C++ and OpenMP systems (tests/unit/thrust_cpu/). Internal to tapeflow::cuda.
#pragma once

#include <cstdint>

#include <cuda/std/limits>  // usable in device code as well
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/math/detail/scalar_math.hpp>  // TAPEFLOW_HOST_DEVICE

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// A pooling window's geometry (ops' Window2D, restated so this header stays light):
/// input [n, h, w, c], window kh x kw, strides, TensorFlow's padding before each axis, and
/// the pooled [n, oh, ow, c].
struct PoolGeometry {
  std::int64_t n = 0, h = 0, w = 0, c = 0;
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  std::int64_t oh = 0, ow = 0;
  std::int64_t pad_top = 0, pad_left = 0;
};

/// The taps [first, last) of a window starting at `origin` that lie inside [0, size).
TAPEFLOW_HOST_DEVICE inline void window_taps(std::int64_t origin, std::int64_t taps,
                                             std::int64_t size, std::int64_t& first,
                                             std::int64_t& last) {
  first = origin < 0 ? -origin : 0;
  first = first > taps ? taps : first;
  last = size - origin;
  last = last > taps ? taps : last;
  last = last < first ? first : last;
}

/// One pooled element's window: where it starts in the input and its valid taps.
struct PoolWindowAt {
  std::int64_t input = 0;  ///< offset of tap (0, 0), channel included (may lie in padding)
  std::int64_t ky0 = 0, ky1 = 0, kx0 = 0, kx1 = 0;
};
TAPEFLOW_HOST_DEVICE inline PoolWindowAt pool_window(const PoolGeometry& g, std::int64_t o) {
  std::int64_t const ch = o % g.c;
  std::int64_t const ox = (o / g.c) % g.ow;
  std::int64_t const oy = (o / (g.c * g.ow)) % g.oh;
  std::int64_t const n = o / (g.c * g.ow * g.oh);
  std::int64_t const iy0 = oy * g.sh - g.pad_top;
  std::int64_t const ix0 = ox * g.sw - g.pad_left;
  PoolWindowAt at;
  at.input = ((n * g.h + iy0) * g.w + ix0) * g.c + ch;
  window_taps(iy0, g.kh, g.h, at.ky0, at.ky1);
  window_taps(ix0, g.kw, g.w, at.kx0, at.kx1);
  return at;
}

/// The input offset of a window's first maximum in row-major tap order (TensorFlow's choice
/// among ties), or -1 for an empty window.
template <class T>
TAPEFLOW_HOST_DEVICE std::int64_t pool_argmax(const PoolGeometry& g, const T* x,
                                              const PoolWindowAt& at) {
  std::int64_t best = -1;
  for (std::int64_t ky = at.ky0; ky < at.ky1; ++ky) {
    for (std::int64_t kx = at.kx0; kx < at.kx1; ++kx) {
      std::int64_t const i = at.input + (ky * g.w + kx) * g.c;
      if (best < 0 || x[i] > x[best]) {
        best = i;
      }
    }
  }
  return best;
}

/// Calls `visit(o)` for every pooled element whose window holds input element `i`, in
/// output order.
template <class Visit>
TAPEFLOW_HOST_DEVICE void windows_holding(const PoolGeometry& g, std::int64_t i, Visit&& visit) {
  std::int64_t const ch = i % g.c;
  std::int64_t const ix = (i / g.c) % g.w;
  std::int64_t const iy = (i / (g.c * g.w)) % g.h;
  std::int64_t const n = i / (g.c * g.w * g.h);
  // Window oy holds iy when oy*sh - pad_top <= iy < oy*sh - pad_top + kh.
  std::int64_t const y = iy + g.pad_top;
  std::int64_t const x = ix + g.pad_left;
  std::int64_t oy0 = y - g.kh + 1 <= 0 ? 0 : (y - g.kh + 1 + g.sh - 1) / g.sh;
  std::int64_t oy1 = y / g.sh + 1;
  std::int64_t ox0 = x - g.kw + 1 <= 0 ? 0 : (x - g.kw + 1 + g.sw - 1) / g.sw;
  std::int64_t ox1 = x / g.sw + 1;
  oy1 = oy1 > g.oh ? g.oh : oy1;
  ox1 = ox1 > g.ow ? g.ow : ox1;
  for (std::int64_t oy = oy0; oy < oy1; ++oy) {
    for (std::int64_t ox = ox0; ox < ox1; ++ox) {
      visit(((n * g.oh + oy) * g.ow + ox) * g.c + ch);
    }
  }
}

/// MaxPool: the window's maximum.
template <class T>
struct MaxPoolOutput {
  const T* x = nullptr;
  PoolGeometry g;
  TAPEFLOW_HOST_DEVICE T operator()(std::int64_t o) const {
    std::int64_t const best = pool_argmax(g, x, pool_window(g, o));
    return best < 0 ? ::cuda::std::numeric_limits<T>::lowest() : x[best];
  }
};

/// AvgPool: the valid taps' sum times 1/count (as the CPU kernel scales).
template <class T>
struct AvgPoolOutput {
  const T* x = nullptr;
  PoolGeometry g;
  TAPEFLOW_HOST_DEVICE T operator()(std::int64_t o) const {
    PoolWindowAt const at = pool_window(g, o);
    T sum = 0;
    for (std::int64_t ky = at.ky0; ky < at.ky1; ++ky) {
      for (std::int64_t kx = at.kx0; kx < at.kx1; ++kx) {
        sum += x[at.input + (ky * g.w + kx) * g.c];
      }
    }
    std::int64_t const count = (at.ky1 - at.ky0) * (at.kx1 - at.kx0);
    return count > 0 ? sum * (T(1) / static_cast<T>(count)) : sum;
  }
};

/// MaxPoolGrad: the sum of dy over the windows whose maximum is this input element.
template <class T>
struct MaxPoolGradInput {
  const T* x = nullptr;
  const T* dy = nullptr;
  PoolGeometry g;
  TAPEFLOW_HOST_DEVICE T operator()(std::int64_t i) const {
    T sum = 0;
    windows_holding(g, i, [&](std::int64_t o) {
      if (pool_argmax(g, x, pool_window(g, o)) == i) {
        sum += dy[o];
      }
    });
    return sum;
  }
};

/// AvgPoolGrad: the sum of dy * 1/count over the windows holding this input element.
template <class T>
struct AvgPoolGradInput {
  const T* dy = nullptr;
  PoolGeometry g;
  TAPEFLOW_HOST_DEVICE T operator()(std::int64_t i) const {
    T sum = 0;
    windows_holding(g, i, [&](std::int64_t o) {
      PoolWindowAt const at = pool_window(g, o);
      std::int64_t const count = (at.ky1 - at.ky0) * (at.kx1 - at.kx0);
      sum += dy[o] * (T(1) / static_cast<T>(count));
    });
    return sum;
  }
};

/// out[i] = f(i) for i in [0, n) under Thrust `policy`.
template <class F, class T, class Policy>
void transform_indices(Policy&& policy, std::int64_t n, T* out, const F& f) {
  thrust::transform(policy, thrust::counting_iterator<std::int64_t>(0),
                    thrust::counting_iterator<std::int64_t>(n), out, f);
}

/// Which pooling kernel a launch runs.
enum class PoolKernel { max, avg, max_grad, avg_grad };

/// Runs `kernel` on a GPU on `stream` (a cudaStream_t): `x` is the input (unused by
/// avg_grad), `dy` the pooled gradient (grads only), `out` pooled or input-shaped.
/// Instantiated in pool.cu for float and double.
template <class T>
void launch_pool(PoolKernel kernel, const PoolGeometry& g, const T* x, const T* dy, T* out,
                 void* stream);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
