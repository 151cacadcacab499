// MirroredStrategy over logical CPUs: mirrored variables, run / reduce / replica context, batch
// splitting as TensorFlow's, and the equivalence the issue asks for: training the seed MLP on
// two replicas gives one replica's weights on the global batch (max abs diff <= 1e-5), with
// every replica's copy identical after each step. Each case runs in its own process (CTest),
// so each configures its logical CPUs first.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <mirrored_checks.hpp>
#include <seed_mlp_data.hpp>

#include <tapeflow/config/config.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/distribute/any_collective.hpp>
#include <tapeflow/distribute/detail/split_batch.hpp>
#include <tapeflow/distribute/distributed_dataset.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/random/random.hpp>
#include <tapeflow/train/checkpoint.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_distribute_mirrored_strategy {

namespace tf = tapeflow;
namespace dist = tf::distribute;
namespace layers = tf::keras::layers;
using namespace std::chrono_literals;
using Catch::Detail::Approx;

namespace {
using tapeflow_test::floats;
using tapeflow_test::logical_cpus;
using tapeflow_test::max_abs_diff;
using tapeflow_test::seed_mlp;
using tapeflow_test::seed_mlp_trained_on_global_batches;

// Every copy of every variable holds the same bits.
void require_copies_identical(const std::vector<tf::AnyVariable>& vars, std::size_t copies) {
  for (const auto& v : vars) {
    REQUIRE(v.num_copies() == copies);
    const auto first = floats(v.copy_value(0));
    for (std::size_t r = 1; r < copies; ++r) {
      INFO(v.name() << " copy " << r);
      REQUIRE(floats(v.copy_value(r)) == first);
    }
  }
}

using tapeflow_test::seed_mlp_batch;
}  // namespace

TEST_CASE(
    "MirroredStrategy mirrors variables on every logical CPU and runs one thread per "
    "replica",
    "[distribute]") {
  logical_cpus(2);
  dist::MirroredStrategy strategy;
  REQUIRE(strategy.num_replicas_in_sync() == 2);
  CHECK(strategy.worker_devices() ==
        std::vector<std::string>{"/job:localhost/replica:0/task:0/device:CPU:0",
                                 "/job:localhost/replica:0/task:0/device:CPU:1"});
  CHECK(dist::in_cross_replica_context());

  tf::Variable<float, 1> plain(tf::constant<float>({1, 2}));
  CHECK(plain.num_copies() == 1);
  std::optional<tf::Variable<float, 1>> mirrored;
  {
    auto scope = strategy.scope();
    CHECK(dist::has_strategy());
    mirrored.emplace(tf::constant<float>({1, 2}), tf::VariableOptions{.name = "v"});
  }
  CHECK_FALSE(dist::has_strategy());
  auto& v = *mirrored;
  REQUIRE(v.num_copies() == 2);
  CHECK(v.copy_value(0).device() == strategy.worker_devices()[0]);
  CHECK(v.copy_value(1).device() == strategy.worker_devices()[1]);

  // Inside run, each replica works on its own copy, on its own device and thread. (Catch's
  // assertions are not thread-safe: replicas return what the test checks.)
  struct Seen {
    int id = -1;
    int replicas = 0;
    std::string device;
    std::thread::id thread;
    tf::Tensor<float, 1> summed;
  };
  auto result = strategy.run([&] {
    auto* ctx = dist::get_replica_context();
    Seen seen{.id = ctx->replica_id_in_sync_group(),
              .replicas = ctx->num_replicas_in_sync(),
              .device = tf::config::current_device(),
              .thread = std::this_thread::get_id(),
              .summed = {}};
    v.assign_add(tf::constant<float>({float(seen.id), 10.0f * float(seen.id)}));
    seen.summed = ctx->all_reduce(dist::ReduceOp::sum, v.value());
    return seen;
  });
  REQUIRE(result.size() == 2);
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(result[r].id == int(r));
    CHECK(result[r].replicas == 2);
    CHECK(result[r].device == strategy.worker_devices()[r]);
    CHECK(result[r].summed.numpy() == std::vector<float>{3, 14});  // {1,2} + {2,12}
  }
  CHECK(result[0].thread != result[1].thread);
  CHECK(v.copy_value(0).numpy() == std::vector<float>{1, 2});
  CHECK(v.copy_value(1).numpy() == std::vector<float>{2, 12});
  CHECK(v.value().numpy() == std::vector<float>{1, 2});  // cross-replica reads see replica 0's

  // A cross-replica assignment reaches every copy, each on its own device.
  v.assign(tf::constant<float>({5, 6}));
  CHECK(v.copy_value(1).numpy() == std::vector<float>{5, 6});
  CHECK(v.copy_value(1).device() == strategy.worker_devices()[1]);

  // reduce: elementwise over replicas, or over an axis too (the mean divides by all rows).
  dist::PerReplica<tf::Tensor<float, 1>> values{
      {tf::constant<float>({1, 2, 3}), tf::constant<float>({5})}};
  CHECK(strategy.reduce(dist::ReduceOp::sum, values, 0).item() == 11.0f);
  CHECK(strategy.reduce(dist::ReduceOp::mean, values, 0).item() == Approx(11.0 / 4));
  dist::PerReplica<tf::Tensor<float, 1>> same{
      {tf::constant<float>({1, 2}), tf::constant<float>({3, 5})}};
  CHECK(strategy.reduce(dist::ReduceOp::sum, same).numpy() == std::vector<float>{4, 7});
  CHECK(strategy.reduce(dist::ReduceOp::mean, same).numpy() == std::vector<float>{2, 3.5f});
  // PerReplica arguments give each replica its own value.
  auto doubled = strategy.run([](const tf::Tensor<float, 1>& x) { return x * 2.0f; }, same);
  CHECK(doubled[1].numpy() == std::vector<float>{6, 10});

  // The default strategy: one replica on the current device.
  CHECK(dist::get_strategy().num_replicas_in_sync() == 1);
  CHECK_THROWS_AS(dist::MirroredStrategy({.devices = {"/cpu:0", "/cpu:0"}}), tf::invalid_argument);
  CHECK_THROWS_AS(dist::MirroredStrategy({.devices = {"/cpu:7"}}), tf::invalid_argument);
}

