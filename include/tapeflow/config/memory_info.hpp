// tf::config::experimental::get_memory_info / reset_memory_stats: what a logical device's
// allocator has handed out.
//
// TensorFlow reports allocator statistics for GPUs and zeros for CPUs; tapeflow accounts every
// logical device's tensors in its backend instance (Note [Backends]), so a logical CPU reports
// its real figures too.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/config/context.hpp>
#include <tapeflow/config/device_spec.hpp>
#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace config {

/// Bytes a logical device holds now (`current`) and at most since its last reset (`peak`).
using MemoryInfo = backend::MemoryInfo;

namespace detail_context {
// The logical device `device` ("GPU:0", "/device:CPU:1", ...) names exactly; TensorFlow's
// errors for a name without type and index, and for no such device.
inline detail::devices::DeviceId memory_stats_device(std::string_view device) {
  std::optional<DeviceSpec> spec;
  try {
    spec = DeviceSpec::from_string(device);
  } catch (const invalid_argument&) {
  }
  if (!spec || !spec->device_type || !spec->device_index) {
    throw invalid_argument("Failed parsing device name: '" + std::string(device) +
                           "'. Note a valid device string should at least contain a device type "
                           "and a device index, like \"GPU:0\".");
  }
  for (const auto& info : logical_device_infos()) {
    if (info.device.device_type == *spec->device_type && info.index == *spec->device_index) {
      return static_cast<detail::devices::DeviceId>(info.id);
    }
  }
  throw invalid_argument("No matching devices found for '" + std::string(device) + "'");
}
}  // namespace detail_context

namespace experimental {

/// The memory `device`'s tensors use ({current, peak} in bytes). Initializes the runtime.
inline MemoryInfo get_memory_info(std::string_view device) {
  auto const id = detail_context::memory_stats_device(device);
  if (auto* memory = detail::devices::device_memory(id)) {
    return memory->memory_info();
  }
  return detail::devices::host(id).memory_info();
}

/// Restarts `device`'s peak at its current use.
inline void reset_memory_stats(std::string_view device) {
  auto const id = detail_context::memory_stats_device(device);
  if (auto* memory = detail::devices::device_memory(id)) {
    memory->reset_peak();
    return;
  }
  detail::devices::host(id).reset_peak();
}

}  // namespace experimental
}  // namespace config
TAPEFLOW_END_NAMESPACE
