// Issue 20's matrix-product benchmark: tf::matmul on a GPU (the executor, the CUDA backend's
// kernel, stream-ordered allocation of each result) against a bare cublasSgemm loop on the
// same card, at n x n x n in float32. Each iteration waits for the product, so both sides
// time whole products; the ratio is the cost of dispatch. Needs a CUDA device.
//
//   build/default/bench/bench_cuda_matmul --benchmark_repetitions=3
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <tapeflow/backend/cuda/platform.hpp>
#include <tapeflow/config.hpp>
#include <tapeflow/tapeflow.hpp>

namespace {
namespace tf = tapeflow;

bool have_gpu(benchmark::State& state) {
  if (tf::backend::cuda::device_count() == 0) {
    state.SkipWithError("no CUDA device");
    return false;
  }
  return true;
}

void report(benchmark::State& state, std::int64_t n) {
  state.counters["TFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) * 1e-12,
      benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TapeflowMatmul(benchmark::State& state) {
  if (!have_gpu(state)) {
    return;
  }
  std::int64_t const n = state.range(0);
  auto scope = tf::device("/GPU:0");
  auto a = tf::random::uniform<float>({n, n}, {.minval = -1.0f, .maxval = 1.0f, .seed = 1});
  auto b = tf::random::uniform<float>({n, n}, {.minval = -1.0f, .maxval = 1.0f, .seed = 2});
  auto warm = tf::matmul(a, b);  // the first call makes the cuBLAS handle
  cudaDeviceSynchronize();
  for (auto _ : state) {
    auto c = tf::matmul(a, b);
    cudaDeviceSynchronize();
    benchmark::DoNotOptimize(c);
  }
  report(state, n);
}

void BM_CublasSgemm(benchmark::State& state) {
  if (!have_gpu(state)) {
    return;
  }
  std::int64_t const n = state.range(0);
  auto const bytes = static_cast<std::size_t>(n * n) * sizeof(float);
  std::vector<float> host(static_cast<std::size_t>(n * n), 0.5f);
  float* a = nullptr;
  float* b = nullptr;
  float* c = nullptr;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMalloc(&c, bytes);
  cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(b, host.data(), bytes, cudaMemcpyHostToDevice);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cublasHandle_t handle = nullptr;
  cublasCreate(&handle);
  cublasSetStream(handle, stream);
  float const one = 1.0f;
  float const zero = 0.0f;
  auto const dim = static_cast<int>(n);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &one, b, dim, a, dim, &zero, c, dim);
  cudaStreamSynchronize(stream);
  for (auto _ : state) {
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &one, b, dim, a, dim, &zero, c,
                dim);
    cudaStreamSynchronize(stream);
  }
  report(state, n);
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}

}  // namespace

BENCHMARK(BM_CublasSgemm)->Arg(4096)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TapeflowMatmul)->Arg(4096)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
