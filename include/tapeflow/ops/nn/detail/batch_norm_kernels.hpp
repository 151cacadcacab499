// The kernels behind ops/nn/batch_norm.hpp (FusedBatchNormV3) and ops/nn/batch_norm_grad.hpp
// (FusedBatchNormGradV3), channels last: raw pointers over x viewed as [rows, C].
//
// Statistics are summed in double per fixed block of rows (the blocks do not depend on the
// thread count, and their partial sums are added in order, so results do not depend on thread
// timing); the mean and the squared deviations take two passes (no cancellation). Outputs are
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

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

/// Checks the operands of FusedBatchNormV3: x [N, H, W, C], four vectors of C (mean and
/// variance may be empty in training mode, as TensorFlow allows).
template <class T, std::size_t R>
void check_batch_norm_operands(std::string_view op, bool is_training,
                               std::array<std::int64_t, R> const& x,
                               std::array<std::array<std::int64_t, 1>, 4> const& params) {
  static_assert(floating_element<T>, "tf::nn::fused_batch_norm: x must be float or double");
  static_assert(R == 4, "tf::nn::fused_batch_norm: x must be rank 4 (NHWC)");
  std::int64_t const c = x[R - 1];
  char const* const names[4] = {"scale", "offset", "mean", "variance"};
  for (std::size_t i = 0; i < 4; ++i) {
    bool const may_be_empty = is_training && i >= 2;
    if (params[i][0] != c && !(may_be_empty && params[i][0] == 0)) {
      throw invalid_argument(std::string(op) + ": " + names[i] + " has " +
                             std::to_string(params[i][0]) + " elements but x of shape " +
                             Shape(x).to_string() + " has " + std::to_string(c) + " channels");
    }
  }
}

/// Rows of [rows, c] per statistics block: about 16k elements, whatever the thread count.
inline std::int64_t batch_norm_block_rows(std::int64_t c) {
  return std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(c, 1));
}

/// Rows whose terms add up in T before they join the double sums: short enough that float
/// sums of them lose nothing that matters (error ~ 64 ulp at most), long enough that the
/// double additions cost little.
inline constexpr std::int64_t batch_norm_chunk_rows = 64;

/// Per-channel sums over the rows of [rows, c] data: `row_terms(r, acc)` adds row r's terms to
/// the N arrays `acc[n]` of c values of T. Chunks of rows add up in T (vectors), then in double,
/// block by block in order.
template <class T, std::size_t N, class RowTerms>
std::array<std::vector<double>, N> channel_sums(std::int64_t rows, std::int64_t c,
                                                RowTerms row_terms) {
  std::int64_t const block = batch_norm_block_rows(c);
  std::int64_t const blocks = (rows + block - 1) / block;
  auto const cs = static_cast<std::size_t>(c);
  std::vector<double> partial(static_cast<std::size_t>(blocks) * N * cs, 0.0);
  backend::cpu::parallel_for(blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    std::vector<T> chunk(N * cs);
    std::array<T*, N> acc;
    for (std::size_t n = 0; n < N; ++n) {
      acc[n] = chunk.data() + n * cs;
    }
    for (std::int64_t b = b0; b < b1; ++b) {
      double* out = partial.data() + static_cast<std::size_t>(b) * N * cs;
      std::int64_t const end = std::min(rows, (b + 1) * block);
      for (std::int64_t r0 = b * block; r0 < end; r0 += batch_norm_chunk_rows) {
        std::fill(chunk.begin(), chunk.end(), T(0));
        std::int64_t const r1 = std::min(end, r0 + batch_norm_chunk_rows);
        for (std::int64_t r = r0; r < r1; ++r) {
          row_terms(r, acc);
        }
        for (std::size_t k = 0; k < chunk.size(); ++k) {
          out[k] += static_cast<double>(chunk[k]);
        }
      }
    }
  });
  std::array<std::vector<double>, N> sums;
  for (std::size_t n = 0; n < N; ++n) {
    sums[n].assign(cs, 0.0);
    for (std::int64_t b = 0; b < blocks; ++b) {
      double const* in = partial.data() + (static_cast<std::size_t>(b) * N + n) * cs;
      for (std::size_t i = 0; i < cs; ++i) {
        sums[n][i] += in[i];
      }
    }
  }
  return sums;
}

