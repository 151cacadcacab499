// The convolution kernels behind ops/nn/conv2d.hpp (see the overview there): the zero-padded
// input, the forward GEMM over the batch with the convolution micro-kernel, the input gradient
// (a rotated-filter convolution, or GEMM + col2im), and the filter gradient (one GEMM over all
// pixels with im2col fused into the B packing). Raw pointers and a Window2D in, no tensors.
// IWYU pragma: private, include <tapeflow/ops/nn/conv2d.hpp>
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <tapeflow/backend/cpu/output_epilogue.hpp>
#include <tapeflow/backend/cpu/simd.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/linalg/detail/gemm.hpp>
#include <tapeflow/ops/nn/detail/conv2d_kernels_fwd.hpp>
#include <tapeflow/ops/nn/detail/conv_micro_kernels.hpp>
#include <tapeflow/ops/nn/padding.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

/// A per-thread buffer (slot 0: the zero-padded input, slot 1: the rotated filter or an image's
/// im2col gradient, slot 2: filter-gradient partial sums), grown on demand and kept for the
/// thread's lifetime, so steady-state training allocates (and page-faults) nothing here.
template <class T>
T* conv_scratch(int slot, std::int64_t count) {
  thread_local std::vector<T> buffers[3];
  auto& b = buffers[slot];
  if (static_cast<std::int64_t>(b.size()) < count) {
    b.resize(static_cast<std::size_t>(count));
  }
  return b.data();
}

/// Whether the convolution is a plain matrix product (1x1 window, stride 1, no padding; explicit
/// padding may pad the bottom or right alone).
inline bool is_pointwise(Window2D const& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pad_top == 0 && g.pad_left == 0 &&
         g.oh == g.h && g.ow == g.w;
}

/// Range [first, last) of window taps k whose position `origin + k * step` lies in [0, size).
inline void valid_taps(std::int64_t origin, std::int64_t step, std::int64_t taps, std::int64_t size,
                       std::int64_t& first, std::int64_t& last) {
  if (step == 1) {  // no divisions on the common path
    first = std::clamp<std::int64_t>(-origin, 0, taps);
    last = std::clamp<std::int64_t>(size - origin, first, taps);
    return;
  }
  // origin + k * step >= 0  <=>  k >= ceil(-origin / step)
  first = origin >= 0 ? 0 : std::min(taps, (-origin + step - 1) / step);
  // origin + k * step < size  <=>  k < ceil((size - origin) / step)
  last = size - origin <= 0 ? 0 : std::min(taps, (size - origin + step - 1) / step);
  last = std::max(last, first);
}

// Short copies and fills, inline: packing copies runs of 5-64 values, where a call to
// memmove/memset costs more than the copy. Vectors, then a masked vector (AVX-512) or scalars.
template <class T>
TAPEFLOW_ALWAYS_INLINE void copy_run(T const* src, std::int64_t len, T* dst) {
  std::int64_t i = 0;
  if constexpr (backend::cpu::kVectorizable<T>) {
    using Vec = backend::cpu::GenericVec<T>;
    for (; i + Vec::kLanes <= len; i += Vec::kLanes) {
      Vec::store(dst + i, Vec::load(src + i));
    }
#if defined(__AVX512F__)
    if (i < len) {
      if constexpr (std::is_same_v<T, float>) {
        auto const mask = static_cast<__mmask16>((1u << (len - i)) - 1);
        _mm512_mask_storeu_ps(dst + i, mask, _mm512_maskz_loadu_ps(mask, src + i));
        return;
      } else if constexpr (std::is_same_v<T, double>) {
        auto const mask = static_cast<__mmask8>((1u << (len - i)) - 1);
        _mm512_mask_storeu_pd(dst + i, mask, _mm512_maskz_loadu_pd(mask, src + i));
        return;
      }
    }
#endif
  }
  for (; i < len; ++i) {
    dst[i] = src[i];
  }
}

