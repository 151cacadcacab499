// Measures this machine's fp32 FMA peak (GFLOP/s) on one thread and on all hardware threads.
//
// Each thread runs independent FMA chains: enough accumulators to cover FMA latency x
// throughput (4 cycles x 2 units on current x86 = 8; 12 leaves headroom), each chain `acc =
// acc * x + y` on the widest vectors the build targets. The result is the ceiling that the
// gemm benchmarks are judged against.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

#if defined(__AVX512F__)
constexpr int kVectorBytes = 64;
#elif defined(__AVX__)
constexpr int kVectorBytes = 32;
#else
constexpr int kVectorBytes = 16;
#endif
constexpr int kLanes = kVectorBytes / static_cast<int>(sizeof(float));
constexpr int kChains = 12;
typedef float Vec __attribute__((vector_size(kVectorBytes)));

// Runs `iters` rounds of kChains independent FMAs; returns a value so nothing is optimized out.
// `acc * x + y` is contracted to one FMA: the file is built with -ffp-contract=fast semantics
// forced below, independent of -std=c++ vs gnu++.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=fast")))
#endif
__attribute__((noinline)) float
fma_chains(std::int64_t iters, float seed) {
#if defined(__clang__)
#pragma clang fp contract(fast)
#endif
  Vec acc[kChains];
  for (int i = 0; i < kChains; ++i) {
    acc[i] = Vec{} + (seed + static_cast<float>(i));
  }
  // x slightly below 1 and y small keep the values bounded and normal (no denormal slowdown).
  Vec const x = Vec{} + 0.999999f;
  Vec const y = Vec{} + 1e-6f;
  for (std::int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) {
      acc[i] = acc[i] * x + y;
    }
  }
  Vec sum{};
  for (int i = 0; i < kChains; ++i) {
    sum += acc[i];
  }
  float total = 0;
  for (int l = 0; l < kLanes; ++l) {
    total += sum[l];
  }
  return total;
}

double flops_per_call(std::int64_t iters) {
  return 2.0 * kLanes * kChains * static_cast<double>(iters);
}

// Best-of-`reps` GFLOP/s with `threads` threads each running fma_chains(iters).
double measure(int threads, std::int64_t iters, int reps) {
  double best = 0;
  std::vector<float> sink(static_cast<std::size_t>(threads));
  for (int r = 0; r < reps; ++r) {
    auto const t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] { sink[t] = fma_chains(iters, static_cast<float>(t)); });
    }
    for (auto& th : pool) {
      th.join();
    }
    double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, flops_per_call(iters) * threads / s * 1e-9);
  }
  float checksum = 0;
  for (float v : sink) {
    checksum += v;
  }
  if (checksum == 42.0f) {
    std::puts("");  // consume the results
  }
  return best;
}

}  // namespace

int main() {
  int const all = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::int64_t const iters = 200'000'000 / kChains;  // ~0.1-0.2 s per run at peak
  measure(1, iters / 10, 1);                         // warm up (clock ramp)
  double const one = measure(1, iters, 5);
  double const many = measure(all, iters, 5);
  std::printf("fp32 FMA peak (%d-bit vectors, %d independent chains per thread)\n",
              kVectorBytes * 8, kChains);
  std::printf("  1 thread : %7.1f GFLOP/s\n", one);
  std::printf("  %d threads: %7.1f GFLOP/s (%.2fx)\n", all, many, many / one);
  return 0;
}
