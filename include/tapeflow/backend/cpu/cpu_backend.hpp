// The CPU backend: one instance per logical CPU device, modelling the Backend concept.
//
// Every logical CPU keeps its tensors in host memory (the shared block cache of
// backend/cpu/host_allocator.hpp) but has its own accounting (what get_memory_info reports)
// and its own share of the intra-op threads (backend/cpu/thread_budget.hpp). Work is
// synchronous, so a stream is the calling thread and an event is complete when recorded.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/backend/cpu/host_allocator.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend {

/// One logical CPU device's runtime.
class Cpu {
 public:
  /// The CPU runs work in the caller's thread, in issue order.
  struct Stream {};
  /// Complete once recorded, since the stream it marks is synchronous.
  struct Event {};
  /// TensorFlow's device type of the devices it serves.
  static constexpr std::string_view device_type = "CPU";

  Cpu() = default;
  Cpu(const Cpu&) = delete;
  Cpu& operator=(const Cpu&) = delete;

  /// `bytes` of 64-byte-aligned host memory, charged to this device.
  void* allocate(std::size_t bytes) {
    void* block = cpu::host_memory::allocate(bytes);
    charge_bytes(bytes);
    return block;
  }
  /// Frees what `allocate(bytes)` returned.
  void deallocate(void* block, std::size_t bytes) noexcept {
    discharge(bytes);
    cpu::host_memory::deallocate(block, bytes);
  }

  /// Copies `bytes` from host memory (host and device memory are the same memory).
  void copy_host_to_device(void* dst, const void* src, std::size_t bytes, Stream&) {
    copy(dst, src, bytes);
  }
  /// Copies `bytes` to host memory.
  void copy_device_to_host(void* dst, const void* src, std::size_t bytes, Stream&) {
    copy(dst, src, bytes);
  }
  /// Copies `bytes` within the device.
  void copy_device_to_device(void* dst, const void* src, std::size_t bytes, Stream&) {
    copy(dst, src, bytes);
  }

  /// The stream work is issued on (the calling thread).
  Stream& default_stream() noexcept { return stream_; }
  /// Marks the stream's current point (already reached: work is synchronous).
  void record(Event&, Stream&) noexcept {}
  /// Orders the stream after the event (nothing to wait for).
  void wait(Stream&, Event&) noexcept {}
  /// Waits for the stream's work (done already).
  void synchronize(Stream&) noexcept {}

  /// Bytes allocated on this device now and at most since the last reset_peak.
  [[nodiscard]] MemoryInfo memory_info() const noexcept {
    return {current_.load(std::memory_order_relaxed), peak_.load(std::memory_order_relaxed)};
  }
  /// Restarts the peak at what is allocated now (tf.config.experimental.reset_memory_stats).
  void reset_peak() noexcept {
    peak_.store(current_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }

  /// Intra-op threads this device's ops may use (0: the whole pool).
  [[nodiscard]] int thread_budget() const noexcept {
    return threads_.load(std::memory_order_relaxed);
  }
  /// Sets the threads this device's ops may use (0 or less: the whole pool).
  void set_thread_budget(int threads) noexcept {
    threads_.store(threads < 0 ? 0 : threads, std::memory_order_relaxed);
  }

  /// Accounts `bytes` allocated elsewhere for this device (memory it owns).
  void charge(std::size_t bytes) noexcept { charge_bytes(bytes); }
  /// Returns `bytes` accounted with `charge`.
  void discharge(std::size_t bytes) noexcept {
    current_.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
  }

 private:
  void charge_bytes(std::size_t bytes) noexcept {
    std::int64_t const now =
        current_.fetch_add(static_cast<std::int64_t>(bytes), std::memory_order_relaxed) +
        static_cast<std::int64_t>(bytes);
    if (now > peak_.load(std::memory_order_relaxed)) {
      raise_peak(now);
    }
  }
  static void copy(void* dst, const void* src, std::size_t bytes) noexcept {
    if (bytes != 0) {
      std::memcpy(dst, src, bytes);
    }
  }
  void raise_peak(std::int64_t now) noexcept {
    std::int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }

  std::atomic<std::int64_t> current_{0};
  std::atomic<std::int64_t> peak_{0};
  std::atomic<int> threads_{0};
  Stream stream_;
};

static_assert(Backend<Cpu>, "the CPU backend models the Backend concept");

}  // namespace backend
TAPEFLOW_END_NAMESPACE
