// reduce_sum, reduce_mean, reduce_max, reduce_min: one op per reduction kind over any set
// of axes, with keepdims.
//
// The output rank is static, so axes come as a braced list whose length the compiler sees
// (`reduce_sum(x, {0, 1})`), and keepdims is a tag argument (`reduce_sum(x, 1, tf::keepdims)`).
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <tapeflow/backend/cpu/generic_vec.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/detail/elementwise.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/detail/forward.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>  // the gradients
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/math/compare.hpp>

#if defined(__GNUC__) || defined(__clang__)
#define TAPEFLOW_REDUCE_UNROLL _Pragma("GCC unroll 8")
#else
#define TAPEFLOW_REDUCE_UNROLL
#endif

TAPEFLOW_BEGIN_NAMESPACE

/// Tag asking a reduction to keep reduced axes with size 1 (TensorFlow: `keepdims=True`).
struct keepdims_t {};
/// The keepdims tag: `tf::reduce_sum(x, 1, tf::keepdims)` keeps reduced axes with size 1
/// (TensorFlow: `keepdims=True`).
inline constexpr keepdims_t keepdims{};

namespace detail {

// Column sums of a [rows, inner] block, `W` vectors wide, `C` independent row chains (hides
// the add latency); blocks of 256 rows are summed in registers, then added to out[j, j + W*L).
template <int W, int C, class T>
void sum_columns(const T* in, std::int64_t rows, std::int64_t inner, std::int64_t j, T* out) {
  using Ops = backend::cpu::GenericVec<T>;
  using V = typename Ops::V;
  constexpr int L = Ops::kLanes;
  constexpr std::int64_t kBlock = 256;
  V total[W];
  TAPEFLOW_REDUCE_UNROLL
  for (int w = 0; w < W; ++w) {
    total[w] = Ops::zero();
  }
  for (std::int64_t r0 = 0; r0 < rows; r0 += kBlock) {
    std::int64_t const r1 = std::min(rows, r0 + kBlock);
    V acc[C][W];
    TAPEFLOW_REDUCE_UNROLL
    for (int c = 0; c < C; ++c) {
      TAPEFLOW_REDUCE_UNROLL
      for (int w = 0; w < W; ++w) {
        acc[c][w] = Ops::zero();
      }
    }
    std::int64_t r = r0;
    for (; r + C <= r1; r += C) {
      TAPEFLOW_REDUCE_UNROLL
      for (int c = 0; c < C; ++c) {
        const T* row = in + (r + c) * inner + j;
        TAPEFLOW_REDUCE_UNROLL
        for (int w = 0; w < W; ++w) {
          acc[c][w] = Ops::add(acc[c][w], Ops::load(row + w * L));
        }
      }
    }
    for (; r < r1; ++r) {
      TAPEFLOW_REDUCE_UNROLL
      for (int w = 0; w < W; ++w) {
        acc[0][w] = Ops::add(acc[0][w], Ops::load(in + r * inner + j + w * L));
      }
    }
    TAPEFLOW_REDUCE_UNROLL
    for (int c = 1; c < C; ++c) {
      TAPEFLOW_REDUCE_UNROLL
      for (int w = 0; w < W; ++w) {
        acc[0][w] = Ops::add(acc[0][w], acc[c][w]);
      }
    }
    TAPEFLOW_REDUCE_UNROLL
    for (int w = 0; w < W; ++w) {
      total[w] = Ops::add(total[w], acc[0][w]);
    }
  }
  TAPEFLOW_REDUCE_UNROLL
  for (int w = 0; w < W; ++w) {
    Ops::store(out + j + w * L, total[w]);
  }
}

/// out[0, inner) = sum of the `rows` rows of the row-major [rows, inner] block `in`.
/// Hand-vectorized across columns: Eigen evaluates a middle-axis sum one output at a time,
/// which made the bias gradient of a conv layer (sum over N*H*W rows of C values) ~50x slower.
template <class T>
void sum_rows(const T* in, std::int64_t rows, std::int64_t inner, T* out) {
  std::int64_t j = 0;
  if constexpr (backend::cpu::kVectorizable<T>) {
    constexpr int L = backend::cpu::GenericVec<T>::kLanes;
    for (; j + 4 * L <= inner; j += 4 * L) {
      sum_columns<4, 2>(in, rows, inner, j, out);
    }
    for (; j + 2 * L <= inner; j += 2 * L) {
      sum_columns<2, 4>(in, rows, inner, j, out);
    }
    for (; j + L <= inner; j += L) {
      sum_columns<1, 8>(in, rows, inner, j, out);
    }
  }
  for (; j < inner; ++j) {
    T sum{};
    for (std::int64_t r = 0; r < rows; ++r) {
      sum = static_cast<T>(sum + in[r * inner + j]);
    }
    out[j] = sum;
  }
}

// Note [Leading-axis sums]: a sum over leading axes ([rows, inner] -> [inner], inner > 1) runs
// in blocks of leading_sum_block_rows(inner) rows, each summed by sum_rows into its own row of
// partial sums; the partial rows then add up in block order. Blocks run in parallel and results
// depend on neither thread count nor timing. A fused chain that ends in the sum
// (function/detail/executor.hpp) produces the blocks chunk by chunk through these same
// functions, so its result is bitwise the op's: a batch's mean and variance by channel, or a
// bias gradient, then never write their elementwise input out.

/// Rows per block: a multiple of 16 (the partial rows cost at most 1/16 more traffic, and a
/// block is whole 16-element units and whole rows, so a chain repeating a [inner] operand
/// chunks by blocks), and about 2K elements or more, which a fused chain's chunk holds whole.
inline std::int64_t leading_sum_block_rows(std::int64_t inner) noexcept {
  std::int64_t const rows = std::max<std::int64_t>(16, 2048 / std::max<std::int64_t>(inner, 1));
  return (rows + 15) / 16 * 16;
}

/// Partial values leading_sum_accumulate writes for `n` elements ([n / inner, inner]).
inline std::int64_t leading_sum_partials(std::int64_t n, std::int64_t inner) noexcept {
  std::int64_t const block = leading_sum_block_rows(inner) * inner;
  return (n + block - 1) / block * inner;
}

/// The partial rows of the blocks of elements [start, start + n) (`start` a multiple of the
/// block, `n` of inner), read from `in`, into their places in `partials`.
template <class T>
void leading_sum_accumulate(T* partials, const T* in, std::int64_t start, std::int64_t n,
                            std::int64_t inner) {
  std::int64_t const block = leading_sum_block_rows(inner) * inner;
  for (std::int64_t b = 0; b < n; b += block) {
    std::int64_t const len = std::min(block, n - b);
    sum_rows(in + b, len / inner, inner, partials + (start + b) / block * inner);
  }
}

/// The `inner` sums of `n` elements from their blocks' partial rows, added in block order.
template <class T>
void leading_sum_finish(T* out, const T* partials, std::int64_t n, std::int64_t inner) {
  std::int64_t const rows = leading_sum_partials(n, inner) / inner;
  if (rows == 0) {
    std::fill_n(out, inner, T{});
    return;
  }
  std::copy_n(partials, inner, out);
  for (std::int64_t r = 1; r < rows; ++r) {
    const T* p = partials + r * inner;
    for (std::int64_t k = 0; k < inner; ++k) {
      out[k] = static_cast<T>(out[k] + p[k]);
    }
  }
}

/// out[0, inner) = the sums of the `rows` rows of [rows, inner], by Note [Leading-axis sums].
template <class T>
void leading_sum(const T* in, T* out, std::int64_t rows, std::int64_t inner) {
  std::int64_t const block_rows = leading_sum_block_rows(inner);
  if (rows <= block_rows) {  // one block: its partial row is the result (no allocation)
    sum_rows(in, rows, inner, out);
    return;
  }
  std::int64_t const n = rows * inner;
  std::vector<T> partials(static_cast<std::size_t>(leading_sum_partials(n, inner)));
  std::int64_t const blocks = (rows + block_rows - 1) / block_rows;
  std::int64_t const block = block_rows * inner;
  backend::cpu::parallel_for(blocks, std::max<std::int64_t>(1, parallel_grain / block),
                             [&](std::int64_t b0, std::int64_t b1) {
                               std::int64_t const start = b0 * block;
                               leading_sum_accumulate(partials.data(), in + start, start,
                                                      std::min(n, b1 * block) - start, inner);
                             });
  leading_sum_finish(out, partials.data(), n, inner);
}

/// [outer, red, inner] -> [outer, inner] sums with inner > 1: one slice by Note [Leading-axis
/// sums]; else whole outer slices per thread, or, when there are fewer slices than threads, each
/// slice's rows split into one fixed run per thread whose partial sums are added in order (results
/// do not depend on thread timing).
template <class T>
void sum_middle(const T* in, T* out, std::int64_t outer, std::int64_t red, std::int64_t inner) {
  if (outer == 1) {
    leading_sum(in, out, red, inner);
    return;
  }
  std::int64_t const per_outer = red * inner;
  int const threads = backend::cpu::ThreadPool::global().num_threads();
  if (outer >= threads || per_outer < 2 * parallel_grain) {
    backend::cpu::parallel_for(
        outer, std::max<std::int64_t>(1, parallel_grain / std::max<std::int64_t>(per_outer, 1)),
        [&](std::int64_t s, std::int64_t e) {
          for (std::int64_t o = s; o < e; ++o) {
            sum_rows(in + o * per_outer, red, inner, out + o * inner);
          }
        });
    return;
  }
  std::int64_t const runs =
      std::min<std::int64_t>(threads, std::max<std::int64_t>(1, per_outer / parallel_grain));
  std::vector<T> partial(static_cast<std::size_t>((runs - 1) * inner));
  for (std::int64_t o = 0; o < outer; ++o) {
    const T* src = in + o * per_outer;
    T* dst = out + o * inner;
    backend::cpu::parallel_for(runs, 1, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r) {
        std::int64_t const first = red * r / runs;
        std::int64_t const last = red * (r + 1) / runs;
        sum_rows(src + first * inner, last - first, inner,
                 r == 0 ? dst : partial.data() + (r - 1) * inner);
      }
    });
    for (std::int64_t r = 1; r < runs; ++r) {
      const T* p = partial.data() + (r - 1) * inner;
      for (std::int64_t k = 0; k < inner; ++k) {
        dst[k] = static_cast<T>(dst[k] + p[k]);
      }
    }
  }
}

