// The kernels behind ops/nn/batch_norm.hpp (FusedBatchNormV3) and ops/nn/batch_norm_grad.hpp
// (FusedBatchNormGradV3), channels last: raw pointers over x viewed as [rows, C].
//
// Statistics are summed in double per fixed block of rows (the blocks do not depend on the
// thread count, and their partial sums are added in order, so results do not depend on thread
// timing); the moments read x once, in chunks whose mean and squared deviations take two passes
// from cache (no cancellation). Outputs are
// one multiply-add pass per element with per-channel coefficients.
// IWYU pragma: private, include <tapeflow/ops/nn/batch_norm.hpp>
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/backend/cpu/simd.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/nn/detail/batch_norm_kernels_fwd.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

/// Rows of [rows, c] per statistics block: about 16k elements, whatever the thread count.
inline std::int64_t batch_norm_block_rows(std::int64_t c) {
  return std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(c, 1));
}

/// Rows whose terms add up in T before they join the double sums: short enough that float
/// sums of them lose nothing that matters (error ~ 64 ulp at most), long enough that the
/// double additions cost little.
inline constexpr std::int64_t batch_norm_chunk_rows = 64;

/// out[i] = sum over rows [0, rows) of term(r * c + i) by channel i of [rows, c] data: channels
/// a vector at a time, down the rows in four register accumulators (a row-by-row update of
/// out would wait on its own store at every row). `vec(e, i)` gives the terms of elements e..
/// (a vector; channels i..), `one(e, i)` the term of element e, of channel i (the channels
/// past the last full vector).
template <class T, class VecTerm, class OneTerm>
TAPEFLOW_ALWAYS_INLINE void column_sums(std::int64_t rows, std::int64_t c, T* out, VecTerm vec,
                                        OneTerm one) {
  using Vec = typename backend::cpu::VecFor<T>::type;
  std::int64_t i = 0;
  for (; i + Vec::kLanes <= c; i += Vec::kLanes) {
    auto a0 = Vec::zero();
    auto a1 = Vec::zero();
    auto a2 = Vec::zero();
    auto a3 = Vec::zero();
    std::int64_t e = i;
    std::int64_t r = 0;
    for (; r + 4 <= rows; r += 4, e += 4 * c) {
      a0 = Vec::add(a0, vec(e, i));
      a1 = Vec::add(a1, vec(e + c, i));
      a2 = Vec::add(a2, vec(e + 2 * c, i));
      a3 = Vec::add(a3, vec(e + 3 * c, i));
    }
    for (; r < rows; ++r, e += c) {
      a0 = Vec::add(a0, vec(e, i));
    }
    Vec::store(out + i, Vec::add(Vec::add(a0, a1), Vec::add(a2, a3)));
  }
  for (; i < c; ++i) {
    T sum = T(0);
    for (std::int64_t r = 0; r < rows; ++r) {
      sum += one(r * c + i, i);
    }
    out[i] = sum;
  }
}

/// Per-channel sums over the rows of [rows, c] data: `terms(chunk, first_row, rows)` writes
/// the sums of rows [first_row, first_row + rows) to the N arrays `chunk[n]` of c values of T
/// (column_sums). Chunks of rows add up in T (vectors), then in double, block by block in order.
template <class T, std::size_t N, class ChunkTerms>
std::array<std::vector<double>, N> channel_sums(std::int64_t rows, std::int64_t c,
                                                ChunkTerms terms) {
  std::int64_t const block = batch_norm_block_rows(c);
  std::int64_t const blocks = (rows + block - 1) / block;
  auto const cs = static_cast<std::size_t>(c);
  std::vector<double> partial(static_cast<std::size_t>(blocks) * N * cs, 0.0);
  backend::cpu::parallel_for(blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    std::vector<T> chunk(N * cs);
    std::array<T*, N> sums;
    for (std::size_t n = 0; n < N; ++n) {
      sums[n] = chunk.data() + n * cs;
    }
    for (std::int64_t b = b0; b < b1; ++b) {
      double* out = partial.data() + static_cast<std::size_t>(b) * N * cs;
      std::int64_t const end = std::min(rows, (b + 1) * block);
      for (std::int64_t r0 = b * block; r0 < end; r0 += batch_norm_chunk_rows) {
        terms(sums, r0, std::min(end, r0 + batch_norm_chunk_rows) - r0);
        for (std::size_t k = 0; k < chunk.size(); ++k) {
          out[k] += static_cast<double>(chunk[k]);
        }
      }
    }
  });
  std::array<std::vector<double>, N> totals;
  for (std::size_t n = 0; n < N; ++n) {
    totals[n].assign(cs, 0.0);
    for (std::int64_t b = 0; b < blocks; ++b) {
      double const* in = partial.data() + (static_cast<std::size_t>(b) * N + n) * cs;
      for (std::size_t i = 0; i < cs; ++i) {
        totals[n][i] += in[i];
      }
    }
  }
  return totals;
}

