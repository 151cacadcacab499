// tf::config: the devices a process has and how it uses them (TensorFlow: `tf.config`).
//
// Names, rules and messages are TensorFlow's: a bad device or configuration is invalid_argument
// (TensorFlow's ValueError); changing a setting after the runtime initialized is
// failed_precondition (its RuntimeError), except re-applying the identical setting, which is
// accepted silently. docs/guide/config.md walks through them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/config/context.hpp>
#include <tapeflow/config/devices.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace config {

/// The machine's devices of `device_type` ("CPU", "GPU"; empty: all). GPUs come from a linked
/// GPU backend (tapeflow::cuda); without one, or without a driver, the list is empty.
inline std::vector<PhysicalDevice> list_physical_devices(std::string_view device_type = {}) {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  ctx.discover();
  std::vector<PhysicalDevice> out;
  for (const auto& device : ctx.physical) {
    if (device_type.empty() || device.device_type == device_type) {
      out.push_back(device);
    }
  }
  return out;
}

/// The devices this process may use (all of them unless set_visible_devices narrowed them).
inline std::vector<PhysicalDevice> get_visible_devices(std::string_view device_type = {}) {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  ctx.discover();
  std::vector<PhysicalDevice> out;
  for (const auto& device : ctx.visible) {
    if (device_type.empty() || device.device_type == device_type) {
      out.push_back(device);
    }
  }
  return out;
}

/// Restricts the devices of `device_type` (empty: of every type) to `devices`; the rest stay
/// as they are. Every device must be one of list_physical_devices(device_type).
inline void set_visible_devices(const std::vector<PhysicalDevice>& devices,
                                std::string_view device_type = {}) {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  ctx.discover();
  for (const auto& device : devices) {
    ctx.index_of(device);
    if (!device_type.empty() && device.device_type != device_type) {
      throw invalid_argument("Unrecognized device: " + detail_context::Context::repr(device));
    }
  }
  std::vector<PhysicalDevice> visible;
  if (!device_type.empty()) {
    for (const auto& device : ctx.visible) {
      if (device.device_type != device_type) {
        visible.push_back(device);
      }
    }
  }
  visible.insert(visible.end(), devices.begin(), devices.end());
  if (visible == ctx.visible) {
    return;
  }
  if (ctx.is_initialized()) {
    throw failed_precondition("Visible devices cannot be modified after being initialized");
  }
  ctx.visible = std::move(visible);
}
/// Splits `device` into one logical device per configuration. GPUs need a memory_limit on
/// each; CPUs take none (several logical CPUs are how multi-device code is tested without
/// GPUs).
inline void set_logical_device_configuration(
    const PhysicalDevice& device, const std::vector<LogicalDeviceConfiguration>& logical_devices) {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  ctx.discover();
  ctx.index_of(device);
  if (device.device_type == "CPU") {
    for (const auto& cfg : logical_devices) {
      if (cfg.memory_limit) {
        throw invalid_argument(
            "Setting memory limit on CPU virtual devices is currently not supported");
      }
      if (cfg.experimental_priority) {
        throw invalid_argument(
            "Setting experimental_priority on CPU virtual devices is currently not supported");
      }
      if (cfg.experimental_device_ordinal) {
        throw invalid_argument(
            "Setting experimental_device_ordinal on CPU virtual devices is currently not "
            "supported");
      }
    }
  } else if (device.device_type == "GPU") {
    for (const auto& cfg : logical_devices) {
      if (!cfg.memory_limit) {
        throw invalid_argument("Setting memory limit is required for GPU virtual devices");
      }
      if (*cfg.memory_limit <= 0) {
        throw invalid_argument("memory_limit must be positive (MiB), got " +
                               std::to_string(*cfg.memory_limit) + " for " + device.name);
      }
    }
  } else {
    throw invalid_argument("Virtual devices are not supported for " + device.device_type);
  }
  if (logical_devices.empty()) {
    throw invalid_argument("set_logical_device_configuration: " + device.name +
                           " needs at least one LogicalDeviceConfiguration");
  }
  auto const known = ctx.virtual_devices.find(device.name);
  if (known != ctx.virtual_devices.end() && known->second == logical_devices) {
    return;
  }
  if (ctx.is_initialized()) {
    throw failed_precondition("Virtual devices cannot be modified after being initialized");
  }
  if (ctx.memory_growth.count(device.name) != 0 && ctx.memory_growth.at(device.name)) {
    throw invalid_argument("Cannot set virtual device configuration on " + device.name +
                           " when memory growth is enabled");
  }
  ctx.virtual_devices[device.name] = logical_devices;
}

