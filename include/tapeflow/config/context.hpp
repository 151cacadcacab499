// The process's device configuration: what tf::config reads and changes, and the logical
// devices it becomes when the runtime initializes.
//
// TensorFlow keeps this in its eager context: settings may change freely until the runtime is
// initialized (the first op, tensor placement or list_logical_devices), after which only
// re-applying the identical setting is accepted. We count as initialization: the first
// list_logical_devices, the first tf::device scope, and the start of the CPU kernels' thread
// pool (the first kernel that runs in parallel). docs/guide/config.md has the rules.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/backend/device_memory.hpp>
#include <tapeflow/backend/linked_platforms.hpp>
#include <tapeflow/backend/platform.hpp>
#include <tapeflow/config/devices.hpp>
#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace config::detail_context {

/// A logical device with what its backend needs to serve it.
struct LogicalDeviceInfo {
  LogicalDevice device;
  /// Index into the physical devices of its type.
  int physical_index = 0;
  /// Index among the logical devices of its type ("/device:GPU:<index>").
  int index = 0;
  /// Index among all logical devices: the id its tensors' buffers carry (Note [Placement]).
  int id = 0;
  /// MiB it may allocate; unset: the physical device's memory.
  std::optional<std::int64_t> memory_limit;
  bool memory_growth = false;
  /// Bytes of the physical device (0 for host memory).
  std::int64_t physical_memory_bytes = 0;
  /// The backend running its ops, and whether its tensors live in host memory (its platform's).
  backend::BackendId backend = backend::no_backend;
  bool host_memory = false;
};

struct Context {
  std::mutex mutex;
  bool discovered = false;
  std::vector<PhysicalDevice> physical;
  std::vector<std::int64_t> physical_memory;         // parallel to `physical`
  std::vector<backend::BackendId> physical_backend;  // parallel to `physical`
  std::vector<bool> physical_host_memory;            // parallel to `physical`
  // parallel to `physical`: makes a logical device's memory (devices outside host memory)
  std::vector<
      std::function<std::unique_ptr<backend::DeviceMemory>(const backend::DeviceMemoryRequest&)>>
      physical_device_memory;
  std::vector<PhysicalDevice> visible;
  std::map<std::string, std::vector<LogicalDeviceConfiguration>> virtual_devices;  // by name
  std::map<std::string, bool> memory_growth;  // by name; GPUs only
  bool initialized = false;
  std::vector<LogicalDeviceInfo> logical;
  int inter_op_threads = 0;

  // Under `mutex`. Asks every platform for its devices, once.
  void discover() {
    if (discovered) {
      return;
    }
    for (const auto& platform : backend::registered_platforms()) {
      std::vector<backend::PlatformDevice> found;
      try {
        found = platform.enumerate();
      } catch (
          ...) {  // a platform whose driver fails has no devices, as TensorFlow logs and goes on
        found.clear();
      }
      for (std::size_t i = 0; i < found.size(); ++i) {
        physical.push_back({"/physical_device:" + platform.device_type + ":" + std::to_string(i),
                            platform.device_type});
        physical_memory.push_back(found[i].memory_bytes);
        physical_backend.push_back(platform.backend);
        physical_host_memory.push_back(platform.host_memory);
        physical_device_memory.push_back(platform.device_memory);
        if (platform.device_type == "GPU") {
          memory_growth[physical.back().name] = false;
        }
      }
    }
    visible = physical;
    discovered = true;
  }

  // Under `mutex`.
  [[nodiscard]] bool is_initialized() const {
    return initialized || backend::cpu::ThreadPool::global_started().load();
  }

  // Under `mutex`. Throws invalid_argument naming `device` unless it is one of ours.
  std::size_t index_of(const PhysicalDevice& device) const {
    for (std::size_t i = 0; i < physical.size(); ++i) {
      if (physical[i] == device) {
        return i;
      }
    }
    throw invalid_argument("Unrecognized device: " + repr(device));
  }

  static std::string repr(const PhysicalDevice& device) {
    return "PhysicalDevice(name='" + device.name + "', device_type='" + device.device_type + "')";
  }

