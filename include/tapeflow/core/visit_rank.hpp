// `detail::visit_rank<Min, Max>(rank, what, f)`: the one dispatch from a rank known at run time
// (an AnyTensor's, a file's) to code templated on it, within the library's one rank limit
// `max_rank` (core/shape.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

template <std::size_t R, std::size_t Max, class F>
decltype(auto) visit_rank_from(std::size_t rank, F& f) {
  if constexpr (R == Max) {
    return f.template operator()<R>();
  } else {
    if (rank == R) {
      return f.template operator()<R>();
    }
    return visit_rank_from<R + 1, Max>(rank, f);
  }
}

/// Calls `f.template operator()<R>()` with R == rank. Each rank in [Min, Max] is one more
/// instantiation of `f`, so callers name the ranges they support; a rank outside it throws
/// invalid_argument "<what>: rank N is not supported (Min to Max)". `f` returns one type for
/// every R.
template <std::size_t Min = 0, std::size_t Max = max_rank, class F>
decltype(auto) visit_rank(std::size_t rank, std::string_view what, F&& f) {
  static_assert(Min <= Max && Max <= max_rank, "visit_rank: ranks must lie in [0, max_rank]");
  if (rank < Min || rank > Max) {
    throw invalid_argument(std::string(what) + ": rank " + std::to_string(rank) +
                           " is not supported (" + std::to_string(Min) + " to " +
                           std::to_string(Max) + ")");
  }
  return visit_rank_from<Min, Max>(rank, f);
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