/// Rows of a moments chunk: its two passes read it from memory once, then from cache (about
/// 8K elements, 8 to 64 rows).
inline std::int64_t batch_moments_chunk_rows(std::int64_t c) {
  return std::clamp<std::int64_t>(8192 / std::max<std::int64_t>(c, 1), 8, batch_norm_chunk_rows);
}

/// The batch's per-channel mean and biased variance of x [rows, c], reading x once: each chunk
/// of rows takes two passes (its mean, then squared deviations from it, from cache: no
/// cancellation), and chunks then blocks are merged in order in double (Chan et al.'s pairwise
/// update), so results depend on neither thread count nor timing.
template <class T>
std::array<std::vector<double>, 2> batch_moments(T const* x, std::int64_t rows, std::int64_t c) {
  using Vec = typename backend::cpu::VecFor<T>::type;
  auto const cs = static_cast<std::size_t>(c);
  std::int64_t const block = batch_norm_block_rows(c);
  std::int64_t const blocks = (rows + block - 1) / block;
  std::int64_t const chunk_rows = batch_moments_chunk_rows(c);
  // Per block: the mean and the sum of squared deviations of each channel.
  std::vector<double> partial(static_cast<std::size_t>(blocks) * 2 * cs, 0.0);
  // Merges (n_b, mean_b, m2_b) into (n_a, mean, m2): Chan et al.'s update.
  auto merge = [cs](double n_a, double* mean, double* m2, double n_b, double const* mean_b,
                    double const* m2_b) {
    double const n = n_a + n_b;
    for (std::size_t i = 0; i < cs; ++i) {
      double const delta = mean_b[i] - mean[i];
      mean[i] += delta * n_b / n;
      m2[i] += m2_b[i] + delta * delta * n_a * n_b / n;
    }
  };
  backend::cpu::parallel_for(blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    std::vector<T> sum(cs), neg_mean(cs), sq(cs);
    std::vector<double> chunk_mean(cs), chunk_m2(cs);
    for (std::int64_t b = b0; b < b1; ++b) {
      double* mean = partial.data() + static_cast<std::size_t>(b) * 2 * cs;
      double* m2 = mean + cs;
      double n_a = 0;
      std::int64_t const end = std::min(rows, (b + 1) * block);
      for (std::int64_t r0 = b * block; r0 < end; r0 += chunk_rows) {
        std::int64_t const r1 = std::min(end, r0 + chunk_rows);
        auto const n = static_cast<double>(r1 - r0);
        T const* const chunk = x + r0 * c;
        column_sums(
            r1 - r0, c, sum.data(),
            [chunk](std::int64_t e, std::int64_t) { return Vec::load(chunk + e); },
            [chunk](std::int64_t e, std::int64_t) { return chunk[e]; });
        for (std::size_t i = 0; i < cs; ++i) {
          neg_mean[i] = static_cast<T>(-(static_cast<double>(sum[i]) / n));
        }
        T const* const nm = neg_mean.data();
        column_sums(
            r1 - r0, c, sq.data(),
            [chunk, nm](std::int64_t e, std::int64_t i) {
              auto const d = Vec::add(Vec::load(chunk + e), Vec::load(nm + i));
              return Vec::fma(d, d, Vec::zero());
            },
            [chunk, nm](std::int64_t e, std::int64_t i) {
              T const d = chunk[e] + nm[i];
              return d * d;
            });
        // Deviations were taken from the rounded mean -nm: sum (x - mu)^2 = sq - n (mu + nm)^2.
        for (std::size_t i = 0; i < cs; ++i) {
          double const mu = static_cast<double>(sum[i]) / n;
          double const off = mu + static_cast<double>(nm[i]);
          chunk_mean[i] = mu;
          chunk_m2[i] = std::max(0.0, static_cast<double>(sq[i]) - n * off * off);
        }
        if (n_a == 0) {
          std::copy(chunk_mean.begin(), chunk_mean.end(), mean);
          std::copy(chunk_m2.begin(), chunk_m2.end(), m2);
        } else {
          merge(n_a, mean, m2, n, chunk_mean.data(), chunk_m2.data());
        }
        n_a += n;
      }
    }
  });
  std::vector<double> m(cs, 0.0);
  std::vector<double> v(cs, 0.0);
  double n_a = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    double const* mean_b = partial.data() + static_cast<std::size_t>(b) * 2 * cs;
    auto const n_b = static_cast<double>(std::min(rows, (b + 1) * block) - b * block);
    if (n_a == 0) {
      std::copy(mean_b, mean_b + cs, m.begin());
      std::copy(mean_b + cs, mean_b + 2 * cs, v.begin());
    } else {
      merge(n_a, m.data(), v.data(), n_b, mean_b, mean_b + cs);
    }
    n_a += n_b;
  }
  for (double& s : v) {
    s /= std::max(n_a, 1.0);
  }
  return {std::move(m), std::move(v)};
}

