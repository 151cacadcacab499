// The kernels behind ops/nn/depthwise_conv2d.hpp: DepthwiseConv2dNative and its two backprops,
// NHWC. Raw pointers and a Window2D in, no tensors.
//
// A depthwise filter has no reduction over channels, so no GEMM: direct loops with the channels
// innermost, taken in SIMD blocks of up to four vectors (backend/cpu/simd.hpp) whose values stay
// in registers while the taps stream past them, so the inner loop loads two operands per
// multiply-add and stores nothing:
//  * forward: per output pixel and channel block, the taps' products accumulate in registers
//    and are stored once;
//  * input gradient: per output pixel and channel block, dy stays in registers while it is
//    scattered into the input pixels its taps read; each task owns whole images;
//  * filter gradient: per output row, channel block and tap, the products over the row's pixels
//    accumulate in registers and are added once to the sums of a fixed number of row blocks,
//    each in its own buffer, added in order (results do not depend on threads).
// Channels past the last full vector take the same code one lane at a time. A depth multiplier
// above 1 (MobileNet uses 1) takes plain loops.
// IWYU pragma: private, include <tapeflow/ops/nn/depthwise_conv2d.hpp>
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <tapeflow/backend/cpu/output_epilogue.hpp>
#include <tapeflow/backend/cpu/simd.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/nn/conv_window.hpp>
#include <tapeflow/ops/nn/detail/depthwise_kernels_fwd.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

/// Taps [first, last) of a window axis whose position `origin + k * step` lies in [0, size).
inline void depthwise_taps(std::int64_t origin, std::int64_t step, std::int64_t taps,
                           std::int64_t size, std::int64_t& first, std::int64_t& last) {
  first = origin >= 0 ? 0 : std::min(taps, (-origin + step - 1) / step);
  last = size - origin <= 0 ? 0 : std::min(taps, (size - origin + step - 1) / step);
  last = std::max(last, first);
}

/// Calls `visit(n, out_pixel, in_pixel0, ky0, ky1, kx0, kx1)` for each output pixel of the
/// flattened (image, output row) rows [r0, r1): `out_pixel` indexes [N * OH * OW], `in_pixel0`
/// the input pixel of tap (0, 0) (possibly outside the image) in [N * H * W], and the taps
/// inside the image are [ky0, ky1) x [kx0, kx1).
template <class Visit>
void for_each_depthwise_window(Window2D const& g, std::int64_t r0, std::int64_t r1, Visit&& visit) {
  std::int64_t ky0 = 0, ky1 = 0, kx0 = 0, kx1 = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t const n = r / g.oh;
    std::int64_t const iy0 = (r % g.oh) * g.sh - g.pad_top;
    depthwise_taps(iy0, g.dh, g.kh, g.h, ky0, ky1);
    for (std::int64_t ox = 0; ox < g.ow; ++ox) {
      std::int64_t const ix0 = ox * g.sw - g.pad_left;
      depthwise_taps(ix0, g.dw, g.kw, g.w, kx0, kx1);
      visit(r * g.ow + ox, (n * g.h + iy0) * g.w + ix0, ky0, ky1, kx0, kx1);
    }
  }
}

/// Output rows (image, output row) per parallel chunk.
inline std::int64_t depthwise_grain(Window2D const& g, std::int64_t cm) {
  return std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(1, g.ow * g.kh * g.kw * cm));
}

/// The SIMD vector interface (backend/cpu/simd.hpp) over a single lane: the channels past the
/// last full vector run the vector code through it.
template <class T>
struct OneLane {
  using V = T;
  static constexpr int kLanes = 1;
  static TAPEFLOW_ALWAYS_INLINE V zero() { return T(0); }
  static TAPEFLOW_ALWAYS_INLINE V load(T const* p) { return *p; }
  static TAPEFLOW_ALWAYS_INLINE void store(T* p, V v) { *p = v; }
  static TAPEFLOW_ALWAYS_INLINE V add(V a, V b) { return a + b; }
  static TAPEFLOW_ALWAYS_INLINE V fma(V a, V b, V acc) { return acc + a * b; }
};

