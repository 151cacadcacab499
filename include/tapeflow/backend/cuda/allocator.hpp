// Host-compilable declarations of the CUDA backend's allocator (compiled in tapeflow::cuda,
// backends/cuda/allocator.cu): one per logical GPU.
//
// Why stream-ordered pools (cudaMallocAsync): freeing does not synchronize the device, and the
// pool caches blocks across steps as TensorFlow's BFC allocator does. The pool's release
// threshold is the memory policy: without memory growth the pool keeps what it has reserved (up
// to the limit) for the next step; with growth it gives memory back at each synchronization.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <tapeflow/backend/memory_budget.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// The allocator of one logical GPU: a stream-ordered pool charged against a MemoryBudget.
class DeviceAllocator {
 public:
  /// An allocator on CUDA device `ordinal` for the logical device named `device` (in
  /// messages), holding at most `limit_bytes` (none: the device's memory).
  DeviceAllocator(int ordinal, std::string device, std::optional<std::int64_t> limit_bytes,
                  bool memory_growth);
  ~DeviceAllocator();
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  /// `bytes` of device memory, ordered on the allocator's stream; resource_exhausted past the
  /// limit or when the device is out of memory, naming the device and the request.
  void* allocate(std::size_t bytes);
  /// Returns `bytes` at `pointer` from allocate (nullptr is ignored). The caller passes the
  /// size, as to std::allocator: tensors know it, and a size map would cost a lock and a hash
  /// per call (bench/cuda/allocator.bench.cpp measured it).
  void deallocate(void* pointer, std::size_t bytes) noexcept;
  /// Waits for the allocator's stream; with memory growth, trims the pool.
  void synchronize();

  /// What is in use, the peak and the limit.
  [[nodiscard]] const MemoryBudget& budget() const noexcept;
  /// Starts a new peak at the bytes in use now.
  void reset_peak() noexcept;
  /// The CUDA device the memory is on.
  [[nodiscard]] int ordinal() const noexcept;
  /// Bytes the pool holds from the driver (cached blocks included).
  [[nodiscard]] std::int64_t bytes_reserved() const;
  /// The stream allocations are ordered on (a cudaStream_t).
  [[nodiscard]] void* stream() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
