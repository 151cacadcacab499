// transpose(x), transpose(x, perm): permutes the axes of a tensor (TensorFlow: `tf.transpose`,
// op "Transpose").
//
// The kernel only moves elements (no Eigen), so it works for every dtype, strings and bools
// included. It first coalesces the permutation (drops size-1 axes, merges input axes that stay
// adjacent in the output), then either copies contiguous runs or, when the innermost axis moves,
// transposes 2-D planes tile by tile so reads and writes both stay within cache lines.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// Side of the square tiles of the blocked 2-D transpose.
inline constexpr std::int64_t transpose_tile = 64;
/// Side of the super-blocks that threads take as work items.
inline constexpr std::int64_t transpose_block_span = 256;

/// One tile of a 2-D transpose: out[c * out_stride + r] = in[r * in_stride + c] for r in
/// [r0, r1), c in [c0, c1). Trivially copyable elements go through a buffer in L1, so that both
/// the reads and the writes of memory are contiguous runs: a direct strided walk re-reads lines
/// that power-of-two row strides keep evicting (all rows of a tile map to the same cache sets).
template <class T>
void transpose_block(T const* in, std::int64_t in_stride, T* out, std::int64_t out_stride,
                     std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    T buf[transpose_tile * transpose_tile];
    for (std::int64_t r = r0; r < r1; ++r) {
      T const* src = in + r * in_stride;
      for (std::int64_t c = c0; c < c1; ++c) {
        buf[(c - c0) * transpose_tile + (r - r0)] = src[c];
      }
    }
    for (std::int64_t c = c0; c < c1; ++c) {
      std::copy_n(buf + (c - c0) * transpose_tile, r1 - r0, out + c * out_stride + r0);
    }
  } else {
    for (std::int64_t c = c0; c < c1; ++c) {
      T* dst = out + c * out_stride;
      for (std::int64_t r = r0; r < r1; ++r) {
        dst[r] = in[r * in_stride + c];
      }
    }
  }
}

/// A transpose with size-1 axes dropped and input axes that stay adjacent merged: input axes
/// 0..k-1 of sizes `cd`; output position i holds input axis `cp[i]`. Strides are in elements.
template <std::size_t R>
struct CoalescedTranspose {
  std::size_t k = 0;
  std::array<std::size_t, R + 1> cp{};
  std::array<std::int64_t, R + 1> cd{};
  std::array<std::int64_t, R + 1> in_stride{};   // by input axis
  std::array<std::int64_t, R + 1> out_dims{};    // by output position
  std::array<std::int64_t, R + 1> out_stride{};  // by output position
};

template <std::size_t R>
CoalescedTranspose<R> coalesce_transpose(std::array<std::int64_t, R> const& dims,
                                         std::array<std::size_t, R> const& perm) {
  // Keep axes of size > 1, then merge runs of input axes that are consecutive (among the kept
  // ones) in the output order. Groups are listed in output order.
  std::array<std::int64_t, R + 1> kept_index{};
  std::size_t kept = 0;
  for (std::size_t a = 0; a < R; ++a) {
    kept_index[a] = dims[a] == 1 ? -1 : static_cast<std::int64_t>(kept++);
  }
  std::array<std::int64_t, R + 1> group_first{};  // first kept input axis of each group
  std::array<std::int64_t, R + 1> group_dim{};
  CoalescedTranspose<R> c;
  std::size_t& k = c.k;
  std::int64_t previous = -2;
  for (std::size_t i = 0; i < R; ++i) {
    std::int64_t const a = kept_index[perm[i]];
    if (a < 0) {
      continue;
    }
    if (k > 0 && a == previous + 1) {
      group_dim[k - 1] *= dims[perm[i]];
    } else {
      group_first[k] = a;
      group_dim[k] = dims[perm[i]];
      ++k;
    }
    previous = a;
  }
  if (k <= 1) {
    return c;
  }
  for (std::size_t g = 0; g < k; ++g) {
    std::size_t rank = 0;
    for (std::size_t h = 0; h < k; ++h) {
      rank += group_first[h] < group_first[g] ? 1 : 0;
    }
    c.cp[g] = rank;
    c.cd[rank] = group_dim[g];
  }
  c.in_stride[k - 1] = 1;
  for (std::size_t a = k - 1; a-- > 0;) {
    c.in_stride[a] = c.in_stride[a + 1] * c.cd[a + 1];
  }
  for (std::size_t i = 0; i < k; ++i) {
    c.out_dims[i] = c.cd[c.cp[i]];
  }
  c.out_stride[k - 1] = 1;
  for (std::size_t i = k - 1; i-- > 0;) {
    c.out_stride[i] = c.out_stride[i + 1] * c.out_dims[i + 1];
  }
  return c;
}

