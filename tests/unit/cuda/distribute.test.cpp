// MirroredStrategy on GPUs: over two logical GPUs on one card (the in-process collective, as
// TensorFlow falls back to for virtual GPUs), the NCCL collective as a one-rank communicator
// (NCCL refuses two ranks on one card), and NCCL across two cards where a machine has them.
// Each trains the seed MLP as one replica on the global batch does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <seed_mlp_data.hpp>

#include <tapeflow/config.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/distribute/nccl_collective.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/random/random.hpp>

#include "gpu_available.hpp"

namespace test_cuda_distribute {
namespace tf = tapeflow;
namespace dist = tf::distribute;
namespace layers = tf::keras::layers;

namespace {
std::vector<float> floats(const tf::AnyTensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.num_elements()));
  std::copy_n(static_cast<const float*>(t.raw_data()), out.size(), out.begin());
  return out;
}

// Whether tapeflow::nccl is linked; says so loudly where it is not.
bool nccl_linked(const char* test) {
  if (dist::detail::nccl_group_factory().load() != nullptr) {
    return true;
  }
  std::cout << "GPU TESTS SKIPPED: tapeflow::nccl is not built (" << test << ")\n";
  return false;
}

// Fits the seed MLP for two epochs of 100 rows under `strategy` (none: one replica on /GPU:0);
// returns the weights, after checking every replica's copy is identical.
std::vector<std::vector<float>> fit_seed_mlp(std::optional<dist::MirroredStrategy> strategy) {
  auto [x, y] = tapeflow_test::seed_mlp_batch(100, 5);
  const auto make = [] {
    tf::random::set_seed(11);
    auto model =
        tf::keras::Sequential(layers::Dense(100, {.activation = tf::nn::relu}), layers::Dense(10));
    (void)model(tf::zeros<float>({1, 784}));
    model.compile(
        {.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1, .momentum = 0.9}),
         .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true})});
    return model;
  };
  std::optional<decltype(make())> model;
  if (strategy) {
    auto scope = strategy->scope();
    model.emplace(make());
  } else {
    auto on_gpu = tf::device("/GPU:0");
    model.emplace(make());
  }
  model->fit(x, y, {.batch_size = 32, .epochs = 2, .verbose = 0, .shuffle = false});
  std::vector<std::vector<float>> out;
  for (const auto& v : model->trainable_variables()) {
    out.push_back(floats(v.value()));
    CHECK(v.device().find("GPU") != std::string::npos);
    for (std::size_t r = 1; r < v.num_copies(); ++r) {
      INFO(v.name() << " copy " << r);
      CHECK(floats(v.copy_value(r)) == out.back());
    }
  }
  return out;
}

// cuBLAS may sum a 16-row and a 32-row batch in different orders: 1e-4 rather than the CPU's
// 1e-5.
void require_close(const std::vector<std::vector<float>>& a,
                   const std::vector<std::vector<float>>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].size() == b[i].size());
    float worst = 0;
    for (std::size_t k = 0; k < a[i].size(); ++k) {
      worst = std::max(worst, std::abs(a[i][k] - b[i][k]));
    }
    INFO("variable " << i);
    CHECK(worst <= 1e-4f);
  }
}
}  // namespace

TEST_CASE("MirroredStrategy over two logical GPUs on one card trains as one replica", "[gpu]") {
  if (!tapeflow_test::gpu_available("MirroredStrategy over two logical GPUs")) {
    return;
  }
  tf::config::set_logical_device_configuration(tf::config::list_physical_devices("GPU").at(0),
                                               {{.memory_limit = 2048}, {.memory_limit = 2048}});
  const auto single = fit_seed_mlp(std::nullopt);
  dist::MirroredStrategy strategy;  // every logical GPU; one card: the in-process collective
  REQUIRE(strategy.num_replicas_in_sync() == 2);
  CHECK(strategy.worker_devices()[1].ends_with("GPU:1"));
  CHECK(strategy.state()->replica_group == nullptr);
  require_close(single, fit_seed_mlp(strategy));
  if (nccl_linked("NCCL refuses two logical GPUs on one card")) {
    CHECK_THROWS_WITH(dist::MirroredStrategy({.cross_device_ops = dist::CrossDeviceOps::nccl}),
                      Catch::Contains("NCCL needs one replica per GPU"));
  }
}

