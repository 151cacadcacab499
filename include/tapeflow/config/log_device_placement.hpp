// tf::debugging::set_log_device_placement: print where each eager op runs, as TensorFlow
// prints it ("Executing op MatMul in device /job:localhost/replica:0/task:0/device:GPU:0"),
// to find ops that fall back to the CPU.
#pragma once

#include <atomic>

#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace debugging {

/// Prints each op's device on stderr as the op is placed, while on (TensorFlow:
/// `tf.debugging.set_log_device_placement(True)`).
inline void set_log_device_placement(bool enabled) {
  detail::devices::log_placement.store(enabled, std::memory_order_relaxed);
}

/// Whether placements are printed.
[[nodiscard]] inline bool get_log_device_placement() {
  return detail::devices::log_placement.load(std::memory_order_relaxed);
}

}  // namespace debugging
TAPEFLOW_END_NAMESPACE
