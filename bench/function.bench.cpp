// tf::function against eager execution: (a) a chain of 50 small elementwise ops, alone and
// ending in a sum (which joins the fused chain; 1000 and 262144 elements), the chain's kernels
// alone, an activation averaged over middle axes (a pooling head), and a chain through two
// reshapes with its gradient, (b) an MNIST MLP training step
// (784 -> 100 relu -> 10, batch 50, SGD), with the bytes one step takes above what it starts
// with (counter peak_KiB), (c) a cached call doing no work.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include <tapeflow/config/memory_info.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

// 50 elementwise ops: 10 rounds of (*, +, tanh, -, *) on a 1000-element tensor.
tf::Tensor<float, 1> chain(const tf::Tensor<float, 1>& x) {
  auto y = x;
  for (int i = 0; i < 10; ++i) {
    y = y * 0.9f;
    y = y + 0.1f;
    y = tf::tanh(y);
    y = y - x;
    y = y * x;
  }
  return y;
}

void BM_ChainEager(benchmark::State& state) {
  auto x = tf::random::uniform<float>({1000}, {.minval = -1.0f, .maxval = 1.0f, .seed = 1});
  for (auto _ : state) {
    auto y = chain(x);
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_ChainEager);

void BM_ChainTraced(benchmark::State& state) {
  auto x = tf::random::uniform<float>({1000}, {.minval = -1.0f, .maxval = 1.0f, .seed = 1});
  auto f = tf::function([](const tf::Tensor<float, 1>& v) { return chain(v); });
  benchmark::DoNotOptimize(f(x).data());  // trace once
  for (auto _ : state) {
    auto y = f(x);
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_ChainTraced);

// The chain's kernels alone: the ops' own fused kernels called in sequence over rows that stay
// in L1, constants as splat rows, as a traced chain calls them. The floor for BM_ChainTraced,
// whose executor adds the rest; eager adds each op's dispatch and allocation instead.
void BM_ChainKernelsOnly(benchmark::State& state) {
  constexpr std::int64_t n = 1000;
  auto x = tf::random::uniform<float>({n}, {.minval = -1.0f, .maxval = 1.0f, .seed = 1});
  std::vector<float> storage(4 * 1024 + 16);
  float* const rows =
      storage.data() +
      (16 - reinterpret_cast<std::uintptr_t>(storage.data()) % 64 / sizeof(float)) % 16;
  float* const r0 = rows;
  float* const r1 = rows + 1024;
  float* const point_nine = rows + 2048;
  float* const point_one = rows + 3072;
  std::fill_n(point_nine, n, 0.9f);
  std::fill_n(point_one, n, 0.1f);
  const float* const xs = x.data();
  for (auto _ : state) {
    const float* y = xs;
    for (int i = 0; i < 10; ++i) {
      tf::ops::Mul::fused_kernel<float>(r0, y, true, point_nine, true, n);
      tf::ops::Add::fused_kernel<float>(r1, r0, true, point_one, true, n);
      tf::ops::Tanh::fused_kernel<float>(r0, r1, true, nullptr, true, n);
      tf::ops::Sub::fused_kernel<float>(r1, r0, true, xs, true, n);
      tf::ops::Mul::fused_kernel<float>(r0, r1, true, xs, true, n);
      y = r0;
    }
    benchmark::DoNotOptimize(r0);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_ChainKernelsOnly);

void BM_ChainSumEager(benchmark::State& state) {
  auto x = tf::random::uniform<float>({state.range(0)}, {.minval = -1.0f, .maxval = 1.0f});
  for (auto _ : state) {
    auto s = tf::reduce_sum(chain(x));
    benchmark::DoNotOptimize(s.data());
  }
}
BENCHMARK(BM_ChainSumEager)->Arg(1000)->Arg(1 << 18);

void BM_ChainSumTraced(benchmark::State& state) {
  auto x = tf::random::uniform<float>({state.range(0)}, {.minval = -1.0f, .maxval = 1.0f});
  auto f = tf::function([](const tf::Tensor<float, 1>& v) { return tf::reduce_sum(chain(v)); });
  benchmark::DoNotOptimize(f(x).data());  // trace once
  for (auto _ : state) {
    auto s = f(x);
    benchmark::DoNotOptimize(s.data());
  }
}
BENCHMARK(BM_ChainSumTraced)->Arg(1000)->Arg(1 << 18);

// A global average pooling head: an activation of an [N, 7, 7, C] feature map, averaged over
// height and width (middle axes), as an [N, C] value.
tf::Tensor<float, 2> pooled_chain(const tf::Tensor<float, 4>& x) {
  int const height_width[2] = {1, 2};
  return tf::reduce_mean(tf::nn::relu(x * 0.5f - 0.25f), height_width);
}

// N x C: slices of 1,568 (the two first), 3,136, 6,272 and 12,544 elements.
void pooled_shapes(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMicrosecond);
  for (const auto& [n, c] : {std::pair{50, 32}, {400, 32}, {200, 64}, {100, 128}, {50, 256}}) {
    b->Args({n, c});
  }
}

void BM_PooledChainEager(benchmark::State& state) {
  auto x = tf::random::uniform<float>({state.range(0), 7, 7, state.range(1)},
                                      {.minval = -1.0f, .maxval = 1.0f});
  for (auto _ : state) {
    auto y = pooled_chain(x);
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_PooledChainEager)->Apply(pooled_shapes);

void BM_PooledChainTraced(benchmark::State& state) {
  auto x = tf::random::uniform<float>({state.range(0), 7, 7, state.range(1)},
                                      {.minval = -1.0f, .maxval = 1.0f});
  auto f = tf::function(pooled_chain);
  benchmark::DoNotOptimize(f(x).data());  // trace once
  for (auto _ : state) {
    auto y = f(x);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["fused_ops"] =
      static_cast<double>(f.concrete_functions()[0]->fused_chains().at(0));
}
BENCHMARK(BM_PooledChainTraced)->Apply(pooled_shapes);

// An elementwise chain through two reshapes (a bias in the middle shape), value and gradient:
// 256 x 1024 floats, 1 MiB a value.
tf::Tensor<float, 2> reshaped_chain_gradient(const tf::Tensor<float, 2>& x,
                                             const tf::Tensor<float, 1>& bias) {
  tf::GradientTape tape;
  tape.watch(x);
  auto y = tf::tanh(x * 2.0f);
  auto z = tf::reshape(tf::reshape(y, {1024, 256}) + bias, {256 * 1024}) * 3.0f;
  return *tape.gradient(tf::reduce_sum(tf::square(z)), x);
}

void BM_ReshapedChainEager(benchmark::State& state) {
  auto x = tf::random::uniform<float>({256, 1024}, {.minval = -1.0f, .maxval = 1.0f, .seed = 1});
  auto bias = tf::random::uniform<float>({256}, {.seed = 2});
  for (auto _ : state) {
    auto g = reshaped_chain_gradient(x, bias);
    benchmark::DoNotOptimize(g.data());
  }
}
BENCHMARK(BM_ReshapedChainEager)->Unit(benchmark::kMicrosecond);

void BM_ReshapedChainTraced(benchmark::State& state) {
  auto x = tf::random::uniform<float>({256, 1024}, {.minval = -1.0f, .maxval = 1.0f, .seed = 1});
  auto bias = tf::random::uniform<float>({256}, {.seed = 2});
  auto f = tf::function(reshaped_chain_gradient);
  benchmark::DoNotOptimize(f(x, bias).data());  // trace once
  for (auto _ : state) {
    auto g = f(x, bias);
    benchmark::DoNotOptimize(g.data());
  }
}
BENCHMARK(BM_ReshapedChainTraced)->Unit(benchmark::kMicrosecond);

// The peak bytes of the tensors one more call of `step` allocates. Host accounting is on only
// with several logical CPUs (Note [Backends]); it is switched on for this call alone, so only
// buffers allocated in it are counted, and the timed loops above pay nothing for it.
template <class Step>
void count_peak_memory(benchmark::State& state, Step&& step) {
  namespace cfg = tf::config::experimental;
  auto& accounting = tf::detail::devices::host_accounting;
  const auto before = cfg::get_memory_info("CPU:0").current;
  cfg::reset_memory_stats("CPU:0");
  accounting.store(true);
  benchmark::DoNotOptimize(step().data());
  accounting.store(false);
  state.counters["peak_KiB"] =
      static_cast<double>(cfg::get_memory_info("CPU:0").peak - before) / 1024.0;
}

struct Mlp {
  tf::Variable<float, 2> w1{tf::random::normal<float>({784, 100}, {.stddev = 0.05f, .seed = 1})};
  tf::Variable<float, 1> b1{tf::zeros<float>({100})};
  tf::Variable<float, 2> w2{tf::random::normal<float>({100, 10}, {.stddev = 0.05f, .seed = 2})};
  tf::Variable<float, 1> b2{tf::zeros<float>({10})};

  tf::Tensor<float, 0> step(const tf::Tensor<float, 2>& x, const tf::Tensor<std::int32_t, 1>& y) {
    tf::GradientTape tape;
    auto h = tf::nn::relu(tf::matmul(x, w1) + b1);
    auto logits = tf::matmul(h, w2) + b2;
    auto loss = tf::reduce_mean(tf::nn::sparse_softmax_cross_entropy_with_logits(y, logits));
    auto [g1, gb1, g2, gb2] = tape.gradient(loss, w1, b1, w2, b2);
    w1.assign_sub(0.1f * *g1);
    b1.assign_sub(0.1f * *gb1);
    w2.assign_sub(0.1f * *g2);
    b2.assign_sub(0.1f * *gb2);
    return loss;
  }
};

void BM_MlpStepEager(benchmark::State& state) {
  Mlp mlp;
  auto x = tf::random::uniform<float>({50, 784}, {.seed = 3});
  auto y = tf::random::uniform<std::int32_t>({50}, {.minval = 0, .maxval = 10, .seed = 4});
  for (auto _ : state) {
    auto loss = mlp.step(x, y);
    benchmark::DoNotOptimize(loss.data());
  }
  state.SetItemsProcessed(state.iterations() * 50);
  count_peak_memory(state, [&] { return mlp.step(x, y); });
}
BENCHMARK(BM_MlpStepEager)->Unit(benchmark::kMicrosecond);

void BM_MlpStepTraced(benchmark::State& state) {
  Mlp mlp;
  auto x = tf::random::uniform<float>({50, 784}, {.seed = 3});
  auto y = tf::random::uniform<std::int32_t>({50}, {.minval = 0, .maxval = 10, .seed = 4});
  auto step = tf::function([&](const tf::Tensor<float, 2>& xs,
                               const tf::Tensor<std::int32_t, 1>& ys) { return mlp.step(xs, ys); });
  benchmark::DoNotOptimize(step(x, y).data());
  for (auto _ : state) {
    auto loss = step(x, y);
    benchmark::DoNotOptimize(loss.data());
  }
  state.SetItemsProcessed(state.iterations() * 50);
  count_peak_memory(state, [&] { return step(x, y); });
  // Its memory plan (Note [Memory plan]): the block the step's buffers share, and the most
  // bytes of them alive at once.
  const auto plan = step.concrete_functions()[0]->memory_plan();
  state.counters["plan_block_KiB"] = static_cast<double>(plan.block_bytes) / 1024.0;
  state.counters["plan_live_KiB"] = static_cast<double>(plan.live_bytes_peak) / 1024.0;
  state.counters["plan_buffers"] = static_cast<double>(plan.placed_buffers);
}
BENCHMARK(BM_MlpStepTraced)->Unit(benchmark::kMicrosecond);

// A cached call whose graph is empty: signature, lookup and executor overhead only.
void BM_CachedCallNoWork(benchmark::State& state) {
  auto f = tf::function([](const tf::Tensor<float, 1>& v) { return v; });
  auto x = tf::constant<float>({1, 2, 3});
  benchmark::DoNotOptimize(f(x).data());
  for (auto _ : state) {
    auto y = f(x);
    benchmark::DoNotOptimize(y.data());
  }
}
BENCHMARK(BM_CachedCallNoWork);

}  // namespace

BENCHMARK_MAIN();
