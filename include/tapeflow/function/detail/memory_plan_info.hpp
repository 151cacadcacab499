// IWYU pragma: private, include <tapeflow/function/function.hpp>
// What a function's memory plan holds: apart from the plan, so that ConcreteFunction's header
// does not parse it (function/detail/concrete_function_impl.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// What a function's memory plan holds (ConcreteFunction::memory_plan).
struct MemoryPlanInfo {
  /// Whether later calls place their buffers in a planned block.
  bool planned = false;
  /// The block's bytes, and how many buffers of a call it holds.
  std::size_t block_bytes = 0;
  std::size_t placed_buffers = 0;
  /// The most bytes of planned buffers alive at once in the recorded call: the least any
  /// block could be.
  std::size_t live_bytes_peak = 0;
  /// Buffers of a call that outlive it (outputs, variables' new values): from the heap.
  std::size_t heap_buffers = 0;
  /// Calls that allocated otherwise than planned (data-dependent shapes), and whether that
  /// turned planning off.
  std::int64_t diverged_calls = 0;
  bool off = false;
};

}  // namespace detail
TAPEFLOW_END_NAMESPACE