/// A channel block: `NV` vectors of `Vec` starting at a channel, held in registers.
template <class Vec, int NV>
struct ChannelBlock {
  static constexpr int lanes = Vec::kLanes;
  typename Vec::V v[NV];

  TAPEFLOW_ALWAYS_INLINE void zero() {
    for (int k = 0; k < NV; ++k) {
      v[k] = Vec::zero();
    }
  }
  template <class T>
  TAPEFLOW_ALWAYS_INLINE void load(T const* p) {
    for (int k = 0; k < NV; ++k) {
      v[k] = Vec::load(p + k * lanes);
    }
  }
  template <class T>
  TAPEFLOW_ALWAYS_INLINE void store(T* p) const {
    for (int k = 0; k < NV; ++k) {
      Vec::store(p + k * lanes, v[k]);
    }
  }
  /// this += a[0..] * b[0..]
  template <class T>
  TAPEFLOW_ALWAYS_INLINE void fma(T const* a, T const* b) {
    for (int k = 0; k < NV; ++k) {
      v[k] = Vec::fma(Vec::load(a + k * lanes), Vec::load(b + k * lanes), v[k]);
    }
  }
  /// p[0..] += this * b[0..]
  template <class T>
  TAPEFLOW_ALWAYS_INLINE void fma_into(T* p, T const* b) const {
    for (int k = 0; k < NV; ++k) {
      Vec::store(p + k * lanes, Vec::fma(v[k], Vec::load(b + k * lanes), Vec::load(p + k * lanes)));
    }
  }
  /// p[0..] += this
  template <class T>
  TAPEFLOW_ALWAYS_INLINE void add_into(T* p) const {
    for (int k = 0; k < NV; ++k) {
      Vec::store(p + k * lanes, Vec::add(Vec::load(p + k * lanes), v[k]));
    }
  }
};

/// Calls `body.template operator()<Block>(i)` over channels [0, c): blocks of four vectors,
/// then single vectors, then single lanes, each `Block` a ChannelBlock starting at channel `i`.
template <class T, class Body>
TAPEFLOW_ALWAYS_INLINE void for_each_channel_block(std::int64_t c, Body&& body) {
  using Vec = typename backend::cpu::VecFor<T>::type;
  std::int64_t i = 0;
  for (; i + 4 * Vec::kLanes <= c; i += 4 * Vec::kLanes) {
    body.template operator()<ChannelBlock<Vec, 4>>(i);
  }
  for (; i + Vec::kLanes <= c; i += Vec::kLanes) {
    body.template operator()<ChannelBlock<Vec, 1>>(i);
  }
  for (; i < c; ++i) {
    body.template operator()<ChannelBlock<OneLane<T>, 1>>(i);
  }
}

/// depthwise_forward's output rows (image, output row) [r0, r1), on this thread.
template <class T>
void depthwise_forward_rows(Window2D const& g, std::int64_t mult, T const* x, T const* w, T* y,
                            std::int64_t r0, std::int64_t r1) {
  std::int64_t const c = g.c;
  std::int64_t const cm = c * mult;
  for_each_depthwise_window(g, r0, r1,
                            [&](std::int64_t o, std::int64_t in0, std::int64_t ky0,
                                std::int64_t ky1, std::int64_t kx0, std::int64_t kx1) {
                              T* out = y + o * cm;
                              if (mult == 1) {
                                for_each_channel_block<T>(c, [&]<class Block>(std::int64_t i) {
                                  Block acc;
                                  acc.zero();
                                  for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                                    for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                                      acc.fma(x + (in0 + ky * g.dh * g.w + kx * g.dw) * c + i,
                                              w + (ky * g.kw + kx) * c + i);
                                    }
                                  }
                                  acc.store(out + i);
                                });
                                return;
                              }
                              std::fill_n(out, cm, T(0));
                              for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                                for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                                  T const* in = x + (in0 + ky * g.dh * g.w + kx * g.dw) * c;
                                  T const* f = w + (ky * g.kw + kx) * cm;
                                  for (std::int64_t i = 0; i < c; ++i) {
                                    for (std::int64_t m = 0; m < mult; ++m) {
                                      out[i * mult + m] += in[i] * f[i * mult + m];
                                    }
                                  }
                                }
                              }
                            });
}

