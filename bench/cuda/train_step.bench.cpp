// The handbook's MNIST training steps (bench/keras_mnist.bench.cpp's, batch 50: forward,
// sparse cross-entropy on softmax probabilities, GradientTape backward, Adam update) on the
// GPU and on the CPU of the same machine, in the same run. Arg 0: /cpu:0, arg 1: /GPU:0. Each
// step ends by reading the loss, which waits for the GPU's work.
//
//   MLP: Flatten, Dense(100, relu), Dense(10), softmax
//   CNN: Conv2D(32, 5, same, relu), MaxPool 2, Conv2D(64, 5, same, relu), MaxPool 2, Flatten,
//        Dense(1024, relu), Dense(10), softmax
#include <cstdint>
#include <cstdlib>

#include <benchmark/benchmark.h>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/config.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {

constexpr std::int64_t kBatch = 50;

const char* device_of(const benchmark::State& state) {
  return state.range(0) == 0 ? "/cpu:0" : "/GPU:0";
}

template <class Model>
void train_steps(benchmark::State& state, Model& model) {
  if (state.range(0) == 1 && tf::config::list_physical_devices("GPU").empty()) {
    state.SkipWithError("no GPU");
    return;
  }
  auto scope = tf::device(device_of(state));
  tf::keras::optimizers::Adam optimizer({.learning_rate = 1e-3});
  auto x = tf::random::uniform<float>({kBatch, 28, 28, 1}, {.seed = 1});
  auto y = tf::random::uniform<std::int32_t>({kBatch}, {.minval = 0, .maxval = 10, .seed = 2});
  auto step = [&] {
    tf::GradientTape tape;
    auto probs = tf::nn::softmax(model(x, true));
    auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, probs));
    auto vars = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
    return loss;
  };
  step();  // build, and cuDNN's plans
  // TAPEFLOW_BENCH_LOG_PLACEMENT=1: print where each op of one step runs.
  if (std::getenv("TAPEFLOW_BENCH_LOG_PLACEMENT") != nullptr) {
    tf::debugging::set_log_device_placement(true);
    step();
    tf::debugging::set_log_device_placement(false);
  }
  step();
  for (auto _ : state) {
    benchmark::DoNotOptimize(step().item());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetLabel(device_of(state));
}

void BM_MnistMlpTrainStep(benchmark::State& state) {
  auto scope = tf::device(device_of(state));
  auto model = tf::keras::Sequential(
      layers::Flatten(), layers::Dense(100, {.activation = tf::nn::relu}), layers::Dense(10));
  train_steps(state, model);
}
BENCHMARK(BM_MnistMlpTrainStep)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_MnistCnnTrainStep(benchmark::State& state) {
  auto scope = tf::device(device_of(state));
  auto model =
      tf::keras::Sequential(layers::Conv2D(32, 5, {.padding = "same", .activation = tf::nn::relu}),
                            layers::MaxPooling2D(2),
                            layers::Conv2D(64, 5, {.padding = "same", .activation = tf::nn::relu}),
                            layers::MaxPooling2D(2), layers::Flatten(),
                            layers::Dense(1024, {.activation = tf::nn::relu}), layers::Dense(10));
  train_steps(state, model);
}
BENCHMARK(BM_MnistCnnTrainStep)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
BENCHMARK_MAIN();