TEST_CASE("a batch of any dtype and rank splits by rows", "[distribute]") {
  using dist::detail::replica_piece;
  std::vector<int> v(24);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<int>(i);
  }
  const tf::AnyTensor x(tf::constant<int, 3>(v, {4, 3, 2}));
  // 4 rows over 3 replicas: 2, 2 and none.
  const auto p0 = replica_piece(x, 3, 0);
  const auto p1 = replica_piece(x, 3, 1);
  const auto p2 = replica_piece(x, 3, 2);
  CHECK(p0.shape() == tf::Shape{2, 3, 2});
  CHECK(p1.shape() == tf::Shape{2, 3, 2});
  CHECK(p2.shape() == tf::Shape{0, 3, 2});
  CHECK(std::ranges::equal(p0.as<int, 3>().values(), std::span(v).first(12)));
  CHECK(std::ranges::equal(p1.as<int, 3>().values(), std::span(v).last(12)));
  CHECK(p0.id() != x.id());
  CHECK(x.shape() == tf::Shape{4, 3, 2});  // the batch itself is untouched
  const tf::AnyTensor words(tf::constant<std::string>({"a", "bc", "d"}));
  CHECK(replica_piece(words, 2, 1).as<std::string, 1>().values()[0] == "d");
  CHECK(replica_piece(words, 2, 1).shape() == tf::Shape{1});
  const tf::AnyTensor wide(tf::constant<float, 5>({1, 2, 3, 4}, {2, 1, 1, 1, 2}));
  CHECK(floats(replica_piece(wide, 2, 1)) == std::vector<float>{3, 4});
  CHECK(replica_piece(wide, 2, 1).shape() == tf::Shape{1, 1, 1, 1, 2});
  CHECK_THROWS_WITH(replica_piece(tf::AnyTensor(tf::constant(1.0f)), 2, 0),
                    Catch::Contains("a scalar in a batch cannot be split"));
  CHECK_THROWS_WITH(replica_piece(tf::AnyTensor::symbolic(tf::DType::float32, {4, 2}), 2, 0),
                    Catch::Contains("has no value; split batches outside tf::function"));
  CHECK_THROWS_WITH(x.with_shape(tf::Shape{5, 5}),
                    Catch::Contains("shape (4, 3, 2) cannot be viewed as (5, 5)"));
}

