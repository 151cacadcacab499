#pragma once
// IWYU pragma: private, include <tapeflow/ops/linalg/matmul.hpp>

// General matrix multiply for the CPU backend, BLIS style.
//
// Why our own instead of Eigen's contraction: Eigen costs ~10 s of compile time per
// instantiation, this header ~0.5 s, at the same speed (fp32 on an AVX-512 Xeon: ~91% of the
// FMA peak on one core, ~87% on two; PyTorch/MKL reach ~93%).
//
// Structure (row-major C[m x n] = op(A)[m x k] * op(B)[k x n]):
//   * k is cut into KC slices; per slice, MR-row micro-panels of op(A) and NR-column
//     micro-panels of op(B) are packed contiguously (edges zero-padded, so the micro-kernel
//     never branches on size).
//   * The micro-kernel keeps an MR x NR tile of C in registers: per k step it loads one NR-wide
//     row of the B micro-panel and broadcasts the MR values of the A micro-panel. The loop
//     order keeps one A micro-panel (MR x KC, ~24 KB) resident in L1 while the B micro-panels
//     of a KC x NC block stream from L2.
//   * Threads: when all of op(B) packs into L2 and C has many rows per thread, the caller packs
//     op(B) once and the threads claim row groups from a counter (late threads just take
//     fewer); otherwise each thread runs the whole algorithm on its own tile of C, packing its
//     own blocks into its own core's L2 (Note [GEMM threads]). Neither scheme synchronizes
//     beyond the pool's parallel_for.
//   * Tiny products and matrix-vector shapes, which packing cannot pay for or the micro-tiles
//     would mostly pad, take unpacked loops instead.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#include <tapeflow/backend/cpu/simd.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/linalg/detail/gemm_fwd.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {  // tapeflow::detail: op code inside namespace ops says detail::gemm
namespace gemm_impl {

using backend::cpu::kVectorizable;
using backend::cpu::VecFor;

// ---------------------------------------------------------------------------------------------
// Blocking. The micro-tile is MR rows x NV vectors: MR * NV accumulators plus NV B vectors and a
// broadcast must fit the register file (32 vector registers with AVX-512 and on AArch64, 16
// otherwise), and MR * NV must cover FMA latency x throughput (>= 8 on current x86).
// KC sizes the A micro-panel (MR x KC) to about half of L1 (48 KB on recent AVX-512 cores, 32 KB
// on older and AVX2 ones); KC x NC, the packed B block, to part of L2 (1-2 MB per core on AVX-512
// servers, 256 KB-1 MB on AVX2 parts); the packed MC x KC A block lives in L3. Constants, not
// queried at run time: a few percent off the optimum on other parts, never a cliff.

#if defined(__AVX512F__) || defined(__aarch64__)
inline constexpr int kMicroRows = 12;
inline constexpr std::int64_t kL1PanelBytes = 24 * 1024;
inline constexpr std::int64_t kL2BlockBytes = 768 * 1024;
#else
inline constexpr int kMicroRows = 6;
inline constexpr std::int64_t kL1PanelBytes = 12 * 1024;
inline constexpr std::int64_t kL2BlockBytes = 384 * 1024;
#endif

// Multiply-adds one thread must own before a product is split: ~8 us at one core's peak. A
// parallel_for to a warm worker costs ~0.3 us, to one that slept ~8 us (2-vCPU KVM guest,
// AMD EPYC Zen 4), so even a cold hand-off breaks even (MAINTAINERS.md, Note [CPU thread pool]).
inline constexpr double kMinMacsPerThread = 1e6;

// Rows of C per thread from which the threads share one packed op(B) (Note [GEMM threads]):
// each other thread reads all of it from the packer's cache, a cost that only many rows repay.
inline constexpr std::int64_t kSharedBRowsPerThread = 256;

template <class T>
struct Config {
  using Ops = typename VecFor<T>::type;
  static constexpr int kMR = kMicroRows;
  static constexpr int kNV = 2;
  static constexpr int kNR = kNV * Ops::kLanes;
  static constexpr std::int64_t kKC =
      std::clamp<std::int64_t>(kL1PanelBytes / (kMR * sizeof(T)) / 8 * 8, 64, 2048);
  static constexpr std::int64_t kNC =
      std::max<std::int64_t>(kL2BlockBytes / (kKC * sizeof(T)) / kNR * kNR, 4 * kNR);
  static constexpr std::int64_t kMC = 3072 / kMR * kMR;
};

// ---------------------------------------------------------------------------------------------
// Thread-local scratch: grown on demand, reused across calls, never shared between threads.

class Scratch {
 public:
  Scratch() = default;
  Scratch(Scratch const&) = delete;
  Scratch& operator=(Scratch const&) = delete;
  ~Scratch() { release(); }

