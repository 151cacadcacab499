// Reference-counted, 64-byte-aligned element storage shared by tensors.
// IWYU pragma: private, include <tapeflow/core/tensor.hpp>
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include <tapeflow/core/detail/buffer_arena.hpp>
#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// One allocation: this header, then the elements at a 64-byte boundary (cache line and
/// AVX-512 alignment, so kernels may use aligned loads). A buffer on a device outside host
/// memory (a GPU) keeps its elements there instead, and a host copy made on first host access
/// (Note [Device memory] in MAINTAINERS.md).
struct Buffer {
  static constexpr std::size_t alignment = backend::cpu::host_memory::alignment;
  static constexpr std::size_t header_bytes = 64;

  std::atomic<std::int64_t> refs{1};
  std::int64_t count = 0;                       // elements
  void (*destroy_elements)(Buffer*) = nullptr;  // non-trivial element types only
  std::size_t allocated_bytes = 0;              // this header and the elements
  devices::DeviceId device = 0;                 // where it lives (Note [Placement])
  bool charged = false;                         // counted in its device's memory figures
  std::atomic<bool> host_dirty{false};          // the host copy is newer than the device's
  std::int32_t arena_slot = -1;                 // its number in `arena`
  std::byte* device_elements = nullptr;         // the elements in device memory, or null
  std::atomic<std::byte*> host_view{nullptr};   // the host copy of device elements, or null
  BufferArena* arena = nullptr;                 // where its memory came from, or null: the heap

  /// Whether the elements live in device memory.
  [[nodiscard]] bool on_device() const noexcept { return device_elements != nullptr; }
  /// Bytes of the elements.
  [[nodiscard]] std::size_t element_bytes() const noexcept {
    return allocated_bytes - header_bytes;
  }

  /// The elements for host code to read (for device buffers, the host copy, made now if
  /// there is none).
  [[nodiscard]] std::byte* bytes() {
    if (device_elements != nullptr) [[unlikely]] {
      return host_copy();
    }
    return reinterpret_cast<std::byte*>(this) + header_bytes;
  }
  template <class T>
  [[nodiscard]] T* data() {
    return std::launder(reinterpret_cast<T*>(bytes()));
  }
  /// The elements for host code to write: a device buffer's host copy becomes the newer one,
  /// and goes to the device before a device kernel reads the buffer (device_bytes).
  template <class T>
  [[nodiscard]] T* writable_data() {
    T* elements = data<T>();
    if (device_elements != nullptr) [[unlikely]] {
      host_dirty.store(true, std::memory_order_release);
    }
    return elements;
  }
  /// The elements where the buffer's device reads and writes them: device memory (brought up
  /// to date with host writes), or the host elements of a host buffer.
  [[nodiscard]] std::byte* device_bytes() {
    if (device_elements == nullptr) {
      return bytes();
    }
    if (host_dirty.exchange(false, std::memory_order_acq_rel)) [[unlikely]] {
      devices::device_memory(device)->copy_from_host(
          device_elements, host_view.load(std::memory_order_acquire), element_bytes());
    }
    return device_elements;
  }
  /// A device kernel wrote the elements in place: the host copy is stale, so drop it.
  void device_written() noexcept {
    if (std::byte* view = host_view.exchange(nullptr, std::memory_order_acq_rel)) {
      backend::cpu::host_memory::deallocate(view, std::max<std::size_t>(element_bytes(), 1));
    }
  }