TEST_CASE("the batch-split rule and AnyCollective over the in-process collective", "[distribute]") {
  using dist::detail::replica_rows;
  using Rows = std::pair<std::int64_t, std::int64_t>;
  CHECK(replica_rows(7, 2, 0) == Rows{0, 4});
  CHECK(replica_rows(7, 2, 1) == Rows{4, 7});
  CHECK(replica_rows(2, 4, 2) == Rows{2, 2});  // more replicas than rows: empty
  CHECK(replica_rows(0, 3, 1) == Rows{0, 0});
  static_assert(dist::Collective<dist::AnyCollective>);
  dist::InProcessGroup group(1);
  dist::AnyCollective any(group.replica(0));
  CHECK(any.rank() == 0);
  CHECK(any.num_replicas() == 1);
  std::vector<tf::AnyTensor> t{tf::AnyTensor(tf::constant<float>({2, 3}))};
  any.all_reduce(t, dist::ReduceOp::mean);
  CHECK(floats(t[0]) == std::vector<float>{2, 3});
  CHECK(any.all_gather(t[0]).size() == 1);
}

TEST_CASE("experimental_distribute_dataset splits global batches as TensorFlow does",
          "[distribute]") {
  logical_cpus(4);
  dist::MirroredStrategy two({.devices = {"/cpu:0", "/cpu:1"}});
  auto ds = tf::data::range(6) | tf::data::batch(4);
  std::vector<std::vector<std::vector<std::int64_t>>> seen;
  for (const auto& per_replica : two.experimental_distribute_dataset(ds)) {
    REQUIRE(per_replica.size() == 2);
    seen.push_back({per_replica[0].numpy(), per_replica[1].numpy()});
    CHECK(per_replica[1].device() == two.worker_devices()[1]);
  }
  using Rows = std::vector<std::vector<std::vector<std::int64_t>>>;
  CHECK(seen == Rows{{{0, 1}, {2, 3}}, {{4}, {5}}});

  // More replicas than rows: the last replicas get empty batches.
  dist::MirroredStrategy four;
  REQUIRE(four.num_replicas_in_sync() == 4);
  auto pairs = tf::data::from_tensor_slices(tf::constant<float>({0, 1, 2, 3, 4, 5}),
                                            tf::constant<std::int32_t>({0, 1, 2, 3, 4, 5})) |
               tf::data::batch(6);
  std::vector<std::int64_t> sizes;
  for (const auto& per_replica : four.experimental_distribute_dataset(pairs)) {
    for (const auto& [x, y] : per_replica.values) {
      sizes.push_back(x.shape()[0]);
      CHECK(y.shape()[0] == x.shape()[0]);
    }
  }
  CHECK(sizes == std::vector<std::int64_t>{2, 2, 2, 0});
}