// Note [Full sums]: a sum of every element runs in blocks of 256, each summed as the 16
// column sums of a [16, 16] matrix (elements past the last full row add to their column);
// the blocks' columns add up in block order, then the 16 columns in order. Blocks run in
// parallel and results do not depend on thread timing. A fused chain that ends in the sum
// (function/detail/executor.hpp) produces the blocks chunk by chunk through these same
// functions, so its result is bitwise the op's.
inline constexpr std::int64_t full_sum_block = 256;
inline constexpr std::int64_t full_sum_columns = 16;

/// Partial values full_sum_accumulate writes for `n` elements.
inline std::int64_t full_sum_partials(std::int64_t n) noexcept {
  return (n + full_sum_block - 1) / full_sum_block * full_sum_columns;
}

/// The column sums of the blocks of elements [start, start + n) (`start` a multiple of the
/// block), read from `in`, into their places in `partials`.
template <class T>
void full_sum_accumulate(T* partials, const T* in, std::int64_t start, std::int64_t n) {
  for (std::int64_t b = 0; b < n; b += full_sum_block) {
    std::int64_t const len = std::min(full_sum_block, n - b);
    T* columns = partials + (start + b) / full_sum_block * full_sum_columns;
    std::int64_t const rows = len / full_sum_columns;
    if (rows > 0) {
      sum_rows(in + b, rows, full_sum_columns, columns);
    } else {
      std::fill_n(columns, full_sum_columns, T{});
    }
    for (std::int64_t e = rows * full_sum_columns; e < len; ++e) {
      T& column = columns[e % full_sum_columns];
      column = static_cast<T>(column + in[b + e]);
    }
  }
}

