// Training throughput (examples/s) of the handbook's MNIST models with tf::keras, batch 50:
// one step = forward, loss (sparse crossentropy on softmax probabilities, as the handbook's
// custom loop computes it), GradientTape backward, Adam update, i.e. what Model::fit's
// train_step does, on random inputs already in memory.
//
//   MLP: Flatten, Dense(100, relu), Dense(10), softmax
//   CNN: Conv2D(32, 5, same, relu), MaxPool 2, Conv2D(64, 5, same, relu), MaxPool 2, Flatten,
//        Dense(1024, relu), Dense(10), softmax
//
// Peers measured the same way: bench/peers/keras_mnist_tf.py (Keras + tf.function) and
// bench/peers/keras_mnist_torch.py (PyTorch eager, CPU).
#include <cstdint>

#include <benchmark/benchmark.h>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {

constexpr std::int64_t kBatch = 50;

template <class Model>
void train_steps(benchmark::State& state, Model& model) {
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
  step();  // build
  for (auto _ : state) {
    benchmark::DoNotOptimize(step().item());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

// The same step inside tf::function (as the TensorFlow peer and Model::fit run it): traced
// once, then the cached graph runs, the Adam updates included (ResourceApplyAdam nodes).
template <class Model>
void train_steps_traced(benchmark::State& state, Model& model) {
  tf::keras::optimizers::Adam optimizer({.learning_rate = 1e-3});
  auto x = tf::random::uniform<float>({kBatch, 28, 28, 1}, {.seed = 1});
  auto y = tf::random::uniform<std::int32_t>({kBatch}, {.minval = 0, .maxval = 10, .seed = 2});
  (void)model(x, false);  // build the variables eagerly, outside the trace
  auto step =
      tf::function([&](const tf::Tensor<float, 4>& xs, const tf::Tensor<std::int32_t, 1>& ys) {
        tf::GradientTape tape;
        auto probs = tf::nn::softmax(model(xs, true));
        auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(ys, probs));
        auto vars = model.trainable_variables();
        optimizer.apply_gradients(tape.gradient(loss, vars), vars);
        return loss;
      });
  for (auto _ : state) {
    benchmark::DoNotOptimize(step(x, y).item());
  }
  if (step.trace_count() != 1) {
    state.SkipWithError("retraced");
  }
  // The step's memory plan (Note [Memory plan]): its block, the buffers placed there, and the
  // buffers that outlive a call (the loss, the optimizer's state) from the heap.
  const auto plan = step.concrete_functions()[0]->memory_plan();
  state.counters["plan_block_KiB"] = static_cast<double>(plan.block_bytes) / 1024;
  state.counters["plan_buffers"] = static_cast<double>(plan.placed_buffers);
  state.counters["plan_heap_buffers"] = static_cast<double>(plan.heap_buffers);
  state.counters["plan_diverged"] = static_cast<double>(plan.diverged_calls);
  state.SetItemsProcessed(state.iterations() * kBatch);
}

// Model::fit itself (traced steps by default, or every step eager): one epoch over `examples`
// random in-memory examples per iteration, batch 50, logits into the crossentropy as Keras
// users compile it. The TensorFlow peer times model.fit the same way.
template <class Model>
void fit_epochs(benchmark::State& state, Model& model, std::int64_t examples, bool run_eagerly) {
  auto x = tf::random::uniform<float>({examples, 28, 28, 1}, {.seed = 1});
  auto y = tf::random::uniform<std::int32_t>({examples}, {.minval = 0, .maxval = 10, .seed = 2});
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 1e-3}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                 .run_eagerly = run_eagerly});
  const tf::keras::FitOptions options{.batch_size = kBatch, .verbose = 0, .shuffle = false};
  (void)model.fit(x, y, options);  // build, trace, warm up
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.fit(x, y, options).history.size());
  }
  state.SetItemsProcessed(state.iterations() * examples);
}

auto mnist_mlp() {
  return tf::keras::Sequential(layers::Flatten(), layers::Dense(100, {.activation = tf::nn::relu}),
                               layers::Dense(10));
}

auto mnist_cnn() {
  return tf::keras::Sequential(
      layers::Conv2D(32, 5, {.padding = "same", .activation = tf::nn::relu}),
      layers::MaxPooling2D(2),
      layers::Conv2D(64, 5, {.padding = "same", .activation = tf::nn::relu}),
      layers::MaxPooling2D(2), layers::Flatten(), layers::Dense(1024, {.activation = tf::nn::relu}),
      layers::Dense(10));
}

void BM_MnistMlpTrainStep(benchmark::State& state) {
  auto model = mnist_mlp();
  train_steps(state, model);
}
BENCHMARK(BM_MnistMlpTrainStep)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_MnistMlpTrainStepTraced(benchmark::State& state) {
  auto model = mnist_mlp();
  train_steps_traced(state, model);
}
BENCHMARK(BM_MnistMlpTrainStepTraced)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_MnistCnnTrainStep(benchmark::State& state) {
  auto model = mnist_cnn();
  train_steps(state, model);
}
BENCHMARK(BM_MnistCnnTrainStep)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MnistCnnTrainStepTraced(benchmark::State& state) {
  auto model = mnist_cnn();
  train_steps_traced(state, model);
}
BENCHMARK(BM_MnistCnnTrainStepTraced)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MnistMlpFit(benchmark::State& state) {
  auto model = mnist_mlp();
  fit_epochs(state, model, 10000, state.range(0) != 0);
}
BENCHMARK(BM_MnistMlpFit)
    ->ArgName("eager")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_MnistCnnFit(benchmark::State& state) {
  auto model = mnist_cnn();
  fit_epochs(state, model, 1000, state.range(0) != 0);
}
BENCHMARK(BM_MnistCnnFit)
    ->ArgName("eager")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