// A worker's own batches (AutoShardPolicy FILE and OFF across workers): each splits over every
// replica of the job, its pieces going to this worker's replicas over consecutive steps.
TEST_CASE("a worker's own batches split over all replicas across consecutive steps",
          "[distribute]") {
  logical_cpus(4);
  using Rows = std::vector<std::vector<std::vector<std::int64_t>>>;
  const auto steps = [](auto&& distributed) {
    Rows out;
    for (const auto& per_replica : distributed) {
      out.emplace_back();
      for (const auto& piece : per_replica.values) {
        out.back().push_back(piece.numpy());
      }
    }
    return out;
  };
  auto ds = tf::data::range(6) | tf::data::batch(4);
  // One replica of two workers' (one each): every batch gives two steps.
  CHECK(steps(dist::DistributedDataset(ds, {"/cpu:0"}, 0, 2, true)) ==
        Rows{{{0, 1}}, {{2, 3}}, {{4}}, {{5}}});
  // Two replicas of four (two workers of two): a batch of 8 rows, pieces of 2.
  auto eight = tf::data::range(10) | tf::data::batch(8);
  CHECK(steps(dist::DistributedDataset(eight, {"/cpu:0", "/cpu:1"}, 0, 4, true)) ==
        Rows{{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}, {{8}, {9}}, {{}, {}}});
  // The same worker reading global batches instead keeps its replicas' rows once per batch.
  CHECK(steps(dist::DistributedDataset(eight, {"/cpu:0", "/cpu:1"}, 2, 4)) ==
        Rows{{{4, 5}, {6, 7}}, {{}, {}}});
}

TEST_CASE("a custom loop on two replicas trains the seed MLP as one replica on the global batch",
          "[distribute]") {
  logical_cpus(2);
  constexpr std::int64_t global_batch = 32;
  constexpr int steps = 5;
  auto [x, y] = seed_mlp_batch(global_batch * steps, 3);
  auto loss_fn = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true});
  auto single = seed_mlp_trained_on_global_batches(x, y, global_batch, steps);

  // Two replicas, half the batch each, the loss scaled by the global batch.
  dist::MirroredStrategy strategy;
  auto scope = strategy.scope();
  auto model = seed_mlp();
  std::vector<tf::AnyTensor> initial;
  for (const auto& v : model.trainable_variables()) {
    initial.push_back(v.value());
  }
  tf::keras::optimizers::Adam opt({.learning_rate = 1e-3});
  auto ds = tf::data::from_tensor_slices(x, y) | tf::data::batch(global_batch);
  int step = 0;
  for (const auto& batch : strategy.experimental_distribute_dataset(ds)) {
    auto losses = strategy.run(
        [&](const auto& xy) {
          const auto& [bx, by] = xy;
          tf::GradientTape tape;
          auto mean_loss = loss_fn(tf::AnyTensor(by), tf::AnyTensor(model(bx)));
          auto loss = mean_loss * (float(bx.shape()[0]) / float(global_batch));
          tape.stop();
          auto vars = model.trainable_variables();
          opt.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
          return loss;
        },
        batch);
    (void)strategy.reduce(dist::ReduceOp::sum, losses);
    ++step;
    auto vars = model.trainable_variables();
    require_copies_identical(vars, 2);
  }
  REQUIRE(step == steps);
  CHECK(opt.iterations() == steps);
  auto a = single.trainable_variables();
  auto b = model.trainable_variables();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(b[i].name());
    CHECK(max_abs_diff(a[i].value(), b[i].value()) <= 1e-5f);
    CHECK(max_abs_diff(initial[i], b[i].value()) > 1e-3f);  // training moved the weights
  }
  // The optimizer's slots are mirrored and identical too.
  std::vector<tf::AnyVariable> slots;
  for (const auto& sv : opt.slot_variables()) {
    slots.push_back(sv.slot);
  }
  require_copies_identical(slots, 2);
}

