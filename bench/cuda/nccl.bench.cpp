// Issue 21's NCCL benchmark: bus bandwidth of MirroredStrategy's all-reduce over every GPU of the
// machine through the NCCL collective (one replica thread per GPU, as a training step runs it)
// against a raw loop of ncclAllReduce on the same bytes (one thread, one group call per
// iteration). Bus bandwidth = bytes / time * 2 (n - 1) / n, as nccl-tests reports it. Needs 2
// or more GPUs and tapeflow::nccl.
//
//   build/default/bench/bench_cuda_nccl --benchmark_repetitions=3
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <tapeflow/backend/cuda/platform.hpp>
#include <tapeflow/config.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/distribute.hpp>

namespace {
namespace tf = tapeflow;
namespace dist = tf::distribute;

int gpus(benchmark::State& state) {
  const int n = tf::backend::cuda::device_count();
  if (n < 2) {
    state.SkipWithError("NCCL bus bandwidth needs 2 or more GPUs");
  }
  return n;
}

void report(benchmark::State& state, int n) {
  const double bytes = static_cast<double>(state.range(0));
  state.counters["busbw_GBps"] =
      benchmark::Counter(bytes * 2.0 * (n - 1) / n * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

void BM_TapeflowNcclAllReduce(benchmark::State& state) {
  const int n = gpus(state);
  if (n < 2) {
    return;
  }
  dist::MirroredStrategy strategy({.cross_device_ops = dist::CrossDeviceOps::nccl});
  const std::int64_t elements = state.range(0) / 4;
  dist::PerReplica<tf::Tensor<float, 1>> values;
  for (const auto& device : strategy.worker_devices()) {
    auto on = tf::device(device);
    values.values.push_back(tf::ones<float>({elements}));
  }
  for (auto _ : state) {
    strategy.run(
        [](const tf::Tensor<float, 1>& v) {
          return dist::get_replica_context()->all_reduce(dist::ReduceOp::sum, v);
        },
        values);
  }
  report(state, n);
}

void BM_RawNcclAllReduce(benchmark::State& state) {
  const int n = gpus(state);
  if (n < 2) {
    return;
  }
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  std::vector<int> devices(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    devices[std::size_t(d)] = d;
  }
  ncclCommInitAll(comms.data(), n, devices.data());
  const auto count = static_cast<std::size_t>(state.range(0) / 4);
  const auto devices_n = static_cast<std::size_t>(n);  // not size_t(n): a vexing parse
  std::vector<float*> send(devices_n), receive(devices_n);
  std::vector<cudaStream_t> streams(devices_n);
  for (int d = 0; d < n; ++d) {
    cudaSetDevice(d);
    cudaMalloc(&send[std::size_t(d)], count * sizeof(float));
    cudaMalloc(&receive[std::size_t(d)], count * sizeof(float));
    cudaStreamCreateWithFlags(&streams[std::size_t(d)], cudaStreamNonBlocking);
  }
  for (auto _ : state) {
    ncclGroupStart();
    for (int d = 0; d < n; ++d) {
      ncclAllReduce(send[std::size_t(d)], receive[std::size_t(d)], count, ncclFloat32, ncclSum,
                    comms[std::size_t(d)], streams[std::size_t(d)]);
    }
    ncclGroupEnd();
    for (int d = 0; d < n; ++d) {
      cudaStreamSynchronize(streams[std::size_t(d)]);
    }
  }
  report(state, n);
  for (int d = 0; d < n; ++d) {
    cudaSetDevice(d);
    cudaFree(send[std::size_t(d)]);
    cudaFree(receive[std::size_t(d)]);
    cudaStreamDestroy(streams[std::size_t(d)]);
    ncclCommDestroy(comms[std::size_t(d)]);
  }
}

BENCHMARK(BM_TapeflowNcclAllReduce)->Arg(1 << 20)->Arg(16 << 20)->Arg(256 << 20)->UseRealTime();
BENCHMARK(BM_RawNcclAllReduce)->Arg(1 << 20)->Arg(16 << 20)->Arg(256 << 20)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