/// y[n, oy, ox, c * M + m] = sum over taps of x[n, iy, ix, c] * w[ky, kx, c, m]. Rows go to an
/// offered epilogue (Note [Output epilogues]) as soon as they are final, in ranges of about
/// 64 KiB that are whole multiples of `block` rows.
template <class T>
void depthwise_forward(Window2D const& g, std::int64_t mult, T const* x, T const* w, T* y) {
  std::int64_t const cm = g.c * mult;
  std::int64_t const rows = g.n * g.oh;
  std::int64_t const row_elements = g.ow * cm;
  backend::cpu::OutputEpilogue const* const epilogue =
      backend::cpu::take_output_epilogue(rows * row_elements);
  std::int64_t const block =
      epilogue == nullptr ? 1 : backend::cpu::epilogue_row_multiple(epilogue->unit, row_elements);
  std::int64_t const step =
      epilogue == nullptr ? rows
                          : block * std::max<std::int64_t>(
                                        1, 16384 / std::max<std::int64_t>(1, block * row_elements));
  backend::cpu::parallel_for(
      (rows + block - 1) / block, std::max<std::int64_t>(1, depthwise_grain(g, cm) / block),
      [&](std::int64_t b0, std::int64_t b1) {
        std::int64_t const last = std::min(rows, b1 * block);
        for (std::int64_t r0 = b0 * block; r0 < last; r0 += step) {
          std::int64_t const r1 = std::min(last, r0 + step);
          depthwise_forward_rows(g, mult, x, w, y, r0, r1);
          if (epilogue != nullptr) {
            epilogue->run(epilogue->context, y, r0 * row_elements, (r1 - r0) * row_elements);
          }
        }
      });
}

/// dx[n, iy, ix, c] = sum over the windows and m that read it of dy[.., c * M + m] * w[.., c, m]
/// (a scatter; each task owns whole images and zeroes each image's dx just before its scatter,
/// in parallel and while it is in cache, not all of dx on one thread first).
template <class T>
void depthwise_backprop_input(Window2D const& g, std::int64_t mult, T const* w, T const* dy,
                              T* dx) {
  std::int64_t const c = g.c;
  std::int64_t const cm = c * mult;
  std::int64_t const image = g.h * g.w * c;
  backend::cpu::parallel_for(g.n, 1, [&](std::int64_t n0, std::int64_t n1) {
    for (std::int64_t n = n0; n < n1; ++n) {
      std::fill_n(dx + n * image, image, T(0));
      for_each_depthwise_window(g, n * g.oh, (n + 1) * g.oh,
                                [&](std::int64_t o, std::int64_t in0, std::int64_t ky0,
                                    std::int64_t ky1, std::int64_t kx0, std::int64_t kx1) {
                                  T const* d = dy + o * cm;
                                  if (mult == 1) {
                                    for_each_channel_block<T>(c, [&]<class Block>(std::int64_t i) {
                                      Block grad;
                                      grad.load(d + i);
                                      for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                                        for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                                          grad.fma_into(
                                              dx + (in0 + ky * g.dh * g.w + kx * g.dw) * c + i,
                                              w + (ky * g.kw + kx) * c + i);
                                        }
                                      }
                                    });
                                    return;
                                  }
                                  for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                                    for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                                      T* in = dx + (in0 + ky * g.dh * g.w + kx * g.dw) * c;
                                      T const* f = w + (ky * g.kw + kx) * cm;
                                      for (std::int64_t i = 0; i < c; ++i) {
                                        T sum = 0;
                                        for (std::int64_t m = 0; m < mult; ++m) {
                                          sum += d[i * mult + m] * f[i * mult + m];
                                        }
                                        in[i] += sum;
                                      }
                                    }
                                  }
                                });
    }
  });
}

