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
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/backend/cpu/cpu_backend.hpp>
#include <tapeflow/backend/cpu/thread_budget.hpp>
#include <tapeflow/backend/device_memory.hpp>
#include <tapeflow/core/dtype.hpp>
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
  std::string name;  // "/job:localhost/replica:0/task:0/device:CPU:1"
  std::string type;  // "CPU", "GPU"
  // Runs the device's ops: the CPU backend (every op's own compute), a registered one, or none.
  backend::BackendId backend = backend::no_backend;
  // Tensors on the device live in host memory (CPU-type devices, host-backed test devices).
  bool host_memory = false;
  // The host memory accounting and thread share of a host-memory device (Note [Backends]).
  backend::Cpu host;
  // The memory of a device outside host memory (Note [Device memory]); null otherwise.
  std::unique_ptr<backend::DeviceMemory> memory;
};

struct Table {
  std::array<Entry, max_devices> entries{};
  std::atomic<std::size_t> size{1};
  // tf::config::set_soft_device_placement: an op without a kernel on its device runs on CPU:0.
  std::atomic<bool> soft_placement{true};
  // Resolves a device name to an id once tf::config is in the program (it installs this);
  // data's prefetch_to_device uses it, since data sits below config.
  std::atomic<DeviceId (*)(std::string_view)> resolver{nullptr};
  Table() {
    entries[0].name = "/job:localhost/replica:0/task:0/device:CPU:0";
    entries[0].type = "CPU";
    entries[0].backend = backend::cpu_backend;
    entries[0].host_memory = true;
  }
};

/// Whether buffers charge their device's accounting (get_memory_info). tf::config turns it on
/// when the runtime has several logical devices in host memory, where per-device figures mean
/// something; a process with CPU:0 alone reports zeros, as TensorFlow's CPU does, and its eager
/// ops skip two atomic operations per tensor (Note [Backends]).
inline std::atomic<bool> host_accounting{false};

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

inline bool exists(DeviceId id) noexcept {
  return id >= 0 && static_cast<std::size_t>(id) < table().size.load(std::memory_order_acquire);
}

/// Whether tensors on device `id` live in host memory.
inline bool host_memory(DeviceId id) noexcept {
  return exists(id) && table().entries[static_cast<std::size_t>(id)].host_memory;
}

/// The backend that runs ops on device `id`.
inline backend::BackendId backend_of(DeviceId id) noexcept {
  return exists(id) ? table().entries[static_cast<std::size_t>(id)].backend : backend::no_backend;
}

/// The runtime of host-memory device `id` (its allocator accounting and thread share).
inline backend::Cpu& host(DeviceId id) noexcept {
  return table().entries[static_cast<std::size_t>(id)].host;
}

/// The memory of device `id` when its tensors live outside host memory, else null.
inline backend::DeviceMemory* device_memory(DeviceId id) noexcept {
  return exists(id) ? table().entries[static_cast<std::size_t>(id)].memory.get() : nullptr;
}

/// The id of the device `name` names (TensorFlow's full or partial names), through tf::config
/// where the program has it; without it only CPU:0 exists. invalid_argument for anything else.
inline DeviceId resolve(std::string_view name) {
  if (auto* resolver = table().resolver.load(std::memory_order_acquire); resolver != nullptr) {
    return resolver(name);
  }
  for (std::string_view cpu0 : {"/cpu:0", "/CPU:0", "/device:CPU:0", "CPU:0", "cpu:0"}) {
    if (name == cpu0 || name == table().entries[0].name) {
      return 0;
    }
  }
  throw invalid_argument("Device '" + std::string(name) +
                         "' is unknown: only CPU:0 exists until <tapeflow/config.hpp> "
                         "configures logical devices");
}

/// Whether a registered backend has a kernel for an op whose first tensor input has a dtype
/// (DType::invalid: the op has no tensor input); one function per op type, from
/// ops/kernel_registry.hpp. Null for ops that only share or relabel buffers (forward-style),
/// which run on any host-memory device.
using KernelCheck = bool (*)(backend::BackendId, DType) noexcept;

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
TAPEFLOW_NOINLINE inline DeviceId place_op_with_scope(std::string_view op, KernelCheck has_kernel,
                                                      DeviceId preferred, DeviceId input,
                                                      DType dtype) {
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
  if (device == 0) {
    return device;
  }
  if (exists(device)) {
    auto const& wanted = table().entries[static_cast<std::size_t>(device)];
    // Forward-style ops (no kernel) share buffers, so any device holding memory runs them.
    bool const runs = has_kernel == nullptr ? wanted.host_memory || wanted.memory != nullptr
                                            : wanted.backend == backend::cpu_backend ||
                                                  (wanted.backend != backend::no_backend &&
                                                   has_kernel(wanted.backend, dtype));
    if (runs) {
      return device;
    }
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

/// tf::debugging::set_log_device_placement: every eager op's placement is printed.
inline std::atomic<bool> log_placement{false};

// TensorFlow's line for an eager op, on stderr (where its logging goes).
TAPEFLOW_NOINLINE inline void log_op_placement(std::string_view op, DeviceId device) {
  std::string const& name = table().entries[static_cast<std::size_t>(device)].name;
  std::fprintf(stderr, "Executing op %.*s in device %s\n", static_cast<int>(op.size()), op.data(),
               name.c_str());
}

/// The device an op runs on: its own choice (`preferred`, e.g. a variable op's variable's
/// device), else the scope's, else its first input's, else CPU:0. A device whose backend has
/// no kernel for the op and `dtype` (its first tensor input's, `has_kernel`) falls back to
/// CPU:0 under soft placement; without it that is invalid_argument naming the op and the
/// device, in TensorFlow's words.
inline DeviceId place_op(std::string_view op, KernelCheck has_kernel, DeviceId preferred,
                         DeviceId input, DType dtype = DType::invalid) {
  DeviceId device = 0;
  if (preferred != 0 && (preferred != none || input > 0 || scope_device() != none)) {
    device = place_op_with_scope(op, has_kernel, preferred, input, dtype);
  }  // else the common cases: no scope and inputs on CPU:0 (or none); a CPU:0 variable
  if (log_placement.load(std::memory_order_relaxed)) [[unlikely]] {
    log_op_placement(op, device);
  }
  return device;
}

/// Makes new buffers of this thread go to `device` while it lives (an op running there), and
/// gives the op the device's share of the intra-op threads.
class AllocationScope {
 public:
  explicit AllocationScope(DeviceId device) noexcept
      : slot_(allocation_device()), previous_(std::exchange(slot_, device)) {
    if (device > 0) [[unlikely]] {  // CPU:0 keeps the thread's budget (the whole pool)
      previous_budget_ = std::exchange(backend::cpu::thread_budget(), host(device).thread_budget());
    }
  }
  AllocationScope(const AllocationScope&) = delete;
  AllocationScope& operator=(const AllocationScope&) = delete;
  ~AllocationScope() {
    slot_ = previous_;
    if (previous_budget_ >= 0) [[unlikely]] {
      backend::cpu::thread_budget() = previous_budget_;
    }
  }

 private:
  DeviceId& slot_;  // one thread-local lookup per op, not two
  DeviceId previous_;
  int previous_budget_ = -1;
};

}  // namespace detail::devices
TAPEFLOW_END_NAMESPACE
