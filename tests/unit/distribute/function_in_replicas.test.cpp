// tf::function inside strategy.run, and strategy.run inside tf::function: every replica traces
// its own graph once (its device is part of the signature) and runs it at each step; the
// all-reduces inside (the optimizer's, a replica's all_reduce) are graph nodes, so a traced
// training step on two replicas equals one replica on the global batch. Each case runs in its own
// process (CTest), so each configures its logical CPUs first.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
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
#include <tapeflow/function/control_flow.hpp>
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

// The seed MLP trained by two replicas on two logical CPUs, and by one replica on the whole
// batch each step (eager): the two must agree.
struct ReplicatedTraining {
  static constexpr std::int64_t global_batch = 32;
  static constexpr int steps = 5;
  std::pair<tf::Tensor<float, 2>, tf::Tensor<std::int32_t, 1>> data =
      tapeflow_test::seed_mlp_batch(global_batch * steps, 3);
  tf::keras::losses::SparseCategoricalCrossentropy loss_fn{{.from_logits = true}};
  decltype(seed_mlp()) single = tapeflow_test::seed_mlp_trained_on_global_batches(
      data.first, data.second, global_batch, steps);
  dist::MirroredStrategy strategy;
  dist::StrategyScope scope = strategy.scope();
  decltype(seed_mlp()) model = seed_mlp();
  tf::keras::optimizers::Adam opt{{.learning_rate = 1e-3}};

