// The seeds' tf.distribute section: MirroredStrategy replicates the MNIST CNN (or MLP) on every
// device, and model.fit splits each global batch across the replicas, sums their gradients
// with an all-reduce and applies the same update everywhere. On a machine without GPUs the
// replicas are logical CPUs (--logical_devices). One custom step then shows strategy.run with
// the per-replica batches and losses, and the loss strategy.reduce sums; three more run it as
// a tf::function, as TensorFlow's custom training loops do. With --multi_worker,
// run under `mpirun -np N`, MultiWorkerMirroredStrategy makes each process a worker instead.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <tuple>
#include <vector>

#include <tapeflow/config.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>
#if TAPEFLOW_HAS_MPI
#include <tapeflow/distribute/multi_worker_mirrored_strategy.hpp>
#endif

#include "common/argparse.hpp"
#include "common/mnist.hpp"

namespace tf = tapeflow;

namespace {
examples::ArgumentParser parser(
    "distribute",
    "Trains the handbook's MNIST CNN (or --model mlp) with MirroredStrategy and model.fit, then\n"
    "runs one custom step with strategy.run and prints per-replica batches and losses, then\n"
    "three steps of it as a tf::function (not with --multi_worker).\n"
    "With --multi_worker, run it under `mpirun -np 2` (or srun): each process is a worker of\n"
    "MultiWorkerMirroredStrategy; the chief (worker 0) shows fit's progress.");
auto& multi_worker =
    parser.add_argument("--multi_worker", false, "MultiWorkerMirroredStrategy over MPI (mpirun)");
auto& model_name = parser.add_argument("--model", "cnn", "cnn or mlp");
auto& logical_devices =
    parser.add_argument("--logical_devices", 2, "logical CPUs to create when there is no GPU");
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{64}, "global batch size");
auto& epochs = parser.add_argument("--epochs", 1);
auto& train_examples =
    parser.add_argument("--train_examples", std::int64_t{60000}, "train on the first N examples");
auto& data_dir = parser.add_data_dir();

template <class Model>
int train(examples::MNISTLoader& data, const tf::distribute::Strategy& strategy) {
  const std::int64_t n = std::min(train_examples, data.num_train_data);
  auto x = tf::slice(data.train_data, {0, 0, 0, 0}, {n, 28, 28, 1});
  auto y = tf::slice(data.train_label, {0}, {n});
  const int verbose = strategy.should_save_summary() ? 1 : 0;  // the chief's bar only

  // [seed:distribute begin]
  // [snippet:mirrored_fit]
  std::printf("Number of devices: %d\n", strategy.num_replicas_in_sync());
  auto scope = strategy.scope();  // Python's `with strategy.scope():` (fit may run inside)
  Model model;
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 1e-3}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy(),
                 .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  model.fit(x, y, {.batch_size = batch_size, .epochs = epochs, .verbose = verbose, .seed = 0});
  // [snippet:mirrored_fit]
  // [seed:distribute end]

  // One custom step: each replica computes its share of the global batch's mean loss.
  // [snippet:custom_step]
  auto ds = tf::data::from_tensor_slices(x, y) | tf::data::batch(batch_size) | tf::data::take(1);
  auto loss_fn = tf::keras::losses::SparseCategoricalCrossentropy();
  auto replica_step = [&](const auto& xy) {
    const auto& [bx, by] = xy;
    tf::GradientTape tape;
    auto loss = loss_fn(tf::AnyTensor(by), tf::AnyTensor(model(bx))) *
                (float(bx.dim(0)) / float(batch_size));
    tape.stop();
    auto vars = model.trainable_variables();
    model.optimizer().apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
    return loss;
  };
  for (const auto& batch : strategy.experimental_distribute_dataset(ds)) {
    auto losses = strategy.run(replica_step, batch);
    for (std::size_t r = 0; r < losses.size(); ++r) {
      std::printf("replica %zu: batch %ld on %s, loss share %.4f\n",
                  std::size_t(strategy.worker_index()) * losses.size() + r,
                  static_cast<long>(std::get<0>(batch[r]).dim(0)),
                  strategy.worker_devices()[r].c_str(), losses[r].item());
    }
    std::printf("reduced loss: %.4f\n",
                strategy.reduce(tf::distribute::ReduceOp::sum, losses).item());
  }
  // [snippet:custom_step]
  if (!multi_worker) {  // strategy.reduce across workers inside a trace is not built yet
    // TensorFlow's usual nesting: the distributed step is the tf::function (each replica traces
    // replica_step once, on its device; later steps run the replicas' graphs).
    // [snippet:traced_step]
    auto distributed_step = tf::function([&](const auto& batch) {
      auto losses = strategy.run(replica_step, batch);
      return strategy.reduce(tf::distribute::ReduceOp::sum, losses);
    });
    auto steps =
        tf::data::from_tensor_slices(x, y) | tf::data::batch(batch_size) | tf::data::take(3);
    for (const auto& batch : strategy.experimental_distribute_dataset(steps)) {
      std::printf("traced step: reduced loss %.4f\n", distributed_step(batch).item());
    }
    // [snippet:traced_step]
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    if ((model_name != "cnn" && model_name != "mlp") || batch_size <= 0 || logical_devices < 1) {
      throw tf::invalid_argument(
          "--model must be cnn or mlp, --batch_size and --logical_devices > 0");
    }
    if (!multi_worker && tf::config::list_physical_devices("GPU").empty()) {
      tf::config::set_logical_device_configuration(
          tf::config::list_physical_devices("CPU").at(0),
          std::vector<tf::config::LogicalDeviceConfiguration>(std::size_t(logical_devices)));
    }
    tf::random::set_seed(0);
    examples::MNISTLoader data(data_dir);
    const auto run = [&](const tf::distribute::Strategy& strategy) {
      return model_name == "cnn" ? train<examples::CNN>(data, strategy)
                                 : train<examples::MLP>(data, strategy);
    };
    if (multi_worker) {
#if TAPEFLOW_HAS_MPI
      // [snippet:multi_worker]
      tf::distribute::MultiWorkerMirroredStrategy strategy;  // one worker per mpirun process
      // [snippet:multi_worker]
      return run(strategy);
#else
      throw tf::unimplemented("--multi_worker: this build has no tapeflow::mpi (libopenmpi-dev)");
#endif
    }
    // [seed:distribute begin]
    // [snippet:mirrored_strategy]
    tf::distribute::MirroredStrategy strategy;  // or ({.devices = {"/gpu:0", "/gpu:1"}})
    // [snippet:mirrored_strategy]
    // [seed:distribute end]
    return run(strategy);
  });
}