template <class T>
TAPEFLOW_ALWAYS_INLINE void zero_run(std::int64_t len, T* dst) {
  std::int64_t i = 0;
  if constexpr (backend::cpu::kVectorizable<T>) {
    using Vec = backend::cpu::GenericVec<T>;
    for (; i + Vec::kLanes <= len; i += Vec::kLanes) {
      Vec::store(dst + i, Vec::zero());
    }
#if defined(__AVX512F__)
    if (i < len) {
      if constexpr (std::is_same_v<T, float>) {
        _mm512_mask_storeu_ps(dst + i, static_cast<__mmask16>((1u << (len - i)) - 1),
                              _mm512_setzero_ps());
        return;
      } else if constexpr (std::is_same_v<T, double>) {
        _mm512_mask_storeu_pd(dst + i, static_cast<__mmask8>((1u << (len - i)) - 1),
                              _mm512_setzero_pd());
        return;
      }
    }
#endif
  }
  for (; i < len; ++i) {
    dst[i] = T(0);
  }
}

template <class T>
TAPEFLOW_ALWAYS_INLINE void add_run(T const* src, std::int64_t len, T* dst) {
  std::int64_t i = 0;
  if constexpr (backend::cpu::kVectorizable<T>) {
    using Vec = backend::cpu::GenericVec<T>;
    for (; i + Vec::kLanes <= len; i += Vec::kLanes) {
      Vec::store(dst + i, Vec::load(dst + i) + Vec::load(src + i));
    }
#if defined(__AVX512F__)
    if (i < len) {
      if constexpr (std::is_same_v<T, float>) {
        auto const mask = static_cast<__mmask16>((1u << (len - i)) - 1);
        _mm512_mask_storeu_ps(dst + i, mask,
                              _mm512_add_ps(_mm512_maskz_loadu_ps(mask, dst + i),
                                            _mm512_maskz_loadu_ps(mask, src + i)));
        return;
      } else if constexpr (std::is_same_v<T, double>) {
        auto const mask = static_cast<__mmask8>((1u << (len - i)) - 1);
        _mm512_mask_storeu_pd(dst + i, mask,
                              _mm512_add_pd(_mm512_maskz_loadu_pd(mask, dst + i),
                                            _mm512_maskz_loadu_pd(mask, src + i)));
        return;
      }
    }
#endif
  }
  for (; i < len; ++i) {
    dst[i] += src[i];
  }
}

/// A convolution's input with its zero padding made explicit: data[n, y, x, c] =
/// input[n, y - pad_top, x - pad_left, c] (0 outside), `h` x `w` large enough that every tap of
/// every output pixel lies inside, so the kernels need no bounds checks.
template <class T>
struct PaddedInput {
  T const* data;
  std::int64_t h, w;
  /// Output pixel (img, oy, ox)'s window origin.
  [[nodiscard]] T const* origin(Window2D const& g, std::int64_t img, std::int64_t oy,
                                std::int64_t ox) const {
    return data + ((img * h + oy * g.sh) * w + ox * g.sw) * g.c;
  }
  /// Distance of window tap (ky, kx) from the origin.
  [[nodiscard]] std::int64_t tap(Window2D const& g, std::int64_t ky, std::int64_t kx) const {
    return (ky * g.dh * w + kx * g.dw) * g.c;
  }
};

/// The padded input, or the input itself when nothing needs padding (slot 0 holds the copy).
template <class T>
PaddedInput<T> pad_input(Window2D const& g, T const* x) {
  std::int64_t const h = std::max(g.h + g.pad_top, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1);
  std::int64_t const w = std::max(g.w + g.pad_left, (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1);
  if (g.pad_top == 0 && g.pad_left == 0 && h == g.h && w == g.w) {
    return {x, h, w};
  }
  std::int64_t const c = g.c;
  T* const out = conv_scratch<T>(0, g.n * h * w * c);
  backend::cpu::parallel_for(
      g.n * h, std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(1, w * c)),
      [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r) {
          std::int64_t const img = r / h;
          std::int64_t const iy = r % h - g.pad_top;
          T* const dst = out + r * w * c;
          if (iy < 0 || iy >= g.h) {
            zero_run(w * c, dst);
            continue;
          }
          zero_run(g.pad_left * c, dst);
          copy_run(x + (img * g.h + iy) * g.w * c, g.w * c, dst + g.pad_left * c);
          zero_run((w - g.pad_left - g.w) * c, dst + (g.pad_left + g.w) * c);
        }
      });
  return {out, h, w};
}

