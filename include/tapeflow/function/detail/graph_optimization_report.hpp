// IWYU pragma: private, include <tapeflow/function/function.hpp>
// What the graph passes did to a traced function: apart from the passes, so that
// ConcreteFunction's header does not parse them (function/detail/concrete_function_impl.hpp).
#pragma once

#include <cstdint>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// What the graph passes (tf::config::optimizer) did to one traced function, in nodes.
struct GraphOptimizationReport {
  std::int64_t pruned = 0;                 ///< nodes no output needed
  std::int64_t constants_folded = 0;       ///< nodes evaluated at trace time
  std::int64_t common_subexpressions = 0;  ///< nodes that repeated an earlier node
  std::int64_t simplified = 0;             ///< x * 1, cast to the same dtype, ...
  std::int64_t identities_removed = 0;     ///< Identity nodes read through
  std::int64_t paddings_folded = 0;        ///< Pad nodes their convolutions took in
  std::int64_t crops_folded = 0;           ///< Slice nodes (Pad's gradient) input gradients took in
  /// Whether any pass changed the graph.
  [[nodiscard]] bool changed() const noexcept {
    return pruned + constants_folded + common_subexpressions + simplified + identities_removed +
               paddings_folded + crops_folded >
           0;
  }
};

TAPEFLOW_END_NAMESPACE