/// The sum of `n` elements from their blocks' column sums.
template <class T>
T full_sum_finish(const T* partials, std::int64_t n) {
  std::array<T, full_sum_columns> columns{};
  for (std::int64_t p = 0; p < full_sum_partials(n); p += full_sum_columns) {
    for (std::int64_t c = 0; c < full_sum_columns; ++c) {
      columns[static_cast<std::size_t>(c)] =
          static_cast<T>(columns[static_cast<std::size_t>(c)] + partials[p + c]);
    }
  }
  T sum{};
  for (T column : columns) {
    sum = static_cast<T>(sum + column);
  }
  return sum;
}

/// The sum of the `n` elements of `in`, by Note [Full sums].
template <class T>
T full_sum(const T* in, std::int64_t n) {
  if (n <= full_sum_block) {  // one block: no allocation (a loss's mean over a batch)
    std::array<T, full_sum_columns> columns;
    full_sum_accumulate(columns.data(), in, 0, n);
    return full_sum_finish(columns.data(), n);
  }
  std::vector<T> partials(static_cast<std::size_t>(full_sum_partials(n)));
  std::int64_t const blocks = (n + full_sum_block - 1) / full_sum_block;
  backend::cpu::parallel_for(blocks, std::max<std::int64_t>(1, parallel_grain / full_sum_block),
                             [&](std::int64_t b0, std::int64_t b1) {
                               std::int64_t const start = b0 * full_sum_block;
                               full_sum_accumulate(partials.data(), in + start, start,
                                                   std::min(n, b1 * full_sum_block) - start);
                             });
  return full_sum_finish(partials.data(), n);
}

