// tf::function inside strategy.run: every replica traces its own graph once (its device is part
// of the signature) and runs it at each step; the all-reduces inside (the optimizer's, a
// replica's all_reduce) are graph nodes, so a traced training step on two replicas equals one
// replica on the global batch. Each case runs in its own process (CTest), so each configures
// its logical CPUs first.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>
#include <mirrored_checks.hpp>
#include <seed_mlp_data.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/config/config.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/distribute/replica_context.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/random/random.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_distribute_function_in_replicas {

namespace tf = tapeflow;
namespace dist = tf::distribute;
namespace layers = tf::keras::layers;

using tapeflow_test::logical_cpus;
using tapeflow_test::max_abs_diff;
using tapeflow_test::seed_mlp;

TEST_CASE("a tf::function training step inside strategy.run equals one replica on the global batch",
          "[distribute]") {
  logical_cpus(2);
  constexpr std::int64_t global_batch = 32;
  constexpr int steps = 5;
  auto [x, y] = tapeflow_test::seed_mlp_batch(global_batch * steps, 3);
  auto loss_fn = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true});
  // One replica, eager, the whole batch each step.
  auto single = tapeflow_test::seed_mlp_trained_on_global_batches(x, y, global_batch, steps);

  // Two replicas, each calling one tf::function on its half of the batch.
  dist::MirroredStrategy strategy;
  auto scope = strategy.scope();
  auto model = seed_mlp();
  tf::keras::optimizers::Adam opt({.learning_rate = 1e-3});
  auto train_step = tf::function(
      [&](const tf::Tensor<float, 2>& bx, const tf::Tensor<std::int32_t, 1>& by) {
        tf::GradientTape tape;
        auto mean_loss = loss_fn(tf::AnyTensor(by), tf::AnyTensor(model(bx)));
        auto loss = mean_loss * (float(bx.dims()[0]) / float(global_batch));
        tape.stop();
        auto vars = model.trainable_variables();
        opt.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
        return loss;
      },
      {.name = "train_step"});
  auto ds = tf::data::from_tensor_slices(x, y) | tf::data::batch(global_batch);
  int step = 0;
  for (const auto& batch : strategy.experimental_distribute_dataset(ds)) {
    auto losses = strategy.run(
        [&](const auto& xy) {
          const auto& [bx, by] = xy;
          return train_step(bx, by);
        },
        batch);
    (void)strategy.reduce(dist::ReduceOp::sum, losses);
    ++step;
  }
  REQUIRE(step == steps);
  // One graph per replica (device), each traced once and run at every step.
  CHECK(train_step.trace_count() == 2);
  CHECK(opt.iterations() == steps);
  const auto a = single.trainable_variables();
  const auto b = model.trainable_variables();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(b[i].name());
    CHECK(max_abs_diff(a[i].value(), b[i].value()) <= 1e-5f);
    CHECK(max_abs_diff(b[i].copy_value(0), b[i].copy_value(1)) == 0.0f);
  }
}

TEST_CASE("a replica's all_reduce in a tf::function runs at every call with that call's values",
          "[distribute]") {
  logical_cpus(2);
  dist::MirroredStrategy strategy;
  auto summed = tf::function([](const tf::Tensor<float, 1>& v) {
    return dist::get_replica_context()->all_reduce(dist::ReduceOp::sum, v * 2.0f);
  });
  for (int call = 0; call < 3; ++call) {
    const auto results = strategy.run([&] {
      const int r = dist::get_replica_context()->replica_id_in_sync_group();
      return summed(tf::constant<float>({float(r + call), 1.0f})).numpy();
    });
    for (const auto& got : results.values) {
      // 2 * (0 + call) + 2 * (1 + call), and 2 + 2.
      CHECK(got == std::vector<float>{float(2 + 4 * call), 4.0f});
    }
  }
  CHECK(summed.trace_count() == 2);
  // The graph holds the all-reduce as a node that no pass removes or merges.
  for (const auto* fn : summed.concrete_functions()) {
    const auto& nodes = fn->optimized_graph().nodes;
    CHECK(std::ranges::count_if(nodes,
                                [](const auto& n) { return n.op == "CollectiveReduceV2"; }) == 1);
  }
}

TEST_CASE("strategy.run inside a tf::function being traced is a clear error", "[distribute]") {
  logical_cpus(2);
  dist::MirroredStrategy strategy;
  auto outer = tf::function([&](const tf::Tensor<float, 1>& v) {
    return strategy.run([&] { return v * 2.0f; }).values[0];
  });
  CHECK_THROWS_AS(outer(tf::constant<float>({1.0f})), tf::unimplemented);
}

}  // namespace test_distribute_function_in_replicas
