// MultiWorkerMirroredStrategy and its MPI collective across worker processes; run under
// mpirun (bench/RESULTS.md has the commands and figures):
//
//   mpirun -np 2 bench_mpi_multi_worker allreduce
//     MpiCollective::all_reduce of one float tensor (1 Ki, 256 Ki, 4 Mi floats) against its
//     peer, a raw MPI_Allreduce loop over the same bytes (separate send and receive buffers,
//     as ours), in alternating rounds; the median of each is printed with the ratio.
//   mpirun -np 2 bench_mpi_multi_worker cnn 1    (and mpirun -np 1 ... cnn 1, cnn 2)
//     Training throughput of the handbook's MNIST CNN, global batch 64, Adam, one step =
//     forward, loss, backward, all-reduce, update, under MultiWorkerMirroredStrategy with
//     each worker limited to N intra-op threads.
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <mpi.h>

#include <tapeflow/backend/cpu/thread_budget.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void allreduce_bench() {
  tf::distribute::MultiWorkerMirroredStrategy strategy;
  auto collective = strategy.collective();
  const bool chief = strategy.is_chief();
  if (chief) {
    std::printf("%-10s %14s %14s %10s %12s\n", "floats", "tapeflow us", "raw MPI us", "ratio",
                "tapeflow GB/s");
  }
  for (const std::int64_t n :
       {std::int64_t{1} << 10, std::int64_t{1} << 18, std::int64_t{1} << 22}) {
    const int iterations = n <= (1 << 10) ? 2000 : n <= (1 << 18) ? 200 : 20;
    std::vector<float> send(static_cast<std::size_t>(n), 1.0f);
    std::vector<float> receive(send.size());
    std::vector<tf::AnyTensor> tensors = {tf::AnyTensor(tf::fill<float>({n}, 1.0f))};
    const tf::AnyTensor input = tensors[0];
    std::vector<double> ours;
    std::vector<double> raw;
    for (int round = 0; round < 7; ++round) {
      MPI_Barrier(MPI_COMM_WORLD);
      auto start = Clock::now();
      for (int i = 0; i < iterations; ++i) {
        tensors[0] = input;
        collective.all_reduce(tensors, tf::distribute::ReduceOp::sum);
      }
      ours.push_back(seconds_since(start) / iterations);
      MPI_Barrier(MPI_COMM_WORLD);
      start = Clock::now();
      for (int i = 0; i < iterations; ++i) {
        MPI_Allreduce(send.data(), receive.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      }
      raw.push_back(seconds_since(start) / iterations);
    }
    if (chief) {
      const double a = median(ours);
      const double b = median(raw);
      std::printf("%-10lld %14.1f %14.1f %9.0f%% %12.3f\n", static_cast<long long>(n), a * 1e6,
                  b * 1e6, 100.0 * b / a, double(n) * 4 / a / 1e9);
    }
  }
}

void cnn_bench(int threads) {
  tf::backend::cpu::thread_budget() = threads;
  constexpr std::int64_t batch = 64;
  tf::distribute::MultiWorkerMirroredStrategy strategy;
  auto scope = strategy.scope();
  auto model =
      tf::keras::Sequential(layers::Conv2D(32, 5, {.padding = "same", .activation = tf::nn::relu}),
                            layers::MaxPool2D(2, {.strides = 2}),
                            layers::Conv2D(64, 5, {.padding = "same", .activation = tf::nn::relu}),
                            layers::MaxPool2D(2, {.strides = 2}), layers::Flatten(),
                            layers::Dense(1024, {.activation = tf::nn::relu}), layers::Dense(10));
  tf::keras::optimizers::Adam optimizer({.learning_rate = 1e-3});
  auto x = tf::random::uniform<float>({batch, 28, 28, 1}, {.seed = 1});
  auto y = tf::random::uniform<std::int32_t>({batch}, {.minval = 0, .maxval = 10, .seed = 2});
  (void)model(x, false);
  auto ds = tf::data::from_tensor_slices(x, y) | tf::data::batch(batch);
  auto per_replica = *strategy.experimental_distribute_dataset(ds).begin();
  const auto step = [&] {
    strategy.run(
        [&](const auto& xy) {
          const auto& [bx, by] = xy;
          tf::GradientTape tape;
          auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(
                          by, model(bx, true), true)) *
                      (float(bx.dim(0)) / float(batch));
          tape.stop();
          auto vars = model.trainable_variables();
          optimizer.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
        },
        per_replica);
  };
  for (int i = 0; i < 3; ++i) {
    step();
  }
  std::vector<double> per_step;
  for (int round = 0; round < 5; ++round) {
    const auto start = Clock::now();
    constexpr int steps = 10;
    for (int i = 0; i < steps; ++i) {
      step();
    }
    per_step.push_back(seconds_since(start) / steps);
  }
  if (strategy.is_chief()) {
    const double t = median(per_step);
    std::printf("CNN: %d worker(s) x %d thread(s): %.1f ms/step, %.0f examples/s\n",
                strategy.num_replicas_in_sync(), threads, t * 1e3, double(batch) / t);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "allreduce") {
    allreduce_bench();
  } else if (mode == "cnn") {
    cnn_bench(argc > 2 ? std::atoi(argv[2]) : 1);
  } else {
    std::fprintf(stderr, "usage: mpirun -np 2 %s allreduce | cnn <threads per worker>\n", argv[0]);
    return 2;
  }
  return 0;
}
