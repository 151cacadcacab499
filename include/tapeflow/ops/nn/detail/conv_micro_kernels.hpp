// The convolution's micro-kernels: GEMM micro-kernels (ops/linalg/detail/gemm.hpp) whose A or B
// operand is read straight out of a zero-padded image instead of a packed panel, so neither the
// forward pass nor the filter gradient ever writes an im2col matrix. Same register tiling and
// blocking as the GEMM (gemm_impl::Config).
// IWYU pragma: private, include <tapeflow/ops/nn/conv2d.hpp>
#pragma once

#include <cstdint>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/linalg/detail/gemm.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

// Micro-kernel with B rows gathered by pointer: C[MR x NR] (=|+=) A * B where row p of B is
// the NR contiguous values at b_rows[p] + b_offset (a convolution's filter gradient reads the
// channels of one window tap straight from the padded image this way, with no packing).
// `a` as for gemm_impl::micro_kernel.
template <class T, int MR, int NV>
TAPEFLOW_NOINLINE void micro_kernel_b_rows(std::int64_t kc, T const* TAPEFLOW_RESTRICT a,
                                           std::int64_t a_step, T const* const* b_rows,
                                           std::int64_t b_offset, T* c, std::int64_t ldc,
                                           bool load_c) {
  using Ops = typename gemm_impl::Config<T>::Ops;
  using V = typename Ops::V;
  constexpr int L = Ops::kLanes;
  V acc[MR][NV];
  TAPEFLOW_UNROLL
  for (int i = 0; i < MR; ++i) {
    TAPEFLOW_UNROLL
    for (int j = 0; j < NV; ++j) {
      acc[i][j] = Ops::zero();
    }
  }
  for (std::int64_t p = 0; p < kc; ++p) {
    T const* const b = b_rows[p] + b_offset;
    V bv[NV];
    TAPEFLOW_UNROLL
    for (int j = 0; j < NV; ++j) {
      bv[j] = Ops::load(b + j * L);
    }
    TAPEFLOW_UNROLL
    for (int i = 0; i < MR; ++i) {
      V const av = Ops::broadcast(a[i]);
      TAPEFLOW_UNROLL
      for (int j = 0; j < NV; ++j) {
        acc[i][j] = Ops::fma(av, bv[j], acc[i][j]);
      }
    }
    a += a_step;
  }
  TAPEFLOW_UNROLL
  for (int i = 0; i < MR; ++i) {
    TAPEFLOW_UNROLL
    for (int j = 0; j < NV; ++j) {
      T* const dst = c + i * ldc + j * L;
      Ops::store(dst, load_c ? Ops::add(Ops::load(dst), acc[i][j]) : acc[i][j]);
    }
  }
}

// Convolution micro-kernel (an "indirect GEMM" as in XNNPACK, without the indirection buffer):
// C[MR x NR] = sum over taps t < `taps` and channels q < `channels` of
// rows[i][offsets[t] + q] * b[(t * channels + q) * NR + j]. rows[i] points at output pixel i's
// window origin in a zero-padded image, offsets[t] is tap t's distance from it, so every tap
// reads `channels` contiguous values with no bounds check and no im2col copy; `b` is one packed
// panel of the filter over all taps * channels rows. The accumulators stay in registers across
// all taps, so C is stored once.
template <class T, int MR, int NV>
TAPEFLOW_NOINLINE void conv_micro_kernel(std::int64_t taps, std::int64_t channels,
                                         T const* const* rows, std::int64_t const* offsets,
                                         T const* TAPEFLOW_RESTRICT b, T* c, std::int64_t ldc) {
  using Ops = typename gemm_impl::Config<T>::Ops;
  using V = typename Ops::V;
  constexpr int L = Ops::kLanes;
  V acc[MR][NV];
  TAPEFLOW_UNROLL
  for (int i = 0; i < MR; ++i) {
    TAPEFLOW_UNROLL
    for (int j = 0; j < NV; ++j) {
      acc[i][j] = Ops::zero();
    }
  }
  T const* a[MR];
  TAPEFLOW_UNROLL
  for (int i = 0; i < MR; ++i) {
    a[i] = rows[i];
  }
  for (std::int64_t t = 0; t < taps; ++t) {
    std::int64_t const first = offsets[t];
    std::int64_t const last = first + channels;
    for (std::int64_t q = first; q < last; ++q) {
      V bv[NV];
      TAPEFLOW_UNROLL
      for (int j = 0; j < NV; ++j) {
        bv[j] = Ops::load(b + j * L);
      }
      TAPEFLOW_UNROLL
      for (int i = 0; i < MR; ++i) {
        V const av = Ops::broadcast(a[i][q]);
        TAPEFLOW_UNROLL
        for (int j = 0; j < NV; ++j) {
          acc[i][j] = Ops::fma(av, bv[j], acc[i][j]);
        }
      }
      b += NV * L;
    }
  }
  TAPEFLOW_UNROLL
  for (int i = 0; i < MR; ++i) {
    TAPEFLOW_UNROLL
    for (int j = 0; j < NV; ++j) {
      Ops::store(c + i * ldc + j * L, acc[i][j]);
    }
  }
}

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
