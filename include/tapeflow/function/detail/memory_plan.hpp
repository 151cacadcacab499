// IWYU pragma: private, include <tapeflow/function/function.hpp>
// A traced function's static memory plan (Note [Memory plan] in MAINTAINERS.md): its second
// call records the buffers its thread allocates and when each is released; offsets in one
// block are planned from those lifetimes; later calls place the same buffers in that block,
// kept across calls while no buffer placed in it is alive.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include <tapeflow/backend/cpu/host_allocator.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/buffer_arena.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/detail/memory_plan_info.hpp>

// AddressSanitizer still sees overruns between planned buffers: free bytes stay poisoned.
#if defined(__SANITIZE_ADDRESS__)
#define TAPEFLOW_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TAPEFLOW_ARENA_ASAN 1
#endif
#endif
#ifdef TAPEFLOW_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define TAPEFLOW_ARENA_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define TAPEFLOW_ARENA_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define TAPEFLOW_ARENA_POISON(p, n) ((void)(p), (void)(n))
#define TAPEFLOW_ARENA_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// One buffer of a recorded call: its bytes and the events (allocations and releases, counted
/// in order) that began and ended its life; `end` -1: it outlived the call (an output, a
/// variable's new value), so it is never planned. `offset` is its place in the block, or -1.
struct PlannedBuffer {
  std::size_t bytes = 0;
  std::int64_t begin = 0;
  std::int64_t end = -1;
  std::int64_t offset = -1;

  /// The bytes it spans in a block: whole cache lines, so the next one starts aligned.
  [[nodiscard]] std::size_t span() const noexcept {
    constexpr std::size_t line = backend::cpu::host_memory::alignment;
    return (bytes + line - 1) / line * line;
  }
  /// One past its last byte in the block.
  [[nodiscard]] std::int64_t offset_end() const noexcept {
    return offset + static_cast<std::int64_t>(span());
  }
};

/// Gives each buffer that ended within the call an offset such that two whose lives overlap
/// never share a byte: the largest first, each at the lowest offset free through its life
/// (greedy by size). Offsets and spans are whole cache lines (PlannedBuffer::span). Returns the
/// block's bytes.
inline std::size_t assign_offsets(std::vector<PlannedBuffer>& buffers) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    buffers[i].offset = -1;
    if (buffers[i].end >= 0) {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  std::vector<std::size_t> placed;  // given an offset so far
  std::vector<std::pair<std::size_t, std::size_t>> busy;
  std::size_t total = 0;
  for (std::size_t i : order) {
    const auto& b = buffers[i];
    busy.clear();
    for (std::size_t j : placed) {
      const auto& p = buffers[j];
      if (p.begin < b.end && b.begin < p.end) {
        busy.emplace_back(static_cast<std::size_t>(p.offset),
                          static_cast<std::size_t>(p.offset_end()));
      }
    }
    std::sort(busy.begin(), busy.end());
    std::size_t offset = 0;
    for (const auto& [from, to] : busy) {
      if (from >= offset + b.span()) {
        break;
      }
      offset = std::max(offset, to);
    }
    buffers[i].offset = static_cast<std::int64_t>(offset);
    total = std::max(total, offset + b.span());
    placed.push_back(i);
  }
  return total;
}

/// The first call's arena: buffers come from the heap, and their lives are written down.
class AllocationRecorder final : public BufferArena {
 public:
  void* place(std::size_t bytes, std::int32_t& slot) override {
    std::lock_guard lock(mutex_);
    if (buffers_.size() >= max_buffers) {
      too_many_ = true;
      return nullptr;
    }
    buffers_.push_back({.bytes = bytes, .begin = clock_++});    // first: it may throw
    void* memory = backend::cpu::host_memory::allocate(bytes);  // unreleased if this throws
    slot = static_cast<std::int32_t>(buffers_.size() - 1);
    retain();
    return memory;
  }
  void released(void* memory, std::size_t bytes, std::int32_t slot) noexcept override {
    {
      std::lock_guard lock(mutex_);
      buffers_[static_cast<std::size_t>(slot)].end = clock_++;
    }
    backend::cpu::host_memory::deallocate(memory, bytes);
    release();
  }
  /// The call's buffers as they stand at its end; empty if there were too many to plan.
  std::vector<PlannedBuffer> recorded() {
    std::lock_guard lock(mutex_);
    return too_many_ ? std::vector<PlannedBuffer>{} : buffers_;
  }

