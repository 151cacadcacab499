// The intra-op threads the current op may use: its logical device's share of the pool.
//
// Why per thread: an op runs on the thread that called it, under its device (core's
// AllocationScope sets the budget for ops on logical CPUs other than CPU:0), and the pool's
// parallel_for reads it, so the pool needs to know nothing about devices.
#pragma once

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cpu {

/// Threads a parallel_for called on this thread may use, the caller's included (0: the whole
/// pool).
inline int& thread_budget() noexcept {
  thread_local int threads = 0;
  return threads;
}

}  // namespace backend::cpu
TAPEFLOW_END_NAMESPACE
