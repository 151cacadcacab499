// Library-wide configuration macros. Only TAPEFLOW_-prefixed names are defined here.
//
// The ABI namespace encodes configuration that changes object layouts, so two translation
// units built with different settings fail to link instead of corrupting memory.
#pragma once

#ifndef TAPEFLOW_ABI_NAMESPACE
#define TAPEFLOW_ABI_NAMESPACE v0
#endif

#define TAPEFLOW_BEGIN_NAMESPACE \
  namespace tapeflow {           \
  inline namespace TAPEFLOW_ABI_NAMESPACE {
#define TAPEFLOW_END_NAMESPACE \
  }                            \
  }

#if defined(__GNUC__) || defined(__clang__)
#define TAPEFLOW_ALWAYS_INLINE inline __attribute__((always_inline))
#define TAPEFLOW_NOINLINE __attribute__((noinline))
#define TAPEFLOW_COLD __attribute__((cold, noinline))
#define TAPEFLOW_LIKELY(x) __builtin_expect(!!(x), 1)
#define TAPEFLOW_UNLIKELY(x) __builtin_expect(!!(x), 0)
// Kernel loops (GEMM, convolution micro-kernels): no-alias pointers, fully unrolled tiles.
#define TAPEFLOW_RESTRICT __restrict__
#define TAPEFLOW_UNROLL _Pragma("GCC unroll 16")
#else
#define TAPEFLOW_ALWAYS_INLINE inline
#define TAPEFLOW_NOINLINE
#define TAPEFLOW_COLD
#define TAPEFLOW_LIKELY(x) (x)
#define TAPEFLOW_UNLIKELY(x) (x)
#define TAPEFLOW_RESTRICT
#define TAPEFLOW_UNROLL
#endif
