// Devices as core sees them: small ids that buffers carry, the names they stand for, and the
// device the current thread places on (Note [Placement] in MAINTAINERS.md).
//
// Why ids in core rather than config's LogicalDevice: every buffer records where it lives and
// every op reads its inputs' devices, so the common path must be an integer in the buffer's
// header and a thread-local read, and core cannot include config (config sits above core).
// tf::config fills the table when the runtime initializes; until then only CPU:0 exists.
// IWYU pragma: private, include <tapeflow/core/tensor.hpp>
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::devices {

/// A logical device's index in the table; 0 is CPU:0, which always exists.
using DeviceId = std::int16_t;
/// "No tf::device scope is active" (the thread's placement) / "no device" (symbolic tensors).
inline constexpr DeviceId none = -1;
/// A scope asked for a device that cannot be satisfied without soft placement; ops under it
/// throw the message the scope recorded.
inline constexpr DeviceId unsatisfiable = -2;

inline constexpr std::size_t max_devices = 256;

struct Entry {
  std::string name;              // "/job:localhost/replica:0/task:0/device:CPU:1"
  std::string type;              // "CPU", "GPU"
  bool has_cpu_kernels = false;  // CPU-type devices run every op's CPU kernel
};

struct Table {
  std::array<Entry, max_devices> entries{};
  std::atomic<std::size_t> size{1};
  // tf::config::set_soft_device_placement: an op without a kernel on its device runs on CPU:0.
  std::atomic<bool> soft_placement{true};
  Table() { entries[0] = {"/job:localhost/replica:0/task:0/device:CPU:0", "CPU", true}; }
};

/// The process's devices. Entries are written once, before their ids are handed out (config
/// initializes under its lock), and never change afterwards, so readers need no lock.
inline Table& table() {
  static Table instance;
  return instance;
}

/// The full name of device `id` ("" for none).
inline std::string_view name(DeviceId id) noexcept {
  if (id < 0 || static_cast<std::size_t>(id) >= table().size.load(std::memory_order_acquire)) {
    return {};
  }
  return table().entries[static_cast<std::size_t>(id)].name;
}

inline bool has_cpu_kernels(DeviceId id) noexcept {
  return id >= 0 && static_cast<std::size_t>(id) < table().size.load(std::memory_order_acquire) &&
         table().entries[static_cast<std::size_t>(id)].has_cpu_kernels;
}

/// The device tf::device scopes ask for on this thread (none outside any scope).
inline DeviceId& scope_device() noexcept {
  thread_local DeviceId id = none;
  return id;
}

/// Where new buffers of this thread go: the op being run's device while an op runs, else the
/// scope's, else CPU:0.
inline DeviceId& allocation_device() noexcept {
  thread_local DeviceId id = 0;
  return id;
}

/// Why ops under the current scope cannot run (set with `unsatisfiable`).
inline std::string& unsatisfiable_reason() {
  thread_local std::string reason;
  return reason;
}

// place_op's rare path, out of line: every op's execute() inlines place_op.
TAPEFLOW_NOINLINE inline DeviceId place_op_with_scope(std::string_view op, DeviceId preferred,
                                                      DeviceId input) {
  DeviceId device = preferred;
  if (device == none) {
    device = scope_device();
    if (device == unsatisfiable) {
      throw invalid_argument(unsatisfiable_reason());
    }
  }
  if (device == none) {
    device = input >= 0 ? input : 0;
  }
  if (device == 0 || has_cpu_kernels(device)) {
    return device;
  }
  if (table().soft_placement.load(std::memory_order_relaxed)) {
    return 0;
  }
  auto const& entry = table().entries[static_cast<std::size_t>(device)];
  throw invalid_argument("Cannot assign a device for operation " + std::string(op) +
                         ": Could not satisfy explicit device specification '" + entry.name +
                         "' because no supported kernel for " + entry.type +
                         " devices is available.");
}

/// The device an op runs on: its own choice (`preferred`, e.g. a variable op's variable's
/// device), else the scope's, else its first input's, else CPU:0. A device without the op's
/// kernel (every op has only a CPU kernel so far) falls back to CPU:0 under soft placement;
/// without it that is invalid_argument naming the op and the device, in TensorFlow's words.
inline DeviceId place_op(std::string_view op, DeviceId preferred, DeviceId input) {
  if (preferred == 0 || (preferred == none && input <= 0 && scope_device() == none)) {
    return 0;  // the common cases: no scope and inputs on CPU:0 (or none); a CPU:0 variable
  }
  return place_op_with_scope(op, preferred, input);
}

/// Makes new buffers of this thread go to `device` while it lives (an op running there).
class AllocationScope {
 public:
  explicit AllocationScope(DeviceId device) noexcept
      : slot_(allocation_device()), previous_(std::exchange(slot_, device)) {}
  AllocationScope(const AllocationScope&) = delete;
  AllocationScope& operator=(const AllocationScope&) = delete;
  ~AllocationScope() { slot_ = previous_; }

 private:
  DeviceId& slot_;  // one thread-local lookup per op, not two
  DeviceId previous_;
};

}  // namespace detail::devices
TAPEFLOW_END_NAMESPACE