  template <class T>
  T* get(std::size_t count) {
    std::size_t const bytes = count * sizeof(T);
    if (bytes > capacity_) {
      release();
      data_ = ::operator new(bytes, std::align_val_t{kAlign});
      capacity_ = bytes;
    }
    return static_cast<T*>(data_);
  }

 private:
  static constexpr std::size_t kAlign = 64;
  void release() noexcept {
    if (data_ != nullptr) {
      ::operator delete(data_, std::align_val_t{kAlign});
      data_ = nullptr;
      capacity_ = 0;
    }
  }
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

// slot 0: packed A block, slot 1: packed B block.
inline Scratch& scratch(int slot) {
  thread_local Scratch buffers[2];
  return buffers[slot];
}

// ---------------------------------------------------------------------------------------------
// Micro-kernel: C[MR x NR] (=|+=) Apanel^T * Bpanel over kc steps.
// `a` holds kc groups of MR values (one column of op(A) each), `a_step` apart: MR for a packed
// panel of MR rows; a full panel's step when a 4- or 8-row kernel finishes the edge of a 12-row
// panel; the row stride of a matrix whose columns are already contiguous (no packing).
// `b` holds kc rows of NR values.

template <class T, int MR, int NV>
TAPEFLOW_NOINLINE void micro_kernel(std::int64_t kc, T const* TAPEFLOW_RESTRICT a,
                                    std::int64_t a_step, T const* TAPEFLOW_RESTRICT b, T* c,
                                    std::int64_t ldc, bool load_c) {
  using Ops = typename Config<T>::Ops;
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
    b += NV * L;
  }
  if (load_c) {
    TAPEFLOW_UNROLL
    for (int i = 0; i < MR; ++i) {
      TAPEFLOW_UNROLL
      for (int j = 0; j < NV; ++j) {
        T* const dst = c + i * ldc + j * L;
        Ops::store(dst, Ops::add(Ops::load(dst), acc[i][j]));
      }
    }
  } else {
    TAPEFLOW_UNROLL
    for (int i = 0; i < MR; ++i) {
      TAPEFLOW_UNROLL
      for (int j = 0; j < NV; ++j) {
        Ops::store(c + i * ldc + j * L, acc[i][j]);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Packing. A packed panel holds kc groups of R values: group p is row p of op(B) (R = NR) or
// column p of op(A) (R = MR). Rows past `rows` are zero, so edge panels need no special kernel.
// Depending on the transpose flag a group is either a contiguous run of the source (copy) or
// one element from each of R source rows (transpose).

// dst[p * R + r] = src[p * ld + r].
template <class T, int R>
void copy_panel(T const* src, std::int64_t ld, std::int64_t kc, int rows, T* dst) {
  if (rows == R) {
    for (std::int64_t p = 0; p < kc; ++p, src += ld, dst += R) {
      std::memcpy(dst, src, sizeof(T) * R);
    }
    return;
  }
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    // Partial panels (the last rows of op(A), the last columns of op(B)): masked loads, which
    // also write the zero padding, instead of a scalar loop per element.
    constexpr int kVectors = (R + 15) / 16;
    __mmask16 load_masks[kVectors];
    __mmask16 store_masks[kVectors];
    for (int v = 0; v < kVectors; ++v) {
      load_masks[v] = static_cast<__mmask16>((1u << std::clamp(rows - 16 * v, 0, 16)) - 1);
      store_masks[v] = static_cast<__mmask16>((1u << std::clamp(R - 16 * v, 0, 16)) - 1);
    }
    for (std::int64_t p = 0; p < kc; ++p, src += ld, dst += R) {
      TAPEFLOW_UNROLL
      for (int v = 0; v < kVectors; ++v) {
        _mm512_mask_storeu_ps(dst + 16 * v, store_masks[v],
                              _mm512_maskz_loadu_ps(load_masks[v], src + 16 * v));
      }
    }
    return;
  }
#endif
  for (std::int64_t p = 0; p < kc; ++p, src += ld, dst += R) {
    int r = 0;
    for (; r < rows; ++r) {
      dst[r] = src[r];
    }
    for (; r < R; ++r) {
      dst[r] = T{};
    }
  }
}

#if defined(__AVX512F__)
// Shuffles in their all-lanes masked form: the plain intrinsics pass _mm512_undefined_ps() as the
// merge source, which GCC 12 flags as -Wmaybe-uninitialized (GCC PR 105593). With a full mask
// they compile to the same unmasked instruction.
inline constexpr __mmask16 kAllLanes = 0xFFFF;
TAPEFLOW_ALWAYS_INLINE __m512 unpacklo(__m512 a, __m512 b) {
  return _mm512_mask_unpacklo_ps(a, kAllLanes, a, b);
}
TAPEFLOW_ALWAYS_INLINE __m512 unpackhi(__m512 a, __m512 b) {
  return _mm512_mask_unpackhi_ps(a, kAllLanes, a, b);
}
template <int kImm>
TAPEFLOW_ALWAYS_INLINE __m512 shuffle_ps(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_ps(a, kAllLanes, a, b, kImm);
}
template <int kImm>
TAPEFLOW_ALWAYS_INLINE __m512 shuffle_f32x4(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, kAllLanes, a, b, kImm);
}

// In-register transpose: afterwards v[q] holds element q of each of the 16 input rows.
// 64 lane shuffles per 256 values (4 steps of 16), versus one scalar store per value.
TAPEFLOW_ALWAYS_INLINE void transpose16x16(__m512 (&v)[16]) {
  __m512 t[16];
  TAPEFLOW_UNROLL
  for (int i = 0; i < 16; i += 2) {  // 2x2 blocks within each 128-bit lane
    t[i] = unpacklo(v[i], v[i + 1]);
    t[i + 1] = unpackhi(v[i], v[i + 1]);
  }
  TAPEFLOW_UNROLL
  for (int g = 0; g < 16; g += 4) {  // v[g + c]: column 4L + c of rows g..g+3 in lane L
    v[g] = shuffle_ps<0x44>(t[g], t[g + 2]);
    v[g + 1] = shuffle_ps<0xEE>(t[g], t[g + 2]);
    v[g + 2] = shuffle_ps<0x44>(t[g + 1], t[g + 3]);
    v[g + 3] = shuffle_ps<0xEE>(t[g + 1], t[g + 3]);
  }
  TAPEFLOW_UNROLL
  for (int c = 0; c < 4; ++c) {  // gather the four 128-bit lanes of column 4L + c
    __m512 const lo01 = shuffle_f32x4<0x88>(v[c], v[4 + c]);
    __m512 const hi01 = shuffle_f32x4<0xDD>(v[c], v[4 + c]);
    __m512 const lo23 = shuffle_f32x4<0x88>(v[8 + c], v[12 + c]);
    __m512 const hi23 = shuffle_f32x4<0xDD>(v[8 + c], v[12 + c]);
    t[c] = shuffle_f32x4<0x88>(lo01, lo23);
    t[8 + c] = shuffle_f32x4<0xDD>(lo01, lo23);
    t[4 + c] = shuffle_f32x4<0x88>(hi01, hi23);
    t[12 + c] = shuffle_f32x4<0xDD>(hi01, hi23);
  }
  TAPEFLOW_UNROLL
  for (int i = 0; i < 16; ++i) {
    v[i] = t[i];
  }
}
#endif

// dst[p * R + r] = src[r * ld + p] for all R rows; returns how many leading p it handled
// (a multiple of the vector length; the caller finishes the rest).
template <class T, int R>
std::int64_t transpose_panel_simd(T const* src, std::int64_t ld, std::int64_t kc, T* dst) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float> && (R <= 16 || R % 16 == 0)) {
    std::int64_t p = 0;
    for (; p + 16 <= kc; p += 16) {
      TAPEFLOW_UNROLL
      for (int r0 = 0; r0 < R; r0 += 16) {
        constexpr int kRows = R < 16 ? R : 16;
        __m512 v[16];
        TAPEFLOW_UNROLL
        for (int i = 0; i < 16; ++i) {
          v[i] = i < kRows ? _mm512_loadu_ps(src + (r0 + i) * ld + p) : _mm512_setzero_ps();
        }
        transpose16x16(v);
        TAPEFLOW_UNROLL
        for (int q = 0; q < 16; ++q) {
          _mm512_mask_storeu_ps(dst + (p + q) * R + r0, static_cast<__mmask16>((1u << kRows) - 1),
                                v[q]);
        }
      }
    }
    return p;
  }
#endif
  (void)src, (void)ld, (void)kc, (void)dst;
  return 0;
}

// dst[p * R + r] = src[r * ld + p].
template <class T, int R>
void transpose_panel(T const* src, std::int64_t ld, std::int64_t kc, int rows, T* dst) {
  if (rows == R) {
    std::int64_t p = transpose_panel_simd<T, R>(src, ld, kc, dst);
    for (; p < kc; ++p) {
      T* const d = dst + p * R;
      TAPEFLOW_UNROLL
      for (int r = 0; r < R; ++r) {
        d[r] = src[r * ld + p];
      }
    }
    return;
  }
  for (std::int64_t p = 0; p < kc; ++p) {
    T* const d = dst + p * R;
    int r = 0;
    for (; r < rows; ++r) {
      d[r] = src[r * ld + p];
    }
    for (; r < R; ++r) {
      d[r] = T{};
    }
  }
}

// op(A) block [mc x kc] (element (0, 0) at `a`) -> ceil(mc / MR) panels.
template <class T, int MR>
void pack_a(bool trans, T const* a, std::int64_t lda, std::int64_t mc, std::int64_t kc, T* dst) {
  for (std::int64_t i0 = 0; i0 < mc; i0 += MR, dst += MR * kc) {
    int const rows = static_cast<int>(std::min<std::int64_t>(MR, mc - i0));
    if (trans) {  // op(A)(i, p) = a[p * lda + i]
      copy_panel<T, MR>(a + i0, lda, kc, rows, dst);
    } else {  // op(A)(i, p) = a[i * lda + p]
      transpose_panel<T, MR>(a + i0 * lda, lda, kc, rows, dst);
    }
  }
}

// op(B) block [kc x nc] (element (0, 0) at `b`) -> ceil(nc / NR) panels.
template <class T, int NR>
void pack_b(bool trans, T const* b, std::int64_t ldb, std::int64_t kc, std::int64_t nc, T* dst) {
  if (!trans && nc >= 2 * NR) {
    // Row by row: each row of the block is read once, front to back. Panel by panel would
    // visit every row (one page each for wide matrices) once per panel: TLB misses and no
    // prefetch, which made packing a large weight matrix cost half as much as multiplying it.
    std::int64_t const full = nc / NR;
    int const rest = static_cast<int>(nc - full * NR);
    for (std::int64_t p = 0; p < kc; ++p) {
      T const* const src = b + p * ldb;
      T* const d = dst + p * NR;
      for (std::int64_t jp = 0; jp < full; ++jp) {
        std::memcpy(d + jp * NR * kc, src + jp * NR, sizeof(T) * NR);
      }
      if (rest > 0) {
        copy_panel<T, NR>(src + full * NR, ldb, 1, rest, d + full * NR * kc);
      }
    }
    return;
  }
  for (std::int64_t j0 = 0; j0 < nc; j0 += NR, dst += NR * kc) {
    int const cols = static_cast<int>(std::min<std::int64_t>(NR, nc - j0));
    if (trans) {  // op(B)(p, j) = b[j * ldb + p]
      transpose_panel<T, NR>(b + j0 * ldb, ldb, kc, cols, dst);
    } else {  // op(B)(p, j) = b[p * ldb + j]
      copy_panel<T, NR>(b + j0, ldb, kc, cols, dst);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Drivers.

template <class T>
struct Problem {
  bool trans_a, trans_b;
  std::int64_t k;
  T const* a;
  std::int64_t lda;
  T const* b;
  std::int64_t ldb;
  T* c;
  std::int64_t ldc;
  bool accumulate;

  // Address of op(A)(i, p) / op(B)(p, j).
  T const* a_at(std::int64_t i, std::int64_t p) const {
    return trans_a ? a + p * lda + i : a + i * lda + p;
  }
  T const* b_at(std::int64_t p, std::int64_t j) const {
    return trans_b ? b + j * ldb + p : b + p * ldb + j;
  }
};

// dst[0, n) (=|+=) src[0, n) for the first n < R values of an edge tile's row: masked vectors
// with AVX-512 (a scalar loop here cost as much as the edge tile's arithmetic).
template <class T, int R>
TAPEFLOW_ALWAYS_INLINE void merge_row(T const* src, int n, T* dst, bool add) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using Ops = typename VecFor<T>::type;
    constexpr int L = Ops::kLanes;
    for (int j = 0; j < n; j += L) {
      int const count = std::min(L, n - j);
      if constexpr (std::is_same_v<T, float>) {
        auto const mask = static_cast<__mmask16>((1u << count) - 1);
        __m512 v = _mm512_maskz_loadu_ps(mask, src + j);
        if (add) {
          v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, dst + j));
        }
        _mm512_mask_storeu_ps(dst + j, mask, v);
      } else {
        auto const mask = static_cast<__mmask8>((1u << count) - 1);
        __m512d v = _mm512_maskz_loadu_pd(mask, src + j);
        if (add) {
          v = _mm512_add_pd(v, _mm512_maskz_loadu_pd(mask, dst + j));
        }
        _mm512_mask_storeu_pd(dst + j, mask, v);
      }
    }
    return;
  }
#endif
  for (int j = 0; j < n; ++j) {
    dst[j] = add ? static_cast<T>(dst[j] + src[j]) : src[j];
  }
}