/// The filter gradient's sums over the output rows [r0, r1) into `acc` [KH, KW, C] (depth
/// multiplier 1): per row, channel block and tap, the row's products in registers.
template <class T>
void depthwise_filter_rows(Window2D const& g, T const* x, T const* dy, std::int64_t r0,
                           std::int64_t r1, T* acc) {
  std::int64_t const c = g.c;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t const n = r / g.oh;
    std::int64_t const iy0 = (r % g.oh) * g.sh - g.pad_top;
    std::int64_t ky0 = 0, ky1 = 0;
    depthwise_taps(iy0, g.dh, g.kh, g.h, ky0, ky1);
    T const* d_row = dy + r * g.ow * c;
    for_each_channel_block<T>(c, [&]<class Block>(std::int64_t i) {
      for (std::int64_t ky = ky0; ky < ky1; ++ky) {
        T const* x_row = x + ((n * g.h + iy0 + ky * g.dh) * g.w) * c + i;
        for (std::int64_t kx = 0; kx < g.kw; ++kx) {
          // The output columns whose tap kx reads a column inside the image:
          // 0 <= ox * sw - pad_left + kx * dw < w.
          std::int64_t const shift = kx * g.dw - g.pad_left;
          std::int64_t const ox0 = shift >= 0 ? 0 : (-shift + g.sw - 1) / g.sw;
          std::int64_t const ox1 =
              g.w - shift <= 0 ? 0 : std::min(g.ow, (g.w - shift + g.sw - 1) / g.sw);
          Block sum;
          sum.zero();
          for (std::int64_t ox = ox0; ox < ox1; ++ox) {
            sum.fma(x_row + (ox * g.sw + shift) * c, d_row + ox * c + i);
          }
          sum.add_into(acc + (ky * g.kw + kx) * c + i);
        }
      }
    });
  }
}

/// dw[ky, kx, c, m] = sum over output pixels of x[n, iy, ix, c] * dy[n, oy, ox, c * M + m].
template <class T>
void depthwise_backprop_filter(Window2D const& g, std::int64_t mult, T const* x, T const* dy,
                               T* dw) {
  std::int64_t const c = g.c;
  std::int64_t const cm = c * mult;
  std::int64_t const size = g.kh * g.kw * cm;
  std::int64_t const rows = g.n * g.oh;
  // A fixed number of blocks (not one per thread), so the sum's order never changes.
  std::int64_t const blocks = std::clamp<std::int64_t>(rows, 1, 32);
  std::vector<T> partial(static_cast<std::size_t>(blocks * size), T(0));
  backend::cpu::parallel_for(blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      T* acc = partial.data() + b * size;
      std::int64_t const first = rows * b / blocks;
      std::int64_t const last = rows * (b + 1) / blocks;
      if (mult == 1) {
        depthwise_filter_rows(g, x, dy, first, last, acc);
        continue;
      }
      for_each_depthwise_window(g, first, last,
                                [&](std::int64_t o, std::int64_t in0, std::int64_t ky0,
                                    std::int64_t ky1, std::int64_t kx0, std::int64_t kx1) {
                                  T const* d = dy + o * cm;
                                  for (std::int64_t ky = ky0; ky < ky1; ++ky) {
                                    for (std::int64_t kx = kx0; kx < kx1; ++kx) {
                                      T const* in = x + (in0 + ky * g.dh * g.w + kx * g.dw) * c;
                                      T* f = acc + (ky * g.kw + kx) * cm;
                                      for (std::int64_t i = 0; i < c; ++i) {
                                        for (std::int64_t m = 0; m < mult; ++m) {
                                          f[i * mult + m] += in[i] * d[i * mult + m];
                                        }
                                      }
                                    }
                                  }
                                });
    }
  });
  std::fill_n(dw, size, T(0));
  for (std::int64_t b = 0; b < blocks; ++b) {
    T const* p = partial.data() + b * size;
    for (std::int64_t i = 0; i < size; ++i) {
      dw[i] += p[i];
    }
  }
}

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