/// Adds the rows of one image's im2col-shaped gradient back onto the image `dx` (the adjoint of
/// im2col); taps that fell on padding are dropped.
template <class T>
void col2im(Window2D const& g, T const* col, T* dx) {
  std::int64_t const c = g.c;
  std::int64_t const row_len = g.kw * c;
  std::int64_t const k_len = g.kh * row_len;
  std::int64_t kx0 = 0, kx1 = 0;
  for (std::int64_t oy = 0; oy < g.oh; ++oy) {
    std::int64_t const iy0 = oy * g.sh - g.pad_top;
    for (std::int64_t ox = 0; ox < g.ow; ++ox) {
      T const* row = col + (oy * g.ow + ox) * k_len;
      std::int64_t const ix0 = ox * g.sw - g.pad_left;
      valid_taps(ix0, g.dw, g.kw, g.w, kx0, kx1);
      for (std::int64_t ky = 0; ky < g.kh; ++ky) {
        std::int64_t const iy = iy0 + ky * g.dh;
        if (iy < 0 || iy >= g.h) {
          continue;
        }
        T const* src = row + ky * row_len;
        std::int64_t const base = (iy * g.w + ix0) * c;  // tap (ky, 0), maybe left of the image
        if (g.dw == 1) {
          add_run(src + kx0 * c, (kx1 - kx0) * c, dx + (base + kx0 * c));
        } else {
          for (std::int64_t kx = kx0; kx < kx1; ++kx) {
            add_run(src + kx * c, c, dx + (base + kx * g.dw * c));
          }
        }
      }
    }
  }
}

/// Runs `one_image(i)` for every image: whole images per thread when there are enough of them
/// (nested parallel loops then run inline), otherwise one after another on the caller so that
/// each image's GEMM uses all threads.
template <class Body>
void for_each_image(std::int64_t images, Body&& one_image) {
  int const threads = backend::cpu::ThreadPool::global().num_threads();
  if (threads > 1 && images >= threads) {
    backend::cpu::parallel_for(images, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        one_image(i);
      }
    });
  } else {
    for (std::int64_t i = 0; i < images; ++i) {
      one_image(i);
    }
  }
}

/// Threads worth using for `macs` multiply-adds (the GEMM's threshold per thread).
inline int conv_threads(double macs, std::int64_t max_chunks) {
  int const pool = backend::cpu::ThreadPool::global().num_threads();
  auto const by_work =
      static_cast<std::int64_t>(std::max(1.0, macs / gemm_impl::kMinMacsPerThread));
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min({std::int64_t{pool}, by_work, max_chunks})));
}

/// Whether conv_forward_matrix runs a plain GEMM: no taps, or a pointwise convolution whose
/// packed filter outgrows the L2 block (the GEMM's blocking then reads it fewer times).
template <class T>
bool conv_runs_gemm(Window2D const& g, std::int64_t out_channels) {
  std::int64_t const k = g.kh * g.kw * g.c;
  std::int64_t const nr = gemm_impl::Config<T>::kNR;
  std::int64_t const packed = k * ((out_channels + nr - 1) / nr * nr) * std::int64_t{sizeof(T)};
  return k == 0 || (is_pointwise(g) && packed > gemm_impl::kL2BlockBytes);
}

