// Issue 20's allocator benchmark: the cost of one allocate/deallocate pair through a logical
// GPU's DeviceAllocator (lock-free budget accounting + cudaMallocFromPoolAsync/cudaFreeAsync)
// against the same pool calls made directly. Needs a CUDA device; built with tapeflow::cuda.
//
//   build/default/bench/bench_cuda_allocator --benchmark_repetitions=3
#include <cstdint>
#include <cstdio>
#include <vector>

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <tapeflow/backend/cuda/allocator.hpp>
#include <tapeflow/backend/cuda/platform.hpp>

namespace {
namespace tf = tapeflow;

bool have_gpu(benchmark::State& state) {
  if (tf::backend::cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device");
    return false;
  }
  return true;
}

// One pair at a time: the steady state of a training step's temporaries.
void BM_TapeflowAllocatorPair(benchmark::State& state) {
  if (!have_gpu(state)) {
    return;
  }
  tf::backend::cuda::DeviceAllocator allocator(0, "/device:GPU:0", std::int64_t{8} << 30, false);
  auto const bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = allocator.allocate(bytes);
    benchmark::DoNotOptimize(p);
    allocator.deallocate(p, bytes);
  }
  allocator.synchronize();
}

// The peer: a pool and stream set up as DeviceAllocator sets up its own (no growth).
struct RawPool {
  cudaMemPool_t pool = nullptr;
  cudaStream_t stream = nullptr;
  RawPool() {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPoolCreate(&pool, &props);
    std::uint64_t threshold = UINT64_MAX;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  }
  RawPool(const RawPool&) = delete;
  RawPool& operator=(const RawPool&) = delete;
  ~RawPool() {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    cudaMemPoolDestroy(pool);
  }
};

void BM_RawMallocAsyncPair(benchmark::State& state) {
  if (!have_gpu(state)) {
    return;
  }
  RawPool raw;
  auto* pool = raw.pool;
  auto* stream = raw.stream;
  auto const bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = nullptr;
    cudaMallocFromPoolAsync(&p, bytes, pool, stream);
    benchmark::DoNotOptimize(p);
    cudaFreeAsync(p, stream);
  }
}

// 64 live blocks, then all freed: the size map holds many entries.
void BM_TapeflowAllocatorBatch64(benchmark::State& state) {
  if (!have_gpu(state)) {
    return;
  }
  tf::backend::cuda::DeviceAllocator allocator(0, "/device:GPU:0", std::int64_t{8} << 30, false);
  auto const bytes = static_cast<std::size_t>(state.range(0));
  std::vector<void*> blocks(64);
  for (auto _ : state) {
    for (auto& p : blocks) {
      p = allocator.allocate(bytes);
    }
    for (auto* p : blocks) {
      allocator.deallocate(p, bytes);
    }
  }
  allocator.synchronize();
  state.SetItemsProcessed(state.iterations() * 64);
}

void BM_RawMallocAsyncBatch64(benchmark::State& state) {
  if (!have_gpu(state)) {
    return;
  }
  RawPool raw;
  auto* pool = raw.pool;
  auto* stream = raw.stream;
  auto const bytes = static_cast<std::size_t>(state.range(0));
  std::vector<void*> blocks(64);
  for (auto _ : state) {
    for (auto& p : blocks) {
      cudaMallocFromPoolAsync(&p, bytes, pool, stream);
    }
    for (auto* p : blocks) {
      cudaFreeAsync(p, stream);
    }
  }
  state.SetItemsProcessed(state.iterations() * 64);
}

}  // namespace

BENCHMARK(BM_RawMallocAsyncPair)->Arg(256)->Arg(1 << 20)->Arg(64 << 20);
BENCHMARK(BM_TapeflowAllocatorPair)->Arg(256)->Arg(1 << 20)->Arg(64 << 20);
BENCHMARK(BM_RawMallocAsyncBatch64)->Arg(1 << 20);
BENCHMARK(BM_TapeflowAllocatorBatch64)->Arg(1 << 20);
BENCHMARK_MAIN();
