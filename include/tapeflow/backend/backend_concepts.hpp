// Backends: what a device's runtime provides, and the tags op kernels specialise on.
//
// A backend serves the logical devices of one platform (Note [Backends] in MAINTAINERS.md):
// it allocates and frees their memory with per-device accounting, copies between host and
// device and within a device, orders work with streams and events, and runs ops through
// `kernel<Op, Backend>` specializations. The header-only CPU backend (backend/cpu/
// cpu_backend.hpp) models the concept, one instance per logical CPU; a compiled backend
// registers itself under an id (`register_backend`) and its kernels per op
// (ops/kernel_registry.hpp), and the executor picks the kernel from the op's device, so no op
// names a backend.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace backend {
/// The CPU backend (backend/cpu/cpu_backend.hpp).
class Cpu;

/// A logical device's memory use, as tf::config::experimental::get_memory_info reports it.
struct MemoryInfo {
  std::int64_t current = 0;  ///< bytes allocated now
  std::int64_t peak = 0;     ///< the most bytes allocated at once since the last reset
  /// Equal figures.
  friend bool operator==(const MemoryInfo&, const MemoryInfo&) = default;
};

/// What a device runtime provides (see the header comment). `B` is one logical device's
/// instance; a stream orders the operations issued on it, an event marks a point of a stream
/// that another stream can wait for.
template <class B>
concept Backend = requires(B& b, const B& cb, std::size_t bytes, void* dst, const void* src,
                           typename B::Stream& stream, typename B::Event& event) {
  { B::device_type } -> std::convertible_to<std::string_view>;
  { b.allocate(bytes) } -> std::same_as<void*>;
  { b.deallocate(dst, bytes) } noexcept -> std::same_as<void>;
  { b.copy_host_to_device(dst, src, bytes, stream) } -> std::same_as<void>;
  { b.copy_device_to_host(dst, src, bytes, stream) } -> std::same_as<void>;
  { b.copy_device_to_device(dst, src, bytes, stream) } -> std::same_as<void>;
  { b.default_stream() } -> std::same_as<typename B::Stream&>;
  { b.record(event, stream) } -> std::same_as<void>;
  { b.wait(stream, event) } -> std::same_as<void>;
  { b.synchronize(stream) } -> std::same_as<void>;
  { cb.memory_info() } -> std::same_as<MemoryInfo>;
  { b.reset_peak() } -> std::same_as<void>;
};

/// Which backend runs a device's ops: an index into the backends registered in this process.
using BackendId = std::uint8_t;
/// The built-in CPU backend: every op's own `compute`.
inline constexpr BackendId cpu_backend = 0;
/// A device no backend runs ops on (a platform linked for its devices only).
inline constexpr BackendId no_backend = 0xff;
/// Backends one process can register, the CPU's included.
inline constexpr std::size_t max_backends = 8;

namespace detail_backends {
struct Registry {
  std::mutex mutex;
  std::vector<std::string> names{"CPU"};
};
inline Registry& registry() {
  static Registry instance;
  return instance;
}
}  // namespace detail_backends

/// The id of the backend called `name`, registering it on first use (compiled backends and
/// test backends call this before main or before tf::config first looks at devices).
/// std::length_error past max_backends.
inline BackendId register_backend(std::string_view name) {
  auto& reg = detail_backends::registry();
  std::lock_guard lock(reg.mutex);
  for (std::size_t i = 0; i < reg.names.size(); ++i) {
    if (reg.names[i] == name) {
      return static_cast<BackendId>(i);
    }
  }
  if (reg.names.size() == max_backends) {
    throw std::length_error("tapeflow: cannot register backend '" + std::string(name) +
                            "': " + std::to_string(max_backends) + " backends are registered");
  }
  reg.names.emplace_back(name);
  return static_cast<BackendId>(reg.names.size() - 1);
}
}  // namespace backend

/// The kernel of `Op` on `Backend`. The CPU one calls the op's own `compute`; other backends
/// specialise this template in their own files, with `run(const Op&, AnyTensor& out,
/// std::span<const AnyTensor> inputs)`, and register it (ops/kernel_registry.hpp). An op with
/// no kernel for a backend fails to compile naming `no_kernel_for_backend`.
template <class Op, class Backend>
struct kernel {
  /// Runs `op` on `args` (its inputs and outputs) on this backend.
  template <class... Args>
  static void run(const Op& op, Args&&... args) {
    if constexpr (std::same_as<Backend, backend::Cpu>) {
      op.compute(std::forward<Args>(args)...);
    } else {
      static_assert(std::same_as<Backend, backend::Cpu>,
                    "no_kernel_for_backend: specialise tapeflow::kernel<Op, Backend>");
    }
  }
};

TAPEFLOW_END_NAMESPACE
