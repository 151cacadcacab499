// Serving latency of SavedModels TensorFlow wrote, loaded with tf::saved_model::load: one call of
// the signature serving_default of the handbook's MNIST MLP and CNN (Keras 3 Sequential models,
// softmax outputs), batch 1 and batch 50, on an input already in memory, through the
// named-tensor call a serving program makes (`sig({{"input", x}})`, a map in and a map out).
//
// The models come from the peer, which also times TensorFlow's own call of the same signature:
//   python bench/peers/saved_model_tf.py --dir DIR --export   # writes DIR/mlp, DIR/cnn; times TF
//   TAPEFLOW_BENCH_SAVED_MODEL_DIR=DIR build/default/bench/bench_saved_model
// or bench/saved_model.sh, which does both in one run.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <benchmark/benchmark.h>

#include <tapeflow/ops/random/random.hpp>
#include <tapeflow/saved_model/load.hpp>

namespace tf = tapeflow;

namespace {

std::string model_dir(const char* name) {
  const char* dir = std::getenv("TAPEFLOW_BENCH_SAVED_MODEL_DIR");
  return (std::filesystem::path(dir != nullptr ? dir : "saved_model_bench") / name).string();
}

void serve(benchmark::State& state, const char* name) {
  const std::string dir = model_dir(name);
  if (!std::filesystem::exists(std::filesystem::path(dir) / "saved_model.pb")) {
    state.SkipWithError(("no SavedModel in " + dir +
                         ": run bench/peers/saved_model_tf.py --dir DIR --export and set "
                         "TAPEFLOW_BENCH_SAVED_MODEL_DIR=DIR")
                            .c_str());
    return;
  }
  const auto model = tf::saved_model::load(dir);
  const auto& infer = model.signatures.at("serving_default");
  const std::int64_t batch = state.range(0);
  const std::map<std::string, tf::AnyTensor> inputs{
      {infer.input_keys().at(0),
       tf::AnyTensor(tf::random::uniform<float>({batch, 28, 28, 1}, {.seed = 1}))}};
  for (auto _ : state) {
    auto outputs = infer(inputs);
    benchmark::DoNotOptimize(outputs.begin()->second.template as<float, 2>().data());
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_ServeMlp(benchmark::State& state) { serve(state, "mlp"); }
BENCHMARK(BM_ServeMlp)->Arg(1)->Arg(50)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_ServeCnn(benchmark::State& state) { serve(state, "cnn"); }
BENCHMARK(BM_ServeCnn)->Arg(1)->Arg(50)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