TEST_CASE("fit under the strategy's scope equals fit on one replica", "[distribute]") {
  logical_cpus(2);
  auto [x, y] = seed_mlp_batch(100, 5);  // batches of 32, 32, 32 and 4
  auto compile = [](auto& model) {
    model.compile({.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1, .momentum = 0.9}),
                   .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                   .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  };
  auto single = seed_mlp();
  compile(single);
  auto single_history =
      single.fit(x, y, {.batch_size = 32, .epochs = 2, .verbose = 0, .shuffle = false});

  dist::MirroredStrategy strategy;
  std::optional<decltype(seed_mlp())> mirrored;
  {
    auto scope = strategy.scope();
    mirrored.emplace(seed_mlp());
    compile(*mirrored);
  }
  CHECK(mirrored->distribute_strategy().num_replicas_in_sync() == 2);
  auto history =
      mirrored->fit(x, y, {.batch_size = 32, .epochs = 2, .verbose = 0, .shuffle = false});
  CHECK(mirrored->optimizer().iterations() == 8);
  auto a = single.trainable_variables();
  auto b = mirrored->trainable_variables();
  require_copies_identical(b, 2);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(b[i].name());
    CHECK(max_abs_diff(a[i].value(), b[i].value()) <= 1e-5f);
  }
  for (int e = 0; e < 2; ++e) {
    CHECK(history.history["loss"][std::size_t(e)] ==
          Approx(single_history.history["loss"][std::size_t(e)]).epsilon(1e-5));
    CHECK(history.history["sparse_categorical_accuracy"][std::size_t(e)] ==
          single_history.history["sparse_categorical_accuracy"][std::size_t(e)]);
  }
}

TEST_CASE("a layer first called inside run is built once, mirrored, with one replica's weights",
          "[distribute]") {
  logical_cpus(2);
  tf::random::set_seed(4);
  layers::Dense reference(3);
  (void)reference(tf::zeros<float>({1, 2}));

  dist::MirroredStrategy strategy;
  auto scope = strategy.scope();
  tf::random::set_seed(4);
  layers::Dense dense(3);
  CHECK_FALSE(dense.built());
  auto outputs = strategy.run([&] { return dense(tf::ones<float>({2, 2})); });
  CHECK(dense.built());
  auto vars = dense.trainable_variables();
  require_copies_identical(vars, 2);
  CHECK(max_abs_diff(vars[0].value(), reference.trainable_variables()[0].value()) == 0.0f);
  CHECK(outputs[0].numpy() == outputs[1].numpy());
}

TEST_CASE("checkpoints save replica 0's copy and restore every copy", "[distribute]") {
  logical_cpus(2);
  std::filesystem::remove_all("mirrored_ckpt");
  dist::MirroredStrategy strategy;
  std::optional<tf::Variable<float, 1>> v;
  {
    auto scope = strategy.scope();
    v.emplace(tf::constant<float>({1, 2}), tf::VariableOptions{.name = "v"});
  }
  tf::train::Checkpoint ckpt({{"v", *v}});
  const auto path = ckpt.save("mirrored_ckpt/c");
  strategy.run([&] { v->assign_add(tf::constant<float>({10, 10})); });
  REQUIRE(v->copy_value(1).numpy() == std::vector<float>{11, 12});
  ckpt.restore(path).assert_consumed();
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(v->copy_value(r).numpy() == std::vector<float>{1, 2});
    CHECK(v->copy_value(r).device() == strategy.worker_devices()[r]);
  }
  // A checkpoint written without a strategy restores into the mirrored variable too.
  tf::Variable<float, 1> plain(tf::constant<float>({7, 8}), {.name = "v"});
  tf::train::Checkpoint single({{"v", plain}});
  ckpt.restore(single.save("mirrored_ckpt/single")).assert_consumed();
  CHECK(v->copy_value(0).numpy() == std::vector<float>{7, 8});
  CHECK(v->copy_value(1).numpy() == std::vector<float>{7, 8});
}

