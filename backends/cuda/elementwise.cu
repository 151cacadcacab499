// CUDA elementwise kernels. The math is the functors of ops/math/detail/scalar_math.hpp, the
// same ones the CPU kernels apply, so each op's element rule has one definition.
#include <cstdint>

#include <cuda_runtime.h>

#include <tapeflow/ops/math/detail/scalar_math.hpp>

#include "elementwise.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {
namespace {

constexpr int threads_per_block = 256;

// Operands of the output's shape or single values: no index arithmetic.
template <class F, class T, class U>
__global__ void binary_flat(F f, const T* a, const T* b, U* out, std::int64_t n, bool a_vector,
                            bool b_vector) {
  auto const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (auto i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = f(a[a_vector ? i : 0], b[b_vector ? i : 0]);
  }
}

// General broadcasting: each output index is split into coordinates, which the operands'
// strides (0 along broadcast axes) turn into their offsets.
template <class F, class T, class U>
__global__ void binary_strided(F f, const T* a, const T* b, U* out, std::int64_t n,
                               Broadcast index) {
  auto const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (auto i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    std::int64_t offset_a = 0;
    std::int64_t offset_b = 0;
    broadcast_offsets(index, i, offset_a, offset_b);
    out[i] = f(a[offset_a], b[offset_b]);
  }
}

template <class F, class T>
__global__ void unary_flat(F f, const T* x, T* out, std::int64_t n) {
  auto const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (auto i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = f(x[i]);
  }
}

unsigned blocks_for(std::int64_t n) {
  std::int64_t const wanted = (n + threads_per_block - 1) / threads_per_block;
  return static_cast<unsigned>(wanted < 65535 * 8 ? wanted : 65535 * 8);  // grid-stride beyond
}

}  // namespace

template <class F, class T, class U>
void launch_binary(const BinaryArgs<T, U>& args, void* stream) {
  if (args.n == 0) {
    return;
  }
  auto* s = static_cast<cudaStream_t>(stream);
  if (args.strided) {
    binary_strided<<<blocks_for(args.n), threads_per_block, 0, s>>>(F{}, args.a, args.b, args.out,
                                                                    args.n, args.index);
  } else {
    binary_flat<<<blocks_for(args.n), threads_per_block, 0, s>>>(
        F{}, args.a, args.b, args.out, args.n, args.a_vector, args.b_vector);
  }
}

template <class F, class T>
void launch_unary(const T* x, T* out, std::int64_t n, void* stream) {
  if (n == 0) {
    return;
  }
  unary_flat<<<blocks_for(n), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(F{}, x,
                                                                                         out, n);
}

template <class T, class U>
__global__ void cast_flat(const T* x, U* out, std::int64_t n) {
  detail::scalar_math::CastTo<U> const cast;
  auto const stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (auto i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = cast(x[i]);
  }
}

template <class T, class U>
void launch_cast(const T* x, U* out, std::int64_t n, void* stream) {
  if (n == 0) {
    return;
  }
  cast_flat<<<blocks_for(n), threads_per_block, 0, static_cast<cudaStream_t>(stream)>>>(x, out, n);
}
#define TAPEFLOW_CUDA_CAST(T, U) template void launch_cast<T, U>(const T*, U*, std::int64_t, void*);
#define TAPEFLOW_CUDA_CAST_FROM(T)    \
  TAPEFLOW_CUDA_CAST(T, float)        \
  TAPEFLOW_CUDA_CAST(T, double)       \
  TAPEFLOW_CUDA_CAST(T, std::int32_t) \
  TAPEFLOW_CUDA_CAST(T, std::int64_t) \
  TAPEFLOW_CUDA_CAST(T, bool)
TAPEFLOW_CUDA_CAST_FROM(float)
TAPEFLOW_CUDA_CAST_FROM(double)
TAPEFLOW_CUDA_CAST_FROM(std::int32_t)
TAPEFLOW_CUDA_CAST_FROM(std::int64_t)
TAPEFLOW_CUDA_CAST_FROM(bool)
#undef TAPEFLOW_CUDA_CAST_FROM
#undef TAPEFLOW_CUDA_CAST

#define TAPEFLOW_CUDA_BINARY(F, T) \
  template void launch_binary<detail::scalar_math::F, T, T>(const BinaryArgs<T, T>&, void*);
