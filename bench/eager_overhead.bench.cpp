// Eager overhead per small op, with and without an active GradientTape, the cost of a
// trivial backward pass, and a mean over every element. Heap allocations per iteration are
// counted by replacing operator new in this program, to show that recording adds none in
// steady state.
#include <atomic>
#include <cstdlib>
#include <new>

#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

// GCC cannot see that the replaced operator new below uses malloc, and flags the matching
// free() in operator delete.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<long> allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n)) {
    return p;
  }
  throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t a) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  std::size_t const align = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) {
    return p;
  }
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

void report_allocations(benchmark::State& state, long before, long ops_per_iteration) {
  state.counters["allocs_per_op"] = static_cast<double>(allocations.load() - before) /
                                    static_cast<double>(state.iterations() * ops_per_iteration);
}

// One add of two 1-element tensors: the fixed cost every eager op pays.
void BM_EagerAdd(benchmark::State& state) {
  auto a = tf::constant<float>({1.0f});
  auto b = tf::constant<float>({2.0f});
  long const before = allocations.load();
  for (auto _ : state) {
    auto c = a + b;
    benchmark::DoNotOptimize(c.data());
  }
  report_allocations(state, before, 1);
}
BENCHMARK(BM_EagerAdd);

// The same op while a tape records it (the input is watched, so every add becomes a node).
// 64 ops per tape, as in a small training step; the tape is recreated each batch.
void BM_EagerAddRecorded(benchmark::State& state) {
  auto a = tf::constant<float>({1.0f});
  auto b = tf::constant<float>({2.0f});
  constexpr int ops = 64;
  long before = 0;
  bool warm = false;
  for (auto _ : state) {
    tf::GradientTape tape;
    tape.watch(a);
    for (int i = 0; i < ops; ++i) {
      auto c = a + b;
      benchmark::DoNotOptimize(c.data());
    }
    if (!warm) {
      warm = true;  // the first tape grows its reusable storage
      before = allocations.load();
    }
  }
  state.counters["allocs_per_op"] = static_cast<double>(allocations.load() - before) /
                                    static_cast<double>((state.iterations() - 1) * ops);
  state.SetItemsProcessed(state.iterations() * ops);
}
BENCHMARK(BM_EagerAddRecorded);

// Same loop without recording, as the baseline for the per-op recording cost.
void BM_EagerAddUnrecorded(benchmark::State& state) {
  auto a = tf::constant<float>({1.0f});
  auto b = tf::constant<float>({2.0f});
  constexpr int ops = 64;
  for (auto _ : state) {
    tf::GradientTape tape;  // present but not watching a or b: nothing is recorded
    for (int i = 0; i < ops; ++i) {
      auto c = a + b;
      benchmark::DoNotOptimize(c.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * ops);
}
BENCHMARK(BM_EagerAddUnrecorded);

// A tape recording y = x * x on a scalar variable, without a backward pass: subtracted from
// BM_TapeForwardBackward, it leaves the cost of the trivial backward pass.
void BM_TapeForwardOnly(benchmark::State& state) {
  tf::Variable<float, 0> x(3.0f);
  for (auto _ : state) {
    tf::GradientTape tape;
    auto y = x * x;
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_TapeForwardOnly);

// Whole step: tape, forward op, backward.
void BM_TapeForwardBackward(benchmark::State& state) {
  tf::Variable<float, 0> x(3.0f);
  for (auto _ : state) {
    tf::GradientTape tape;
    auto y = x * x;
    auto g = tape.gradient(y, x);
    benchmark::DoNotOptimize(g->data());
  }
}
BENCHMARK(BM_TapeForwardBackward);

// The mean of every element (a loss over a batch, a metric) in Note [Full sums]'s blocks of
// 256: one for 50 elements, four for 1,000, 4,096 on every thread for 2^20.
void BM_ReduceMeanAll(benchmark::State& state) {
  auto x = tf::random::uniform<float>({state.range(0)}, {.seed = 1});
  for (auto _ : state) {
    auto m = tf::reduce_mean(x);
    benchmark::DoNotOptimize(m.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ReduceMeanAll)->Arg(50)->Arg(1000)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
