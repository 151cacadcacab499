// Shape helpers every kernel family shares, without Eigen: NumPy broadcasting of shapes and
// the size below which a kernel stays on the calling thread. Ops that only move bytes (reshape,
// transpose, concat, gather, ...) include this instead of ops/detail/elementwise.hpp.
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// Elements below which an op runs on the calling thread (waking workers costs more).
inline constexpr std::int64_t parallel_grain = 32 * 1024;

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

/// Dims of rank at most max_rank, right-aligned and padded with 1s (rank-independent code).
struct BroadcastDims {
  std::array<std::int64_t, max_rank> d{};
  std::size_t rank = 0;
};

}  // namespace detail
TAPEFLOW_END_NAMESPACE
