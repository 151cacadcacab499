// The per-logical-GPU allocator: its memory_limit holds, memory growth decides whether the pool
// keeps memory, logical devices on one card account separately, and the memory is real.
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <tapeflow/backend/cuda/allocator.hpp>
#include <tapeflow/core/errors.hpp>

#include "gpu_available.hpp"

namespace test_cuda_allocator {
namespace tf = tapeflow;
using tf::backend::cuda::DeviceAllocator;
constexpr std::int64_t MiB = 1024 * 1024;

TEST_CASE("the memory limit holds", "[gpu]") {
  if (!tapeflow_test::gpu_available("the memory limit holds")) {
    return;
  }
  DeviceAllocator allocator(0, "/device:GPU:0", 64 * MiB, false);
  void* a = allocator.allocate(48 * MiB);
  CHECK(allocator.budget().in_use() == 48 * MiB);
  CHECK_THROWS_MATCHES(allocator.allocate(32 * MiB), tf::resource_exhausted,
                       Catch::Message("OOM when allocating 33554432 bytes on /device:GPU:0: "
                                      "50331648 bytes in use of its 67108864-byte memory_limit"));
  CHECK(allocator.budget().in_use() == 48 * MiB);  // the refusal charged nothing
  allocator.deallocate(a, 48 * MiB);
  void* b = allocator.allocate(32 * MiB);
  void* c = allocator.allocate(32 * MiB);
  CHECK(allocator.budget().in_use() == 64 * MiB);
  CHECK(allocator.budget().peak() == 64 * MiB);
  allocator.deallocate(b, 32 * MiB);
  allocator.deallocate(c, 32 * MiB);
  allocator.synchronize();
  CHECK(allocator.budget().in_use() == 0);
}

TEST_CASE("memory growth decides whether the pool keeps memory", "[gpu]") {
  if (!tapeflow_test::gpu_available("memory growth decides whether the pool keeps memory")) {
    return;
  }
  for (bool growth : {false, true}) {
    DeviceAllocator allocator(0, "/device:GPU:0", std::nullopt, growth);
    allocator.deallocate(allocator.allocate(256 * MiB), 256 * MiB);
    allocator.synchronize();
    INFO("memory_growth=" << growth);
    if (growth) {
      CHECK(allocator.bytes_reserved() == 0);
    } else {
      CHECK(allocator.bytes_reserved() >= 256 * MiB);
    }
  }
}

TEST_CASE("logical GPUs on one card account separately", "[gpu]") {
  if (!tapeflow_test::gpu_available("logical GPUs on one card account separately")) {
    return;
  }
  DeviceAllocator first(0, "/device:GPU:0", 1024 * MiB, false);
  DeviceAllocator second(0, "/device:GPU:1", 1024 * MiB, false);
  void* a = first.allocate(1000 * MiB);
  void* b = second.allocate(1000 * MiB);
  CHECK_THROWS_WITH(first.allocate(100 * MiB),
                    Catch::Contains("on /device:GPU:0") && Catch::Contains("1073741824-byte"));
  CHECK(second.budget().in_use() == 1000 * MiB);
  first.deallocate(a, 1000 * MiB);
  second.deallocate(b, 1000 * MiB);
}

TEST_CASE("allocated memory holds what is copied into it", "[gpu]") {
  if (!tapeflow_test::gpu_available("allocated memory holds what is copied into it")) {
    return;
  }
  DeviceAllocator allocator(0, "/device:GPU:0", std::nullopt, false);
  std::vector<float> host(1 << 20);
  for (std::size_t i = 0; i < host.size(); ++i) {
    host[i] = static_cast<float>(i) * 0.5f;
  }
  std::vector<float> back(host.size());
  auto* stream = static_cast<cudaStream_t>(allocator.stream());
  void* device = allocator.allocate(host.size() * sizeof(float));
  REQUIRE(cudaMemcpyAsync(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice,
                          stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(back.data(), device, host.size() * sizeof(float), cudaMemcpyDeviceToHost,
                          stream) == cudaSuccess);
  allocator.synchronize();
  CHECK(back == host);
  allocator.deallocate(device, host.size() * sizeof(float));
}

}  // namespace test_cuda_allocator