/// [rows, red, inner] -> [rows, inner], single-threaded. Defined with Eigen in
/// ops/detail/reduce_kernels.hpp (compiled in tapeflow::instantiations under
/// TAPEFLOW_PRECOMPILED).
template <ops::ReduceKind Kind, class T>
void reduce_middle_run(const T* in, T* out, std::int64_t rows, std::int64_t red,
                       std::int64_t inner);

// [outer, red, inner] -> [outer, inner]. A free function of (kind, dtype) only, so every
// rank of a reduction shares one Eigen kernel.
template <ops::ReduceKind Kind, class T>
void reduce3(const T* in, T* out, std::int64_t outer, std::int64_t red, std::int64_t inner) {
  if constexpr (Kind == ops::ReduceKind::sum || Kind == ops::ReduceKind::mean) {
    if (inner > 1) {
      sum_middle(in, out, outer, red, inner);
      return;
    }
  }
  std::int64_t const per_outer = red * inner;
  backend::cpu::parallel_for(
      outer, std::max<std::int64_t>(1, parallel_grain / std::max<std::int64_t>(per_outer, 1)),
      [&](std::int64_t s, std::int64_t e) {
        reduce_middle_run<Kind>(in + s * per_outer, out + s * inner, e - s, red, inner);
      });
}
}  // namespace detail

namespace ops {

/// Reduces `axes` of a rank-R input to rank OutRank (R - |axes|, or R with keepdims).
template <ReduceKind Kind, std::size_t OutRank>
struct Reduce {
  static constexpr std::string_view name = Kind == ReduceKind::sum    ? "Sum"
                                           : Kind == ReduceKind::mean ? "Mean"
                                           : Kind == ReduceKind::max  ? "Max"
                                                                      : "Min";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  std::array<int, max_rank> axes{};                         // normalised, sorted, unique
  std::size_t num_axes = 0;
  bool keep_dims = false;

  /// TensorFlow's attributes: keep_dims and the type of the `reduction_indices` input.
  [[nodiscard]] OpAttributes attributes() const {
    return {{"keep_dims", keep_dims}, {"Tidx", DType::int32}};
  }
  /// TensorFlow's `reduction_indices` input (the axes), held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"reduction_indices", detail::int32_vector(axes.data(), num_axes)}};
  }

  [[nodiscard]] bool reduced(std::size_t axis) const noexcept {
    return std::find(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(num_axes),
                     static_cast<int>(axis)) !=
           axes.begin() + static_cast<std::ptrdiff_t>(num_axes);
  }

  /// The input shape with reduced axes set to 1.
  template <class T, std::size_t R>
  std::array<std::int64_t, R> kept_dims(const Tensor<T, R>& x) const {
    auto d = x.dims();
    for (std::size_t i = 0; i < num_axes; ++i) {
      d[static_cast<std::size_t>(axes[i])] = 1;
    }
    return d;
  }

  template <class T, std::size_t R>
  OutSpec<T, OutRank> infer(const Tensor<T, R>& x) const {
    static_assert(numeric_element<T>,
                  "tf::reduce_*: requires a numeric tensor (not bool or string)");
    if constexpr (Kind == ReduceKind::max || Kind == ReduceKind::min) {
      for (std::size_t i = 0; i < num_axes; ++i) {
        if (x.dims()[static_cast<std::size_t>(axes[i])] == 0) {
          throw invalid_argument(std::string(name) + ": cannot reduce an empty axis of shape " +
                                 x.shape().to_string());
        }
      }
    }
    OutSpec<T, OutRank> spec{};
    std::size_t j = 0;
    for (std::size_t i = 0; i < R; ++i) {
      const bool r = reduced(i);
      if (!r || keep_dims) {
        spec.dims[j++] = r ? 1 : x.dims()[i];
      }
    }
    return spec;
  }

