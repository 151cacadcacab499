// Reference-counted, 64-byte-aligned element storage shared by tensors.
// IWYU pragma: private, include <tapeflow/core/tensor.hpp>
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// One allocation: this header, then the elements at a 64-byte boundary (cache line and
/// AVX-512 alignment, so kernels may use aligned loads).
struct Buffer {
  static constexpr std::size_t alignment = 64;
  static constexpr std::size_t header_bytes = 64;

  std::atomic<std::int64_t> refs{1};
  std::int64_t count = 0;                       // elements
  void (*destroy_elements)(Buffer*) = nullptr;  // non-trivial element types only
  int size_class = -1;                          // Note [Buffer cache]; -1: not cached
  devices::DeviceId device = 0;                 // where it lives (Note [Placement])

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
    const int size_class = class_of(bytes);
    BlockCache* cache = size_class >= 0 ? block_cache() : nullptr;
    void* raw = cache != nullptr ? cache->take(size_class) : nullptr;
    if (raw == nullptr) {
      raw = ::operator new(size_class >= 0 ? class_bytes(size_class) : bytes,
                           std::align_val_t{alignment});
    }
    auto* buffer = new (raw) Buffer;
    buffer->count = count;
    buffer->size_class = size_class;
    buffer->device = devices::allocation_device();
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

  // Note [Buffer cache]: eager ops allocate an output per call, and for small and mid-size
  // tensors the aligned allocation costs more than the arithmetic. Freed blocks of up to
  // 64 MiB go to a per-thread cache by power-of-two size class (bounded in total bytes) and
  // are reused by the next allocation of that class.
  static constexpr int min_class_log2 = 7;   // 128 B
  static constexpr int max_class_log2 = 26;  // 64 MiB
  static int class_of(std::size_t bytes) noexcept {
    int log2 = min_class_log2;
    while ((std::size_t{1} << log2) < bytes) {
      if (++log2 > max_class_log2) {
        return -1;
      }
    }
    return log2 - min_class_log2;
  }
  static std::size_t class_bytes(int size_class) noexcept {
    return std::size_t{1} << (size_class + min_class_log2);
  }

  class BlockCache {
   public:
    static constexpr std::size_t max_bytes = std::size_t{256} << 20;
    BlockCache() = default;
    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;
    ~BlockCache() {
      cache_gone() = true;
      for (auto& list : free_) {
        for (void* block : list) {
          ::operator delete(block, std::align_val_t{alignment});
        }
      }
    }
    void* take(int size_class) noexcept {
      auto& list = free_[static_cast<std::size_t>(size_class)];
      if (list.empty()) {
        return nullptr;
      }
      void* block = list.back();
      list.pop_back();
      cached_ -= class_bytes(size_class);
      return block;
    }
    bool give(int size_class, void* block) noexcept {
      const std::size_t bytes = class_bytes(size_class);
      auto& list = free_[static_cast<std::size_t>(size_class)];
      if (cached_ + bytes > max_bytes || list.size() >= 64) {
        return false;
      }
      try {
        list.push_back(block);
      } catch (...) {
        return false;
      }
      cached_ += bytes;
      return true;
    }

   private:
    std::array<std::vector<void*>, max_class_log2 - min_class_log2 + 1> free_{};
    std::size_t cached_ = 0;
  };
  // Set when this thread's cache has been destroyed (thread exit): a tensor that outlives it (a
  // static, destroyed after the main thread's thread_locals) then frees its block directly.
  // A trivially destructible flag, so reading it after the cache's destruction is defined.
  static bool& cache_gone() noexcept {
    thread_local bool gone = false;
    return gone;
  }
  /// This thread's cache, or null once it has been destroyed.
  static BlockCache* block_cache() noexcept {
    if (cache_gone()) {
      return nullptr;
    }
    thread_local BlockCache cache;
    return &cache;
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
    const int size_class = self->size_class;
    self->~Buffer();
    BlockCache* cache = size_class >= 0 ? block_cache() : nullptr;
    if (cache == nullptr || !cache->give(size_class, self)) {
      ::operator delete(static_cast<void*>(self), std::align_val_t{alignment});
    }
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