// C[mc x nc] (= or +=) packed A block (ceil(mc / MR) panels) * packed B block (ceil(nc / NR)
// panels), both over the same kc. One A micro-panel stays in L1 while the B panels stream by.
// With `a_step` > 0, A is not packed: op(A)(i, p) = apack[p * a_step + i] (the caller ensures the
// last panel has exactly MR, MR / 3 or 2 MR / 3 rows: no kernel may read past A's rows).
template <class T>
void macro_kernel(std::int64_t mc, std::int64_t nc, std::int64_t kc, T const* apack, T const* bpack,
                  T* c, std::int64_t ldc, bool load_c, std::int64_t a_step = 0) {
  using Cfg = Config<T>;
  constexpr int MR = Cfg::kMR;
  constexpr int NR = Cfg::kNR;
  alignas(64) T edge[MR * NR];
  std::int64_t const step = a_step > 0 ? a_step : MR;
  for (std::int64_t ir = 0; ir < mc; ir += MR) {
    int const mr = static_cast<int>(std::min<std::int64_t>(MR, mc - ir));
    T const* const ap = a_step > 0 ? apack + ir : apack + ir * kc;
    for (std::int64_t jr = 0; jr < nc; jr += NR) {
      int const nr = static_cast<int>(std::min<std::int64_t>(NR, nc - jr));
      T const* const bp = bpack + jr * kc;
      T* const ct = c + ir * ldc + jr;
      if (TAPEFLOW_LIKELY(mr == MR && nr == NR)) {
        micro_kernel<T, MR, Cfg::kNV>(kc, ap, step, bp, ct, ldc, load_c);
        continue;
      }
      // Partial tile: a kernel with a third or two thirds of the rows where that covers them
      // (m = 50 or 64 leaves a few rows: no need to multiply the zero padding), writing C
      // directly when the tile fits exactly, else into a buffer merged after.
      constexpr int kSmall = MR / 3;
      constexpr int kMid = 2 * MR / 3;
      if (nr == NR && (mr == kSmall || mr == kMid)) {
        if (mr == kSmall) {
          micro_kernel<T, kSmall, Cfg::kNV>(kc, ap, step, bp, ct, ldc, load_c);
        } else {
          micro_kernel<T, kMid, Cfg::kNV>(kc, ap, step, bp, ct, ldc, load_c);
        }
        continue;
      }
      if (mr <= kSmall) {
        micro_kernel<T, kSmall, Cfg::kNV>(kc, ap, step, bp, edge, NR, false);
      } else if (mr <= kMid) {
        micro_kernel<T, kMid, Cfg::kNV>(kc, ap, step, bp, edge, NR, false);
      } else {
        micro_kernel<T, MR, Cfg::kNV>(kc, ap, step, bp, edge, NR, false);
      }
      for (int i = 0; i < mr; ++i) {
        merge_row<T, NR>(edge + i * NR, nr, ct + i * ldc, load_c);
      }
    }
  }
}