/// The configurations set for `device`; empty when none was.
inline std::vector<LogicalDeviceConfiguration> get_logical_device_configuration(
    const PhysicalDevice& device) {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  ctx.discover();
  ctx.index_of(device);
  auto const known = ctx.virtual_devices.find(device.name);
  return known == ctx.virtual_devices.end() ? std::vector<LogicalDeviceConfiguration>{}
                                            : known->second;
}

/// The devices ops are placed on, "/device:<type>:<index>". Initializes the runtime: device
/// settings are frozen from here on.
inline std::vector<LogicalDevice> list_logical_devices(std::string_view device_type = {}) {
  std::vector<LogicalDevice> out;
  for (const auto& info : detail_context::logical_device_infos()) {
    if (device_type.empty() || info.device.device_type == device_type) {
      out.push_back(info.device);
    }
  }
  return out;
}

/// Whether an op with no kernel on the requested device falls back to one that has it (the
/// CPU), or fails with invalid_argument. On by default; may change at any time.
inline void set_soft_device_placement(bool enabled) {
  detail::devices::table().soft_placement.store(enabled);
}
/// Whether soft placement is on (the default).
inline bool get_soft_device_placement() { return detail::devices::table().soft_placement.load(); }

namespace experimental {

/// Lets the GPU's allocator grow from little to what it needs, instead of reserving the
/// device's memory up front. GPUs only; not with logical devices configured.
inline void set_memory_growth(const PhysicalDevice& device, bool enable) {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  ctx.discover();
  ctx.index_of(device);
  if (ctx.virtual_devices.count(device.name) != 0) {
    throw invalid_argument("Cannot set memory growth on device when virtual devices configured");
  }
  if (device.device_type != "GPU") {
    throw invalid_argument("Cannot set memory growth on non-GPU and non-Pluggable devices");
  }
  if (ctx.memory_growth.at(device.name) == enable) {
    return;
  }
  if (ctx.is_initialized()) {
    throw failed_precondition("Physical devices cannot be modified after being initialized");
  }
  ctx.memory_growth[device.name] = enable;
}

/// Whether memory growth is on for `device` (a GPU; others are not_found, as TensorFlow's
/// KeyError).
inline bool get_memory_growth(const PhysicalDevice& device) {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  ctx.discover();
  ctx.index_of(device);
  auto const known = ctx.memory_growth.find(device.name);
  if (known == ctx.memory_growth.end()) {
    throw not_found(detail_context::Context::repr(device) + " has no memory growth setting");
  }
  return known->second;
}

/// TensorFlow 2.0's names for the same settings (the seeds use them).
using config::list_physical_devices;
using config::set_visible_devices;
inline void set_virtual_device_configuration(
    const PhysicalDevice& device, const std::vector<LogicalDeviceConfiguration>& logical_devices) {
  set_logical_device_configuration(device, logical_devices);
}
using VirtualDeviceConfiguration = LogicalDeviceConfiguration;

}  // namespace experimental

namespace threading {

/// Threads the CPU kernels use inside one op (0: one per hardware thread). Set it before the
/// runtime initializes; afterwards any call is failed_precondition, as in TensorFlow.
inline void set_intra_op_parallelism_threads(int num_threads) {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  if (num_threads < 0) {
    throw invalid_argument("intra_op_parallelism_threads must be >= 0, got " +
                           std::to_string(num_threads));
  }
  if (ctx.is_initialized()) {
    throw failed_precondition("Intra op parallelism cannot be modified after initialization.");
  }
  backend::cpu::ThreadPool::requested_global_threads().store(num_threads);
}
inline int get_intra_op_parallelism_threads() {
  return backend::cpu::ThreadPool::requested_global_threads().load();
}

/// Threads for running independent ops concurrently (0: the system's choice). Recorded and
/// reported as TensorFlow does; tapeflow's executors run one op at a time, so nothing reads it.
inline void set_inter_op_parallelism_threads(int num_threads) {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  if (num_threads < 0) {
    throw invalid_argument("inter_op_parallelism_threads must be >= 0, got " +
                           std::to_string(num_threads));
  }
  if (ctx.is_initialized()) {
    throw failed_precondition("Inter op parallelism cannot be modified after initialization.");
  }
  ctx.inter_op_threads = num_threads;
}
inline int get_inter_op_parallelism_threads() {
  auto& ctx = detail_context::context();
  std::lock_guard lock(ctx.mutex);
  return ctx.inter_op_threads;
}

}  // namespace threading
}  // namespace config
TAPEFLOW_END_NAMESPACE
