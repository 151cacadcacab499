// Elementwise kernels: an op's element rule is an Eigen expression on rank-1 maps, applied
// in contiguous runs so each (op, dtype) instantiates one small Eigen kernel whatever the
// rank, and large tensors are split over the intra-op thread pool. This header declares the
// runs and does the broadcasting; elementwise_kernels.hpp has their Eigen bodies.
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// out[i] = Rule{}(x[i]) for i < n: one contiguous run, single-threaded. Defined with Eigen in
/// ops/detail/elementwise_kernels.hpp; `Rule` depends only on the op (never on rank), so each
/// (op, dtype) has one kernel, which tapeflow::instantiations compiles once for every built-in
/// op (MAINTAINERS.md, "Compile time").
template <class U, class T, class Rule>
void unary_run(U* out, const T* x, std::int64_t n);

/// One run of a binary op: `len` outputs from `a` and `b`, each either contiguous (step 1) or
/// a single broadcast value (step 0). Defined with Eigen in ops/detail/elementwise_kernels.hpp.
template <class U, class T, class Rule>
void binary_run(U* out, const T* a, bool a_contiguous, const T* b, bool b_contiguous,
                std::int64_t len);

/// out = Rule{}(in) over n contiguous elements, split over the intra-op thread pool.
template <class Rule, class U, class T>
void unary_kernel(U* o, const T* x, std::int64_t n) {
  backend::cpu::parallel_for(n, parallel_grain, [&](std::int64_t b, std::int64_t e) {
    unary_run<U, T, Rule>(o + b, x + b, e - b);
  });
}

/// out = Rule{}(in), elementwise, any rank (same shape).
template <class Rule, class U, class T, std::size_t R>
void unary_kernel(Tensor<U, R>& out, const Tensor<T, R>& in) {
  unary_kernel<Rule>(tensor_access::mutable_data(out), in.data(), in.num_elements());
}

/// How many elements a repeated short operand is tiled to (binary_kernel): a few KiB, in L1.
inline constexpr std::int64_t periodic_tile = 2048;

/// out = Rule{}(a, b) with NumPy broadcasting; `da`, `db` are the operand dims aligned to `dout`.
/// Rank-independent, so each (op, dtype) instantiates it once.
template <class Rule, class U, class T>
void binary_kernel(U* o, const BroadcastDims& dout, const T* pa, const BroadcastDims& da,
                   const T* pb, const BroadcastDims& db) {
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
      binary_run<U, T, Rule>(o + s, na == n ? pa + s : pa, na == n, nb == n ? pb + s : pb, nb == n,
                             e - s);
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
  if (k == 2 && inner < periodic_tile && inner_a && inner_b && bca[0] != bcb[0]) {
    // A bias: one side full, the other a short vector repeated for every row ([N, H, W, C] +
    // [C]). One run per row would cost a call per C elements; instead the vector is repeated
    // into a tile of whole rows and the runs cover many rows each.
    const bool a_repeats = bca[0];
    const T* vec = a_repeats ? pa : pb;
    const std::int64_t rows_per_tile = periodic_tile / inner;
    // Not std::vector: vector<bool> has no data().
    const auto tile = std::make_unique<T[]>(static_cast<std::size_t>(rows_per_tile * inner));
    for (std::int64_t r = 0; r < rows_per_tile; ++r) {
      std::copy(vec, vec + inner, tile.get() + r * inner);
    }
    backend::cpu::parallel_for(
        outer, std::max<std::int64_t>(1, parallel_grain / inner),
        [&](std::int64_t s, std::int64_t e) {
          for (std::int64_t r = s; r < e; r += rows_per_tile) {
            const std::int64_t len_run = std::min(rows_per_tile, e - r) * inner;
            const std::int64_t off = r * inner;
            if (a_repeats) {
              binary_run<U, T, Rule>(o + off, tile.get(), true, pb + off, true, len_run);
            } else {
              binary_run<U, T, Rule>(o + off, pa + off, true, tile.get(), true, len_run);
            }
          }
        });
    return;
  }
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
                                 binary_run<U, T, Rule>(o + r * inner, pa + off_a, inner_a,
                                                        pb + off_b, inner_b, inner);
                               }
                             });
}

/// Typed entry: out = Rule{}(a, b) with NumPy broadcasting. `Rule` should depend only on the op.
template <class Rule, class U, std::size_t R, class T, std::size_t A, std::size_t B>
void binary_kernel(Tensor<U, R>& out, const Tensor<T, A>& a, const Tensor<T, B>& b) {
  auto aligned = [](const auto& dims) {
    BroadcastDims out_dims;
    out_dims.rank = R;
    const auto d = align_dims<R>(dims);
    std::copy(d.begin(), d.end(), out_dims.d.begin());
    return out_dims;
  };
  binary_kernel<Rule>(tensor_access::mutable_data(out), aligned(out.dims()), a.data(),
                      aligned(a.dims()), b.data(), aligned(b.dims()));
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE

// The kernels' Eigen bodies; with TAPEFLOW_PRECOMPILED they come compiled from
// tapeflow::instantiations, and programs do not parse Eigen.
#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/ops/detail/elementwise_kernels.hpp>
#endif