// The blocked algorithm on the C tile [m0, m1) x [n0, n1), single-threaded.
template <class T>
void gemm_tile(Problem<T> const& pr, std::int64_t m0, std::int64_t m1, std::int64_t n0,
               std::int64_t n1) {
  using Cfg = Config<T>;
  constexpr int MR = Cfg::kMR;
  constexpr int NR = Cfg::kNR;
  std::int64_t const mc_max = std::min(Cfg::kMC, (m1 - m0 + MR - 1) / MR * MR);
  std::int64_t const nc_max = std::min(Cfg::kNC, (n1 - n0 + NR - 1) / NR * NR);
  std::int64_t const kc_max = std::min(Cfg::kKC, pr.k);
  T* const apack = scratch(0).get<T>(static_cast<std::size_t>(mc_max * kc_max));
  T* const bpack = scratch(1).get<T>(static_cast<std::size_t>(nc_max * kc_max));
  for (std::int64_t pc = 0; pc < pr.k; pc += Cfg::kKC) {
    std::int64_t const kc = std::min(Cfg::kKC, pr.k - pc);
    bool const load_c = pr.accumulate || pc > 0;
    for (std::int64_t ic = m0; ic < m1; ic += Cfg::kMC) {
      std::int64_t const mc = std::min(Cfg::kMC, m1 - ic);
      pack_a<T, MR>(pr.trans_a, pr.a_at(ic, pc), pr.lda, mc, kc, apack);
      for (std::int64_t jc = n0; jc < n1; jc += Cfg::kNC) {
        std::int64_t const nc = std::min(Cfg::kNC, n1 - jc);
        pack_b<T, NR>(pr.trans_b, pr.b_at(pc, jc), pr.ldb, kc, nc, bpack);
        macro_kernel(mc, nc, kc, apack, bpack, pr.c + ic * pr.ldc + jc, pr.ldc, load_c);
      }
    }
  }
}