  /// A call allocating more buffers than this is not planned (planning is quadratic in them).
  static constexpr std::size_t max_buffers = 4096;

 private:
  std::mutex mutex_;
  std::vector<PlannedBuffer> buffers_;
  std::int64_t clock_ = 0;
  bool too_many_ = false;
};

/// A plan's offsets, and for each planned buffer the earlier ones sharing its bytes (which
/// must be gone before it is placed).
struct MemoryLayout {
  std::vector<Shape> arg_shapes;  // of the recorded call: calls with others take the heap
  std::vector<PlannedBuffer> buffers;
  std::size_t block_bytes = 0;
  std::vector<std::size_t> sharers_begin;  // buffer i's sharers: [begin[i], begin[i + 1])
  std::vector<std::int32_t> sharers;

  /// Plans `recorded`; false if nothing would be placed, or its sharers are too many to check.
  bool plan(std::vector<PlannedBuffer> recorded) {
    buffers = std::move(recorded);
    block_bytes = assign_offsets(buffers);
    sharers_begin.assign(1, 0);
    sharers.clear();
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      const auto& b = buffers[i];
      for (std::size_t j = 0; b.offset >= 0 && j < i; ++j) {
        const auto& p = buffers[j];
        if (p.offset >= 0 && p.offset < b.offset_end() && b.offset < p.offset_end()) {
          sharers.push_back(static_cast<std::int32_t>(j));
        }
      }
      if (sharers.size() > max_sharers) {
        return false;
      }
      sharers_begin.push_back(sharers.size());
    }
    return block_bytes > 0;
  }

  /// Whether a call on `args` is the recorded one's kind.
  [[nodiscard]] bool fits(std::span<const AnyTensor> args) const noexcept {
    return std::equal(args.begin(), args.end(), arg_shapes.begin(), arg_shapes.end(),
                      [](const AnyTensor& a, const Shape& s) { return a.shape() == s; });
  }

  static constexpr std::size_t max_sharers = std::size_t{1} << 20;
};

/// A later call's arena: one block, each planned buffer at its offset. A call whose buffers
/// differ from the recorded ones (in number, size or life) gets the heap for those that do not
/// fit, and is marked diverged.
class PlannedArena final : public BufferArena {
 public:
  PlannedArena(std::shared_ptr<const MemoryLayout> layout, std::uint64_t generation)
      : generation_(generation),
        layout_(std::move(layout)),
        live_(std::make_unique<std::atomic<bool>[]>(layout_->buffers.size())),
        block_(static_cast<std::byte*>(backend::cpu::host_memory::allocate(layout_->block_bytes))) {
    TAPEFLOW_ARENA_POISON(block_, layout_->block_bytes);
  }
  ~PlannedArena() override {
    TAPEFLOW_ARENA_UNPOISON(block_, layout_->block_bytes);
    backend::cpu::host_memory::deallocate(block_, layout_->block_bytes);
  }