  /// A mean's value from its sum over `count` elements.
  template <class T>
  static T mean_of(T sum, std::int64_t count) {
    return static_cast<T>(sum / static_cast<T>(count));
  }

  /// Whether every axis of `dims` longer than 1 is reduced (Note [Full sums]).
  template <std::size_t R>
  [[nodiscard]] bool reduces_every_element(const std::array<std::int64_t, R>& dims) const {
    for (std::size_t i = 0; i < R; ++i) {
      if (!reduced(i) && dims[i] != 1) {
        return false;
      }
    }
    return true;
  }

  /// The element counts [outer, reduced, inner] of `dims` when the reduced axes are one
  /// contiguous run, else nothing (compute() then reduces the runs one after another).
  template <std::size_t R>
  [[nodiscard]] std::optional<std::array<std::int64_t, 3>> one_run(
      const std::array<std::int64_t, R>& dims) const {
    if (num_axes == 0) {
      return std::nullopt;
    }
    std::size_t const first = static_cast<std::size_t>(axes[0]);
    std::size_t const last = static_cast<std::size_t>(axes[num_axes - 1]);
    if (last - first + 1 != num_axes) {
      return std::nullopt;
    }
    std::array<std::int64_t, 3> counts{1, 1, 1};
    for (std::size_t i = 0; i < R; ++i) {
      counts[i < first ? 0 : i <= last ? 1 : 2] *= dims[i];
    }
    return counts;
  }

  /// The values of the output when this reduction of `dims` sums leading axes only ([rows,
  /// inner] -> [inner], inner > 1: nothing longer than 1 before the run, the case compute()
  /// gives Note [Leading-axis sums]), else 0.
  template <std::size_t R>
  [[nodiscard]] std::int64_t leading_inner(const std::array<std::int64_t, R>& dims) const {
    auto const run = one_run(dims);
    return run && (*run)[0] == 1 && (*run)[2] > 1 ? (*run)[2] : 0;
  }

  /// The rows of the output when this reduction of `dims` sums trailing axes only ([rows, red]
  /// -> [rows], rows > 1, red > 1: nothing longer than 1 after the run, which compute() reduces
  /// row by row), else 0.
  template <std::size_t R>
  [[nodiscard]] std::int64_t trailing_rows(const std::array<std::int64_t, R>& dims) const {
    auto const run = one_run(dims);
    return run && (*run)[0] > 1 && (*run)[1] > 1 && (*run)[2] == 1 ? (*run)[0] : 0;
  }

  /// A fused chain's chunks hold whole slices of a middle-axis sum: past this many elements
  /// they leave L1, and the chain measured slower than writing its value out (bench/RESULTS.md).
  static constexpr std::int64_t max_fused_slice = 2048;
  static_assert(max_fused_slice < 2 * detail::parallel_grain);  // sum_middle sums it whole

  /// [outer, red, columns] when this reduction of `dims` sums middle axes only (each longer
  /// than 1) in slices a fused chain takes whole (compute() sums each on its own,
  /// detail::sum_middle), else nothing.
  template <std::size_t R>
  [[nodiscard]] std::optional<std::array<std::int64_t, 3>> middle_run(
      const std::array<std::int64_t, R>& dims) const {
    auto const run = one_run(dims);
    if (run && (*run)[0] > 1 && (*run)[1] > 1 && (*run)[2] > 1 &&
        (*run)[1] * (*run)[2] <= max_fused_slice) {
      return run;
    }
    return std::nullopt;
  }

  /// A fused trailing or middle-axis reduction's output: its slices' sums as accumulated (a
  /// block's `columns` values), divided by the reduced count for a mean.
  template <class T>
  static void finish_slices(void* out, const void* partials, std::int64_t,
                            const detail::trace::GraphNode::FusedReduction& self) {
    T* const values = static_cast<T*>(out);
    std::copy_n(static_cast<const T*>(partials), self.inner, values);
    if constexpr (Kind == ReduceKind::mean) {
      for (std::int64_t k = 0; k < self.inner; ++k) {
        values[k] = mean_of(values[k], self.block / self.columns);
      }
    }
  }