// Whether all of op(B), packed, fits the L2 budget of one B block (see gemm_shared_b).
template <class T>
bool packed_b_fits_l2(std::int64_t k, std::int64_t n) {
  constexpr int NR = Config<T>::kNR;
  return static_cast<double>(k) * static_cast<double>((n + NR - 1) / NR * NR) * sizeof(T) <=
         static_cast<double>(kL2BlockBytes);
}

// Multi-threaded, for tall problems (kSharedBRowsPerThread) whose whole packed op(B) fits in L2:
// the caller packs op(B) once, then every thread claims groups of rows from a shared counter and
// packs only its rows of A. A thread that starts late (a pool worker that slept needs ~8 us to
// wake up) just claims fewer groups instead of delaying the end, and nothing is packed twice.
template <class T>
void gemm_shared_b(Problem<T> const& pr, std::int64_t m, std::int64_t n,
                   backend::cpu::ThreadPool& pool, int threads) {
  using Cfg = Config<T>;
  constexpr int MR = Cfg::kMR;
  constexpr int NR = Cfg::kNR;
  constexpr std::int64_t kGroupRows = 2 * MR;
  std::int64_t const n_padded = (n + NR - 1) / NR * NR;
  // KC-row slices of op(B), each packed as ceil(n / NR) panels, one after another. Slot 1 is the
  // caller's; the threads below pack A into their own slot 0.
  T* const bpack = scratch(1).get<T>(static_cast<std::size_t>(pr.k * n_padded));
  for (std::int64_t pc = 0; pc < pr.k; pc += Cfg::kKC) {
    pack_b<T, NR>(pr.trans_b, pr.b_at(pc, 0), pr.ldb, std::min(Cfg::kKC, pr.k - pc), n,
                  bpack + pc * n_padded);
  }
  std::int64_t const groups = (m + kGroupRows - 1) / kGroupRows;
  std::atomic<std::int64_t> next_group{0};
  pool.parallel_for(threads, 1, [&](std::int64_t, std::int64_t) {
    T* const apack =
        scratch(0).get<T>(static_cast<std::size_t>(kGroupRows * std::min(Cfg::kKC, pr.k)));
    for (std::int64_t g; (g = next_group.fetch_add(1, std::memory_order_relaxed)) < groups;) {
      std::int64_t const i0 = g * kGroupRows;
      std::int64_t const mc = std::min(kGroupRows, m - i0);
      for (std::int64_t pc = 0; pc < pr.k; pc += Cfg::kKC) {
        std::int64_t const kc = std::min(Cfg::kKC, pr.k - pc);
        pack_a<T, MR>(pr.trans_a, pr.a_at(i0, pc), pr.lda, mc, kc, apack);
        macro_kernel(mc, n, kc, apack, bpack + pc * n_padded, pr.c + i0 * pr.ldc, pr.ldc,
                     pr.accumulate || pc > 0);
      }
    }
  });
}

