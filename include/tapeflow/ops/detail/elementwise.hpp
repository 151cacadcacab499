// Elementwise kernels: an op's element rule is an Eigen expression on rank-1 maps, applied
// in contiguous runs so each (op, dtype) instantiates one small Eigen kernel whatever the
// rank, and large tensors are split over the intra-op thread pool.
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/eigen.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

template <class T>
using VecMap = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor, Eigen::Index>>;
template <class T>
using ConstVecMap = Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor, Eigen::Index>>;

/// out = expr(in) over n contiguous elements. `Expr` should depend only on the op (not on
/// rank), so each (op, dtype) instantiates one Eigen kernel.
template <class U, class T, class Expr>
void unary_kernel(U* o, const T* x, std::int64_t n, Expr expr) {
  backend::cpu::parallel_for(n, parallel_grain, [&](std::int64_t b, std::int64_t e) {
    VecMap<U>(o + b, e - b) = expr(ConstVecMap<T>(x + b, e - b));
  });
}

/// out = expr(in), elementwise, any rank (same shape).
template <class U, class T, std::size_t R, class Expr>
void unary_kernel(Tensor<U, R>& out, const Tensor<T, R>& in, Expr expr) {
  unary_kernel(tensor_access::mutable_data(out), in.data(), in.num_elements(), expr);
}

// One run of a binary op: `len` outputs from `a` and `b`, each either contiguous (step 1) or
// a single broadcast value (step 0). Broadcast values are copied into a small buffer so every
// case evaluates the same (map, map) Eigen expression: one kernel instantiation per op and
// dtype instead of one per broadcast pattern, which keeps compile times down.
template <class U, class T, class Expr>
void binary_run(U* out, const T* a, bool a_contiguous, const T* b, bool b_contiguous,
                std::int64_t len, Expr& expr) {
  if (a_contiguous && b_contiguous) {
    VecMap<U>(out, len) = expr(ConstVecMap<T>(a, len), ConstVecMap<T>(b, len));
    return;
  }
  constexpr std::int64_t chunk = 512;
  alignas(64) T fill[chunk];
  const T value = a_contiguous ? *b : *a;
  std::fill_n(fill, std::min(chunk, len), value);
  for (std::int64_t s = 0; s < len; s += chunk) {
    const std::int64_t n = std::min(chunk, len - s);
    ConstVecMap<T> xa(a_contiguous ? a + s : fill, n);
    ConstVecMap<T> xb(b_contiguous ? b + s : fill, n);
    VecMap<U>(out + s, n) = expr(xa, xb);
  }
}

/// out = expr(a, b) with NumPy broadcasting; `da`, `db` are the operand dims aligned to `dout`.
/// Rank-independent, so each (op, dtype) instantiates it once.
template <class U, class T, class Expr>
void binary_kernel(U* o, const BroadcastDims& dout, const T* pa, const BroadcastDims& da,
                   const T* pb, const BroadcastDims& db, Expr& expr) {
  constexpr std::size_t R = max_rank;
  std::int64_t n = 1;
  std::int64_t na = 1;
  std::int64_t nb = 1;
  for (std::size_t i = 0; i < dout.rank; ++i) {
    n *= dout.d[i];
    na *= da.d[i];
    nb *= db.d[i];
  }
  if (n == 0) {
    return;
  }
  if ((na == n || na == 1) && (nb == n || nb == 1)) {
    // Same shapes, or one side a single value.
    backend::cpu::parallel_for(n, parallel_grain, [&](std::int64_t s, std::int64_t e) {
      // A length-1 side counts as contiguous when the output has one element too.
      binary_run(o + s, na == n ? pa + s : pa, na == n, nb == n ? pb + s : pb, nb == n, e - s,
                 expr);
    });
    return;
  }
  // General case: collapse adjacent axes with the same broadcast pattern, then run the
  // innermost axis as one vector expression per outer index.
  std::array<std::int64_t, R> len{};
  std::array<bool, R> bca{};
  std::array<bool, R> bcb{};
  std::size_t k = 0;
  for (std::size_t i = 0; i < dout.rank; ++i) {
    if (dout.d[i] == 1) {
      continue;  // size-1 axes change nothing
    }
    const bool ba = da.d[i] == 1;
    const bool bb = db.d[i] == 1;
    if (k > 0 && bca[k - 1] == ba && bcb[k - 1] == bb) {
      len[k - 1] *= dout.d[i];
    } else {
      len[k] = dout.d[i];
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
  const std::int64_t inner = len[k - 1];
  const bool inner_a = !bca[k - 1];
  const bool inner_b = !bcb[k - 1];
  const std::int64_t outer = n / inner;
  backend::cpu::parallel_for(outer, std::max<std::int64_t>(1, parallel_grain / inner),
                             [&](std::int64_t s, std::int64_t e) {
                               for (std::int64_t r = s; r < e; ++r) {
                                 // Offsets of row r in a and b from its multi-index over the outer
                                 // collapsed axes.
                                 std::int64_t rem = r;
                                 std::int64_t off_a = 0;
                                 std::int64_t off_b = 0;
                                 for (std::size_t i = k - 1; i-- > 0;) {
                                   const std::int64_t idx = rem % len[i];
                                   rem /= len[i];
                                   off_a += idx * sa[i];
                                   off_b += idx * sb[i];
                                 }
                                 binary_run(o + r * inner, pa + off_a, inner_a, pb + off_b, inner_b,
                                            inner, expr);
                               }
                             });
}

/// Typed entry: out = expr(a, b) with NumPy broadcasting. `Expr` should depend only on the op.
template <class U, std::size_t R, class T, std::size_t A, std::size_t B, class Expr>
void binary_kernel(Tensor<U, R>& out, const Tensor<T, A>& a, const Tensor<T, B>& b, Expr expr) {
  auto aligned = [](const auto& dims) {
    BroadcastDims out_dims;
    out_dims.rank = R;
    const auto d = align_dims<R>(dims);
    std::copy(d.begin(), d.end(), out_dims.d.begin());
    return out_dims;
  };
  binary_kernel(tensor_access::mutable_data(out), aligned(out.dims()), a.data(), aligned(a.dims()),
                b.data(), aligned(b.dims()), expr);
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