/// acc[i] += term(i) over c channels: `vec(i)` gives the term of lanes i.. as a vector of T,
/// `one(i)` the term of channel i alone (the tail past the last full vector).
template <class T, class VecTerm, class OneTerm>
TAPEFLOW_ALWAYS_INLINE void add_terms(T* acc, std::int64_t c, VecTerm vec, OneTerm one) {
  using Vec = typename backend::cpu::VecFor<T>::type;
  std::int64_t i = 0;
  for (; i + Vec::kLanes <= c; i += Vec::kLanes) {
    Vec::store(acc + i, Vec::add(Vec::load(acc + i), vec(i)));
  }
  for (; i < c; ++i) {
    acc[i] += one(i);
  }
}

/// -m[i] for each channel, in the tensor's type (what the deviation passes add).
template <class T>
std::vector<T> negated(std::vector<double> const& m) {
  std::vector<T> out(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    out[i] = static_cast<T>(-m[i]);
  }
  return out;
}

/// The batch's per-channel mean and biased variance of x [rows, c], in two passes (mean, then
/// squared deviations: no cancellation).
template <class T>
std::array<std::vector<double>, 2> batch_moments(T const* x, std::int64_t rows, std::int64_t c) {
  using Vec = typename backend::cpu::VecFor<T>::type;
  double const count = static_cast<double>(std::max<std::int64_t>(rows, 1));
  std::vector<double> m =
      channel_sums<T, 1>(rows, c, [&](std::int64_t r, std::array<T*, 1> const& acc) {
        T const* row = x + r * c;
        add_terms(
            acc[0], c, [&](std::int64_t i) { return Vec::load(row + i); },
            [&](std::int64_t i) { return row[i]; });
      })[0];
  for (double& sum : m) {
    sum /= count;
  }
  std::vector<T> const neg_mean = negated<T>(m);
  T const* const nm = neg_mean.data();
  std::vector<double> v =
      channel_sums<T, 1>(rows, c, [&](std::int64_t r, std::array<T*, 1> const& acc) {
        T const* row = x + r * c;
        add_terms(
            acc[0], c,
            [&](std::int64_t i) {
              auto const d = Vec::add(Vec::load(row + i), Vec::load(nm + i));
              return Vec::fma(d, d, Vec::zero());
            },
            [&](std::int64_t i) {
              T const d = row[i] + nm[i];
              return d * d;
            });
      })[0];
  for (double& s : v) {
    s /= count;
  }
  return {std::move(m), std::move(v)};
}

/// out = in * a + b by channel over [rows, c] (a, b: c values), in explicit vectors: the
/// compiler's own would check the four arrays for overlap per row.
template <class T>
void channel_affine(T const* in, std::int64_t rows, std::int64_t c, T const* a, T const* b,
                    T* out) {
  std::int64_t const grain = std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(c, 1));
  backend::cpu::parallel_for(rows, grain, [&](std::int64_t r0, std::int64_t r1) {
    using Vec = typename backend::cpu::VecFor<T>::type;
    for (std::int64_t r = r0; r < r1; ++r) {
      T const* x = in + r * c;
      T* y = out + r * c;
      std::int64_t i = 0;
      for (; i + Vec::kLanes <= c; i += Vec::kLanes) {
        Vec::store(y + i, Vec::fma(Vec::load(x + i), Vec::load(a + i), Vec::load(b + i)));
      }
      for (; i < c; ++i) {
        y[i] = x[i] * a[i] + b[i];
      }
    }
  });
}

/// y = scale * (x - mean) / sqrt(variance + epsilon) + offset over x [rows, c], with the
/// batch's mean and biased variance when `is_training`, else the given ones.
template <class T>
void fused_batch_norm(T const* x, std::int64_t rows, std::int64_t c, T const* scale,
                      T const* offset, T const* mean, T const* variance, double epsilon,
                      bool is_training, T* y) {
  std::array<std::vector<double>, 2> mv;
  if (is_training) {
    mv = batch_moments(x, rows, c);
  } else {
    mv = {std::vector<double>(mean, mean + c), std::vector<double>(variance, variance + c)};
  }
  std::vector<double> const& m = mv[0];
  std::vector<double> const& v = mv[1];
  std::vector<T> a(static_cast<std::size_t>(c));
  std::vector<T> b(static_cast<std::size_t>(c));
  for (std::size_t i = 0; i < a.size(); ++i) {
    double const r = 1.0 / std::sqrt(v[i] + epsilon);
    a[i] = static_cast<T>(static_cast<double>(scale[i]) * r);
    b[i] =
        static_cast<T>(static_cast<double>(offset[i]) - m[i] * static_cast<double>(scale[i]) * r);
  }
  channel_affine(x, rows, c, a.data(), b.data(), y);
}