TEST_CASE("a one-rank NCCL communicator reduces, broadcasts and gathers on its GPU", "[gpu]") {
  if (!tapeflow_test::gpu_available("one-rank NCCL communicator") ||
      !nccl_linked("one-rank NCCL communicator")) {
    return;
  }
  dist::NcclGroup group({"/GPU:0"});
  auto nccl = group.replica(0);
  STATIC_REQUIRE(dist::Collective<decltype(nccl)>);
  REQUIRE(nccl.num_replicas() == 1);
  auto on_gpu = tf::device("/GPU:0");
  std::vector<tf::AnyTensor> t = {tf::AnyTensor(tf::constant<float>({1.5f, -2.0f, 4.0f})),
                                  tf::AnyTensor(tf::constant<std::int64_t>({{7, 8}, {9, 10}}))};
  nccl.all_reduce(t, dist::ReduceOp::sum);
  CHECK(t[0].device().ends_with("GPU:0"));
  CHECK(t[0].as<float, 1>().numpy() == std::vector<float>{1.5f, -2.0f, 4.0f});
  CHECK(t[1].as<std::int64_t, 2>().numpy() == std::vector<std::int64_t>{7, 8, 9, 10});
  nccl.all_reduce(t, dist::ReduceOp::mean);
  CHECK(t[0].as<float, 1>().numpy() == std::vector<float>{1.5f, -2.0f, 4.0f});
  nccl.broadcast(t, 0);
  CHECK(t[1].as<std::int64_t, 2>().numpy() == std::vector<std::int64_t>{7, 8, 9, 10});
  const auto gathered = nccl.all_gather(tf::AnyTensor(tf::constant<std::int32_t>({{1, 2, 3}})));
  REQUIRE(gathered.size() == 1);
  CHECK(gathered[0].shape().to_string() == "(1, 3)");
  CHECK(gathered[0].as<std::int32_t, 2>().numpy() == std::vector<std::int32_t>{1, 2, 3});
  nccl.barrier();
  // A CPU tensor is copied to the GPU first; strings cannot travel.
  std::vector<tf::AnyTensor> from_host;
  {
    auto on_cpu = tf::device("/CPU:0");
    from_host.emplace_back(tf::constant<double>({0.25, 0.5}));
  }
  nccl.all_reduce(from_host, dist::ReduceOp::sum);
  CHECK(from_host[0].device().ends_with("GPU:0"));
  CHECK(from_host[0].as<double, 1>().numpy() == std::vector<double>{0.25, 0.5});
  std::vector<tf::AnyTensor> strings = {tf::AnyTensor(tf::constant<std::string>({"a"}))};
  CHECK_THROWS_AS(nccl.all_reduce(strings, dist::ReduceOp::sum), tf::invalid_argument);
  // After a replica fails, the group is broken: operations are `unavailable`.
  group.abort(0, "a test failure");
  CHECK_THROWS_WITH(nccl.barrier(), Catch::Contains("replica 0 failed: a test failure"));
}

TEST_CASE("MirroredStrategy over two GPUs reduces with NCCL and trains as one replica", "[gpu]") {
  if (!tapeflow_test::gpu_available("MirroredStrategy over two GPUs with NCCL") ||
      !nccl_linked("MirroredStrategy over two GPUs with NCCL")) {
    return;
  }
  if (tf::config::list_physical_devices("GPU").size() < 2) {
    std::cout << "GPU TESTS SKIPPED: NCCL across cards needs 2 GPUs, this machine has 1\n";
    return;
  }
  const auto single = fit_seed_mlp(std::nullopt);
  dist::MirroredStrategy strategy({.devices = {"/GPU:0", "/GPU:1"}});
  CHECK(strategy.state()->replica_group != nullptr);  // NCCL by default across cards
  require_close(single, fit_seed_mlp(strategy));

  // Collectives across the two cards, each replica on its own thread.
  auto sums = strategy.run([] {
    auto* ctx = dist::get_replica_context();
    auto v = tf::constant<float>({1.0f, 2.0f}) * float(ctx->replica_id_in_sync_group() + 1);
    return ctx->all_reduce(dist::ReduceOp::sum, v);
  });
  for (const auto& s : sums.values) {
    CHECK(s.numpy() == std::vector<float>{3.0f, 6.0f});
  }
}

}  // namespace test_cuda_distribute