/// y = x * a + b over n elements (a and b given per element), every element through the same
/// vector multiply-add, the ragged end too (in a zero-padded packet): an element's bits do not
/// depend on where a run starts, so a traced chain that runs this on its chunks gets eager's
/// values (Note [Fusion] in function/detail/executor.hpp). `y` may be `x`.
template <class T>
TAPEFLOW_ALWAYS_INLINE void affine_run(T const* x, T const* a, T const* b, T* y, std::int64_t n) {
  using Vec = typename backend::cpu::VecFor<T>::type;
  std::int64_t i = 0;
  for (; i + Vec::kLanes <= n; i += Vec::kLanes) {
    Vec::store(y + i, Vec::fma(Vec::load(x + i), Vec::load(a + i), Vec::load(b + i)));
  }
  if (i < n) {
    T in[3][Vec::kLanes] = {};
    auto const rest = static_cast<std::size_t>(n - i);
    std::copy_n(x + i, rest, in[0]);
    std::copy_n(a + i, rest, in[1]);
    std::copy_n(b + i, rest, in[2]);
    Vec::store(in[0], Vec::fma(Vec::load(in[0]), Vec::load(in[1]), Vec::load(in[2])));
    std::copy_n(in[0], rest, y + i);
  }
}

/// out = in * a + b by channel over [rows, c] (a, b: c values).
template <class T>
void channel_affine(T const* in, std::int64_t rows, std::int64_t c, T const* a, T const* b,
                    T* out) {
  std::int64_t const grain = std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(c, 1));
  backend::cpu::parallel_for(rows, grain, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r) {
      affine_run(in + r * c, a, b, out + r * c, c);
    }
  });
}

/// The inference-mode coefficients of batch normalization by channel: y = x * a + b with
/// a = scale / sqrt(variance + epsilon) and b = offset - mean * a, computed in double.
template <class T, class Stat>
void batch_norm_coefficients(std::int64_t c, T const* scale, T const* offset, Stat const* mean,
                             Stat const* variance, double epsilon, T* a, T* b) {
  for (std::int64_t i = 0; i < c; ++i) {
    double const r = 1.0 / std::sqrt(static_cast<double>(variance[i]) + epsilon);
    a[i] = static_cast<T>(static_cast<double>(scale[i]) * r);
    b[i] = static_cast<T>(static_cast<double>(offset[i]) -
                          static_cast<double>(mean[i]) * static_cast<double>(scale[i]) * r);
  }
}