/// The innermost axis stays innermost: copies runs of contiguous elements.
template <class T, std::size_t R>
void transpose_runs(T const* in, T* out, std::int64_t n, CoalescedTranspose<R> const& c) {
  std::size_t const k = c.k;
  std::int64_t const run = c.cd[k - 1];
  std::int64_t const rows = n / run;
  backend::cpu::parallel_for(rows, std::max<std::int64_t>(1, parallel_grain / run),
                             [&](std::int64_t s, std::int64_t e) {
                               std::array<std::int64_t, R + 1> idx{};
                               std::int64_t rest = s;
                               std::int64_t in_off = 0;
                               for (std::size_t i = k - 1; i-- > 0;) {
                                 idx[i] = rest % c.out_dims[i];
                                 rest /= c.out_dims[i];
                                 in_off += idx[i] * c.in_stride[c.cp[i]];
                               }
                               for (std::int64_t r = s; r < e; ++r) {
                                 std::copy_n(in + in_off, run, out + r * run);
                                 for (std::size_t i = k - 1; i-- > 0;) {
                                   in_off += c.in_stride[c.cp[i]];
                                   if (++idx[i] < c.out_dims[i]) {
                                     break;
                                   }
                                   in_off -= idx[i] * c.in_stride[c.cp[i]];
                                   idx[i] = 0;
                                 }
                               }
                             });
}

/// The innermost axis moves: transposes the planes (input axis `a`, innermost in the output) x
/// (input axis k-1, innermost in the input) tile by tile, for every index of the other axes.
template <class T, std::size_t R>
void transpose_planes(T const* in, T* out, std::int64_t n, CoalescedTranspose<R> const& c) {
  std::size_t const k = c.k;
  std::size_t const a = c.cp[k - 1];
  std::size_t pos_c = 0;  // output position of the input's innermost axis
  for (std::size_t i = 0; i < k; ++i) {
    if (c.cp[i] == k - 1) {
      pos_c = i;
    }
  }
  std::int64_t const rows = c.cd[a];
  std::int64_t const cols = c.cd[k - 1];
  std::int64_t const in_row_stride = c.in_stride[a];
  std::int64_t const out_col_stride = c.out_stride[pos_c];
  // The other axes, by output position.
  std::array<std::size_t, R + 1> other{};
  std::size_t num_other = 0;
  for (std::size_t i = 0; i + 1 < k; ++i) {
    if (i != pos_c) {
      other[num_other++] = i;
    }
  }
  // Work items are super-blocks of transpose_block_span x transpose_block_span elements of one
  // plane, walked tile by tile: the pages they read and write stay within the TLB.
  std::int64_t const row_blocks = (rows + transpose_block_span - 1) / transpose_block_span;
  std::int64_t const col_blocks = (cols + transpose_block_span - 1) / transpose_block_span;
  std::int64_t const blocks = row_blocks * col_blocks;
  std::int64_t const items = (n / (rows * cols)) * blocks;
  std::int64_t const per_item =
      std::min(rows, transpose_block_span) * std::min(cols, transpose_block_span);
  backend::cpu::parallel_for(
      items, std::max<std::int64_t>(1, parallel_grain / per_item),
      [&](std::int64_t s, std::int64_t e) {
        std::int64_t current_plane = -1;
        std::int64_t in_base = 0;
        std::int64_t out_base = 0;
        for (std::int64_t item = s; item < e; ++item) {
          std::int64_t const plane = item / blocks;
          if (plane != current_plane) {
            current_plane = plane;
            in_base = 0;
            out_base = 0;
            std::int64_t rest = plane;
            for (std::size_t j = num_other; j-- > 0;) {
              std::size_t const i = other[j];
              std::int64_t const idx = rest % c.out_dims[i];
              rest /= c.out_dims[i];
              in_base += idx * c.in_stride[c.cp[i]];
              out_base += idx * c.out_stride[i];
            }
          }
          std::int64_t const block = item % blocks;
          std::int64_t const rb0 = (block / col_blocks) * transpose_block_span;
          std::int64_t const rb1 = std::min(rows, rb0 + transpose_block_span);
          std::int64_t const cb0 = (block % col_blocks) * transpose_block_span;
          std::int64_t const cb1 = std::min(cols, cb0 + transpose_block_span);
          for (std::int64_t c0 = cb0; c0 < cb1; c0 += transpose_tile) {
            for (std::int64_t r0 = rb0; r0 < rb1; r0 += transpose_tile) {
              transpose_block(in + in_base, in_row_stride, out + out_base, out_col_stride, r0,
                              std::min(rb1, r0 + transpose_tile), c0,
                              std::min(cb1, c0 + transpose_tile));
            }
          }
        }
      });
}

