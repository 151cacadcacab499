// tf.keras.applications.MobileNetV2 (224x224x3, 1000 classes, random weights) in tapeflow:
// inference of batch 1 and batch 32 (`model(x)`, inference mode, eagerly and as a tf::function
// as the peer runs it) and one training step of batch 32 (`train_step`: forward in training
// mode, gradients of SparseCategoricalCrossentropy, SGD update), each on inputs already in
// memory. The TensorFlow peer times the same three cases:
//   bench/applications.sh [BUILD_DIR] [PYTHON]   (TensorFlow, tapeflow, TensorFlow again)
// Also the model's largest ZeroPadding2D (block_1_pad: [n, 112, 112, 96] -> [n, 113, 113, 96])
// against a one-thread memcpy of its input, in bytes read and written per second.
#include <cstdint>
#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

#include <tapeflow/function/function.hpp>
#include <tapeflow/keras/applications/mobilenet_v2.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/ops/array/pad.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace tf = tapeflow;
namespace apps = tf::keras::applications;

namespace {

tf::Tensor<float, 4> images(std::int64_t n) {
  return tf::random::uniform<float>({n, 224, 224, 3}, {.minval = -1.0f, .maxval = 1.0f, .seed = 1});
}

// Times `infer(x)` on a batch of state.range(0) images, after a warm-up call (the trace,
// buffers, thread pool).
template <class Infer>
void time_inference(benchmark::State& state, const tf::Tensor<float, 4>& x, Infer&& infer) {
  (void)infer(x);
  for (auto _ : state) {
    benchmark::DoNotOptimize(infer(x));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_MobileNetV2Inference(benchmark::State& state) {
  apps::MobileNetV2 model;
  time_inference(state, images(state.range(0)),
                 [&model](const tf::Tensor<float, 4>& in) { return model(in); });
}
// The same inference as a tf::function, as the TensorFlow peer runs it: its graph passes fuse
// each batch normalization with the activation after it, and run that in the convolution.
void BM_MobileNetV2InferenceTraced(benchmark::State& state) {
  apps::MobileNetV2 model;
  auto infer = tf::function([&model](const tf::Tensor<float, 4>& in) { return model(in); });
  time_inference(state, images(state.range(0)), infer);
  // Its memory plan (Note [Memory plan]): the block its activations share, and the most bytes
  // of them alive at once.
  const auto plan = infer.concrete_functions()[0]->memory_plan();
  state.counters["plan_block_MiB"] = static_cast<double>(plan.block_bytes) / (1 << 20);
  state.counters["plan_live_MiB"] = static_cast<double>(plan.live_bytes_peak) / (1 << 20);
  state.counters["plan_buffers"] = static_cast<double>(plan.placed_buffers);
  state.counters["plan_diverged"] = static_cast<double>(plan.diverged_calls);
}
BENCHMARK(BM_MobileNetV2Inference)
    ->Arg(1)
    ->Arg(32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);
BENCHMARK(BM_MobileNetV2InferenceTraced)
    ->Arg(1)
    ->Arg(32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

void BM_MobileNetV2TrainStep(benchmark::State& state) {
  apps::MobileNetV2 model;
  model.compile({.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.01}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy()});
  const std::int64_t n = state.range(0);
  const tf::AnyTensor x(images(n));
  auto labels = tf::Tensor<std::int32_t, 1>::uninitialized({n});
  for (std::int64_t i = 0; i < n; ++i) {
    tf::detail::tensor_access::mutable_data(labels)[i] = std::int32_t((i * 37) % 1000);
  }
  const tf::AnyTensor y(labels);
  (void)model.train_step(x, y);  // warm-up: the optimizer's state, buffers
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.train_step(x, y));
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_MobileNetV2TrainStep)
    ->Arg(32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

void BM_MobileNetV2Block1Pad(benchmark::State& state) {
  const auto x = tf::random::uniform<float>({state.range(0), 112, 112, 96}, {.seed = 2});
  const auto y = tf::pad(x, {{0, 0}, {0, 1}, {0, 1}, {0, 0}});  // warm-up: the output's block
  for (auto _ : state) {
    benchmark::DoNotOptimize(tf::pad(x, {{0, 0}, {0, 1}, {0, 1}, {0, 0}}));
  }
  state.SetBytesProcessed(state.iterations() * (x.num_elements() + y.num_elements()) *
                          std::int64_t{sizeof(float)});
}
BENCHMARK(BM_MobileNetV2Block1Pad)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MemcpyPeer(benchmark::State& state) {  // the same input bytes, copied by one thread
  const std::size_t bytes = std::size_t(state.range(0)) * 112 * 112 * 96 * sizeof(float);
  std::vector<char> from(bytes, 1);
  std::vector<char> to(bytes, 0);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * std::int64_t(2 * bytes));
}
BENCHMARK(BM_MemcpyPeer)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
