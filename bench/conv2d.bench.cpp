// conv2d throughput on the seed CNN's shapes (MNIST, batch 50): forward, and forward + backward
// (gradients with respect to the input and the filters through tf::GradientTape).
//
//   conv1: [50, 28, 28, 1]  * [5, 5, 1, 32]  SAME -> [50, 28, 28, 32]
//   pool:  max_pool2d 2x2 stride 2              -> [50, 14, 14, 32]
//   conv2: [50, 14, 14, 32] * [5, 5, 32, 64] SAME -> [50, 14, 14, 64]
//
// Reported per iteration in ms (wall clock, since the kernels use the thread pool) with a
// `GFLOP/s` counter: 2 * N * OH * OW * O * KH * KW * C multiply-adds per convolution pass,
// three passes (forward, input gradient, filter gradient) for forward + backward. Compare
// with bench/fma_peak and with bench/peers.
#include <array>
#include <cstdint>

#include <benchmark/benchmark.h>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/ops/nn/conv2d.hpp>
#include <tapeflow/ops/nn/pooling.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace tf = tapeflow;

namespace {

struct ConvShape {
  std::array<std::int64_t, 4> input;
  std::array<std::int64_t, 4> filter;
  [[nodiscard]] double flops() const {  // one pass, SAME stride 1: output H, W = input H, W
    return 2.0 * static_cast<double>(input[0] * input[1] * input[2]) *
           static_cast<double>(filter[0] * filter[1] * filter[2] * filter[3]);
  }
};

constexpr ConvShape kConv1{{50, 28, 28, 1}, {5, 5, 1, 32}};
constexpr ConvShape kConv2{{50, 14, 14, 32}, {5, 5, 32, 64}};

void set_rate(benchmark::State& state, double flops_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void conv_forward(benchmark::State& state, ConvShape const& shape) {
  auto x = tf::random::normal<float>(shape.input, {.seed = 1});
  auto w = tf::random::normal<float>(shape.filter, {.stddev = 0.1, .seed = 2});
  for (auto _ : state) {
    auto y = tf::nn::conv2d(x, w, {.strides = 1, .padding = "SAME"});
    benchmark::DoNotOptimize(y.data());
  }
  set_rate(state, shape.flops());
}

void conv_forward_backward(benchmark::State& state, ConvShape const& shape) {
  auto x = tf::random::normal<float>(shape.input, {.seed = 1});
  auto w = tf::random::normal<float>(shape.filter, {.stddev = 0.1, .seed = 2});
  for (auto _ : state) {
    tf::GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    auto y = tf::nn::conv2d(x, w, {.strides = 1, .padding = "SAME"});
    auto [dx, dw] = tape.gradient(y, x, w);  // d sum(y): dy = ones
    benchmark::DoNotOptimize(dx->data());
    benchmark::DoNotOptimize(dw->data());
  }
  set_rate(state, 3 * shape.flops());
}

void BM_Conv1Forward(benchmark::State& state) { conv_forward(state, kConv1); }
void BM_Conv1ForwardBackward(benchmark::State& state) { conv_forward_backward(state, kConv1); }
void BM_Conv2Forward(benchmark::State& state) { conv_forward(state, kConv2); }
void BM_Conv2ForwardBackward(benchmark::State& state) { conv_forward_backward(state, kConv2); }

// The seed CNN's feature extractor: conv1 -> relu -> max_pool -> conv2 -> relu, forward and
// backward with respect to both filters.
void BM_SeedCnnFeatures(benchmark::State& state) {
  auto x = tf::random::normal<float>(kConv1.input, {.seed = 1});
  auto w1 = tf::random::normal<float>(kConv1.filter, {.stddev = 0.1, .seed = 2});
  auto w2 = tf::random::normal<float>(kConv2.filter, {.stddev = 0.1, .seed = 3});
  for (auto _ : state) {
    tf::GradientTape tape;
    tape.watch(w1);
    tape.watch(w2);
    auto h1 = tf::nn::relu(tf::nn::conv2d(x, w1, {.padding = "SAME"}));
    auto p1 = tf::nn::max_pool2d(h1, 2, 2, "SAME");
    auto h2 = tf::nn::relu(tf::nn::conv2d(p1, w2, {.padding = "SAME"}));
    auto [g1, g2] = tape.gradient(h2, w1, w2);
    benchmark::DoNotOptimize(g1->data());
    benchmark::DoNotOptimize(g2->data());
  }
  // conv1: forward + filter gradient; conv2: forward + input and filter gradients.
  set_rate(state, 2 * kConv1.flops() + 3 * kConv2.flops());
}

BENCHMARK(BM_Conv1Forward)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Conv1ForwardBackward)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Conv2Forward)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Conv2ForwardBackward)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SeedCnnFeatures)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