  /// Starts a call: the caller holds the only reference (no buffer placed before is alive).
  void start_call() noexcept {
    next_ = 0;
    diverged_ = false;
  }
  /// Whether this call's buffers differed from the plan.
  [[nodiscard]] bool diverged() const noexcept { return diverged_; }
  [[nodiscard]] const MemoryLayout& layout() const noexcept { return *layout_; }
  /// Which of its owner's plans it follows.
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }

  void* place(std::size_t bytes, std::int32_t& slot) override {
    const std::size_t k = next_++;
    const auto& buffers = layout_->buffers;
    if (k >= buffers.size() || buffers[k].bytes != bytes) {
      diverged_ = true;
      return nullptr;
    }
    if (buffers[k].offset < 0) {
      return nullptr;  // it outlives calls: the heap's
    }
    for (std::size_t s = layout_->sharers_begin[k]; s < layout_->sharers_begin[k + 1]; ++s) {
      if (live_[static_cast<std::size_t>(layout_->sharers[s])].load(std::memory_order_acquire)) {
        diverged_ = true;  // an earlier buffer lives longer than planned
        return nullptr;
      }
    }
    live_[k].store(true, std::memory_order_relaxed);
    slot = static_cast<std::int32_t>(k);
    retain();
    TAPEFLOW_ARENA_UNPOISON(block_ + buffers[k].offset, bytes);
    return block_ + buffers[k].offset;
  }
  void released(void* memory, std::size_t bytes, std::int32_t slot) noexcept override {
    TAPEFLOW_ARENA_POISON(memory, bytes);
    live_[static_cast<std::size_t>(slot)].store(false, std::memory_order_release);
    release();
  }

 private:
  std::uint64_t generation_;
  std::shared_ptr<const MemoryLayout> layout_;
  std::unique_ptr<std::atomic<bool>[]> live_;
  std::byte* block_;
  std::size_t next_ = 0;  // the calling thread's alone
  bool diverged_ = false;
};

/// One executor's plan: recorded on a call, replayed by later ones. Calls may run on several
/// threads at once: each takes a block no other call holds.
class MemoryPlan {
 public:
  MemoryPlan() = default;
  MemoryPlan(const MemoryPlan&) = delete;
  MemoryPlan& operator=(const MemoryPlan&) = delete;
  ~MemoryPlan() {
    if (BufferArena* idle = idle_.exchange(nullptr)) {
      idle->release();
    }
  }

  /// For the length of one call: the calling thread's buffers go to this plan's arena (the
  /// previous arena, an outer call's, comes back at the end).
  class CallScope {
   public:
    CallScope(MemoryPlan& plan, std::span<const AnyTensor> args)
        : plan_(plan), previous_(active_buffer_arena()) {
      arena_ = plan.begin_call(args, planned_);
      active_buffer_arena() = arena_;
    }
    CallScope(const CallScope&) = delete;
    CallScope& operator=(const CallScope&) = delete;
    ~CallScope() {
      active_buffer_arena() = previous_;
      if (arena_ != nullptr) {
        plan_.end_call(arena_, planned_, std::uncaught_exceptions() > uncaught_);
      }
    }

   private:
    MemoryPlan& plan_;
    BufferArena* previous_;
    BufferArena* arena_ = nullptr;
    bool planned_ = false;
    int uncaught_ = std::uncaught_exceptions();
  };

  [[nodiscard]] MemoryPlanInfo info() const {
    std::lock_guard lock(mutex_);
    MemoryPlanInfo out;
    out.planned = layout_ != nullptr;
    out.off = off_;
    out.diverged_calls = diverged_calls_;
    if (layout_) {
      out.block_bytes = layout_->block_bytes;
      std::vector<std::pair<std::int64_t, std::int64_t>> events;  // (when, +-bytes)
      for (const auto& b : layout_->buffers) {
        (b.offset >= 0 ? out.placed_buffers : out.heap_buffers) += 1;
        if (b.offset >= 0) {
          events.emplace_back(b.begin, static_cast<std::int64_t>(b.bytes));
          events.emplace_back(b.end, -static_cast<std::int64_t>(b.bytes));
        }
      }
      std::sort(events.begin(), events.end());
      std::int64_t live = 0;
      for (const auto& [when, delta] : events) {
        live += delta;
        out.live_bytes_peak = std::max(out.live_bytes_peak, static_cast<std::size_t>(live));
      }
    }
    return out;
  }

