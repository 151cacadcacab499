// One logical GPU's allocator: a cudaMallocAsync pool on its device, charged against its
// memory_limit (backend/cuda/allocator.hpp says why).
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include <tapeflow/backend/cuda/allocator.hpp>
#include <tapeflow/core/errors.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {
namespace {
void check(cudaError_t status, const std::string& what, const std::string& device) {
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw internal(what + " on " + device + ": " + cudaGetErrorString(status));
  }
}
}  // namespace

struct DeviceAllocator::Impl {
  int ordinal;
  MemoryBudget budget;
  bool growth;
  cudaMemPool_t pool = nullptr;
  cudaStream_t stream = nullptr;

  Impl(int device_ordinal, std::string device, std::optional<std::int64_t> limit, bool grow)
      : ordinal(device_ordinal), budget(std::move(device), limit), growth(grow) {}
};

DeviceAllocator::DeviceAllocator(int ordinal, std::string device,
                                 std::optional<std::int64_t> limit_bytes, bool memory_growth)
    : impl_(std::make_unique<Impl>(ordinal, std::move(device), limit_bytes, memory_growth)) {
  auto const& name = impl_->budget.device();
  check(cudaSetDevice(ordinal), "cudaSetDevice", name);
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = ordinal;
  check(cudaMemPoolCreate(&impl_->pool, &props), "cudaMemPoolCreate", name);
  // Without growth the pool keeps what it reserved (at most the limit) across steps; with it,
  // memory goes back to the driver whenever the stream synchronizes.
  std::uint64_t threshold = memory_growth ? 0 : UINT64_MAX;
  if (!memory_growth && limit_bytes) {
    threshold = static_cast<std::uint64_t>(*limit_bytes);
  }
  check(cudaMemPoolSetAttribute(impl_->pool, cudaMemPoolAttrReleaseThreshold, &threshold),
        "cudaMemPoolSetAttribute", name);
  check(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate",
        name);
}

DeviceAllocator::~DeviceAllocator() {
  if (impl_->stream != nullptr) {
    (void)cudaStreamSynchronize(impl_->stream);
    (void)cudaStreamDestroy(impl_->stream);
  }
  if (impl_->pool != nullptr) {
    (void)cudaMemPoolDestroy(impl_->pool);
  }
}

void* DeviceAllocator::allocate(std::size_t bytes) {
  auto const size = static_cast<std::int64_t>(bytes);
  if (!impl_->budget.try_reserve(size)) {
    throw resource_exhausted(impl_->budget.refusal(size));
  }
  void* pointer = nullptr;
  cudaError_t const status = cudaMallocFromPoolAsync(&pointer, bytes, impl_->pool, impl_->stream);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    impl_->budget.release(size);
    throw resource_exhausted("OOM when allocating " + std::to_string(bytes) + " bytes on " +
                             impl_->budget.device() + ": " + cudaGetErrorString(status));
  }
  return pointer;
}

void DeviceAllocator::deallocate(void* pointer, std::size_t bytes) noexcept {
  if (pointer == nullptr) {
    return;
  }
  (void)cudaFreeAsync(pointer, impl_->stream);
  impl_->budget.release(static_cast<std::int64_t>(bytes));
}

void DeviceAllocator::synchronize() {
  check(cudaStreamSynchronize(impl_->stream), "cudaStreamSynchronize", impl_->budget.device());
  if (impl_->growth) {
    check(cudaMemPoolTrimTo(impl_->pool, 0), "cudaMemPoolTrimTo", impl_->budget.device());
  }
}

const MemoryBudget& DeviceAllocator::budget() const noexcept { return impl_->budget; }

void DeviceAllocator::reset_peak() noexcept { impl_->budget.reset_peak(); }

int DeviceAllocator::ordinal() const noexcept { return impl_->ordinal; }

std::int64_t DeviceAllocator::bytes_reserved() const {
  std::uint64_t reserved = 0;
  check(cudaMemPoolGetAttribute(impl_->pool, cudaMemPoolAttrReservedMemCurrent, &reserved),
        "cudaMemPoolGetAttribute", impl_->budget.device());
  return static_cast<std::int64_t>(reserved);
}

void* DeviceAllocator::stream() const noexcept { return impl_->stream; }

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
