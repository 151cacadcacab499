// MirroredStrategy on logical CPUs: training throughput (examples/s) of the handbook's MNIST
// MLP and CNN, global batch 64, Adam, one step = forward, loss, GradientTape backward,
// all-reduce of the gradients, update (what fit's distributed step does), on random inputs in
// memory. Three configurations of the same machine, in one process with two logical CPUs:
//
//   Mirrored2x1:   MirroredStrategy over CPU:0 and CPU:1, 32 examples per replica, each
//                  replica with its logical CPU's share of the pool (1 thread of 2);
//                  ...FunctionInRun: the replicas call the step as a tf::function;
//                  ...RunInFunction: the same step as a tf::function around strategy.run;
//   Single1Thread: one replica, the whole batch, 1 intra-op thread;
//   Single2Threads: one replica, the whole batch, the whole pool (2 threads).
//
// Mirrored2x1 / Single1Thread is the scaling of data parallelism over two cores (the issue's
// "2 workers x 1 thread vs 1 worker x 1 thread", in-process); against Single2Threads it
// compares data parallelism with intra-op parallelism.
//
// AllReduce/<floats>: the in-process collective's sum over two replica threads (bytes/s of one
// replica's tensor), against RawAllReduce: the same rendezvous written directly (std::barrier,
// the last thread adds both buffers into a shared one, both copy it out), its peer.
#include <algorithm>
#include <barrier>
#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include <tapeflow/backend/cpu/thread_budget.hpp>
#include <tapeflow/config.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {

constexpr std::int64_t kBatch = 64;

const bool two_logical_cpus = [] {
  tf::config::set_logical_device_configuration(tf::config::list_physical_devices("CPU").at(0),
                                               {{}, {}});
  return true;
}();

auto make_mlp() {
  return tf::keras::Sequential(layers::Flatten(), layers::Dense(100, {.activation = tf::nn::relu}),
                               layers::Dense(10));
}
auto make_cnn() {
  return tf::keras::Sequential(
      layers::Conv2D(32, 5, {.padding = "same", .activation = tf::nn::relu}),
      layers::MaxPool2D(2, {.strides = 2}),
      layers::Conv2D(64, 5, {.padding = "same", .activation = tf::nn::relu}),
      layers::MaxPool2D(2, {.strides = 2}), layers::Flatten(),
      layers::Dense(1024, {.activation = tf::nn::relu}), layers::Dense(10));
}

auto batch() {
  return std::pair{
      tf::random::uniform<float>({kBatch, 28, 28, 1}, {.seed = 1}),
      tf::random::uniform<std::int32_t>({kBatch}, {.minval = 0, .maxval = 10, .seed = 2})};
}

// One replica's step on its rows; the loss is its share of the global batch's mean.
template <class Model>
void step(Model& model, tf::keras::optimizers::Optimizer& optimizer, const tf::Tensor<float, 4>& x,
          const tf::Tensor<std::int32_t, 1>& y) {
  tf::GradientTape tape;
  auto loss =
      tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, model(x, true), true)) *
      (float(x.dim(0)) / float(kBatch));
  tape.stop();
  auto vars = model.trainable_variables();
  optimizer.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
}

// How a step is traced: not at all; the replicas' step is a tf::function called inside
// strategy.run; the distributed step is a tf::function with strategy.run inside (TensorFlow's
// custom-loop nesting). Traced steps all-reduce each gradient on its own (one graph node each).
enum class Tracing { eager, inside_run, around_run };

