// IWYU pragma: private, include <tapeflow/core/tensor.hpp>
// Where a thread's new buffers go while a traced function's call runs (Note [Memory plan] in
// MAINTAINERS.md): Buffer::allocate asks the thread's active arena first, and a buffer it
// placed gives its memory back to it. The plans themselves live in the function module.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// Memory for the buffers one thread allocates while the arena is active. Each buffer it
/// places holds a reference to it, so it outlives them; they are released from any thread.
class BufferArena {
 public:
  BufferArena() = default;
  BufferArena(const BufferArena&) = delete;
  BufferArena& operator=(const BufferArena&) = delete;
  virtual ~BufferArena() = default;

  /// Memory for a buffer of `bytes` (its header included), 64-byte aligned, numbered `slot`;
  /// null where the caller should take it from the heap.
  virtual void* place(std::size_t bytes, std::int32_t& slot) = 0;
  /// The buffer placed as `slot` at `memory` is gone.
  virtual void released(void* memory, std::size_t bytes, std::int32_t slot) noexcept = 0;

  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete this;
    }
  }
  /// Whether the caller's reference is the only one: no buffer it placed is alive.
  [[nodiscard]] bool unique() const noexcept { return refs_.load(std::memory_order_acquire) == 1; }

 private:
  std::atomic<std::int64_t> refs_{1};
};

/// The calling thread's active arena, or null (the heap).
inline BufferArena*& active_buffer_arena() noexcept {
  thread_local BufferArena* arena = nullptr;
  return arena;
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