/// y [N*OH*OW, O] = im2col(x) * b, b the row-major [KH*KW*C, O] filter matrix, without an
/// im2col matrix: the filter is packed once, then the threads claim tiles of MR output pixels
/// and run the convolution micro-kernel on the zero-padded input. Each claim's rows go to
/// `epilogue` (if any) as soon as they are final (Note [Output epilogues]).
template <class T>
void conv_forward_matrix(Window2D const& g, std::int64_t out_channels, T const* x, T const* b, T* y,
                         backend::cpu::OutputEpilogue const* epilogue = nullptr) {
  using Cfg = gemm_impl::Config<T>;
  constexpr int MR = Cfg::kMR;
  constexpr int NR = Cfg::kNR;
  std::int64_t const rows = g.n * g.oh * g.ow;
  std::int64_t const taps = g.kh * g.kw;
  std::int64_t const c = g.c;
  std::int64_t const k = taps * c;
  std::int64_t const n = out_channels;
  if (rows == 0 || n == 0) {
    return;
  }
  if (conv_runs_gemm<T>(g, n)) {
    gemm(false, false, rows, n, k, x, k, b, n, y, n);
    return;
  }
  PaddedInput<T> const in = pad_input(g, x);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(taps));
  for (std::int64_t ky = 0; ky < g.kh; ++ky) {
    for (std::int64_t kx = 0; kx < g.kw; ++kx) {
      offsets[static_cast<std::size_t>(ky * g.kw + kx)] = in.tap(g, ky, kx);
    }
  }
  // The whole filter as one packed slice: ceil(n / NR) panels of k rows.
  std::int64_t const n_padded = (n + NR - 1) / NR * NR;
  T* const bpack = gemm_impl::scratch(1).get<T>(static_cast<std::size_t>(k * n_padded));
  gemm_impl::pack_b<T, NR>(false, b, n, k, n, bpack);
  std::int64_t const tiles = (rows + MR - 1) / MR;
  // Tiles per claim: ~2M multiply-adds, so claiming costs nothing and late threads still help.
  // An epilogue's ranges start at multiples of its unit: claims are whole multiples of tiles.
  std::int64_t const claim_multiple =
      epilogue == nullptr ? 1 : backend::cpu::epilogue_row_multiple(epilogue->unit, MR * n);
  std::int64_t const group =
      (std::max<std::int64_t>(1, 2000000 / std::max<std::int64_t>(1, MR * k * n)) + claim_multiple -
       1) /
      claim_multiple * claim_multiple;
  std::int64_t const groups = (tiles + group - 1) / group;
  std::int64_t const pixels = g.oh * g.ow;
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    T const* origins[MR];
    alignas(64) T edge[MR * NR];
    for (std::int64_t gi; (gi = next.fetch_add(1, std::memory_order_relaxed)) < groups;) {
      std::int64_t const first = gi * group * MR;
      std::int64_t const last = std::min(rows, (gi + 1) * group * MR);
      std::int64_t img = first / pixels;
      std::int64_t oy = first % pixels / g.ow;
      std::int64_t ox = first % g.ow;
      for (std::int64_t r0 = first; r0 < last; r0 += MR) {
        int const mr = static_cast<int>(std::min<std::int64_t>(MR, rows - r0));
        for (int i = 0; i < mr; ++i) {
          origins[i] = in.origin(g, img, oy, ox);
          if (++ox == g.ow) {
            ox = 0;
            if (++oy == g.oh) {
              oy = 0;
              ++img;
            }
          }
        }
        for (int i = mr; i < MR; ++i) {
          origins[i] = origins[0];  // rows past the end: computed, then dropped
        }
        for (std::int64_t jr = 0; jr < n; jr += NR) {
          int const nr = static_cast<int>(std::min<std::int64_t>(NR, n - jr));
          T* const ct = y + r0 * n + jr;
          if (TAPEFLOW_LIKELY(mr == MR && nr == NR)) {
            conv_micro_kernel<T, MR, Cfg::kNV>(taps, c, origins, offsets.data(), bpack + jr * k, ct,
                                               n);
            continue;
          }
          conv_micro_kernel<T, MR, Cfg::kNV>(taps, c, origins, offsets.data(), bpack + jr * k, edge,
                                             NR);
          for (int i = 0; i < mr; ++i) {
            gemm_impl::merge_row<T, NR>(edge + i * NR, nr, ct + i * n, false);
          }
        }
      }
      if (epilogue != nullptr) {
        epilogue->run(epilogue->context, y, first * n, (last - first) * n);
      }
    }
  };
  int const threads = conv_threads(static_cast<double>(rows) * static_cast<double>(k * n), groups);
  if (threads > 1) {
    backend::cpu::ThreadPool::global().parallel_for(threads, 1,
                                                    [&](std::int64_t, std::int64_t) { work(); });
  } else {
    work();
  }
}

/// y = conv2d(x, filter).
template <class T>
void conv2d_forward(Window2D const& g, std::int64_t out_channels, T const* x, T const* filter,
                    T* y) {
  backend::cpu::OutputEpilogue const* const epilogue =
      conv_runs_gemm<T>(g, out_channels)
          ? nullptr
          : backend::cpu::take_output_epilogue(g.n * g.oh * g.ow * out_channels);
  conv_forward_matrix(g, out_channels, x, filter, y, epilogue);
}

