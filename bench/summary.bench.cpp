// tf::summary on the training thread: (a) summary::scalar with a default writer (aim < 1 µs),
// (b) sustained scalar events per second to disk (the writer thread's throughput: the bench
// writes `range(0)` events then flushes), (c) a call with no default writer, (d) an image
// summary of one 28x28 grayscale image (PNG encoding on the calling thread), (e) the cost of
// the trace observer hook on a cached tf::function call with tracing off.
// Peer: bench/peers/summary_tf.py (TensorFlow's eager tf.summary.scalar), same machine.
#include <filesystem>

#include <benchmark/benchmark.h>

#include <tapeflow/function/function.hpp>
#include <tapeflow/summary.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

std::filesystem::path logdir(const char* name) {
  auto dir = std::filesystem::temp_directory_path() / "tapeflow_bench_summary" / name;
  std::filesystem::remove_all(dir);
  return dir;
}

// The calls a training loop makes: 1,000 per timed iteration, then (untimed) a flush, so the
// queue never reaches its backpressure bound and only the caller's cost is measured. Time per
// call = reported time / 1000.
template <class Value>
void scalar_calls(benchmark::State& state, const char* dir, const char* tag, const Value& value) {
  auto writer = tf::summary::create_file_writer(logdir(dir));
  auto scope = writer.as_default();
  std::int64_t step = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) {
      benchmark::DoNotOptimize(tf::summary::scalar(tag, value, step++));
    }
    state.PauseTiming();
    writer.flush();
    state.ResumeTiming();
  }
  writer.close();
  state.SetItemsProcessed(state.iterations() * 1000);
}
void BM_ScalarCall(benchmark::State& state) { scalar_calls(state, "scalar", "loss", 0.5f); }
BENCHMARK(BM_ScalarCall)->UseRealTime();
void BM_ScalarTensorCall(benchmark::State& state) {
  scalar_calls(state, "scalar_tensor", "train/loss", tf::constant<float>(0.5f));
}
BENCHMARK(BM_ScalarTensorCall)->UseRealTime();

void BM_ScalarSustained(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  for (auto _ : state) {
    auto writer = tf::summary::create_file_writer(logdir("sustained"));
    {
      auto scope = writer.as_default();
      for (std::int64_t i = 0; i < n; ++i) {
        tf::summary::scalar("loss", static_cast<float>(i), i);
      }
    }
    writer.close();  // every event on disk
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ScalarSustained)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ScalarNoWriter(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(tf::summary::scalar("loss", 0.5f, 1));
  }
}
BENCHMARK(BM_ScalarNoWriter);

void BM_ImageMnist(benchmark::State& state) {
  auto writer = tf::summary::create_file_writer(logdir("image"));
  auto scope = writer.as_default();
  auto img = tf::random::uniform<float>({1, 28, 28, 1}, {.seed = 1});
  std::int64_t step = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(tf::summary::image("sample", img, step++));
  }
  writer.close();
}
BENCHMARK(BM_ImageMnist);

void BM_CachedFunctionCall(benchmark::State& state) {
  // Tracing off: the observer hook is one atomic load per call plus a branch per node.
  auto f = tf::function([](const tf::Tensor<float, 0>& x) { return x + 1.0f; });
  auto x = tf::constant<float>(1.0f);
  benchmark::DoNotOptimize(f(x).data());
  for (auto _ : state) {
    benchmark::DoNotOptimize(f(x).data());
  }
}
BENCHMARK(BM_CachedFunctionCall);

}  // namespace
BENCHMARK_MAIN();
