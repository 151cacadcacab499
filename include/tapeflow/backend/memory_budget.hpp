// The memory accounting of one logical device: what a `memory_limit` promises.
//
// Every device allocator charges its requests here before asking the driver, so a logical
// device never holds more than its limit, whatever the physical device has free. A refusal
// becomes the allocator's resource_exhausted naming the device, the request, what is in use and
// the limit (TensorFlow's "OOM when allocating tensor ..." diagnosis). Backends sit below core's
// error types, so this reports and the allocator throws.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend {

/// Bytes in use on one logical device against its optional limit; thread-safe, lock-free.
class MemoryBudget {
 public:
  /// `device` names the logical device in messages; no `limit_bytes`: unlimited.
  MemoryBudget(std::string device, std::optional<std::int64_t> limit_bytes)
      : device_(std::move(device)), limit_(limit_bytes) {}

  /// Charges `bytes` if they fit (a negative request never does); false leaves the budget
  /// unchanged and the caller reports `refusal(bytes)`. Lock-free: allocators call it per
  /// allocation.
  [[nodiscard]] bool try_reserve(std::int64_t bytes) noexcept {
    if (bytes < 0) {
      return false;
    }
    std::int64_t used = in_use_.load(std::memory_order_relaxed);
    do {
      if (limit_ && bytes > *limit_ - used) {
        return false;
      }
    } while (!in_use_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    std::int64_t const now = used + bytes;
    std::int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return true;
  }
  /// Why `bytes` did not fit, for the resource_exhausted the allocator throws.
  [[nodiscard]] std::string refusal(std::int64_t bytes) const {
    std::string out = "OOM when allocating " + std::to_string(bytes) + " bytes on " + device_ +
                      ": " + std::to_string(in_use()) + " bytes in use";
    if (limit_) {
      out += " of its " + std::to_string(*limit_) + "-byte memory_limit";
    }
    return out;
  }
  /// Returns `bytes` charged earlier.
  void release(std::int64_t bytes) noexcept { in_use_.fetch_sub(bytes, std::memory_order_relaxed); }

  /// Bytes charged now.
  [[nodiscard]] std::int64_t in_use() const noexcept {
    return in_use_.load(std::memory_order_relaxed);
  }
  /// The most bytes ever charged at once.
  [[nodiscard]] std::int64_t peak() const noexcept { return peak_.load(std::memory_order_relaxed); }
  /// Starts a new peak at the bytes charged now.
  void reset_peak() noexcept { peak_.store(in_use(), std::memory_order_relaxed); }
  /// The limit in bytes; none: unlimited.
  [[nodiscard]] std::optional<std::int64_t> limit() const noexcept { return limit_; }
  /// The logical device's name, as messages give it.
  [[nodiscard]] const std::string& device() const noexcept { return device_; }

 private:
  std::string device_;
  std::optional<std::int64_t> limit_;
  std::atomic<std::int64_t> in_use_{0};
  std::atomic<std::int64_t> peak_{0};
};

}  // namespace backend
TAPEFLOW_END_NAMESPACE
