// One logical GPU's memory: allocation through its DeviceAllocator, copies ordered on its
// stream and complete on return (backend/device_memory.hpp's contract). Host code: g++ builds it.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "device_memory.hpp"
#include <tapeflow/core/errors.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

void check(int status, const char* what) {
  if (status != cudaSuccess) {
    auto const error = static_cast<cudaError_t>(status);
    (void)cudaGetLastError();
    throw internal(std::string(what) + ": " + cudaGetErrorString(error));
  }
}

CudaMemory::CudaMemory(const DeviceMemoryRequest& request)
    : allocator_(request.physical_index, request.device, request.limit_bytes,
                 request.memory_growth) {}

CudaMemory::~CudaMemory() {
  if (blas_ != nullptr) {
    (void)cublasDestroy(static_cast<cublasHandle_t>(blas_));
  }
}

void CudaMemory::activate() const { check(cudaSetDevice(allocator_.ordinal()), "cudaSetDevice"); }

void* CudaMemory::allocate(std::size_t bytes) { return allocator_.allocate(bytes); }

void CudaMemory::deallocate(void* pointer, std::size_t bytes) noexcept {
  allocator_.deallocate(pointer, bytes);
}

namespace {
// Copies on the device's stream, so they follow its kernels; returning only when done keeps
// the host side free to reuse at once.
void copy(const CudaMemory& memory, void* destination, const void* source, std::size_t bytes,
          const char* what) {
  if (bytes == 0) {
    return;
  }
  memory.activate();
  auto* stream = static_cast<cudaStream_t>(memory.stream());
  check(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, stream), what);
  check(cudaStreamSynchronize(stream), what);
}
}  // namespace

void CudaMemory::copy_to_host(void* destination, const void* source, std::size_t bytes) {
  copy(*this, destination, source, bytes, "copy from GPU to host");
}
void CudaMemory::copy_from_host(void* destination, const void* source, std::size_t bytes) {
  copy(*this, destination, source, bytes, "copy from host to GPU");
}
void CudaMemory::copy_on_device(void* destination, const void* source, std::size_t bytes) {
  copy(*this, destination, source, bytes, "copy between GPU buffers");
}

MemoryInfo CudaMemory::memory_info() const {
  return {allocator_.budget().in_use(), allocator_.budget().peak()};
}

void CudaMemory::reset_peak() { allocator_.reset_peak(); }

void* CudaMemory::blas() {
  std::call_once(blas_once_, [this] {
    activate();
    cublasHandle_t handle = nullptr;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
      throw internal("cublasCreate failed on " + allocator_.budget().device());
    }
    (void)cublasSetStream(handle, static_cast<cudaStream_t>(stream()));
    blas_ = handle;
  });
  return blas_;
}

CudaMemory& current_device() {
  auto* memory = detail::devices::device_memory(detail::devices::allocation_device());
  if (memory == nullptr) {
    throw internal("a CUDA kernel ran while no GPU was the op's device");
  }
  return static_cast<CudaMemory&>(*memory);
}

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
