// CUDA kernels of the loss and its gradient's parts. Rows are short in the models this
// serves (a row is one example's classes), so each thread owns a row: the same max-shifted
// sums the CPU kernels compute, in the same order, with the shared exp/log functors.
#include <cstdint>

#include <cuda_runtime.h>

#include <tapeflow/ops/math/detail/scalar_math.hpp>

#include "nn.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {
namespace {

constexpr int threads_per_block = 256;

unsigned blocks_for(std::int64_t n) {
  std::int64_t const wanted = (n + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(wanted < 65535 * 8 ? wanted : 65535 * 8);  // grid-stride beyond
}

#define TAPEFLOW_GRID_STRIDE(i, count)                                                         \
  for (auto i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (count); \
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

template <class T>
__global__ void softmax_rows(const T* x, T* y, AxisSplit split, bool log) {
  detail::scalar_math::Exp const exp_of;
  TAPEFLOW_GRID_STRIDE(line, split.outer * split.inner) {
    std::int64_t const o = line / split.inner;
    std::int64_t const i = line % split.inner;
    const T* in = x + o * split.n * split.inner + i;
    T* out = y + o * split.n * split.inner + i;
    T m = in[0];
    for (std::int64_t j = 1; j < split.n; ++j) {
      m = in[j * split.inner] > m ? in[j * split.inner] : m;
    }
    T sum = 0;
    for (std::int64_t j = 0; j < split.n; ++j) {
      sum += exp_of(in[j * split.inner] - m);
    }
    if (log) {
      T const log_sum = detail::scalar_math::Log{}(sum);
      for (std::int64_t j = 0; j < split.n; ++j) {
        out[j * split.inner] = in[j * split.inner] - m - log_sum;
      }
    } else {
      for (std::int64_t j = 0; j < split.n; ++j) {
        out[j * split.inner] = exp_of(in[j * split.inner] - m) / sum;
      }
    }
  }
}

template <class T, class I>
__global__ void sparse_xent_rows(const T* logits, const I* labels, T* loss, std::int64_t rows,
                                 std::int64_t classes) {
  detail::scalar_math::Exp const exp_of;
  TAPEFLOW_GRID_STRIDE(r, rows) {
    const T* row = logits + r * classes;
    T m = row[0];
    for (std::int64_t j = 1; j < classes; ++j) {
      m = row[j] > m ? row[j] : m;
    }
    T sum = 0;
    for (std::int64_t j = 0; j < classes; ++j) {
      sum += exp_of(row[j] - m);
    }
    loss[r] = detail::scalar_math::Log{}(sum) - (row[labels[r]] - m);
  }
}

template <class U, class I>
__global__ void one_hot_elements(const I* indices, U* out, AxisSplit split, U on, U off) {
  TAPEFLOW_GRID_STRIDE(e, split.outer * split.n * split.inner) {
    std::int64_t const i = e % split.inner;
    std::int64_t const d = (e / split.inner) % split.n;
    std::int64_t const o = e / (split.inner * split.n);
    out[e] = static_cast<std::int64_t>(indices[o * split.inner + i]) == d ? on : off;
  }
}

#undef TAPEFLOW_GRID_STRIDE

}  // namespace

template <class T>
void launch_softmax(const T* x, T* y, AxisSplit split, bool log, void* stream) {
  std::int64_t const lines = split.outer * split.inner;
  if (lines == 0 || split.n == 0) {
    return;
  }
  softmax_rows<<<blocks_for(lines), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
      x, y, split, log);
}

template <class T, class I>
void launch_sparse_xent(const T* logits, const I* labels, T* loss, std::int64_t rows,
                        std::int64_t classes, void* stream) {
  if (rows == 0) {
    return;
  }
  sparse_xent_rows<<<blocks_for(rows), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
      logits, labels, loss, rows, classes);
}

template <class U, class I>
void launch_one_hot(const I* indices, U* out, AxisSplit split, U on, U off, void* stream) {
  std::int64_t const n = split.outer * split.n * split.inner;
  if (n == 0) {
    return;
  }
  one_hot_elements<<<blocks_for(n), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(
      indices, out, split, on, off);
}

template void launch_softmax<float>(const float*, float*, AxisSplit, bool, void*);
template void launch_softmax<double>(const double*, double*, AxisSplit, bool, void*);
#define TAPEFLOW_CUDA_XENT(T, I) \
  template void launch_sparse_xent<T, I>(const T*, const I*, T*, std::int64_t, std::int64_t, void*);
TAPEFLOW_CUDA_XENT(float, std::int32_t)
TAPEFLOW_CUDA_XENT(float, std::int64_t)
TAPEFLOW_CUDA_XENT(double, std::int32_t)
TAPEFLOW_CUDA_XENT(double, std::int64_t)
#undef TAPEFLOW_CUDA_XENT
#define TAPEFLOW_CUDA_ONE_HOT(U, I) \
  template void launch_one_hot<U, I>(const I*, U*, AxisSplit, U, U, void*);
TAPEFLOW_CUDA_ONE_HOT(float, std::int32_t)
TAPEFLOW_CUDA_ONE_HOT(float, std::int64_t)
TAPEFLOW_CUDA_ONE_HOT(double, std::int32_t)
TAPEFLOW_CUDA_ONE_HOT(double, std::int64_t)
#undef TAPEFLOW_CUDA_ONE_HOT

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