/// dx = conv2d_backprop_input(filter, dy).
template <class T>
void conv2d_backprop_input(Window2D const& g, std::int64_t out_channels, T const* filter,
                           T const* dy, T* dx) {
  std::int64_t const pixels = g.oh * g.ow;
  std::int64_t const k = g.kh * g.kw * g.c;
  if (is_pointwise(g)) {  // dx [N*H*W, C] = dy [N*H*W, O] * filter^T
    gemm(false, true, g.n * pixels, g.c, out_channels, dy, out_channels, filter, out_channels, dx,
         g.c);
    return;
  }
  // The rotated convolution's output channels (C) fill the micro-tile's NR columns, so it needs
  // C >= 3/4 of a whole number of panels (C = 1 would use 1/32 of each tile).
  constexpr std::int64_t kNR = gemm_impl::Config<T>::kNR;
  bool const wide = 4 * g.c >= 3 * ((g.c + kNR - 1) / kNR * kNR);
  // The rotated convolution pads dilation * (K - 1) - pad: explicit padding wider than the
  // window (TensorFlow allows it) would make that negative, so col2im takes it.
  bool const rotatable = g.pad_top <= g.dh * (g.kh - 1) && g.pad_left <= g.dw * (g.kw - 1);
  if (g.sh == 1 && g.sw == 1 && wide && rotatable) {
    // dx[n, iy, ix, c] = sum over (ky, kx, o) of dy[n, iy + ky * dh - pad_top, ...] *
    // filter[ky, kx, c, o] = a stride-1 convolution of dy (padding dilation * (K - 1) - pad)
    // with rotated[ky', kx', o, c] = filter[KH-1-ky', KW-1-kx', c, o].
    Window2D t = g;
    t.h = g.oh;
    t.w = g.ow;
    t.c = out_channels;
    t.oh = g.h;
    t.ow = g.w;
    t.pad_top = g.dh * (g.kh - 1) - g.pad_top;
    t.pad_left = g.dw * (g.kw - 1) - g.pad_left;
    T* const rotated = conv_scratch<T>(1, k * out_channels);
    for (std::int64_t ky = 0; ky < g.kh; ++ky) {
      for (std::int64_t kx = 0; kx < g.kw; ++kx) {
        T const* src = filter + ((g.kh - 1 - ky) * g.kw + (g.kw - 1 - kx)) * g.c * out_channels;
        T* dst = rotated + (ky * g.kw + kx) * out_channels * g.c;
        for (std::int64_t c = 0; c < g.c; ++c) {
          for (std::int64_t o = 0; o < out_channels; ++o) {
            dst[o * g.c + c] = src[c * out_channels + o];
          }
        }
      }
    }
    conv_forward_matrix(t, g.c, dy, rotated, dx);
    return;
  }
  // Strided, or few input channels: per image, dcol = dy[n] * filter^T, then col2im.
  for_each_image(g.n, [&](std::int64_t i) {
    T const* dyi = dy + i * pixels * out_channels;
    T* dxi = dx + i * g.h * g.w * g.c;
    T* dcol = conv_scratch<T>(1, pixels * k);
    gemm(false, true, pixels, k, out_channels, dyi, out_channels, filter, out_channels, dcol, k);
    std::fill_n(dxi, g.h * g.w * g.c, T(0));
    col2im(g, dcol, dxi);
  });
}

