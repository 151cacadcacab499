// The memory accounting of one logical device: what a `memory_limit` promises.
//
// Every device allocator charges its requests here before asking the driver, so a logical
// device never holds more than its limit, whatever the physical device has free. A refusal
// becomes the allocator's resource_exhausted naming the device, the request, what is in use and
// the limit (TensorFlow's "OOM when allocating tensor ..." diagnosis). Backends sit below core's
// error types, so this reports and the allocator throws.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend {

/// Bytes in use on one logical device against its optional limit; thread-safe.
class MemoryBudget {
 public:
  /// `device` names the logical device in messages; no `limit_bytes`: unlimited.
  MemoryBudget(std::string device, std::optional<std::int64_t> limit_bytes)
      : device_(std::move(device)), limit_(limit_bytes) {}

  /// Charges `bytes` if they fit (a negative request never does); false leaves the budget
  /// unchanged and the caller reports `refusal(bytes)`.
  [[nodiscard]] bool try_reserve(std::int64_t bytes) {
    std::lock_guard lock(mutex_);
    if (bytes < 0 || (limit_ && bytes > *limit_ - in_use_)) {
      return false;
    }
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
    return true;
  }
  /// Why `bytes` did not fit, for the resource_exhausted the allocator throws.
  [[nodiscard]] std::string refusal(std::int64_t bytes) const {
    std::lock_guard lock(mutex_);
    std::string out = "OOM when allocating " + std::to_string(bytes) + " bytes on " + device_ +
                      ": " + std::to_string(in_use_) + " bytes in use";
    if (limit_) {
      out += " of its " + std::to_string(*limit_) + "-byte memory_limit";
    }
    return out;
  }
  /// Returns `bytes` charged earlier.
  void release(std::int64_t bytes) noexcept {
    std::lock_guard lock(mutex_);
    in_use_ -= bytes;
  }

  /// Bytes charged now.
  [[nodiscard]] std::int64_t in_use() const {
    std::lock_guard lock(mutex_);
    return in_use_;
  }
  /// The most bytes ever charged at once.
  [[nodiscard]] std::int64_t peak() const {
    std::lock_guard lock(mutex_);
    return peak_;
  }
  /// The limit in bytes; none: unlimited.
  [[nodiscard]] std::optional<std::int64_t> limit() const noexcept { return limit_; }
  /// The logical device's name, as messages give it.
  [[nodiscard]] const std::string& device() const noexcept { return device_; }

 private:
  std::string device_;
  std::optional<std::int64_t> limit_;
  mutable std::mutex mutex_;
  std::int64_t in_use_ = 0;
  std::int64_t peak_ = 0;
};

}  // namespace backend
TAPEFLOW_END_NAMESPACE