// Unpacked loops: for tiny products, for shapes the micro-tiles would mostly pad (matrix times
// vector), and for types without a vector kernel. Vectorized by hand: GCC's -O2 cost model
// leaves loops with unknown trip counts scalar.

// crow[0, n) += x * brow[0, n).
template <class T>
void axpy_row(std::int64_t n, T x, T const* TAPEFLOW_RESTRICT brow, T* TAPEFLOW_RESTRICT crow) {
  std::int64_t j = 0;
  if constexpr (kVectorizable<T>) {
    using Ops = typename VecFor<T>::type;
    constexpr int L = Ops::kLanes;
    auto const xv = Ops::broadcast(x);
    for (; j + L <= n; j += L) {
      Ops::store(crow + j, Ops::fma(xv, Ops::load(brow + j), Ops::load(crow + j)));
    }
  }
  for (; j < n; ++j) {
    crow[j] = static_cast<T>(crow[j] + x * brow[j]);
  }
}

// sum over p < k of a[p * a_p] * b[p * b_p].
template <class T>
T dot(std::int64_t k, T const* a, std::int64_t a_p, T const* b, std::int64_t b_p) {
  std::int64_t p = 0;
  T sum{};
  if constexpr (kVectorizable<T>) {
    using Ops = typename VecFor<T>::type;
    constexpr int L = Ops::kLanes;
    if (a_p == 1 && b_p == 1 && k >= 2 * L) {
      auto acc0 = Ops::zero();
      auto acc1 = Ops::zero();
      for (; p + 2 * L <= k; p += 2 * L) {
        acc0 = Ops::fma(Ops::load(a + p), Ops::load(b + p), acc0);
        acc1 = Ops::fma(Ops::load(a + p + L), Ops::load(b + p + L), acc1);
      }
      alignas(64) T lanes[L];
      Ops::store(lanes, Ops::add(acc0, acc1));
      for (int l = 0; l < L; ++l) {
        sum = static_cast<T>(sum + lanes[l]);
      }
    }
  }
  T s0{}, s1{}, s2{}, s3{};  // independent chains hide the multiply-add latency
  for (; p + 4 <= k; p += 4) {
    s0 = static_cast<T>(s0 + a[p * a_p] * b[p * b_p]);
    s1 = static_cast<T>(s1 + a[(p + 1) * a_p] * b[(p + 1) * b_p]);
    s2 = static_cast<T>(s2 + a[(p + 2) * a_p] * b[(p + 2) * b_p]);
    s3 = static_cast<T>(s3 + a[(p + 3) * a_p] * b[(p + 3) * b_p]);
  }
  for (; p < k; ++p) {
    s0 = static_cast<T>(s0 + a[p * a_p] * b[p * b_p]);
  }
  return static_cast<T>(sum + ((s0 + s1) + (s2 + s3)));
}