  // One replica's step on its rows: its share of the global batch's mean loss.
  tf::Tensor<float, 0> replica_step(const tf::Tensor<float, 2>& bx,
                                    const tf::Tensor<std::int32_t, 1>& by) {
    tf::GradientTape tape;
    auto mean_loss = loss_fn(tf::AnyTensor(by), tf::AnyTensor(model(bx)));
    auto loss = mean_loss * (float(bx.dims()[0]) / float(global_batch));
    tape.stop();
    auto vars = model.trainable_variables();
    opt.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
    return loss;
  }
  auto batches() {
    return strategy.experimental_distribute_dataset(
        tf::data::from_tensor_slices(data.first, data.second) | tf::data::batch(global_batch));
  }
  void check_equals_single() {
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
};

TEST_CASE("a tf::function training step inside strategy.run equals one replica on the global batch",
          "[distribute]") {
  logical_cpus(2);
  ReplicatedTraining t;
  // Two replicas, each calling one tf::function on its half of the batch.
  auto train_step =
      tf::function([&](const tf::Tensor<float, 2>& bx,
                       const tf::Tensor<std::int32_t, 1>& by) { return t.replica_step(bx, by); },
                   {.name = "train_step"});
  int step = 0;
  for (const auto& batch : t.batches()) {
    auto losses = t.strategy.run(
        [&](const auto& xy) { return train_step(std::get<0>(xy), std::get<1>(xy)); }, batch);
    (void)t.strategy.reduce(dist::ReduceOp::sum, losses);
    ++step;
  }
  REQUIRE(step == t.steps);
  // One graph per replica (device), each traced once and run at every step.
  CHECK(train_step.trace_count() == 2);
  t.check_equals_single();
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

TEST_CASE("strategy.run inside a tf::function equals one replica on the global batch",
          "[distribute]") {
  logical_cpus(2);
  ReplicatedTraining t;
  // TensorFlow's custom training loop: the distributed step is the tf::function.
  std::atomic<int> traces = 0;  // the replicas trace on their own threads, together
  auto replica_step = [&](const auto& xy) {
    ++traces;
    return t.replica_step(std::get<0>(xy), std::get<1>(xy));
  };
  auto distributed_step = tf::function(
      [&](const auto& batch) {
        auto losses = t.strategy.run(replica_step, batch);
        return t.strategy.reduce(dist::ReduceOp::sum, losses);
      },
      {.name = "distributed_train_step"});
  std::vector<float> losses;
  for (const auto& batch : t.batches()) {
    losses.push_back(distributed_step(batch).item());
  }
  REQUIRE(losses.size() == std::size_t(t.steps));
  CHECK(distributed_step.trace_count() == 1);
  CHECK(traces == 2);  // each replica traced the step once, on its own thread
  CHECK(losses.back() < losses.front());
  t.check_equals_single();
  // One node runs the replicas, each replica's graph holding its own step.
  const auto& nodes = distributed_step.concrete_functions()[0]->graph().nodes;
  auto is_run = [](const auto& n) { return n.op == "StrategyRun"; };
  REQUIRE(std::ranges::count_if(nodes, is_run) == 1);
  const auto& replicas = std::ranges::find_if(nodes, is_run)->functions;
  CHECK(replicas.size() == 2);
  // The optimizer sums the gradients in one node, packed as the eager step packs them.
  for (const auto& replica : replicas) {
    CHECK(std::ranges::count_if(replica->graph().nodes,
                                [](const auto& n) { return n.op == "GradientAllReduce"; }) == 1);
  }
}

TEST_CASE("a replica's all_reduce in a traced strategy.run runs at every call with its values",
          "[distribute]") {
  logical_cpus(2);
  dist::MirroredStrategy strategy;
  auto summed = tf::function([&](const dist::PerReplica<tf::Tensor<float, 1>>& v) {
    auto out = strategy.run(
        [](const tf::Tensor<float, 1>& mine) {
          return dist::get_replica_context()->all_reduce(dist::ReduceOp::sum, mine * 2.0f);
        },
        v);
    return std::tuple{out.values[0], out.values[1]};
  });
  for (int call = 0; call < 3; ++call) {
    const dist::PerReplica<tf::Tensor<float, 1>> v{
        {tf::constant<float>({float(call), 1.0f}), tf::constant<float>({float(1 + call), 1.0f})}};
    const auto [first, second] = summed(v);
    // 2 * call + 2 * (1 + call), and 2 + 2, on both replicas.
    CHECK(first.numpy() == std::vector<float>{float(2 + 4 * call), 4.0f});
    CHECK(second.numpy() == std::vector<float>{float(2 + 4 * call), 4.0f});
  }
  CHECK(summed.trace_count() == 1);
  const auto& nodes = summed.concrete_functions()[0]->graph().nodes;
  const auto run_node =
      std::ranges::find_if(nodes, [](const auto& n) { return n.op == "StrategyRun"; });
  REQUIRE(run_node != nodes.end());
  for (const auto& replica : run_node->functions) {
    CHECK(std::ranges::count_if(replica->optimized_graph().nodes,
                                [](const auto& n) { return n.op == "CollectiveReduceV2"; }) == 1);
  }
  // A PerReplica of the wrong size is refused before anything is traced.
  const dist::PerReplica<tf::Tensor<float, 1>> one{{tf::constant<float>({1.0f})}};
  CHECK_THROWS_AS(summed(one), tf::invalid_argument);
}

TEST_CASE("a traced strategy.run of a function returning nothing runs at every call",
          "[distribute]") {
  logical_cpus(2);
  dist::MirroredStrategy strategy;
  auto scope = strategy.scope();
  tf::Variable<float, 0> counter(0.0f);
  auto step = tf::function([&](const dist::PerReplica<tf::Tensor<float, 0>>& by) {
    strategy.run([&](const tf::Tensor<float, 0>& mine) { counter.assign_add(mine); }, by);
  });
  const dist::PerReplica<tf::Tensor<float, 0>> by{
      {tf::Tensor<float, 0>(1.0f), tf::Tensor<float, 0>(2.0f)}};
  for (int call = 0; call < 3; ++call) {
    step(by);
  }
  CHECK(step.trace_count() == 1);
  // Each replica added its own value to its own copy at every call (no pass pruned the node).
  CHECK(counter.copy_value(0).item() == 3.0f);
  CHECK(counter.copy_value(1).item() == 6.0f);
}

TEST_CASE("strategy.run inside a traced tf::cond runs in the branch taken", "[distribute]") {
  logical_cpus(2);
  dist::MirroredStrategy strategy;
  auto outer = tf::function([&](const tf::Tensor<float, 1>& v) {
    // Both replicas capture `scaled` and `total` from the function's body through the branch,
    // on their own threads at once.
    auto scaled = v * 3.0f;
    auto total = tf::reduce_sum(v);
    return tf::cond(
        total > 0.0f,
        [&] {
          auto mine = strategy.run([&] {
            return dist::get_replica_context()->all_reduce(dist::ReduceOp::sum, scaled + total);
          });
          return mine.values[0] + mine.values[1];
        },
        [&] { return v; });
  });
  // Each replica's all-reduce gives 2 * (3v + sum(v)); the branch adds the two replicas' values.
  CHECK(outer(tf::constant<float>({1.0f, 2.0f})).numpy() == std::vector<float>{24.0f, 36.0f});
  CHECK(outer(tf::constant<float>({-1.0f, -2.0f})).numpy() == std::vector<float>{-1.0f, -2.0f});
  CHECK(outer(tf::constant<float>({2.0f, 0.0f})).numpy() == std::vector<float>{32.0f, 8.0f});
  CHECK(outer.trace_count() == 1);
  // The function holds one If node; its true branch holds the StrategyRun node.
  const auto& nodes = outer.concrete_functions()[0]->graph().nodes;
  const auto if_node = std::ranges::find_if(nodes, [](const auto& n) { return n.op == "If"; });
  REQUIRE(if_node != nodes.end());
  REQUIRE(if_node->functions.size() == 2);
  CHECK(std::ranges::count_if(if_node->functions[0]->graph().nodes,
                              [](const auto& n) { return n.op == "StrategyRun"; }) == 1);
}

TEST_CASE("strategy.run inside a traced tf::while_loop runs at every iteration", "[distribute]") {
  logical_cpus(2);
  dist::MirroredStrategy strategy;
  auto scope = strategy.scope();
  tf::Variable<float, 0> counter(0.0f);
  // TensorFlow's several-steps-per-call loop: strategy.run in the body of a loop over steps.
  auto steps = tf::function(
      [&](const tf::Tensor<std::int32_t, 0>& n, const dist::PerReplica<tf::Tensor<float, 0>>& by) {
        return tf::while_loop([&](const tf::Tensor<std::int32_t, 0>& i) { return i < n; },
                              [&](const tf::Tensor<std::int32_t, 0>& i) {
                                strategy.run(
                                    [&](const tf::Tensor<float, 0>& mine) {
                                      counter.assign_add(dist::get_replica_context()->all_reduce(
                                          dist::ReduceOp::sum, mine));
                                    },
                                    by);
                                return i + 1;
                              },
                              tf::Tensor<std::int32_t, 0>(0));
      });
  const dist::PerReplica<tf::Tensor<float, 0>> by{
      {tf::Tensor<float, 0>(1.0f), tf::Tensor<float, 0>(2.0f)}};
  CHECK(steps(tf::Tensor<std::int32_t, 0>(3), by).item() == 3);
  // Each iteration adds the replicas' sum (3) to each replica's copy.
  CHECK(counter.copy_value(0).item() == 9.0f);
  CHECK(counter.copy_value(1).item() == 9.0f);
  CHECK(steps(tf::Tensor<std::int32_t, 0>(2), by).item() == 2);
  CHECK(counter.copy_value(0).item() == 15.0f);
  CHECK(counter.copy_value(1).item() == 15.0f);
  CHECK(steps.trace_count() == 1);
}

}  // namespace test_distribute_function_in_replicas
