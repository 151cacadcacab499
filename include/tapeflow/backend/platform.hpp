// Platforms: the kinds of device a process can use ("CPU" always; "GPU" when a compiled GPU
// backend is linked), as tf::config lists them.
//
// Why a run-time registry rather than a compile-time list: the header-only library cannot know
// which compiled backends a program links. A compiled backend registers its platform before
// main (backend/linked_platforms.hpp), and tf::config reads the registry on first use, so a
// CPU-only program pays nothing and names no device type.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/backend/device_memory.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend {

/// One physical device of a platform, as its driver describes it.
struct PlatformDevice {
  /// The driver's name for the device ("NVIDIA H100 80GB HBM3"; the CPU's is "cpu").
  std::string description;
  /// Memory the device has, in bytes (0 where it is the host's memory, as for the CPU).
  std::int64_t memory_bytes = 0;
};

/// A kind of device: its TensorFlow type name and how to find its devices.
struct Platform {
  /// TensorFlow's device type ("CPU", "GPU").
  std::string device_type;
  /// The devices present now. Called once, when tf::config first looks; a platform whose
  /// driver is missing or finds no device returns an empty list, never throws.
  std::function<std::vector<PlatformDevice>()> enumerate;
  /// The backend that runs ops on its devices (backend::register_backend); none: the devices
  /// are listed and placed on, but every op falls back to the CPU (soft placement).
  BackendId backend = no_backend;
  /// Whether its devices' tensors live in host memory (so forward-style ops and copies are
  /// host work).
  bool host_memory = false;
  /// Makes one logical device's memory (devices outside host memory only); called once per
  /// logical device when the runtime initializes.
  std::function<std::unique_ptr<DeviceMemory>(const DeviceMemoryRequest&)> device_memory{};
};

namespace detail_platform {
struct Registry {
  std::mutex mutex;
  std::vector<Platform> platforms;
};
inline Registry& registry() {
  static Registry instance;
  return instance;
}
}  // namespace detail_platform

/// Adds `platform` to the registry (compiled backends call this before main). Registering a
/// device type twice keeps the first.
inline bool register_platform(Platform platform) {
  auto& reg = detail_platform::registry();
  std::lock_guard lock(reg.mutex);
  for (const auto& known : reg.platforms) {
    if (known.device_type == platform.device_type) {
      return false;
    }
  }
  reg.platforms.push_back(std::move(platform));
  return true;
}

/// The registered platforms, the built-in CPU one first.
inline std::vector<Platform> registered_platforms() {
  auto& reg = detail_platform::registry();
  std::lock_guard lock(reg.mutex);
  std::vector<Platform> out;
  out.push_back(Platform{"CPU",
                         [] {
                           return std::vector<PlatformDevice>{{"cpu", 0}};
                         },
                         cpu_backend, true});
  for (const auto& platform : reg.platforms) {
    if (platform.device_type != "CPU") {
      out.push_back(platform);
    }
  }
  return out;
}

}  // namespace backend
TAPEFLOW_END_NAMESPACE