template <class Make>
void mirrored(benchmark::State& state, Make make, Tracing tracing = Tracing::eager) {
  tf::distribute::MirroredStrategy strategy;
  auto scope = strategy.scope();
  auto model = make();
  tf::keras::optimizers::Adam optimizer({.learning_rate = 1e-3});
  auto [x, y] = batch();
  (void)model(x, false);
  auto ds = tf::data::from_tensor_slices(x, y) | tf::data::batch(kBatch);
  auto per_replica = *strategy.experimental_distribute_dataset(ds).begin();
  auto distributed_step = [&](const auto& batch) {
    strategy.run([&](const auto& xy) { step(model, optimizer, std::get<0>(xy), std::get<1>(xy)); },
                 batch);
  };
  auto traced_replica_step =
      tf::function([&](const tf::Tensor<float, 4>& x, const tf::Tensor<std::int32_t, 1>& y) {
        step(model, optimizer, x, y);
      });
  auto traced_step = tf::function(distributed_step);
  auto run = [&] {
    if (tracing == Tracing::around_run) {
      traced_step(per_replica);
    } else if (tracing == Tracing::inside_run) {
      strategy.run([&](const auto& xy) { traced_replica_step(std::get<0>(xy), std::get<1>(xy)); },
                   per_replica);
    } else {
      distributed_step(per_replica);
    }
  };
  run();
  for (auto _ : state) {
    run();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

template <class Make>
void single(benchmark::State& state, Make make, int threads) {
  const int previous = std::exchange(tf::backend::cpu::thread_budget(), threads);
  auto model = make();
  tf::keras::optimizers::Adam optimizer({.learning_rate = 1e-3});
  auto [x, y] = batch();
  step(model, optimizer, x, y);
  for (auto _ : state) {
    step(model, optimizer, x, y);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  tf::backend::cpu::thread_budget() = previous;
}

void BM_MlpMirrored2x1(benchmark::State& state) { mirrored(state, make_mlp); }
void BM_MlpMirrored2x1FunctionInRun(benchmark::State& state) {
  mirrored(state, make_mlp, Tracing::inside_run);
}
void BM_MlpMirrored2x1RunInFunction(benchmark::State& state) {
  mirrored(state, make_mlp, Tracing::around_run);
}
void BM_MlpSingle1Thread(benchmark::State& state) { single(state, make_mlp, 1); }
void BM_MlpSingle2Threads(benchmark::State& state) { single(state, make_mlp, 0); }
void BM_CnnMirrored2x1(benchmark::State& state) { mirrored(state, make_cnn); }
void BM_CnnMirrored2x1FunctionInRun(benchmark::State& state) {
  mirrored(state, make_cnn, Tracing::inside_run);
}
void BM_CnnMirrored2x1RunInFunction(benchmark::State& state) {
  mirrored(state, make_cnn, Tracing::around_run);
}
void BM_CnnSingle1Thread(benchmark::State& state) { single(state, make_cnn, 1); }
void BM_CnnSingle2Threads(benchmark::State& state) { single(state, make_cnn, 0); }

BENCHMARK(BM_MlpMirrored2x1)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_MlpMirrored2x1FunctionInRun)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_MlpMirrored2x1RunInFunction)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_MlpSingle1Thread)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_MlpSingle2Threads)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_CnnMirrored2x1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CnnMirrored2x1FunctionInRun)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CnnMirrored2x1RunInFunction)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CnnSingle1Thread)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CnnSingle2Threads)->Unit(benchmark::kMillisecond)->UseRealTime();

// Two replica threads (benchmark's ->Threads(2)) all-reducing `state.range(0)` floats.
void BM_AllReduce(benchmark::State& state) {
  static std::optional<tf::distribute::InProcessGroup> group;
  if (state.thread_index() == 0) {
    group.emplace(2);
  }
  static std::barrier ready(2);
  ready.arrive_and_wait();
  auto replica = group->replica(static_cast<int>(state.thread_index()));
  std::vector<tf::AnyTensor> tensors{
      tf::AnyTensor(tf::fill<float>({state.range(0)}, float(state.thread_index() + 1)))};
  for (auto _ : state) {
    replica.all_reduce(tensors, tf::distribute::ReduceOp::sum);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * std::int64_t(sizeof(float)));
}
BENCHMARK(BM_AllReduce)->Arg(1 << 10)->Arg(1 << 18)->Arg(1 << 22)->Threads(2)->UseRealTime();

void BM_RawAllReduce(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  static std::vector<float> sum;
  static const float* inputs[2];
  static std::barrier arrived(2);
  static std::barrier computed(2);
  static std::barrier left(2);
  if (state.thread_index() == 0) {
    sum.assign(n, 0.0f);
  }
  std::vector<float> mine(n, float(state.thread_index() + 1));
  std::vector<float> out(n);
  arrived.arrive_and_wait();
  for (auto _ : state) {
    inputs[state.thread_index()] = mine.data();
    arrived.arrive_and_wait();
    if (state.thread_index() == 1) {
      for (std::size_t i = 0; i < n; ++i) {
        sum[i] = inputs[0][i] + inputs[1][i];
      }
    }
    computed.arrive_and_wait();
    std::copy(sum.begin(), sum.end(), out.begin());
    benchmark::DoNotOptimize(out.data());
    left.arrive_and_wait();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * std::int64_t(sizeof(float)));
}
BENCHMARK(BM_RawAllReduce)->Arg(1 << 10)->Arg(1 << 18)->Arg(1 << 22)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