  /// What a fused chain ending in this reduction of `x` calls: for a sum of every element (Note
  /// [Full sums]), of leading axes (Note [Leading-axis sums]), of trailing axes (each chunk
  /// holds whole rows, which compute()'s row kernel sums) or of middle axes (each chunk holds
  /// whole [red, columns] slices, which compute()'s slice kernel sums); sums and means only,
  /// else empty.
  template <class T, std::size_t R>
    requires(std::is_floating_point_v<T> && (Kind == ReduceKind::sum || Kind == ReduceKind::mean))
  [[nodiscard]] detail::trace::GraphNode::FusedReduction fused_reduction(
      const Tensor<T, R>& x) const {
    using Hooks = detail::trace::GraphNode::FusedReduction;
    if (reduces_every_element(x.dims())) {
      return {
          .block = detail::full_sum_block,
          .inner = 1,
          .partials = [](std::int64_t n, const Hooks&) { return detail::full_sum_partials(n); },
          .accumulate =
              [](void* partials, const void* in, std::int64_t start, std::int64_t n, const Hooks&) {
                detail::full_sum_accumulate(static_cast<T*>(partials), static_cast<const T*>(in),
                                            start, n);
              },
          .finish =
              [](void* out, const void* partials, std::int64_t n, const Hooks&) {
                T const sum = detail::full_sum_finish(static_cast<const T*>(partials), n);
                *static_cast<T*>(out) = Kind == ReduceKind::mean ? mean_of(sum, n) : sum;
              },
      };
    }
    if (std::int64_t const rows = trailing_rows(x.dims()); rows > 0) {
      return {
          .block = x.num_elements() / rows,  // a row: chunks hold whole rows
          .inner = rows,
          .partials = [](std::int64_t, const Hooks& self) { return self.inner; },
          .accumulate =
              [](void* partials, const void* in, std::int64_t start, std::int64_t n,
                 const Hooks& self) {
                detail::reduce_middle_run<Kind>(static_cast<const T*>(in),
                                                static_cast<T*>(partials) + start / self.block,
                                                n / self.block, self.block, 1);
              },
          .finish = &finish_slices<T>,
      };
    }
    if (auto const run = middle_run(x.dims())) {
      return {
          .block = (*run)[1] * (*run)[2],  // a [red, columns] slice: chunks hold whole slices
          .inner = (*run)[0] * (*run)[2],
          .columns = (*run)[2],
          .partials = [](std::int64_t, const Hooks& self) { return self.inner; },
          .accumulate =
              [](void* partials, const void* in, std::int64_t start, std::int64_t n,
                 const Hooks& self) {
                T* const sums = static_cast<T*>(partials) + start / self.block * self.columns;
                for (std::int64_t s = 0; s < n / self.block; ++s) {
                  detail::sum_rows(static_cast<const T*>(in) + s * self.block,
                                   self.block / self.columns, self.columns,
                                   sums + s * self.columns);
                }
              },
          .finish = &finish_slices<T>,
      };
    }
    std::int64_t const inner = leading_inner(x.dims());
    if (inner == 0) {
      return {};
    }
    return {
        .block = detail::leading_sum_block_rows(inner) * inner,
        .inner = inner,
        .partials = [](std::int64_t n,
                       const Hooks& self) { return detail::leading_sum_partials(n, self.inner); },
        .accumulate =
            [](void* partials, const void* in, std::int64_t start, std::int64_t n,
               const Hooks& self) {
              detail::leading_sum_accumulate(static_cast<T*>(partials), static_cast<const T*>(in),
                                             start, n, self.inner);
            },
        .finish =
            [](void* out, const void* partials, std::int64_t n, const Hooks& self) {
              T* const sums = static_cast<T*>(out);
              std::int64_t const columns = self.inner;
              detail::leading_sum_finish(sums, static_cast<const T*>(partials), n, columns);
              if constexpr (Kind == ReduceKind::mean) {
                for (std::int64_t k = 0; k < columns; ++k) {
                  sums[k] = mean_of(sums[k], n / columns);
                }
              }
            },
    };
  }