TAPEFLOW_CUDA_BINARY(Add, float)
TAPEFLOW_CUDA_BINARY(Add, double)
TAPEFLOW_CUDA_BINARY(Add, std::int32_t)
TAPEFLOW_CUDA_BINARY(Add, std::int64_t)
TAPEFLOW_CUDA_BINARY(Sub, float)
TAPEFLOW_CUDA_BINARY(Sub, double)
TAPEFLOW_CUDA_BINARY(Sub, std::int32_t)
TAPEFLOW_CUDA_BINARY(Sub, std::int64_t)
TAPEFLOW_CUDA_BINARY(Mul, float)
TAPEFLOW_CUDA_BINARY(Mul, double)
TAPEFLOW_CUDA_BINARY(Mul, std::int32_t)
TAPEFLOW_CUDA_BINARY(Mul, std::int64_t)
TAPEFLOW_CUDA_BINARY(Div, float)
TAPEFLOW_CUDA_BINARY(Div, double)
TAPEFLOW_CUDA_BINARY(Div, std::int32_t)
TAPEFLOW_CUDA_BINARY(Div, std::int64_t)
TAPEFLOW_CUDA_BINARY(ReluGrad, float)
TAPEFLOW_CUDA_BINARY(ReluGrad, double)
#define TAPEFLOW_CUDA_BINARY_ALL(F)     \
  TAPEFLOW_CUDA_BINARY(F, float)        \
  TAPEFLOW_CUDA_BINARY(F, double)       \
  TAPEFLOW_CUDA_BINARY(F, std::int32_t) \
  TAPEFLOW_CUDA_BINARY(F, std::int64_t)
TAPEFLOW_CUDA_BINARY(Pow, float)
TAPEFLOW_CUDA_BINARY(Pow, double)
TAPEFLOW_CUDA_BINARY_ALL(SquaredDifference)
TAPEFLOW_CUDA_BINARY_ALL(Maximum)
TAPEFLOW_CUDA_BINARY_ALL(Minimum)
#undef TAPEFLOW_CUDA_BINARY_ALL
#undef TAPEFLOW_CUDA_BINARY

// Comparisons: bool results.
#define TAPEFLOW_CUDA_COMPARE(F, T) \
  template void launch_binary<detail::scalar_math::F, T, bool>(const BinaryArgs<T, bool>&, void*);
#define TAPEFLOW_CUDA_COMPARE_ALL(F)     \
  TAPEFLOW_CUDA_COMPARE(F, float)        \
  TAPEFLOW_CUDA_COMPARE(F, double)       \
  TAPEFLOW_CUDA_COMPARE(F, std::int32_t) \
  TAPEFLOW_CUDA_COMPARE(F, std::int64_t)
TAPEFLOW_CUDA_COMPARE_ALL(Equal)
TAPEFLOW_CUDA_COMPARE_ALL(NotEqual)
TAPEFLOW_CUDA_COMPARE_ALL(Less)
TAPEFLOW_CUDA_COMPARE_ALL(LessEqual)
TAPEFLOW_CUDA_COMPARE_ALL(Greater)
TAPEFLOW_CUDA_COMPARE_ALL(GreaterEqual)
#undef TAPEFLOW_CUDA_COMPARE_ALL
#undef TAPEFLOW_CUDA_COMPARE

// Unary ops: the floating ones for float and double, those integers also take for all four.
#define TAPEFLOW_CUDA_UNARY(F, T) \
  template void launch_unary<detail::scalar_math::F, T>(const T*, T*, std::int64_t, void*);
#define TAPEFLOW_CUDA_UNARY_FLOATING(F) \
  TAPEFLOW_CUDA_UNARY(F, float)         \
  TAPEFLOW_CUDA_UNARY(F, double)
#define TAPEFLOW_CUDA_UNARY_NUMERIC(F) \
  TAPEFLOW_CUDA_UNARY_FLOATING(F)      \
  TAPEFLOW_CUDA_UNARY(F, std::int32_t) \
  TAPEFLOW_CUDA_UNARY(F, std::int64_t)
TAPEFLOW_CUDA_UNARY_NUMERIC(Neg)
TAPEFLOW_CUDA_UNARY_NUMERIC(Square)
TAPEFLOW_CUDA_UNARY_NUMERIC(Abs)
TAPEFLOW_CUDA_UNARY_NUMERIC(Sign)
TAPEFLOW_CUDA_UNARY_NUMERIC(Relu)
TAPEFLOW_CUDA_UNARY_FLOATING(Exp)
TAPEFLOW_CUDA_UNARY_FLOATING(Log)
TAPEFLOW_CUDA_UNARY_FLOATING(Sqrt)
TAPEFLOW_CUDA_UNARY_FLOATING(Tanh)
TAPEFLOW_CUDA_UNARY_FLOATING(Sigmoid)
#undef TAPEFLOW_CUDA_UNARY_NUMERIC
#undef TAPEFLOW_CUDA_UNARY_FLOATING
#undef TAPEFLOW_CUDA_UNARY

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