  /// Diverged calls after which planning stops (a plan is recorded anew after each before).
  static constexpr std::int64_t max_diverged_calls = 2;
  /// Calls run on the heap before one is recorded: a first call often does what later ones
  /// do not (copies a variable's shared value before its first update, fills caches).
  static constexpr std::int64_t unrecorded_first_calls = 1;

 private:
  // The arena for a call on `args` starting now, or null: the heap (planning is off, another
  // thread is recording, or the arguments' shapes are not the recorded call's).
  BufferArena* begin_call(std::span<const AnyTensor> args, bool& planned) {
    if (ready_.load(std::memory_order_acquire)) {
      PlannedArena* arena = idle_.exchange(nullptr, std::memory_order_acq_rel);
      if (arena != nullptr && (!arena->unique() || arena->generation() != generation_.load())) {
        arena->release();  // a buffer placed in it lives on (it goes when that does), or a
        arena = nullptr;   // newer plan replaced its own
      }
      if (arena == nullptr) {
        std::lock_guard lock(mutex_);
        if (!layout_) {
          return nullptr;
        }
        arena = new PlannedArena(layout_, generation_.load());
      }
      if (!arena->layout().fits(args)) [[unlikely]] {  // e.g. a relaxed shape's short batch
        keep_idle(arena);
        return nullptr;
      }
      arena->start_call();
      planned = true;
      return arena;
    }
    if (off_.load(std::memory_order_relaxed)) {
      return nullptr;  // e.g. a function with no buffers to plan: no lock per call
    }
    std::lock_guard lock(mutex_);
    if (off_ || recording_ || unrecorded_calls_++ < unrecorded_first_calls) {
      return nullptr;
    }
    recording_ = true;
    recorded_shapes_.clear();
    for (const auto& a : args) {
      recorded_shapes_.push_back(a.shape());
    }
    return new AllocationRecorder;
  }

  void end_call(BufferArena* arena, bool planned, bool failed) noexcept {
    if (planned) {
      auto* placed = static_cast<PlannedArena*>(arena);
      if (placed->diverged()) [[unlikely]] {
        diverged(placed);
        return;
      }
      keep_idle(placed);
      return;
    }
    auto* recorder = static_cast<AllocationRecorder*>(arena);
    try {
      if (!failed) {
        auto layout = std::make_shared<MemoryLayout>();
        const bool worth_it = layout->plan(recorder->recorded());
        std::lock_guard lock(mutex_);
        layout->arg_shapes = std::move(recorded_shapes_);
        if (worth_it) {
          layout_ = std::move(layout);
          ready_.store(true, std::memory_order_release);
        } else {
          off_ = true;
        }
      }
    } catch (...) {  // NOLINT(bugprone-empty-catch): no plan, so calls keep the heap
    }
    {
      std::lock_guard lock(mutex_);
      recording_ = false;
    }
    recorder->release();
  }

  void keep_idle(PlannedArena* arena) noexcept {
    if (PlannedArena* other = idle_.exchange(arena, std::memory_order_acq_rel)) {
      other->release();  // two calls ran at once: keep one block
    }
  }

  void diverged(PlannedArena* arena) noexcept {
    arena->release();
    std::lock_guard lock(mutex_);
    ++diverged_calls_;
    generation_.fetch_add(1);
    ready_.store(false, std::memory_order_release);
    layout_.reset();
    off_ = diverged_calls_ >= max_diverged_calls;
    if (PlannedArena* idle = idle_.exchange(nullptr, std::memory_order_acq_rel)) {
      idle->release();
    }
  }

  mutable std::mutex mutex_;
  std::atomic<bool> ready_{false};
  std::atomic<std::uint64_t> generation_{0};  // of layout_
  std::atomic<PlannedArena*> idle_{nullptr};  // a block no call holds
  std::shared_ptr<const MemoryLayout> layout_;
  bool recording_ = false;
  std::int64_t unrecorded_calls_ = 0;
  std::vector<Shape> recorded_shapes_;
  std::atomic<bool> off_{false};
  std::int64_t diverged_calls_ = 0;
};

}  // namespace detail
TAPEFLOW_END_NAMESPACE
