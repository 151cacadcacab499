// Reference-counted, 64-byte-aligned element storage shared by tensors.
// IWYU pragma: private, include <tapeflow/core/tensor.hpp>
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>

#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// One allocation: this header, then the elements at a 64-byte boundary (cache line and
/// AVX-512 alignment, so kernels may use aligned loads).
struct Buffer {
  static constexpr std::size_t alignment = backend::cpu::host_memory::alignment;
  static constexpr std::size_t header_bytes = 64;

  std::atomic<std::int64_t> refs{1};
  std::int64_t count = 0;                       // elements
  void (*destroy_elements)(Buffer*) = nullptr;  // non-trivial element types only
  std::size_t allocated_bytes = 0;              // this header and the elements
  devices::DeviceId device = 0;                 // where it lives (Note [Placement])
  bool charged = false;                         // counted in its device's memory figures

  [[nodiscard]] std::byte* bytes() noexcept {
    return reinterpret_cast<std::byte*>(this) + header_bytes;
  }
  template <class T>
  [[nodiscard]] T* data() noexcept {
    return std::launder(reinterpret_cast<T*>(bytes()));
  }

  /// Storage for `count` elements of T: left uninitialised for trivial T (kernels overwrite it),
  /// value-initialised otherwise.
  template <class T>
  static Buffer* allocate(std::int64_t count) {
    static_assert(sizeof(Buffer) <= header_bytes);
    if (count < 0 || static_cast<std::uint64_t>(count) > (std::uint64_t{1} << 46) / sizeof(T)) {
      throw resource_exhausted("tensor allocation of " + std::to_string(count) + " elements of " +
                               std::to_string(sizeof(T)) + " bytes is too large");
    }
    const std::size_t bytes = header_bytes + static_cast<std::size_t>(count) * sizeof(T);
    // Every device whose tensors a Buffer holds keeps them in host memory; its CPU backend
    // instance accounts them where accounting is on (Note [Backends]).
    const devices::DeviceId device = devices::allocation_device();
    void* raw = backend::cpu::host_memory::allocate(bytes);
    auto* buffer = new (raw) Buffer;
    buffer->count = count;
    buffer->allocated_bytes = bytes;
    buffer->device = device;
    if (devices::host_accounting.load(std::memory_order_relaxed)) [[unlikely]] {
      devices::host(device).charge(bytes);
      buffer->charged = true;
    }
    if constexpr (!std::is_trivially_default_constructible_v<T> ||
                  !std::is_trivially_destructible_v<T>) {
      T* elements = reinterpret_cast<T*>(buffer->bytes());
      for (std::int64_t i = 0; i < count; ++i) {
        new (elements + i) T();
      }
      buffer->destroy_elements = [](Buffer* self) {
        T* e = self->data<T>();
        for (std::int64_t i = 0; i < self->count; ++i) {
          e[i].~T();
        }
      };
    }
    return buffer;
  }

  void retain() noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      destroy(this);
    }
  }
  // Out of line: keeps the rare path small, and stops GCC 12 from inlining the delete into
  // callers, where it cannot see the reference count and warns of use-after-free.
  TAPEFLOW_NOINLINE static void destroy(Buffer* self) noexcept {
    if (self->destroy_elements != nullptr) {
      self->destroy_elements(self);
    }
    const std::size_t bytes = self->allocated_bytes;
    if (self->charged) [[unlikely]] {
      devices::host(self->device).discharge(bytes);
    }
    self->~Buffer();
    backend::cpu::host_memory::deallocate(self, bytes);
  }
  [[nodiscard]] bool unique() const noexcept { return refs.load(std::memory_order_acquire) == 1; }
};

/// Tensor identities for the gradient tape: unique per value, shared by copies of it.
/// The two high bits mark reads of a variable and whether that variable is trainable, so a
/// tape can watch accessed variables without a lookup.
inline constexpr std::int64_t variable_id_bit = std::int64_t{1} << 62;
inline constexpr std::int64_t trainable_id_bit = std::int64_t{1} << 61;
/// Marks symbolic tensors: stand-ins for values inside a tf::function being traced.
inline constexpr std::int64_t symbolic_id_bit = std::int64_t{1} << 60;

/// A fresh identity. Threads take blocks of ids from one counter so the common path is a
/// thread-local increment.
inline std::int64_t new_tensor_id() noexcept {
  static std::atomic<std::int64_t> next_block{1};
  constexpr std::int64_t block = 1024;
  thread_local std::int64_t next = 0;
  thread_local std::int64_t end = 0;
  if (next == end) {
    next = next_block.fetch_add(block, std::memory_order_relaxed);
    end = next + block;
  }
  return next++;
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