  /// Storage for `count` elements of T on the allocation device (Note [Placement]): left
  /// uninitialised for trivial T (kernels overwrite it), value-initialised otherwise.
  template <class T>
  static Buffer* allocate(std::int64_t count) {
    static_assert(sizeof(Buffer) <= header_bytes);
    if (count < 0 || static_cast<std::uint64_t>(count) > (std::uint64_t{1} << 46) / sizeof(T)) {
      throw resource_exhausted("tensor allocation of " + std::to_string(count) + " elements of " +
                               std::to_string(sizeof(T)) + " bytes is too large");
    }
    const std::size_t bytes = header_bytes + static_cast<std::size_t>(count) * sizeof(T);
    devices::DeviceId device = devices::allocation_device();
    constexpr bool trivial =
        std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>;
    if (device > 0) [[unlikely]] {
      if (backend::DeviceMemory* memory = devices::device_memory(device)) {
        if constexpr (trivial) {
          return allocate_on_device(*memory, device, bytes, count);
        } else {
          device = 0;  // strings stay in host memory, as TensorFlow keeps them
        }
      }
    }
    // Host-memory devices: their CPU backend instance accounts the bytes where accounting is
    // on (Note [Backends]). A traced call's arena places what it planned (Note [Memory plan]).
    void* raw = nullptr;
    std::int32_t slot = -1;
    BufferArena* arena = nullptr;
    if constexpr (trivial) {
      arena = active_buffer_arena();
      if (arena != nullptr) [[unlikely]] {
        raw = arena->place(bytes, slot);
      }
    }
    if (raw == nullptr) {
      raw = backend::cpu::host_memory::allocate(bytes);
    }
    auto* buffer = new (raw) Buffer;
    buffer->count = count;
    buffer->allocated_bytes = bytes;
    buffer->device = device;
    if (slot >= 0) {
      buffer->arena = arena;
      buffer->arena_slot = slot;
    }
    if (devices::host_accounting.load(std::memory_order_relaxed)) [[unlikely]] {
      devices::host(device).charge(bytes);
      buffer->charged = true;
    }
    if constexpr (!trivial) {
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
    if (self->device_elements != nullptr) [[unlikely]] {
      std::size_t const bytes = std::max<std::size_t>(self->element_bytes(), 1);
      devices::device_memory(self->device)->deallocate(self->device_elements, bytes);
      self->device_written();
      self->~Buffer();
      backend::cpu::host_memory::deallocate(self, header_bytes);
      return;
    }
    if (self->destroy_elements != nullptr) {
      self->destroy_elements(self);
    }
    const std::size_t bytes = self->allocated_bytes;
    if (self->charged) [[unlikely]] {
      devices::host(self->device).discharge(bytes);
    }
    BufferArena* const arena = self->arena;
    const std::int32_t slot = self->arena_slot;
    self->~Buffer();
    if (arena != nullptr) [[unlikely]] {
      arena->released(self, bytes, slot);
      return;
    }
    backend::cpu::host_memory::deallocate(self, bytes);
  }
  [[nodiscard]] bool unique() const noexcept { return refs.load(std::memory_order_acquire) == 1; }

 private:
  TAPEFLOW_NOINLINE static Buffer* allocate_on_device(backend::DeviceMemory& memory,
                                                      devices::DeviceId device, std::size_t bytes,
                                                      std::int64_t count) {
    void* raw = backend::cpu::host_memory::allocate(header_bytes);
    auto* buffer = new (raw) Buffer;
    buffer->count = count;
    buffer->allocated_bytes = bytes;
    buffer->device = device;
    try {
      buffer->device_elements =
          static_cast<std::byte*>(memory.allocate(std::max<std::size_t>(bytes - header_bytes, 1)));
    } catch (...) {
      buffer->~Buffer();
      backend::cpu::host_memory::deallocate(raw, header_bytes);
      throw;
    }
    return buffer;
  }
  // The host copy of device elements, made by the first host reader (racing readers keep the
  // first copy made).
  TAPEFLOW_NOINLINE std::byte* host_copy() {
    std::byte* view = host_view.load(std::memory_order_acquire);
    if (view != nullptr) {
      return view;
    }
    std::size_t const bytes = element_bytes();
    auto* fresh = static_cast<std::byte*>(
        backend::cpu::host_memory::allocate(std::max<std::size_t>(bytes, 1)));
    try {
      devices::device_memory(device)->copy_to_host(fresh, device_elements, bytes);
    } catch (...) {
      backend::cpu::host_memory::deallocate(fresh, std::max<std::size_t>(bytes, 1));
      throw;
    }
    if (!host_view.compare_exchange_strong(view, fresh, std::memory_order_acq_rel)) {
      backend::cpu::host_memory::deallocate(fresh, std::max<std::size_t>(bytes, 1));
      return view;
    }
    return fresh;
  }
};

/// Copies the elements of `source` into `target` (same size, trivial elements) wherever each
/// lives: host, device, or host and device (Note [Device memory]).
inline void copy_elements(Buffer& source, Buffer& target) {
  std::size_t const bytes = source.element_bytes();
  if (!target.on_device()) {
    std::byte* to = target.bytes();
    if (source.on_device() && source.host_view.load(std::memory_order_acquire) == nullptr) {
      devices::device_memory(source.device)->copy_to_host(to, source.device_elements, bytes);
    } else if (bytes != 0) {
      std::memcpy(to, source.bytes(), bytes);
    }
    return;
  }
  auto* memory = devices::device_memory(target.device);
  if (source.on_device() && !source.host_dirty.load(std::memory_order_acquire)) {
    memory->copy_on_device(target.device_elements, source.device_elements, bytes);
  } else {
    memory->copy_from_host(target.device_elements, source.bytes(), bytes);
  }
}

/// Makes `buffer` one its holder alone owns (copy-on-write): a shared buffer is replaced by a
/// copy of its elements, and the holder's reference to it released.
template <class T>
void unshare(Buffer*& buffer) {
  if (buffer->unique()) {
    return;
  }
  Buffer* own = Buffer::allocate<T>(buffer->count);
  if constexpr (std::is_trivially_copyable_v<T>) {
    copy_elements(*buffer, *own);
  } else {
    std::copy_n(buffer->template data<T>(), buffer->count, own->template data<T>());
  }
  buffer->release();
  buffer = own;
}

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
