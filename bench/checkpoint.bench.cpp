// train (issue 7): Checkpoint::write and Checkpoint::restore throughput (GB/s of float32
// parameters) for models of 10M and 100M parameters held as 1M-parameter variables, written to
// and read from the page cache in /tmp. Peer: bench/peers/checkpoint_tf.py
// (tf.train.Checkpoint.write / restore of the same sizes).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <tapeflow/core.hpp>
#include <tapeflow/train.hpp>

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {

const fs::path dir = fs::temp_directory_path() / "tapeflow_bench_checkpoint";

struct Params {
  std::vector<tf::Variable<float, 1>> vars;
  std::vector<tf::train::Checkpoint::Item> items;
  explicit Params(std::int64_t total) {
    const std::int64_t per = 1'000'000;
    for (std::int64_t i = 0; i * per < total; ++i) {
      vars.emplace_back(tf::fill<float>({per}, float(i)));
    }
    for (std::size_t i = 0; i < vars.size(); ++i) {
      items.push_back({"v" + std::to_string(i), vars[i]});
    }
  }
};

void BM_checkpoint_write(benchmark::State& state) {
  Params p(state.range(0));
  tf::train::Checkpoint ckpt(p.items);
  fs::create_directories(dir);
  const std::string prefix = (dir / "w").string();
  for (auto _ : state) {
    ckpt.write(prefix);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}
void BM_checkpoint_restore(benchmark::State& state) {
  Params p(state.range(0));
  tf::train::Checkpoint ckpt(p.items);
  fs::create_directories(dir);
  const std::string prefix = (dir / "r").string();
  ckpt.write(prefix);
  for (auto _ : state) {
    ckpt.restore(prefix).assert_consumed();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

}  // namespace

BENCHMARK(BM_checkpoint_write)
    ->Arg(10'000'000)
    ->Arg(100'000'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_checkpoint_restore)
    ->Arg(10'000'000)
    ->Arg(100'000'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_MAIN();
