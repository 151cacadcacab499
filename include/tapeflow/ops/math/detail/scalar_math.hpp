// The element math of arithmetic ops, written once for every backend: the CPU kernels apply
// these functors to Eigen arrays (ops/math/arithmetic.hpp), the CUDA kernels to single values
// in device code (backends/cuda/elementwise.cu). Kept free of other tapeflow headers so nvcc
// compiles it alone.
#pragma once

#if defined(__CUDACC__)
#define TAPEFLOW_HOST_DEVICE __host__ __device__
#else
#define TAPEFLOW_HOST_DEVICE
#endif

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::scalar_math {

/// x + y
struct Add {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    return x + y;
  }
};
/// x - y
struct Sub {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    return x - y;
  }
};
/// x * y
struct Mul {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    return x * y;
  }
};
/// x / y
struct Div {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    return x / y;
  }
};

}  // namespace detail::scalar_math
TAPEFLOW_END_NAMESPACE