  template <class T, std::size_t R>
  void compute(Tensor<T, OutRank>& out, const Tensor<T, R>& x) const {
    if constexpr (std::is_floating_point_v<T> &&
                  (Kind == ReduceKind::sum || Kind == ReduceKind::mean)) {
      if (reduces_every_element(x.dims()) && x.num_elements() > 0) {
        T const sum = detail::full_sum(x.data(), x.num_elements());
        detail::tensor_access::mutable_data(out)[0] =
            Kind == ReduceKind::mean ? mean_of(sum, x.num_elements()) : sum;
        return;
      }
    }
    // Reduce maximal runs of adjacent reduced axes one at a time, as [outer, reduce, inner].
    std::array<std::int64_t, R> dims = x.dims();
    std::vector<T> scratch;
    std::vector<T> scratch2;
    const T* src = x.data();
    std::int64_t total = x.num_elements();
    std::int64_t count = 1;
    std::size_t i = R;
    bool any = false;
    while (i > 0) {
      --i;
      if (!reduced(i)) {
        continue;
      }
      std::size_t first = i;
      while (first > 0 && reduced(first - 1)) {
        --first;
      }
      std::int64_t outer = 1;
      std::int64_t red = 1;
      std::int64_t inner = 1;
      for (std::size_t a = 0; a < first; ++a) {
        outer *= dims[a];
      }
      for (std::size_t a = first; a <= i; ++a) {
        red *= dims[a];
        dims[a] = 1;
      }
      for (std::size_t a = i + 1; a < R; ++a) {
        inner *= dims[a];
      }
      count *= red;
      scratch2.resize(static_cast<std::size_t>(outer * inner));
      detail::reduce3<Kind>(src, scratch2.data(), outer, red, inner);
      std::swap(scratch, scratch2);
      src = scratch.data();
      total = outer * inner;
      any = true;
      i = first;
    }
    T* o = detail::tensor_access::mutable_data(out);
    if (!any) {
      std::copy_n(x.data(), total, o);
    } else {
      std::copy_n(src, total, o);
    }
    if constexpr (Kind == ReduceKind::mean) {
      if (count > 0) {
        for (std::int64_t k = 0; k < total; ++k) {
          o[k] = mean_of(o[k], count);
        }
      } else {
        std::fill_n(o, total, std::numeric_limits<T>::quiet_NaN());
      }
    }
  }

  template <class T, std::size_t R>
  auto gradient(const Tensor<T, OutRank>& dy, const Tensor<T, OutRank>& y,
                const Tensor<T, R>& x) const {
    // Every input element gets the gradient of the output element it reduced into.
    const auto kept = kept_dims(x);
    auto dy_kept = detail::execute(Reshape<R>{kept}, dy);
    if constexpr (Kind == ReduceKind::sum) {
      return dy_kept + zeros_like(x);
    } else if constexpr (Kind == ReduceKind::mean) {
      std::int64_t const n = x.num_elements() / std::max<std::int64_t>(1, y.num_elements());
      return dy_kept / static_cast<T>(std::max<std::int64_t>(n, 1)) + zeros_like(x);
    } else {
      // max/min: split the gradient evenly between the elements equal to the extremum.
      auto y_kept = detail::execute(Reshape<R>{kept}, y);
      auto mask = cast<T>(equal(x, y_kept));
      Reduce<ReduceKind::sum, OutRank> count_ties;
      count_ties.axes = axes;
      count_ties.num_axes = num_axes;
      count_ties.keep_dims = keep_dims;
      auto ties = detail::execute(Reshape<R>{kept}, detail::execute(count_ties, mask));
      return mask * (dy_kept / ties);
    }
  }
};

}  // namespace ops

namespace detail {
template <ops::ReduceKind Kind, std::size_t OutRank, std::size_t R>
ops::Reduce<Kind, OutRank> make_reduce(std::string_view fn, const int* axes, std::size_t n,
                                       bool keep) {
  ops::Reduce<Kind, OutRank> op;
  op.keep_dims = keep;
  std::array<int, max_rank> norm{};
  for (std::size_t i = 0; i < n; ++i) {
    int a = axes[i];
    if (a < -static_cast<int>(R) || a >= static_cast<int>(R)) {
      throw invalid_argument(std::string(fn) + ": axis " + std::to_string(a) +
                             " is out of range for a tensor of rank " + std::to_string(R));
    }
    norm[i] = a < 0 ? a + static_cast<int>(R) : a;
  }
  std::sort(norm.begin(), norm.begin() + static_cast<std::ptrdiff_t>(n));
  for (std::size_t i = 1; i < n; ++i) {
    if (norm[i] == norm[i - 1]) {
      throw invalid_argument(std::string(fn) + ": axis " + std::to_string(norm[i]) +
                             " is listed twice");
    }
  }
  op.axes = norm;
  op.num_axes = n;
  return op;
}

template <ops::ReduceKind Kind, class X>
auto reduce_all(const X& x) {
  constexpr std::size_t R = rank_of<X>;
  std::array<int, max_rank> all{};
  for (std::size_t i = 0; i < R; ++i) {
    all[i] = static_cast<int>(i);
  }
  return execute(make_reduce<Kind, 0, R>("reduce", all.data(), R, false), as_tensor(x));
}
template <ops::ReduceKind Kind, class X, std::size_t N>
auto reduce_axes(const X& x, const int (&axes)[N]) {
  constexpr std::size_t R = rank_of<X>;
  static_assert(N <= R, "tf::reduce_*(x, axes): more axes than the tensor's rank");
  return execute(make_reduce<Kind, R - N, R>("reduce", axes, N, false), as_tensor(x));
}
template <ops::ReduceKind Kind, class X, std::size_t N>
auto reduce_axes_keep(const X& x, const int (&axes)[N]) {
  constexpr std::size_t R = rank_of<X>;
  static_assert(N <= R, "tf::reduce_*(x, axes, keepdims): more axes than the tensor's rank");
  return execute(make_reduce<Kind, R, R>("reduce", axes, N, true), as_tensor(x));
}
}  // namespace detail