template <class T>
void gemm_small(Problem<T> const& pr, std::int64_t m, std::int64_t n) {
  // op(A)(i, p) = a[i * a_i + p * a_p], op(B)(p, j) = b[p * b_p + j * b_j].
  std::int64_t const a_i = pr.trans_a ? 1 : pr.lda;
  std::int64_t const a_p = pr.trans_a ? pr.lda : 1;
  std::int64_t const b_p = pr.trans_b ? 1 : pr.ldb;
  std::int64_t const b_j = pr.trans_b ? pr.ldb : 1;
  // The forms below match the contiguity conditions gemm() checks before picking this path.
  if (pr.trans_a && n == 1 && pr.ldc == 1) {
    // C is one contiguous column; it accumulates rows of the stored A (columns of op(A)).
    if (!pr.accumulate) {
      std::fill_n(pr.c, m, T{});
    }
    for (std::int64_t p = 0; p < pr.k; ++p) {
      axpy_row(m, pr.b[p * b_p], pr.a + p * a_p, pr.c);
    }
    return;
  }
  if (!pr.trans_b && n >= 8) {
    // Row i of C accumulates rows of op(B), contiguous along j.
    for (std::int64_t i = 0; i < m; ++i) {
      T* const crow = pr.c + i * pr.ldc;
      if (!pr.accumulate) {
        std::fill_n(crow, n, T{});
      }
      for (std::int64_t p = 0; p < pr.k; ++p) {
        axpy_row(n, pr.a[i * a_i + p * a_p], pr.b + p * b_p, crow);
      }
    }
    return;
  }
  // One dot product per element of C, along p.
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      T const sum = dot(pr.k, pr.a + i * a_i, a_p, pr.b + j * b_j, b_p);
      T& out = pr.c[i * pr.ldc + j];
      out = pr.accumulate ? static_cast<T>(out + sum) : sum;
    }
  }
}