/// y = scale * (x - mean) / sqrt(variance + epsilon) + offset over x [rows, c], with the
/// batch's mean and biased variance when `compute_moments`, else the given ones.
template <class T>
void fused_batch_norm(T const* x, std::int64_t rows, std::int64_t c, T const* scale,
                      T const* offset, T const* mean, T const* variance, double epsilon,
                      bool compute_moments, T* y) {
  std::vector<T> a(static_cast<std::size_t>(c));
  std::vector<T> b(static_cast<std::size_t>(c));
  if (compute_moments) {
    auto const mv = batch_moments(x, rows, c);
    batch_norm_coefficients(c, scale, offset, mv[0].data(), mv[1].data(), epsilon, a.data(),
                            b.data());
  } else {
    batch_norm_coefficients(c, scale, offset, mean, variance, epsilon, a.data(), b.data());
  }
  channel_affine(x, rows, c, a.data(), b.data(), y);
}

/// sum(dy * (x - m)) by channel over [rows, c], and sum(dy) first when `Sums` is 2, in one pass
/// over dy and x.
template <std::size_t Sums, class T>
std::array<std::vector<double>, Sums> gradient_sums(T const* dy, T const* x, std::int64_t rows,
                                                    std::int64_t c, T const* mean) {
  static_assert(Sums == 1 || Sums == 2);
  using Vec = typename backend::cpu::VecFor<T>::type;
  std::vector<T> neg_mean(static_cast<std::size_t>(c));
  for (std::size_t i = 0; i < neg_mean.size(); ++i) {
    neg_mean[i] = -mean[i];
  }
  T const* const nm = neg_mean.data();
  return channel_sums<T, Sums>(
      rows, c, [&](std::array<T*, Sums> const& sums, std::int64_t r0, std::int64_t n) {
        T const* g = dy + r0 * c;
        T const* in = x + r0 * c;
        if constexpr (Sums == 2) {
          column_sums(
              n, c, sums[0], [g](std::int64_t e, std::int64_t) { return Vec::load(g + e); },
              [g](std::int64_t e, std::int64_t) { return g[e]; });
        }
        column_sums(
            n, c, sums[Sums - 1],
            [g, in, nm](std::int64_t e, std::int64_t i) {
              return Vec::fma(Vec::load(g + e), Vec::add(Vec::load(in + e), Vec::load(nm + i)),
                              Vec::zero());
            },
            [g, in, nm](std::int64_t e, std::int64_t i) { return g[e] * (in[e] + nm[i]); });
      });
}

/// Training-mode x_backprop over [rows, c] from the channel sums sum(dy) and sum(dy * (x - m))
/// (formulas: ops/nn/batch_norm_grad.hpp): dx = dy * a + x * b + k by channel, one multiply-add
/// pass over dy and x.
template <class T>
void batch_norm_grad_from_sums(T const* dy, T const* x, std::int64_t rows, std::int64_t c,
                               T const* scale, T const* mean, T const* variance, double epsilon,
                               std::vector<double> const& sum_dy,
                               std::vector<double> const& sum_dyc, T* dx) {
  using Vec = typename backend::cpu::VecFor<T>::type;
  double const count = static_cast<double>(std::max<std::int64_t>(rows, 1));
  std::vector<T> a(static_cast<std::size_t>(c));
  std::vector<T> b(static_cast<std::size_t>(c));
  std::vector<T> k(static_cast<std::size_t>(c));
  for (std::size_t i = 0; i < a.size(); ++i) {
    double const r = 1.0 / std::sqrt(static_cast<double>(variance[i]) + epsilon);
    double const sr = static_cast<double>(scale[i]) * r;
    double const bx = -sr * r * r * sum_dyc[i] / count;
    a[i] = static_cast<T>(sr);
    b[i] = static_cast<T>(bx);
    k[i] = static_cast<T>(-sr * sum_dy[i] / count - bx * static_cast<double>(mean[i]));
  }
  std::int64_t const grain = std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(c, 1));
  backend::cpu::parallel_for(rows, grain, [&](std::int64_t r0, std::int64_t r1) {
    T const* av = a.data();
    T const* bv = b.data();
    T const* kv = k.data();
    for (std::int64_t r = r0; r < r1; ++r) {
      T const* g = dy + r * c;
      T const* in = x + r * c;
      T* out = dx + r * c;
      std::int64_t i = 0;
      for (; i + Vec::kLanes <= c; i += Vec::kLanes) {
        auto const xb = Vec::fma(Vec::load(in + i), Vec::load(bv + i), Vec::load(kv + i));
        Vec::store(out + i, Vec::fma(Vec::load(g + i), Vec::load(av + i), xb));
      }
      for (; i < c; ++i) {
        out[i] = g[i] * av[i] + (in[i] * bv[i] + kv[i]);
      }
    }
  });
}

