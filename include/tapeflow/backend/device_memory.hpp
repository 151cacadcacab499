// Device memory: how core allocates, frees and copies the elements of tensors on a device whose
// memory is not the host's (a GPU), without naming the device's runtime.
//
// Why a small virtual interface next to the templated Backend concept: core's Buffer picks the
// memory at run time from the device a tensor is allocated on, and a compiled backend (CUDA)
// cannot be a template parameter of header-only code it never sees. One instance serves one
// logical device; tf::config makes it through the platform's `device_memory` factory when the
// runtime initializes (Note [Device memory] in MAINTAINERS.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend {

/// The memory of one logical device that keeps its tensors outside host memory. Copies are
/// ordered after the device's earlier work and complete before they return, so the host
/// memory on the other side may be read or reused at once.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  virtual ~DeviceMemory() = default;

  /// `bytes` of device memory (at least 1); throws resource_exhausted naming the device past
  /// its memory_limit or when the device has no more.
  virtual void* allocate(std::size_t bytes) = 0;
  /// Returns `bytes` at `pointer` from allocate.
  virtual void deallocate(void* pointer, std::size_t bytes) noexcept = 0;
  /// Device `source` to host `destination`.
  virtual void copy_to_host(void* destination, const void* source, std::size_t bytes) = 0;
  /// Host `source` to device `destination`.
  virtual void copy_from_host(void* destination, const void* source, std::size_t bytes) = 0;
  /// Device to device: `source` is memory of this device or of another device of the same
  /// backend.
  virtual void copy_on_device(void* destination, const void* source, std::size_t bytes) = 0;
  /// Bytes in use and the peak since the last reset_peak.
  [[nodiscard]] virtual MemoryInfo memory_info() const = 0;
  /// Starts a new peak at the bytes in use now.
  virtual void reset_peak() = 0;
};

/// What a platform's factory needs to make one logical device's memory.
struct DeviceMemoryRequest {
  /// Index of the physical device among its platform's devices.
  int physical_index = 0;
  /// The logical device's full name, for messages.
  std::string device;
  /// Bytes it may hold (tf::config's memory_limit); unset: the physical device's memory.
  std::optional<std::int64_t> limit_bytes;
  /// tf::config's memory growth: give memory back rather than keep it reserved.
  bool memory_growth = false;
};

}  // namespace backend
TAPEFLOW_END_NAMESPACE
