// Library-wide configuration macros. Only TAPEFLOW_-prefixed names are defined here.
//
// The ABI namespace encodes configuration that changes object layouts, so two translation
// units built with different settings fail to link instead of corrupting memory.
#pragma once

// The C libraries behind optional features: each macro is 1 (the feature is compiled, link
// the library; the CMake target does) unless defined to 0 before the first tapeflow include.
// The single headers in single_include/ default them to 0 so they need no link flags. A
// feature that is off stays declared, and using it is a compile error naming its macro
// (TAPEFLOW_DETAIL_NEEDS below; README, "Compiler Explorer").
//   TAPEFLOW_WITH_ZLIB  TFRecord GZIP/ZLIB compression, keras::datasets' MNIST files   (-lz)
//   TAPEFLOW_WITH_JPEG  tf::image::decode_jpeg, encode_jpeg                            (-ljpeg)
//   TAPEFLOW_WITH_PNG   tf::image::decode_png, encode_png, tf::summary::image          (-lpng)
#ifndef TAPEFLOW_WITH_ZLIB
#define TAPEFLOW_WITH_ZLIB 1
#endif
#ifndef TAPEFLOW_WITH_JPEG
#define TAPEFLOW_WITH_JPEG 1
#endif
#ifndef TAPEFLOW_WITH_PNG
#define TAPEFLOW_WITH_PNG 1
#endif

#ifndef TAPEFLOW_ABI_NAMESPACE
#if TAPEFLOW_WITH_ZLIB
#define TAPEFLOW_ABI_NAMESPACE v0
#else
// Without zlib the TFRecord writer's sink has no deflate state: a different layout.
#define TAPEFLOW_ABI_NAMESPACE v0_nozlib
#endif
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
// Elementwise runs: inlines the whole Eigen expression, so a packet math function (tanh's
// rational polynomial) is interleaved across the unrolled packets instead of called per packet.
#define TAPEFLOW_FLATTEN __attribute__((flatten))
#else
#define TAPEFLOW_ALWAYS_INLINE inline
#define TAPEFLOW_NOINLINE
#define TAPEFLOW_COLD
#define TAPEFLOW_LIKELY(x) (x)
#define TAPEFLOW_UNLIKELY(x) (x)
#define TAPEFLOW_RESTRICT
#define TAPEFLOW_UNROLL
#define TAPEFLOW_FLATTEN
#endif

// Marks a declaration whose feature is compiled out (TAPEFLOW_WITH_ZLIB=0, ...): naming it is
// a compile error carrying `message`. GCC 12+ and Clang have the attribute; elsewhere it is a
// deprecation warning.
#if defined(__has_attribute)
#if __has_attribute(unavailable)
#define TAPEFLOW_DETAIL_UNAVAILABLE(message) __attribute__((unavailable(message)))
#endif
#endif
#ifndef TAPEFLOW_DETAIL_UNAVAILABLE
#define TAPEFLOW_DETAIL_UNAVAILABLE(message) [[deprecated(message)]]
#endif