// Each reduction comes in four forms (TensorFlow: `tf.reduce_sum(x, axis, keepdims)`):
//   reduce_sum(x)                  all axes -> rank 0
//   reduce_sum(x, 1)               one axis -> rank R-1
//   reduce_sum(x, {0, 1})          listed axes -> rank R-N
//   reduce_sum(x, {0, 1}, tf::keepdims)   -> rank R, reduced axes of size 1
// Axes may be negative; a repeated or out-of-range axis throws invalid_argument. The one-axis
// forms take any integral type as a template parameter, so a braced `{1}` (which cannot deduce
// it) means the list form: with a plain `int` Clang finds `int` and `const int(&)[1]` equally
// good for `{1}` and calls the call ambiguous.
#define TAPEFLOW_DEFINE_REDUCTION(fn, kind)                                      \
  template <tensor_like X>                                                       \
  Tensor<value_type_of<X>, 0> fn(X const& x) {                                   \
    return detail::reduce_all<ops::ReduceKind::kind>(x);                         \
  }                                                                              \
  template <tensor_like X, std::integral Axis>                                   \
    requires(rank_of<X> >= 1)                                                    \
  Tensor<value_type_of<X>, rank_of<X> - 1> fn(X const& x, Axis axis) {           \
    int const axes[1] = {static_cast<int>(axis)};                                \
    return detail::reduce_axes<ops::ReduceKind::kind>(x, axes);                  \
  }                                                                              \
  template <tensor_like X, std::size_t N>                                        \
  Tensor<value_type_of<X>, rank_of<X> - N> fn(X const& x, int const(&axes)[N]) { \
    return detail::reduce_axes<ops::ReduceKind::kind>(x, axes);                  \
  }                                                                              \
  template <tensor_like X, std::integral Axis>                                   \
  tensor_type_of<X> fn(X const& x, Axis axis, keepdims_t) {                      \
    int const axes[1] = {static_cast<int>(axis)};                                \
    return detail::reduce_axes_keep<ops::ReduceKind::kind>(x, axes);             \
  }                                                                              \
  template <tensor_like X, std::size_t N>                                        \
  tensor_type_of<X> fn(X const& x, int const(&axes)[N], keepdims_t) {            \
    return detail::reduce_axes_keep<ops::ReduceKind::kind>(x, axes);             \
  }

/// Sum over axes (TensorFlow: `tf.reduce_sum`).
TAPEFLOW_DEFINE_REDUCTION(reduce_sum, sum)
/// Mean over axes (TensorFlow: `tf.reduce_mean`); integer means truncate as TensorFlow's do.
TAPEFLOW_DEFINE_REDUCTION(reduce_mean, mean)
/// Maximum over axes (TensorFlow: `tf.reduce_max`); the gradient splits among ties.
TAPEFLOW_DEFINE_REDUCTION(reduce_max, max)
/// Minimum over axes (TensorFlow: `tf.reduce_min`).
TAPEFLOW_DEFINE_REDUCTION(reduce_min, min)

#undef TAPEFLOW_DEFINE_REDUCTION

TAPEFLOW_END_NAMESPACE

#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/ops/detail/reduce_kernels.hpp>
#endif

#undef TAPEFLOW_REDUCE_UNROLL