/// out = x with axes permuted: output axis i is input axis perm[i] (perm already validated).
template <class T, std::size_t R>
void transpose_kernel(T const* in, std::array<std::int64_t, R> const& dims,
                      std::array<std::size_t, R> const& perm, T* out) {
  std::int64_t const n = product(dims);
  if (n == 0) {
    return;
  }
  auto const c = coalesce_transpose(dims, perm);
  if (c.k <= 1) {
    std::copy_n(in, n, out);
  } else if (c.cp[c.k - 1] == c.k - 1) {
    transpose_runs(in, out, n, c);
  } else {
    transpose_planes(in, out, n, c);
  }
}

}  // namespace detail

namespace ops {

/// Permutes axes: output axis i is input axis perm[i] (TensorFlow op "Transpose"). Negative
/// entries count from the end.
template <std::size_t R>
struct Transpose {
  static constexpr std::string_view name = "Transpose";
  static constexpr std::string_view type_attr = "T";   ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "y";  ///< TensorFlow's output argument
  std::array<int, R> perm{};

  /// TensorFlow's attributes: the type of the `perm` input.
  [[nodiscard]] OpAttributes attributes() const { return {{"Tperm", DType::int32}}; }
  /// TensorFlow's `perm` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const { return {{"perm", detail::int32_vector(perm)}}; }

  /// The permutation with negative entries resolved; throws unless it is one.
  [[nodiscard]] std::array<std::size_t, R> resolved() const {
    std::array<std::size_t, R> p{};
    std::array<bool, R> seen{};
    for (std::size_t i = 0; i < R; ++i) {
      int const a = perm[i];
      int const rank = static_cast<int>(R);
      std::size_t const at = static_cast<std::size_t>(a < 0 ? a + rank : a);
      if (a < -rank || a >= rank || seen[at]) {
        std::string text = "(";
        for (std::size_t j = 0; j < R; ++j) {
          text += (j > 0 ? ", " : "") + std::to_string(perm[j]);
        }
        throw invalid_argument("Transpose: perm " + text +
                               ") is not a permutation of the axes of a rank-" + std::to_string(R) +
                               " tensor");
      }
      seen[at] = true;
      p[i] = at;
    }
    return p;
  }

  template <class T>
  OutSpec<T, R> infer(Tensor<T, R> const& x) const {
    auto const p = resolved();
    OutSpec<T, R> spec{};
    for (std::size_t i = 0; i < R; ++i) {
      spec.dims[i] = x.dims()[p[i]];
    }
    return spec;
  }
  template <class T>
  void compute(Tensor<T, R>& out, Tensor<T, R> const& x) const {
    detail::transpose_kernel(x.data(), x.dims(), resolved(),
                             detail::tensor_access::mutable_data(out));
  }
  template <class T>
  Tensor<T, R> gradient(Tensor<T, R> const& dy, Tensor<T, R> const&, Tensor<T, R> const&) const {
    auto const p = resolved();
    Transpose inverse;
    for (std::size_t i = 0; i < R; ++i) {
      inverse.perm[p[i]] = static_cast<int>(i);
    }
    return detail::execute(inverse, dy);
  }
};

}  // namespace ops

/// Reverses the order of the axes (TensorFlow: `tf.transpose(x)`); a matrix's transpose.
///
///     auto t = tf::transpose(tf::constant<float>({{1, 2, 3}, {4, 5, 6}}));  // shape (3, 2)
template <tensor_like X>
tensor_type_of<X> transpose(X const& x) {
  constexpr std::size_t R = rank_of<X>;
  ops::Transpose<R> op;
  for (std::size_t i = 0; i < R; ++i) {
    op.perm[i] = static_cast<int>(R - 1 - i);
  }
  return detail::execute(op, detail::as_tensor(x));
}

/// Permutes the axes: output axis i is input axis perm[i], negative entries counting from the
/// end (TensorFlow: `tf.transpose(x, perm)`). Throws invalid_argument unless perm is a
/// permutation.
///
///     auto y = tf::transpose(x, {0, 2, 1});  // swaps the last two axes of a rank-3 tensor
template <tensor_like X, std::size_t N>
tensor_type_of<X> transpose(X const& x, int const (&perm)[N]) {
  static_assert(N == rank_of<X>,
                "tf::transpose(x, perm): perm must name every axis of x once (its length must "
                "equal x's rank)");
  ops::Transpose<rank_of<X>> op;
  std::copy(perm, perm + N, op.perm.begin());
  return detail::execute(op, detail::as_tensor(x));
}
/// The same with the permutation as a `std::array`.
template <tensor_like X>
tensor_type_of<X> transpose(X const& x, std::array<int, rank_of<X>> const& perm) {
  return detail::execute(ops::Transpose<rank_of<X>>{perm}, detail::as_tensor(x));
}

TAPEFLOW_END_NAMESPACE