// Splits [0, m) x [0, n) into `tm` x `tn` thread tiles, cutting at micro-tile boundaries.
inline void thread_grid(std::int64_t m, std::int64_t n, int mr, int nr, int threads, int& tm,
                        int& tn) {
  std::int64_t const mp = (m + mr - 1) / mr;
  std::int64_t const np = (n + nr - 1) / nr;
  std::int64_t best = -1;
  tm = tn = 1;
  for (int dm = 1; dm <= threads; ++dm) {
    if (threads % dm != 0) {
      continue;
    }
    int const dn = threads / dm;
    if (dm > mp || dn > np) {
      continue;
    }
    // Largest tile (in padded elements) bounds the run time; on ties prefer splitting m,
    // which keeps each thread's packed B block a full-width stream.
    std::int64_t const cost = ((mp + dm - 1) / dm) * mr * (((np + dn - 1) / dn) * nr);
    if (best < 0 || cost < best) {
      best = cost;
      tm = dm;
      tn = dn;
    }
  }
}

}  // namespace gemm_impl

// Declared, with its defaults, in ops/linalg/detail/gemm_fwd.hpp.
template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T const* a,
          std::int64_t lda, T const* b, std::int64_t ldb, T* c, std::int64_t ldc, bool accumulate,
          backend::cpu::ThreadPool& pool) {
  using namespace gemm_impl;
  if (m <= 0 || n <= 0) {
    return;
  }
  if (k <= 0) {
    if (!accumulate) {
      for (std::int64_t i = 0; i < m; ++i) {
        std::fill_n(c + i * ldc, n, T{});
      }
    }
    return;
  }
  Problem<T> const pr{trans_a, trans_b, k, a, lda, b, ldb, c, ldc, accumulate};
  double const work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if constexpr (!kVectorizable<T>) {
    gemm_small(pr, m, n);
  } else {
    using Cfg = Config<T>;
    // The packed path wins from ~8^3 multiply-adds on. Below that, and where the micro-tiles
    // would be mostly zero padding (fewer than 1 in 8 elements real: a matrix times a vector),
    // the unpacked loops win, provided they run along contiguous memory: one row of A, rows of
    // op(B) (the row update), or rows of A and op(B)^T (the dot products).
    double const padded = static_cast<double>((m + Cfg::kMR - 1) / Cfg::kMR * Cfg::kMR) *
                          static_cast<double>((n + Cfg::kNR - 1) / Cfg::kNR * Cfg::kNR);
    bool const mostly_padding = padded > 8.0 * static_cast<double>(m) * static_cast<double>(n);
    bool const small_streams = m == 1 || (!trans_b && n >= 8) ||
                               (!trans_a && (trans_b || ldb == 1)) ||
                               (trans_a && n == 1 && ldc == 1);
    if (work < 256.0 || (mostly_padding && small_streams)) {
      gemm_small(pr, m, n);
      return;
    }
    int const threads = static_cast<int>(
        std::clamp(work / kMinMacsPerThread, 1.0, static_cast<double>(pool.num_threads())));
    if (threads > 1 && m >= kSharedBRowsPerThread * threads && packed_b_fits_l2<T>(k, n)) {
      gemm_shared_b(pr, m, n, pool, threads);
      return;
    }
    // Larger products: one C tile per thread, each running the whole blocked algorithm with
    // its own packed B block in its own core's L2; no synchronization at all.
    int tm = 1;
    int tn = 1;
    thread_grid(m, n, Cfg::kMR, Cfg::kNR, threads, tm, tn);
    if (tm * tn <= 1) {
      gemm_tile(pr, 0, m, 0, n);
      return;
    }
    std::int64_t const mp = (m + Cfg::kMR - 1) / Cfg::kMR;
    std::int64_t const np = (n + Cfg::kNR - 1) / Cfg::kNR;
    pool.parallel_for(tm * tn, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) {
        std::int64_t const ti = t / tn;
        std::int64_t const tj = t % tn;
        std::int64_t const m0 = std::min(m, mp * ti / tm * Cfg::kMR);
        std::int64_t const m1 = std::min(m, mp * (ti + 1) / tm * Cfg::kMR);
        std::int64_t const n0 = std::min(n, np * tj / tn * Cfg::kNR);
        std::int64_t const n1 = std::min(n, np * (tj + 1) / tn * Cfg::kNR);
        if (m0 < m1 && n0 < n1) {
          gemm_tile(pr, m0, m1, n0, n1);
        }
      }
    });
  }
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