/// Packs B(p, j) = im2col(x)[p0 + p, j0 + j] for p < kc, j < nc as ceil(nc / NR) panels of NR
/// columns (zero padded), straight from the padded input. The columns are cut once into pieces
/// that lie in one window row and are contiguous in the image (with C >= NR channels, one piece
/// per panel); then each pixel copies its pieces.
template <class T, int NR>
void pack_b_im2col(Window2D const& g, PaddedInput<T> const& in, std::int64_t p0, std::int64_t kc,
                   std::int64_t j0, std::int64_t nc, T* dst) {
  struct Piece {
    std::int64_t from;  // offset from the pixel's window origin
    std::int64_t len;
    std::int64_t to;  // offset of the pixel's first value in the packed block
  };
  std::int64_t const c = g.c;
  std::int64_t const row_len = g.kw * c;
  std::vector<Piece> pieces;
  for (std::int64_t j = j0; j < j0 + nc;) {
    std::int64_t const panel_end = j0 + ((j - j0) / NR + 1) * NR;
    std::int64_t const ky = j / row_len;
    std::int64_t const kx = j % row_len / c;
    std::int64_t const ch = j % c;
    // Contiguous in the image: the rest of the window row (dilation 1) or of one tap; never
    // across a panel.
    std::int64_t const room = g.dw == 1 ? row_len - j % row_len : c - ch;
    std::int64_t const len = std::min({room, j0 + nc - j, panel_end - j});
    pieces.push_back({in.tap(g, ky, kx) + ch, len, (j - j0) / NR * NR * kc + (j - j0) % NR});
    j += len;
  }
  std::int64_t const last_cols = nc % NR;  // real columns of a partial last panel
  T* const last_panel = dst + nc / NR * NR * kc;
  std::int64_t const pixels = g.oh * g.ow;
  std::int64_t img = p0 / pixels;
  std::int64_t oy = p0 % pixels / g.ow;
  std::int64_t ox = p0 % g.ow;
  for (std::int64_t p = 0; p < kc; ++p) {
    T const* const origin = in.origin(g, img, oy, ox);
    for (Piece const& piece : pieces) {
      copy_run(origin + piece.from, piece.len, dst + piece.to + p * NR);
    }
    if (last_cols > 0) {
      zero_run(NR - last_cols, last_panel + p * NR + last_cols);
    }
    if (++ox == g.ow) {
      ox = 0;
      if (++oy == g.oh) {
        oy = 0;
        ++img;
      }
    }
  }
}

