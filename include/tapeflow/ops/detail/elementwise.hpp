// Elementwise kernels: an op's element rule is an Eigen expression on rank-1 maps, applied
// in contiguous runs so each (op, dtype) instantiates one small Eigen kernel whatever the
// rank, and large tensors are split over the intra-op thread pool.
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/eigen.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

template <class T>
using VecMap = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor, Eigen::Index>>;
template <class T>
using ConstVecMap = Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor, Eigen::Index>>;

/// Elements below which an op runs on the calling thread (waking workers costs more).
inline constexpr std::int64_t parallel_grain = 32 * 1024;

/// out = expr(in), elementwise, any rank (same shape).
template <class U, class T, std::size_t R, class Expr>
void unary_kernel(Tensor<U, R>& out, const Tensor<T, R>& in, Expr expr) {
  U* o = tensor_access::mutable_data(out);
  const T* x = in.data();
  backend::cpu::parallel_for(in.num_elements(), parallel_grain,
                             [&](std::int64_t b, std::int64_t e) {
                               VecMap<U>(o + b, e - b) = expr(ConstVecMap<T>(x + b, e - b));
                             });
}

/// NumPy broadcasting of two shapes (right-aligned; dims equal or 1). Throws
/// invalid_argument naming the op and both shapes.
template <std::size_t A, std::size_t B>
auto broadcast_dims(std::string_view op, const std::array<std::int64_t, A>& a,
                    const std::array<std::int64_t, B>& b) {
  constexpr std::size_t R = A > B ? A : B;
  std::array<std::int64_t, R> out{};
  for (std::size_t i = 0; i < R; ++i) {
    std::int64_t const da = i < R - A ? 1 : a[i - (R - A)];
    std::int64_t const db = i < R - B ? 1 : b[i - (R - B)];
    if (da != db && da != 1 && db != 1) {
      throw invalid_argument(std::string(op) + ": incompatible shapes for broadcasting: " +
                             Shape(a).to_string() + " and " + Shape(b).to_string());
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// `dims` right-aligned to rank R with leading 1s.
template <std::size_t R, std::size_t A>
std::array<std::int64_t, R> align_dims(const std::array<std::int64_t, A>& dims) {
  static_assert(A <= R);
  std::array<std::int64_t, R> out;
  out.fill(1);
  std::copy(dims.begin(), dims.end(), out.begin() + (R - A));
  return out;
}

/// out = expr(a, b) with NumPy broadcasting. `expr` receives two rank-1 Eigen expressions
/// of equal length (maps, or constants for broadcast runs).
template <class U, std::size_t R, class T, std::size_t A, std::size_t B, class Expr>
void binary_kernel(Tensor<U, R>& out, const Tensor<T, A>& a, const Tensor<T, B>& b, Expr expr) {
  U* o = tensor_access::mutable_data(out);
  const T* pa = a.data();
  const T* pb = b.data();
  std::int64_t const n = out.num_elements();
  if (n == 0) {
    return;
  }
  std::int64_t const na = a.num_elements();
  std::int64_t const nb = b.num_elements();
  if (na == n && nb == n) {
    backend::cpu::parallel_for(n, parallel_grain, [&](std::int64_t s, std::int64_t e) {
      VecMap<U>(o + s, e - s) = expr(ConstVecMap<T>(pa + s, e - s), ConstVecMap<T>(pb + s, e - s));
    });
    return;
  }
  if (nb == 1 && na == n) {
    const T v = pb[0];
    backend::cpu::parallel_for(n, parallel_grain, [&](std::int64_t s, std::int64_t e) {
      ConstVecMap<T> x(pa + s, e - s);
      VecMap<U>(o + s, e - s) = expr(x, x.constant(v));
    });
    return;
  }
  if (na == 1 && nb == n) {
    const T v = pa[0];
    backend::cpu::parallel_for(n, parallel_grain, [&](std::int64_t s, std::int64_t e) {
      ConstVecMap<T> y(pb + s, e - s);
      VecMap<U>(o + s, e - s) = expr(y.constant(v), y);
    });
    return;
  }
  // General case: collapse adjacent axes with the same broadcast pattern, then run the
  // innermost axis as one vector expression per outer index.
  const auto da = align_dims<R>(a.dims());
  const auto db = align_dims<R>(b.dims());
  const auto& dout = out.dims();
  std::array<std::int64_t, R> len{};
  std::array<bool, R> bca{};
  std::array<bool, R> bcb{};
  std::size_t k = 0;
  for (std::size_t i = 0; i < R; ++i) {
    if (dout[i] == 1) {
      continue;  // size-1 axes change nothing
    }
    const bool ba = da[i] == 1;
    const bool bb = db[i] == 1;
    if (k > 0 && bca[k - 1] == ba && bcb[k - 1] == bb) {
      len[k - 1] *= dout[i];
    } else {
      len[k] = dout[i];
      bca[k] = ba;
      bcb[k] = bb;
      ++k;
    }
  }
  // Strides of each collapsed axis in a and b (0 where broadcast).
  std::array<std::int64_t, R> sa{};
  std::array<std::int64_t, R> sb{};
  std::int64_t stride_a = 1;
  std::int64_t stride_b = 1;
  for (std::size_t i = k; i-- > 0;) {
    sa[i] = bca[i] ? 0 : stride_a;
    sb[i] = bcb[i] ? 0 : stride_b;
    stride_a *= bca[i] ? 1 : len[i];
    stride_b *= bcb[i] ? 1 : len[i];
  }
  std::int64_t const inner = len[k - 1];
  const bool inner_a = !bca[k - 1];
  const bool inner_b = !bcb[k - 1];
  std::int64_t const outer = n / inner;
  backend::cpu::parallel_for(outer, std::max<std::int64_t>(1, parallel_grain / inner),
                             [&](std::int64_t s, std::int64_t e) {
                               for (std::int64_t r = s; r < e; ++r) {
                                 // Offsets of row r in a and b from its multi-index over the outer
                                 // collapsed axes.
                                 std::int64_t rem = r;
                                 std::int64_t off_a = 0;
                                 std::int64_t off_b = 0;
                                 for (std::size_t i = k - 1; i-- > 0;) {
                                   std::int64_t const idx = rem % len[i];
                                   rem /= len[i];
                                   off_a += idx * sa[i];
                                   off_b += idx * sb[i];
                                 }
                                 VecMap<U> dst(o + r * inner, inner);
                                 if (inner_a && inner_b) {
                                   dst = expr(ConstVecMap<T>(pa + off_a, inner),
                                              ConstVecMap<T>(pb + off_b, inner));
                                 } else if (inner_a) {
                                   ConstVecMap<T> x(pa + off_a, inner);
                                   dst = expr(x, x.constant(pb[off_b]));
                                 } else if (inner_b) {
                                   ConstVecMap<T> y(pb + off_b, inner);
                                   dst = expr(y.constant(pa[off_a]), y);
                                 } else {
                                   ConstVecMap<T> x(pa + off_a, 1);
                                   VecMap<U>(o + r * inner, 1) = expr(x, x.constant(pb[off_b]));
                                   std::fill(o + r * inner + 1, o + (r + 1) * inner, o[r * inner]);
                                 }
                               }
                             });
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
