// The memory of one logical GPU as core sees it (backend/device_memory.hpp), and what the
// CUDA kernels need of their device: its stream and its cuBLAS handle. Internal to
// tapeflow::cuda.
#pragma once

#include <mutex>

#include <tapeflow/backend/cuda/allocator.hpp>
#include <tapeflow/backend/device_memory.hpp>
#include <tapeflow/core/detail/device_table.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// One logical GPU: its stream-ordered allocator, copies ordered on its stream, and the
/// handles its kernels use.
class CudaMemory final : public DeviceMemory {
 public:
  explicit CudaMemory(const DeviceMemoryRequest& request);
  ~CudaMemory() override;

  void* allocate(std::size_t bytes) override;
  void deallocate(void* pointer, std::size_t bytes) noexcept override;
  void copy_to_host(void* destination, const void* source, std::size_t bytes) override;
  void copy_from_host(void* destination, const void* source, std::size_t bytes) override;
  void copy_on_device(void* destination, const void* source, std::size_t bytes) override;
  [[nodiscard]] MemoryInfo memory_info() const override;
  void reset_peak() override;

  /// Makes the device current on the calling thread; kernels call it before launching.
  void activate() const;
  /// The stream every kernel and copy of the device is ordered on (a cudaStream_t).
  [[nodiscard]] void* stream() const noexcept { return allocator_.stream(); }
  /// The device's cuBLAS handle (a cublasHandle_t) bound to its stream, made on first use.
  [[nodiscard]] void* blas();
  /// The CUDA device (card) the logical device is on.
  [[nodiscard]] int ordinal() const noexcept { return allocator_.ordinal(); }
  /// Waits for the device's work.
  void synchronize() { allocator_.synchronize(); }

 private:
  DeviceAllocator allocator_;
  std::once_flag blas_once_;
  void* blas_ = nullptr;
};

/// The logical GPU a registered kernel runs on: the op's device, which the executor makes the
/// allocation device while the kernel runs (Note [Device memory]).
CudaMemory& current_device();

/// Throws internal naming `what` and the device when a CUDA call failed.
void check(int status, const char* what);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
