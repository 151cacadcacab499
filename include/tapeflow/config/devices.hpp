// The values tf::config hands out: physical devices, logical devices and the configuration of
// a logical device, printed as TensorFlow's Python reprs so programs print what the TensorFlow
// program prints.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace config {

/// A device the machine has (TensorFlow: `tf.config.PhysicalDevice`), named
/// "/physical_device:<type>:<index>".
struct PhysicalDevice {
  std::string name;         ///< "/physical_device:GPU:0"
  std::string device_type;  ///< "CPU", "GPU"
  /// Same name and type.
  friend bool operator==(const PhysicalDevice&, const PhysicalDevice&) = default;
  /// Python's repr: "PhysicalDevice(name='...', device_type='...')".
  friend std::ostream& operator<<(std::ostream& os, const PhysicalDevice& d) {
    return os << "PhysicalDevice(name='" << d.name << "', device_type='" << d.device_type << "')";
  }
};

/// A device ops are placed on (TensorFlow: `tf.config.LogicalDevice`), named
/// "/device:<type>:<index>"; one physical device holds one or several.
struct LogicalDevice {
  std::string name;         ///< "/device:GPU:1"
  std::string device_type;  ///< "CPU", "GPU"
  /// Same name and type.
  friend bool operator==(const LogicalDevice&, const LogicalDevice&) = default;
  /// Python's repr: "LogicalDevice(name='...', device_type='...')".
  friend std::ostream& operator<<(std::ostream& os, const LogicalDevice& d) {
    return os << "LogicalDevice(name='" << d.name << "', device_type='" << d.device_type << "')";
  }
};

/// How one logical device is carved out of a physical one (TensorFlow:
/// `tf.config.LogicalDeviceConfiguration`). GPUs need `memory_limit`; CPUs take none.
struct LogicalDeviceConfiguration {
  /// MiB of the physical device's memory this logical device may allocate.
  std::optional<std::int64_t> memory_limit{};
  /// Stream priority of a logical GPU (TensorFlow's experimental option; not used yet).
  std::optional<int> experimental_priority{};
  /// Order of logical GPUs across physical ones (TensorFlow's experimental option).
  std::optional<int> experimental_device_ordinal{};
  /// Field by field.
  friend bool operator==(const LogicalDeviceConfiguration&,
                         const LogicalDeviceConfiguration&) = default;
  /// Python's repr, unset fields as None.
  friend std::ostream& operator<<(std::ostream& os, const LogicalDeviceConfiguration& c) {
    auto field = [&os](const char* key, const auto& value) {
      os << key << '=';
      if (value) {
        os << *value;
      } else {
        os << "None";
      }
    };
    os << "LogicalDeviceConfiguration(";
    field("memory_limit", c.memory_limit);
    field(", experimental_priority", c.experimental_priority);
    field(", experimental_device_ordinal", c.experimental_device_ordinal);
    return os << ')';
  }
};

/// Lists print as Python lists: "[PhysicalDevice(...), PhysicalDevice(...)]".
template <class Device>
  requires std::same_as<Device, PhysicalDevice> || std::same_as<Device, LogicalDevice> ||
           std::same_as<Device, LogicalDeviceConfiguration>
std::ostream& operator<<(std::ostream& os, const std::vector<Device>& devices) {
  os << '[';
  for (std::size_t i = 0; i < devices.size(); ++i) {
    os << (i ? ", " : "") << devices[i];
  }
  return os << ']';
}

}  // namespace config
TAPEFLOW_END_NAMESPACE