  // Under `mutex`: builds the logical devices from the settings and freezes them.
  void initialize() {
    discover();
    if (initialized) {
      return;
    }
    std::vector<LogicalDeviceInfo> out;
    std::map<std::string, int> per_type;
    for (const auto& type : device_types()) {
      for (std::size_t p = 0; p < physical.size(); ++p) {
        const auto& device = physical[p];
        if (device.device_type != type || !contains(visible, device)) {
          continue;
        }
        auto configs = virtual_devices.count(device.name) != 0
                           ? virtual_devices.at(device.name)
                           : std::vector<LogicalDeviceConfiguration>{{}};
        check_memory_fits(device, physical_memory[p], configs);
        int const physical_index = index_among_type(p);
        for (const auto& cfg : configs) {
          int const index = per_type[type]++;
          out.push_back({{"/device:" + type + ":" + std::to_string(index), type},
                         physical_index,
                         index,
                         static_cast<int>(out.size()),
                         cfg.memory_limit,
                         memory_growth.count(device.name) != 0 && memory_growth.at(device.name),
                         physical_memory[p],
                         physical_backend[p],
                         physical_host_memory[p]});
        }
      }
    }
    if (per_type["CPU"] == 0) {
      throw not_found("No CPU devices are available in this process");
    }
    if (out.size() > detail::devices::max_devices) {
      throw invalid_argument("tf::config: " + std::to_string(out.size()) +
                             " logical devices; tapeflow supports " +
                             std::to_string(detail::devices::max_devices));
    }
    // Core's table gets the devices before any id is handed out (CPU:0 stays id 0).
    auto& table = detail::devices::table();
    int const cpu_share = cpu_thread_share(per_type["CPU"]);
    for (const auto& info : out) {
      auto& entry = table.entries[static_cast<std::size_t>(info.id)];
      entry.name = "/job:localhost/replica:0/task:0" + info.device.name;
      entry.type = info.device.device_type;
      entry.backend = info.backend;
      entry.host_memory = info.host_memory;
      entry.host.set_thread_budget(info.device.device_type == "CPU" ? cpu_share : 0);
      if (auto const& make_memory = physical_device_memory[physical_of(info)];
          !info.host_memory && make_memory) {
        std::optional<std::int64_t> limit;
        if (info.memory_limit) {
          limit = *info.memory_limit * 1024 * 1024;
        }
        entry.memory = make_memory({info.physical_index, entry.name, limit, info.memory_growth});
      }
    }
    table.size.store(out.size(), std::memory_order_release);
    std::size_t host_devices = 0;
    for (const auto& info : out) {
      host_devices += info.host_memory ? 1 : 0;
    }
    detail::devices::host_accounting.store(host_devices > 1);
    logical = std::move(out);
    initialized = true;
  }

  // Each logical CPU's share of the intra-op threads, so replicas running side by side on
  // several logical CPUs do not oversubscribe the machine; one logical CPU has the whole pool
  // (0). Computed without starting the pool.
  static int cpu_thread_share(int logical_cpus) {
    if (logical_cpus <= 1) {
      return 0;
    }
    int const threads = backend::cpu::ThreadPool::configured_threads();
    return std::max(1, (threads + logical_cpus - 1) / logical_cpus);
  }

  [[nodiscard]] std::vector<std::string> device_types() const {
    std::vector<std::string> types;
    for (const auto& device : physical) {
      if (!contains(types, device.device_type)) {
        types.push_back(device.device_type);
      }
    }
    return types;
  }

  // Under `mutex`: the index in `physical` of logical device `info`'s physical device.
  [[nodiscard]] std::size_t physical_of(const LogicalDeviceInfo& info) const {
    for (std::size_t p = 0; p < physical.size(); ++p) {
      if (physical[p].device_type == info.device.device_type &&
          index_among_type(p) == info.physical_index) {
        return p;
      }
    }
    return 0;
  }

  [[nodiscard]] int index_among_type(std::size_t p) const {
    int index = 0;
    for (std::size_t i = 0; i < p; ++i) {
      index += physical[i].device_type == physical[p].device_type ? 1 : 0;
    }
    return index;
  }

  template <class T>
  static bool contains(const std::vector<T>& items, const T& item) {
    for (const auto& x : items) {
      if (x == item) {
        return true;
      }
    }
    return false;
  }

  // The logical devices of one physical device must fit in its memory (checked when the
  // runtime initializes, where TensorFlow would fail its first allocation instead).
  static void check_memory_fits(const PhysicalDevice& device, std::int64_t bytes,
                                const std::vector<LogicalDeviceConfiguration>& configs) {
    if (bytes <= 0) {
      return;
    }
    std::int64_t total_mib = 0;
    for (const auto& cfg : configs) {
      total_mib += cfg.memory_limit.value_or(0);
    }
    std::int64_t const available_mib = bytes / (1024 * 1024);
    if (total_mib > available_mib) {
      throw resource_exhausted("Logical devices on " + device.name + " ask for " +
                               std::to_string(total_mib) + " MiB in all, but the device has " +
                               std::to_string(available_mib) + " MiB");
    }
  }
};

/// The process's one context (TensorFlow's is per process too).
inline Context& context() {
  static Context instance;
  return instance;
}

/// The logical devices, initializing the runtime if it is not yet.
inline std::vector<LogicalDeviceInfo> logical_device_infos() {
  auto& ctx = context();
  std::lock_guard lock(ctx.mutex);
  ctx.initialize();
  return ctx.logical;
}

}  // namespace config::detail_context
TAPEFLOW_END_NAMESPACE