/// dfilter = sum over pixels of im2col(x)^T * dy, computed transposed as [O, KH*KW*C] =
/// dy^T * im2col(x) (one packed GEMM over the batch's pixels, im2col fused into the B packing)
/// and transposed once at the end. The pixels are split into one fixed run per thread, each
/// summing into its own buffer; the buffers are added in order, so results do not depend on
/// thread timing.
template <class T>
void conv2d_backprop_filter(Window2D const& g, std::int64_t out_channels, T const* x, T const* dy,
                            T* dfilter) {
  using Cfg = gemm_impl::Config<T>;
  constexpr int MR = Cfg::kMR;
  constexpr int NR = Cfg::kNR;
  std::int64_t const rows = g.n * g.oh * g.ow;  // the reduction axis
  std::int64_t const k = g.kh * g.kw * g.c;
  std::int64_t const o = out_channels;
  std::int64_t const size = k * o;
  if (is_pointwise(g)) {  // dfilter [C, O] = x^T [C, N*H*W] * dy [N*H*W, O]
    gemm(true, false, g.c, o, rows, x, g.c, dy, o, dfilter, o);
    return;
  }
  if (rows == 0 || size == 0) {
    std::fill_n(dfilter, size, T(0));
    return;
  }
  PaddedInput<T> const in = pad_input(g, x);
  std::int64_t const runs = conv_threads(static_cast<double>(rows) * static_cast<double>(size),
                                         std::max<std::int64_t>(1, rows / Cfg::kKC));
  T* const partial = conv_scratch<T>(2, runs * size);
  // The kernels cover the last rows of A exactly (no reads past dy's rows)?
  bool const exact_rows = o % MR == 0 || o % MR == MR / 3 || o % MR == 2 * MR / 3;
  bool const unpacked_a = o <= Cfg::kMC && exact_rows;
  // With a multiple of NR channels, each B panel is NR channels of one tap: no packing.
  bool const direct_b = g.c % NR == 0 && exact_rows;
  std::int64_t const c = g.c;
  std::int64_t const pixels = g.oh * g.ow;
  auto one_run = [&](std::int64_t r) {
    std::int64_t const first = rows * r / runs;
    std::int64_t const last = rows * (r + 1) / runs;
    T* const acc = partial + r * size;  // [O, K]
    std::int64_t const mc_max = std::min<std::int64_t>(Cfg::kMC, (o + MR - 1) / MR * MR);
    std::int64_t const nc_max = std::min<std::int64_t>(Cfg::kNC, (k + NR - 1) / NR * NR);
    T* const apack = gemm_impl::scratch(0).get<T>(static_cast<std::size_t>(mc_max * Cfg::kKC));
    T* const bpack = gemm_impl::scratch(1).get<T>(static_cast<std::size_t>(nc_max * Cfg::kKC));
    std::vector<T const*> origins(static_cast<std::size_t>(direct_b ? Cfg::kKC : 0));
    for (std::int64_t pc = first; pc < last; pc += Cfg::kKC) {
      std::int64_t const kc = std::min(Cfg::kKC, last - pc);
      if (direct_b) {
        std::int64_t img = pc / pixels;
        std::int64_t oy = pc % pixels / g.ow;
        std::int64_t ox = pc % g.ow;
        for (std::int64_t p = 0; p < kc; ++p) {
          origins[static_cast<std::size_t>(p)] = in.origin(g, img, oy, ox);
          if (++ox == g.ow) {
            ox = 0;
            if (++oy == g.oh) {
              oy = 0;
              ++img;
            }
          }
        }
      }
      for (std::int64_t ic = 0; ic < o; ic += Cfg::kMC) {
        std::int64_t const mc = std::min(Cfg::kMC, o - ic);
        // op(A)(i, p) = dy[(pc + p) * O + ic + i]: each k step's MR values are already
        // contiguous, so A needs no packing when the kernels cover the last rows exactly.
        T const* a = dy + pc * o + ic;
        std::int64_t a_step = o;
        if (!unpacked_a) {
          gemm_impl::pack_a<T, MR>(true, a, o, mc, kc, apack);
          a = apack;
          a_step = 0;
        }
        if (direct_b) {
          // Each NR-column panel is NR channels of one tap: B's rows are read in place.
          for (std::int64_t ir = 0; ir < mc; ir += MR) {
            int const mr = static_cast<int>(std::min<std::int64_t>(MR, mc - ir));
            T const* const ap = a_step > 0 ? a + ir : a + ir * kc;
            std::int64_t const step = a_step > 0 ? a_step : MR;
            for (std::int64_t j = 0; j < k; j += NR) {
              std::int64_t const tap = j / c;
              std::int64_t const offset = in.tap(g, tap / g.kw, tap % g.kw) + j % c;
              T* const ct = acc + (ic + ir) * k + j;
              if (mr == MR) {
                micro_kernel_b_rows<T, MR, Cfg::kNV>(kc, ap, step, origins.data(), offset, ct, k,
                                                     pc > first);
              } else if (mr == MR / 3) {
                micro_kernel_b_rows<T, MR / 3, Cfg::kNV>(kc, ap, step, origins.data(), offset, ct,
                                                         k, pc > first);
              } else {
                micro_kernel_b_rows<T, 2 * MR / 3, Cfg::kNV>(kc, ap, step, origins.data(), offset,
                                                             ct, k, pc > first);
              }
            }
          }
          continue;
        }
        for (std::int64_t jc = 0; jc < k; jc += Cfg::kNC) {
          std::int64_t const nc = std::min(Cfg::kNC, k - jc);
          pack_b_im2col<T, NR>(g, in, pc, kc, jc, nc, bpack);
          gemm_impl::macro_kernel(mc, nc, kc, a, bpack, acc + ic * k + jc, k, pc > first, a_step);
        }
      }
    }
  };
  if (runs == 1) {
    one_run(0);
  } else {
    backend::cpu::parallel_for(runs, 1, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r) {
        one_run(r);
      }
    });
  }
  // dfilter[j, o] = sum_r partial_r[o, j], in blocks of 16 j (whole cache lines of each
  // partial row), split over the pool.
  constexpr std::int64_t kBlock = 16;
  backend::cpu::parallel_for(
      (k + kBlock - 1) / kBlock, std::max<std::int64_t>(1, 8192 / (kBlock * o)),
      [&](std::int64_t b0, std::int64_t b1) {
        for (std::int64_t jb = b0 * kBlock; jb < std::min(k, b1 * kBlock); jb += kBlock) {
          std::int64_t const je = std::min(k, jb + kBlock);
          for (std::int64_t oc = 0; oc < o; ++oc) {
            for (std::int64_t j = jb; j < je; ++j) {
              T sum = partial[oc * k + j];
              for (std::int64_t r = 1; r < runs; ++r) {
                sum += partial[r * size + oc * k + j];
              }
              dfilter[j * o + oc] = sum;
            }
          }
        }
      });
}

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