/// sum(dy) and sum(dy * (x - m)) by channel over [rows, c], in one pass over dy and x.
template <class T>
std::array<std::vector<double>, 2> gradient_sums(T const* dy, T const* x, std::int64_t rows,
                                                 std::int64_t c, std::vector<double> const& m) {
  using Vec = typename backend::cpu::VecFor<T>::type;
  std::vector<T> const neg_mean = negated<T>(m);
  T const* const nm = neg_mean.data();
  return channel_sums<T, 2>(rows, c, [&](std::int64_t r, std::array<T*, 2> const& acc) {
    T const* g = dy + r * c;
    T const* in = x + r * c;
    add_terms(
        acc[0], c, [&](std::int64_t i) { return Vec::load(g + i); },
        [&](std::int64_t i) { return g[i]; });
    add_terms(
        acc[1], c,
        [&](std::int64_t i) {
          return Vec::fma(Vec::load(g + i), Vec::add(Vec::load(in + i), Vec::load(nm + i)),
                          Vec::zero());
        },
        [&](std::int64_t i) { return g[i] * (in[i] + nm[i]); });
  });
}

/// FusedBatchNormGradV3's x_backprop over [rows, c] (formulas: ops/nn/batch_norm_grad.hpp).
/// Training: the batch's moments, then one pass for sum(dy) and sum(dy * (x - m)), then
/// dx = dy * a + x * b + k by channel, all three folded into one multiply-add pass.
template <class T>
void fused_batch_norm_grad(T const* dy, T const* x, std::int64_t rows, std::int64_t c,
                           T const* scale, T const* variance, double epsilon, bool is_training,
                           T* dx) {
  std::vector<T> a(static_cast<std::size_t>(c));
  if (!is_training) {
    std::vector<T> zero(static_cast<std::size_t>(c), T(0));
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<T>(static_cast<double>(scale[i]) /
                            std::sqrt(static_cast<double>(variance[i]) + epsilon));
    }
    channel_affine(dy, rows, c, a.data(), zero.data(), dx);
    return;
  }
  auto const moments = batch_moments(x, rows, c);
  std::vector<double> const& m = moments[0];
  std::vector<double> const& v = moments[1];
  using Vec = typename backend::cpu::VecFor<T>::type;
  auto const sums = gradient_sums(dy, x, rows, c, m);
  std::vector<double> const& sum_dy = sums[0];
  std::vector<double> const& sum_dyc = sums[1];
  double const count = static_cast<double>(std::max<std::int64_t>(rows, 1));
  std::vector<T> b(static_cast<std::size_t>(c));
  std::vector<T> k(static_cast<std::size_t>(c));
  for (std::size_t i = 0; i < a.size(); ++i) {
    double const r = 1.0 / std::sqrt(v[i] + epsilon);
    double const sr = static_cast<double>(scale[i]) * r;
    double const bx = -sr * r * r * sum_dyc[i] / count;
    a[i] = static_cast<T>(sr);
    b[i] = static_cast<T>(bx);
    k[i] = static_cast<T>(-sr * sum_dy[i] / count - bx * m[i]);
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

/// FusedBatchNormGradV3's scale_backprop over [rows, c]: sum(dy * (x - m)) / sqrt(v + eps) by
/// channel, with (m, v) the batch's moments when `is_training`, else `mean` and `variance`: one
/// pass over x and dy after the moments (sum(dy * xhat) in ops would write xhat and the product).
template <class T>
void fused_batch_norm_scale_grad(T const* dy, T const* x, std::int64_t rows, std::int64_t c,
                                 T const* mean, T const* variance, double epsilon, bool is_training,
                                 T* dscale) {
  std::array<std::vector<double>, 2> mv;
  if (is_training) {
    mv = batch_moments(x, rows, c);
  } else {
    mv = {std::vector<double>(mean, mean + c), std::vector<double>(variance, variance + c)};
  }
  auto const sum_dyc = gradient_sums(dy, x, rows, c, mv[0])[1];
  for (std::size_t i = 0; i < sum_dyc.size(); ++i) {
    dscale[i] = static_cast<T>(sum_dyc[i] / std::sqrt(mv[1][i] + epsilon));
  }
}

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