TEST_CASE("a gradient only some replicas have counts as zeros and one none has is skipped",
          "[distribute]") {
  logical_cpus(2);
  dist::MirroredStrategy strategy;
  std::optional<tf::keras::optimizers::SGD> sgd;
  std::vector<tf::AnyVariable> vars;
  std::optional<tf::Variable<float, 1>> a, b, c;
  {
    auto scope = strategy.scope();
    a.emplace(tf::constant<float>({0}), tf::VariableOptions{.name = "a"});
    b.emplace(tf::constant<float>({0}), tf::VariableOptions{.name = "b"});
    c.emplace(tf::constant<float>({0}), tf::VariableOptions{.name = "c"});
    sgd.emplace(tf::keras::optimizers::SGDOptions{.learning_rate = 1.0f, .momentum = 0.5f});
  }
  vars = {tf::AnyVariable(*a), tf::AnyVariable(*b), tf::AnyVariable(*c)};
  const tf::AnyTensor one(tf::constant<float>({1}));
  // Step 1: every replica has every gradient: each variable moves by -(1 + 1).
  strategy.run([&] { sgd->apply_gradients(std::vector<tf::AnyTensor>{one, one, one}, vars); });
  // Step 2: replica 0 has a and b, replica 1 only a, nobody c. Momentum tells a skipped
  // variable (unchanged) from a zero gradient (moved by its velocity).
  strategy.run([&] {
    const bool first = dist::get_replica_context()->replica_id_in_sync_group() == 0;
    sgd->apply_gradients(
        std::vector<tf::AnyTensor>{one, first ? one : tf::AnyTensor(), tf::AnyTensor()}, vars);
  });
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(a->copy_value(r).numpy() == std::vector<float>{-2.0f + (0.5f * -2.0f - 2.0f)});
    CHECK(b->copy_value(r).numpy() == std::vector<float>{-2.0f + (0.5f * -2.0f - 1.0f)});
    CHECK(c->copy_value(r).numpy() == std::vector<float>{-2.0f});
  }
}

TEST_CASE("failures inside run are typed errors for every replica, never a hang", "[distribute]") {
  logical_cpus(2);
  dist::MirroredStrategy strategy({.timeout = 2s});
  // Replica 1 throws while replica 0 waits in an all-reduce: replica 0 gets `unavailable` at
  // once (not the timeout's deadline_exceeded), and run rethrows the root cause.
  std::string replica0_got;
  try {
    strategy.run([&] {
      auto* ctx = dist::get_replica_context();
      if (ctx->replica_id_in_sync_group() == 1) {
        throw tf::invalid_argument("replica 1's batch is bad");
      }
      try {
        (void)ctx->all_reduce(dist::ReduceOp::sum, tf::constant<float>({1}));
      } catch (const tf::error& e) {
        replica0_got = std::string(e.code()) + ": " + e.what();
        throw;
      }
    });
    FAIL("run did not throw");
  } catch (const tf::invalid_argument& e) {
    CHECK(std::string(e.what()).find("replica 1's batch is bad") != std::string::npos);
  }
  CHECK(replica0_got.starts_with("UNAVAILABLE: replica 1 failed: replica 1's batch is bad"));

  // A replica that never reaches the all-reduce: deadline_exceeded naming it, within the timeout.
  try {
    strategy.run([] {
      auto* ctx = dist::get_replica_context();
      if (ctx->replica_id_in_sync_group() == 0) {
        (void)ctx->all_reduce(dist::ReduceOp::sum, tf::constant<float>({1}));
      }
    });
    FAIL("run did not throw");
  } catch (const tf::deadline_exceeded& e) {
    CHECK(std::string(e.what()).find("replica(s) 1") != std::string::npos);
  }

  // An optimizer created outside the scope cannot update mirrored variables from replicas.
  std::optional<layers::Dense> dense;
  {
    auto scope = strategy.scope();
    dense.emplace(2);
    (void)(*dense)(tf::ones<float>({1, 2}));
  }
  tf::keras::optimizers::SGD outside;
  try {
    strategy.run([&] {
      auto vars = dense->trainable_variables();
      std::vector<tf::AnyTensor> grads;
      for (const auto& v : vars) {
        grads.push_back(v.zeros_like());
      }
      outside.apply_gradients(grads, vars);
    });
    FAIL("run did not throw");
  } catch (const tf::invalid_argument& e) {
    CHECK(std::string(e.what()).find("SGD/iter") != std::string::npos);
  }
  // ... nor from the cross-replica context.
  auto vars = dense->trainable_variables();
  std::vector<tf::AnyTensor> grads;
  for (const auto& v : vars) {
    grads.push_back(v.zeros_like());
  }
  CHECK_THROWS_AS(outside.apply_gradients(grads, vars), tf::failed_precondition);
}

}  // namespace test_distribute_mirrored_strategy
