// fp32 matrix multiply throughput on squares, on 1 thread and on all hardware threads.
//
// Reported as the `FLOPS` rate counter (2 n^3 per multiply); compare with bench/fma_peak and
// with bench/peers/torch_ops.py. Wall-clock time, since the multi-threaded runs use the pool.
#include <algorithm>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/ops/linalg/detail/gemm.hpp>
#include <tapeflow/ops/linalg/matmul.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace {

using tapeflow::backend::cpu::ThreadPool;

// The only call into the library: C[n x n] = A * B, all row-major, on `pool`.
void matmul(float const* a, float const* b, float* c, std::int64_t n, ThreadPool& pool) {
  tapeflow::detail::gemm<float>(false, false, n, n, n, a, n, b, n, c, n, false, pool);
}

int hardware_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void BM_MatmulF32(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  int const threads = static_cast<int>(state.range(1));
  ThreadPool local(1);
  ThreadPool& pool = threads == 1 ? local : ThreadPool::global();

  std::vector<float> a(static_cast<std::size_t>(n * n));
  std::vector<float> b(a.size());
  std::vector<float> c(a.size());
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& x : a) {
    x = dist(rng);
  }
  for (auto& x : b) {
    x = dist(rng);
  }
  matmul(a.data(), b.data(), c.data(), n, pool);  // warm up: pool threads, scratch buffers

  for (auto _ : state) {
    matmul(a.data(), b.data(), c.data(), n, pool);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  double const flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  state.counters["FLOPS"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate, benchmark::Counter::OneK::kIs1000);
}

void matmul_args(benchmark::internal::Benchmark* bench) {
  bench->ArgNames({"n", "threads"});
  for (std::int64_t n : {256, 1024, 2048}) {
    bench->Args({n, 1});
    if (hardware_threads() > 1) {
      bench->Args({n, hardware_threads()});
    }
  }
}

BENCHMARK(BM_MatmulF32)->Apply(matmul_args)->UseRealTime()->Unit(benchmark::kMillisecond);

// The public op on the default (all-core) pool: the kernel above plus tensor allocation,
// shape checks and the tape check.
void BM_TfMatmulF32(benchmark::State& state) {
  std::int64_t const n = state.range(0);
  auto a = tapeflow::random::uniform<float>({n, n}, {.minval = -1.0f, .maxval = 1.0f, .seed = 1});
  auto b = tapeflow::random::uniform<float>({n, n}, {.minval = -1.0f, .maxval = 1.0f, .seed = 2});
  benchmark::DoNotOptimize(tapeflow::matmul(a, b).data());
  for (auto _ : state) {
    auto c = tapeflow::matmul(a, b);
    benchmark::DoNotOptimize(c.data());
  }
  double const flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  state.counters["FLOPS"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate, benchmark::Counter::OneK::kIs1000);
}
BENCHMARK(BM_TfMatmulF32)
    ->ArgName("n")
    ->Arg(256)
    ->Arg(1024)
    ->Arg(2048)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