/// FusedBatchNormGradV3's x_backprop over [rows, c] (formulas: ops/nn/batch_norm_grad.hpp).
/// Training, with the batch's moments given: one pass for sum(dy) and sum(dy * (x - m)), then
/// the multiply-add pass of batch_norm_grad_from_sums.
template <class T>
void fused_batch_norm_grad(T const* dy, T const* x, std::int64_t rows, std::int64_t c,
                           T const* scale, T const* mean, T const* variance, double epsilon,
                           bool is_training, T* dx) {
  if (!is_training) {
    std::vector<T> a(static_cast<std::size_t>(c));
    std::vector<T> zero(static_cast<std::size_t>(c), T(0));
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<T>(static_cast<double>(scale[i]) /
                            std::sqrt(static_cast<double>(variance[i]) + epsilon));
    }
    channel_affine(dy, rows, c, a.data(), zero.data(), dx);
    return;
  }
  auto const sums = gradient_sums<2>(dy, x, rows, c, mean);
  batch_norm_grad_from_sums(dy, x, rows, c, scale, mean, variance, epsilon, sums[0], sums[1], dx);
}

/// The same x_backprop given FusedBatchNormGradV3's other outputs, scale_backprop =
/// sum(dy * (x - m)) / sqrt(v + eps) and offset_backprop = sum(dy): the multiply-add pass alone.
template <class T>
void fused_batch_norm_grad_given_sums(T const* dy, T const* x, std::int64_t rows, std::int64_t c,
                                      T const* scale, T const* mean, T const* variance,
                                      T const* scale_backprop, T const* offset_backprop,
                                      double epsilon, T* dx) {
  std::vector<double> sum_dy(static_cast<std::size_t>(c));
  std::vector<double> sum_dyc(static_cast<std::size_t>(c));
  for (std::size_t i = 0; i < sum_dy.size(); ++i) {
    sum_dy[i] = static_cast<double>(offset_backprop[i]);
    sum_dyc[i] = static_cast<double>(scale_backprop[i]) *
                 std::sqrt(static_cast<double>(variance[i]) + epsilon);
  }
  batch_norm_grad_from_sums(dy, x, rows, c, scale, mean, variance, epsilon, sum_dy, sum_dyc, dx);
}

/// FusedBatchNormGradV3's scale_backprop over [rows, c]: sum(dy * (x - m)) / sqrt(v + eps) by
/// channel, with (m, v) the mean and variance given (the batch's in training mode): one pass over
/// x and dy (sum(dy * xhat) in ops would write xhat and the product).
template <class T>
void fused_batch_norm_scale_grad(T const* dy, T const* x, std::int64_t rows, std::int64_t c,
                                 T const* mean, T const* variance, double epsilon, T* dscale) {
  auto const sum_dyc = gradient_sums<1>(dy, x, rows, c, mean)[0];
  for (std::size_t i = 0; i < sum_dyc.size(); ++i) {
    dscale[i] = static_cast<T>(sum_dyc[i] / std::sqrt(static_cast<double>(variance[i]) + epsilon));
  }
}

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
