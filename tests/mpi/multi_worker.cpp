// MultiWorkerMirroredStrategy and the MPI collective across worker processes. Run by CTest as
// `mpirun -np 2 test_mpi_multi_worker <case>` (tests/CMakeLists.txt), one case per run; each
// worker prints "<case>: PASS on worker <rank>" or "FAIL ..." lines and exits non-zero on a
// failure. The ranks share no memory (`--mca btl tcp,self`), as on separate hosts.
//
// The equivalence cases train the seed MLP on 2 workers and compare with one replica trained on
// the global batch in the same process (max abs diff <= 1e-5), checking after every step that
// both workers hold the same bits. The fault cases (run with mpirun --enable-recovery, so that
// the survivor lives to report) kill or hang worker 1 mid-training and require worker 0's typed
// error, naming worker 1, within the timeout.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <seed_mlp_data.hpp>
#include <unistd.h>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/distribute/file_paths.hpp>
#include <tapeflow/distribute/mpi_collective.hpp>
#include <tapeflow/distribute/multi_worker_mirrored_strategy.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/io/tfrecord_writer.hpp>
#include <tapeflow/keras/callbacks/tensorboard.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layers/activation.hpp>
#include <tapeflow/keras/layers/batch_normalization.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/random/random.hpp>
#include <tapeflow/train/checkpoint.hpp>
#include <tapeflow/train/checkpoint_manager.hpp>

namespace tf = tapeflow;
namespace dist = tf::distribute;
namespace layers = tf::keras::layers;
using namespace std::chrono_literals;

namespace {

int failures = 0;
int rank_for_messages = -1;

#define EXPECT(cond)                                                                       \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::printf("FAIL on worker %d, line %d: %s\n", rank_for_messages, __LINE__, #cond); \
      std::fflush(stdout);                                                                 \
      ++failures;                                                                          \
    }                                                                                      \
  } while (false)

template <class E, class F>
std::string expect_throw(F&& f, int line) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    std::printf("FAIL on worker %d, line %d: wrong exception: %s\n", rank_for_messages, line,
                e.what());
    ++failures;
    return e.what();
  }
  std::printf("FAIL on worker %d, line %d: no exception\n", rank_for_messages, line);
  ++failures;
  return {};
}
#define EXPECT_THROW_AS(E, expr) expect_throw<E>([&] { expr; }, __LINE__)

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

template <class T>
std::vector<T> values(const tf::AnyTensor& t) {
  std::vector<T> out(static_cast<std::size_t>(t.num_elements()));
  std::memcpy(out.data(), t.raw_data(), out.size() * sizeof(T));
  return out;
}

float max_abs_diff(const tf::AnyTensor& a, const tf::AnyTensor& b) {
  const auto x = values<float>(a);
  const auto y = values<float>(b);
  if (x.size() != y.size()) {
    return INFINITY;
  }
  float worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, std::abs(x[i] - y[i]));
  }
  return worst;
}

// Every worker holds the same bits in every variable.
void expect_same_on_every_worker(dist::MpiCollective& c, const std::vector<tf::AnyVariable>& vars) {
  for (const auto& v : vars) {
    const auto all = c.all_gather(v.value());
    for (std::size_t r = 1; r < all.size(); ++r) {
      if (std::memcmp(all[r].raw_data(), all[0].raw_data(),
                      std::size_t(all[0].num_elements()) * sizeof(float)) != 0) {
        std::printf("FAIL on worker %d: variable %s differs on worker %zu\n", rank_for_messages,
                    v.name().c_str(), r);
        ++failures;
      }
    }
  }
}

// The seed MLP (Dense(100, relu), Dense(10)) on 784 inputs; its initial weights follow `seed`.
auto seed_mlp(std::int64_t seed, std::int64_t hidden = 100) {
  tf::random::set_seed(seed);
  auto model =
      tf::keras::Sequential(layers::Dense(hidden, {.activation = tf::nn::relu}), layers::Dense(10));
  (void)model(tf::zeros<float>({1, 784}));
  return model;
}

using tapeflow_test::seed_mlp_batch;

void collective_case() {
  dist::MpiCollective c({.timeout = 20s});
  const int r = c.rank();
  const int n = c.num_replicas();
  EXPECT(n == 2);
  // Tensors of one dtype travel in one call; each comes back with its own shape.
  std::vector<tf::AnyTensor> ts = {
      tf::AnyTensor(tf::constant<float>({1.0f * float(r + 1), 2.0f, 3.0f})),
      tf::AnyTensor(tf::Tensor<std::int64_t, 0>(std::int64_t{10} * (r + 1))),
      tf::AnyTensor(tf::constant<double>({{0.5 * (r + 1), 1.0}, {2.0, 4.0}})),
      tf::AnyTensor(tf::constant<float>({{float(r)}, {10.0f}})),
  };
  c.all_reduce(ts, dist::ReduceOp::sum);
  EXPECT(values<float>(ts[0]) == (std::vector<float>{3, 4, 6}));
  EXPECT(values<std::int64_t>(ts[1]) == std::vector<std::int64_t>{30});
  EXPECT(values<double>(ts[2]) == (std::vector<double>{1.5, 2, 4, 8}));
  EXPECT(values<float>(ts[3]) == (std::vector<float>{1, 20}));
  EXPECT(ts[3].shape() == tf::Shape({2, 1}));
  std::vector<tf::AnyTensor> mean = {tf::AnyTensor(tf::constant<float>({float(r), 4.0f}))};
  c.all_reduce(mean, dist::ReduceOp::mean);
  EXPECT(values<float>(mean[0]) == (std::vector<float>{0.5f, 4.0f}));
  {
    // A tensor of 1 MiB or more is reduced on its own, the small ones around it packed; the
    // callers' other handles keep their values.
    constexpr std::int64_t large = std::int64_t{1} << 19;  // 2 MiB of floats
    std::vector<float> ramp(static_cast<std::size_t>(large));
    for (std::size_t i = 0; i < ramp.size(); ++i) {
      ramp[i] = float(i % 1000) * float(r + 1);
    }
    const tf::AnyTensor big(tf::from_vector(ramp));
    const tf::AnyTensor small(tf::constant<float>({float(r), 1.0f}));
    std::vector<tf::AnyTensor> mixed = {small, big, small};
    c.all_reduce(mixed, dist::ReduceOp::mean);
    const auto reduced = values<float>(mixed[1]);
    bool ramp_ok = reduced.size() == ramp.size();
    for (std::size_t i = 0; ramp_ok && i < reduced.size(); ++i) {
      ramp_ok = reduced[i] == float(i % 1000) * 1.5f;
    }
    EXPECT(ramp_ok);
    EXPECT(values<float>(mixed[0]) == (std::vector<float>{0.5f, 1.0f}));
    EXPECT(values<float>(mixed[2]) == (std::vector<float>{0.5f, 1.0f}));
    EXPECT(values<float>(big) == ramp);
    EXPECT(values<float>(small) == (std::vector<float>{float(r), 1.0f}));
  }

  std::vector<tf::AnyTensor> b = {tf::AnyTensor(tf::constant<std::int32_t>({r, r, r})),
                                  tf::AnyTensor(tf::Tensor<float, 0>(float(r) + 0.25f))};
  c.broadcast(b, 1);
  EXPECT(values<std::int32_t>(b[0]) == (std::vector<std::int32_t>{1, 1, 1}));
  EXPECT(values<float>(b[1]) == std::vector<float>{1.25f});

  // Dims may differ in a gather; it comes back in rank order.
  std::vector<float> mine(static_cast<std::size_t>(r + 1), float(r));
  const auto gathered = c.all_gather(tf::AnyTensor(tf::from_vector(mine)));
  EXPECT(gathered.size() == 2);
  EXPECT(values<float>(gathered[0]) == std::vector<float>{0});
  EXPECT(values<float>(gathered[1]) == (std::vector<float>{1, 1}));
  c.barrier();

  // Tensors that differ across workers: invalid_argument on both, naming the worker; the group
  // stays usable.
  std::vector<tf::AnyTensor> odd = {
      tf::AnyTensor(tf::zeros<float>({r == 0 ? std::int64_t{3} : std::int64_t{4}}))};
  const std::string what =
      EXPECT_THROW_AS(tf::invalid_argument, c.all_reduce(odd, dist::ReduceOp::sum));
  EXPECT(contains(what, "workers 1 passed tensors that differ"));
  std::vector<tf::AnyTensor> strings = {tf::AnyTensor(tf::constant<std::string>({"a"}))};
  EXPECT(contains(EXPECT_THROW_AS(tf::invalid_argument, c.all_reduce(strings, dist::ReduceOp::sum)),
                  "cannot send string"));
  std::vector<tf::AnyTensor> again = {tf::AnyTensor(tf::ones<float>({2}))};
  c.all_reduce(again, dist::ReduceOp::sum);
  EXPECT(values<float>(again[0]) == (std::vector<float>{2, 2}));
  EXPECT_THROW_AS(tf::invalid_argument, c.broadcast(again, 2));
}

// A custom loop (experimental_distribute_dataset, run, reduce) on 2 workers equals one replica
// on the global batch; worker 1 starts from other initial weights, which creation replaces by
// worker 0's.
void equivalence_case() {
  constexpr std::int64_t global_batch = 32;
  constexpr int steps = 5;
  auto [x, y] = seed_mlp_batch(global_batch * steps - 6, 3);  // the last batch has 26 rows
  auto loss_fn = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true});

  auto single = seed_mlp(11);
  tf::keras::optimizers::Adam single_opt({.learning_rate = 1e-3});
  std::vector<double> single_losses;
  for (auto [bx, by] : tf::data::from_tensor_slices(x, y) | tf::data::batch(global_batch)) {
    tf::GradientTape tape;
    auto loss = loss_fn(tf::AnyTensor(by), tf::AnyTensor(single(bx)));
    tape.stop();
    auto vars = single.trainable_variables();
    single_opt.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
    single_losses.push_back(loss.item());
  }

  dist::MultiWorkerMirroredStrategy strategy({.timeout = 30s});
  rank_for_messages = strategy.cluster_resolver().rank;
  EXPECT(strategy.num_replicas_in_sync() == 2);
  EXPECT(strategy.cluster_resolver().task_type == "worker");
  EXPECT(strategy.is_chief() == (rank_for_messages == 0));
  auto scope = strategy.scope();
  auto model = seed_mlp(rank_for_messages == 0 ? 11 : 99);
  auto collective = strategy.collective();
  expect_same_on_every_worker(collective, model.trainable_variables());
  tf::keras::optimizers::Adam opt({.learning_rate = 1e-3});
  auto ds = tf::data::from_tensor_slices(x, y) | tf::data::batch(global_batch);
  std::size_t step = 0;
  double last_total = 0;
  for (const auto& batch : strategy.experimental_distribute_dataset(ds)) {
    auto losses = strategy.run(
        [&](const auto& xy) {
          const auto& [bx, by] = xy;
          EXPECT(dist::get_replica_context()->replica_id_in_sync_group() == rank_for_messages);
          EXPECT(dist::get_replica_context()->num_replicas_in_sync() == 2);
          tf::GradientTape tape;
          auto mean_loss = loss_fn(tf::AnyTensor(by), tf::AnyTensor(model(bx)));
          const std::int64_t rows = step + 1 < steps ? global_batch : global_batch - 6;
          auto loss = mean_loss * (float(bx.shape()[0]) / float(rows));
          tape.stop();
          auto vars = model.trainable_variables();
          opt.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
          return loss;
        },
        batch);
    const double total = strategy.reduce(dist::ReduceOp::sum, losses).item();
    last_total = total;
    EXPECT(std::abs(total - single_losses.at(step)) <= 1e-5);
    expect_same_on_every_worker(collective, model.trainable_variables());
    ++step;
  }
  EXPECT(step == steps);
  EXPECT(opt.iterations() == steps);
  const auto a = single.trainable_variables();
  const auto b = model.trainable_variables();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float diff = max_abs_diff(a[i].value(), b[i].value());
    if (diff > 1e-5f) {
      std::printf("FAIL on worker %d: %s differs from one replica's by %g\n", rank_for_messages,
                  b[i].name().c_str(), double(diff));
      ++failures;
    }
  }
  std::printf("equivalence: %d steps, final loss %.6f (one replica %.6f)\n", steps, last_total,
              single_losses.back());
}

// strategy.reduce inside a tf::function: the sums over the workers are CollectiveReduceV2 nodes,
// run at every call (new values, same trace), and equal the eager reduce. The workers' batches
// differ in rows, so the mean over axis 0 needs every worker's row count at run time.
void traced_reduce_case() {
  dist::MultiWorkerMirroredStrategy strategy({.timeout = 30s});
  const int rank = strategy.cluster_resolver().rank;
  rank_for_messages = rank;
  auto reduce_all = [&](const dist::PerReplica<tf::Tensor<float, 2>>& rows,
                        const dist::PerReplica<tf::Tensor<float, 1>>& flat) {
    auto doubled = strategy.run([](const tf::Tensor<float, 2>& mine) { return mine * 2.0f; }, rows);
    return std::tuple{strategy.reduce(dist::ReduceOp::sum, doubled, 0),
                      strategy.reduce(dist::ReduceOp::mean, doubled, 0),
                      strategy.reduce(dist::ReduceOp::sum, flat),
                      strategy.reduce(dist::ReduceOp::mean, flat)};
  };
  auto traced = tf::function(reduce_all);
  for (int call = 1; call <= 3; ++call) {
    // Worker 0 holds 3 rows of `call`, worker 1 one row of 2 * `call`.
    const float v = float(call) * float(rank + 1);
    const auto rows = tf::fill<float, 2>(std::array<std::int64_t, 2>{rank == 0 ? 3 : 1, 2}, v);
    const dist::PerReplica<tf::Tensor<float, 2>> by_rows{{rows}};
    const dist::PerReplica<tf::Tensor<float, 1>> by_flat{{tf::constant<float>({v, 10.0f * v})}};
    const auto [sum_rows, mean_rows, sum_flat, mean_flat] = traced(by_rows, by_flat);
    // Doubled rows: 3 of 2c and 1 of 4c, summed 10c, over 4 rows 2.5c; flat: c + 2c = 3c.
    const float c = float(call);
    EXPECT((sum_rows.numpy() == std::vector<float>{10.0f * c, 10.0f * c}));
    EXPECT((mean_rows.numpy() == std::vector<float>{2.5f * c, 2.5f * c}));
    EXPECT((sum_flat.numpy() == std::vector<float>{3.0f * c, 30.0f * c}));
    EXPECT((mean_flat.numpy() == std::vector<float>{1.5f * c, 15.0f * c}));
    const auto [eager_sum, eager_mean, eager_flat, eager_flat_mean] = reduce_all(by_rows, by_flat);
    EXPECT(eager_sum.numpy() == sum_rows.numpy());
    EXPECT(eager_mean.numpy() == mean_rows.numpy());
    EXPECT(eager_flat.numpy() == sum_flat.numpy());
    EXPECT(eager_flat_mean.numpy() == mean_flat.numpy());
  }
  EXPECT(traced.trace_count() == 1);
  // Four sums over the workers and the rows' count: five collective nodes.
  const auto& nodes = traced.concrete_functions()[0]->graph().nodes;
  EXPECT(std::ranges::count_if(nodes, [](const auto& n) { return n.op == "CollectiveReduceV2"; }) ==
         5);
}

// Model.fit under the strategy's scope equals fit on one replica (weights, loss, accuracy).
void fit_case() {
  auto [x, y] = seed_mlp_batch(100, 5);  // batches of 32, 32, 32 and 4
  auto compile = [](auto& model) {
    model.compile({.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1, .momentum = 0.9}),
                   .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                   .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  };
  auto single = seed_mlp(11);
  compile(single);
  auto single_history =
      single.fit(x, y, {.batch_size = 32, .epochs = 2, .verbose = 0, .shuffle = false});

  dist::MultiWorkerMirroredStrategy strategy({.timeout = 30s});
  rank_for_messages = strategy.cluster_resolver().rank;
  std::optional<decltype(seed_mlp(0))> model;
  {
    auto scope = strategy.scope();
    model.emplace(seed_mlp(rank_for_messages == 0 ? 11 : 5));
    compile(*model);
  }
  EXPECT(model->distribute_strategy().num_replicas_in_sync() == 2);
  auto history = model->fit(x, y, {.batch_size = 32, .epochs = 2, .verbose = 0, .shuffle = false});
  EXPECT(model->optimizer().iterations() == 8);
  auto collective = strategy.collective();
  expect_same_on_every_worker(collective, model->trainable_variables());
  const auto a = single.trainable_variables();
  const auto b = model->trainable_variables();
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT(max_abs_diff(a[i].value(), b[i].value()) <= 1e-5f);
  }
  for (std::size_t e = 0; e < 2; ++e) {
    EXPECT(std::abs(history.history["loss"][e] - single_history.history["loss"][e]) <= 1e-5);
    // Each worker's accuracy counts every worker's rows.
    EXPECT(history.history["sparse_categorical_accuracy"][e] ==
           single_history.history["sparse_categorical_accuracy"][e]);
  }
}

// fit(dataset) across workers on a pipeline reading TFRecord files shards it by file, as
// TensorFlow's AutoShardPolicy AUTO does: each worker parses only its files' records, and every
// record trains once per epoch. The model is linear in its one weight vector and its loss is
// the mean prediction, so the gradient does not depend on the weights and SGD ends at
// w0 - lr * sum(x) / batch over the records seen, whatever batches they fall in: one process
// training on every file ends with the same weights only if each record counted once.
struct MeanPrediction : tf::keras::losses::Loss {
  MeanPrediction() : Loss("mean_prediction") {}
  tf::AnyTensor call(const tf::AnyTensor&, const tf::AnyTensor& y_pred) const override {
    return y_pred;
  }
};

void fit_files_case() {
  dist::MultiWorkerMirroredStrategy strategy({.timeout = 30s});
  rank_for_messages = strategy.cluster_resolver().rank;
  // Four files of four records (ids 0..15), in this worker's own folder.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tapeflow_mpi_fit_files_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (int f = 0; f < 4; ++f) {
    tf::io::TFRecordWriter writer((dir / ("part-" + std::to_string(f) + ".tfrecord")).string());
    for (int r = 0; r < 4; ++r) {
      writer.write(std::to_string(4 * f + r));
    }
    writer.close();
  }
  static std::atomic<int> parsed{0};
  const auto records = [&] {
    return tf::data::list_files((dir / "*.tfrecord").string()) |
           tf::data::interleave([](const tf::Tensor<std::string, 0>& file) {
             return tf::data::TFRecordDataset(file.item());
           }) |
           tf::data::map([](const tf::Tensor<std::string, 0>& record) {
             ++parsed;
             const auto id = float(std::stoi(record.item()));
             return std::make_tuple(tf::constant<float>({id, 1.0f, id * id / 16.0f}),
                                    tf::Tensor<float, 0>(0.0f));
           }) |
           tf::data::batch(4);
  };
  const auto linear_model = [] {
    auto m = tf::keras::Sequential(tf::keras::layers::Dense(
        1, {.use_bias = false, .kernel_initializer = tf::keras::initializers::Zeros()}));
    (void)m(tf::zeros<float>({1, 3}));
    m.compile({.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1}),
               .loss = MeanPrediction()});
    return m;
  };
  auto single = linear_model();
  single.fit(records(), {.epochs = 2, .verbose = 0});
  EXPECT(parsed == 32);
  parsed = 0;
  std::optional<decltype(linear_model())> model;
  {
    auto scope = strategy.scope();
    model.emplace(linear_model());
  }
  auto history = model->fit(records(), {.epochs = 2, .verbose = 0});
  EXPECT(parsed == 16);  // two of the four files, twice
  // Each worker's batch of 4 is split over both replicas: 4 steps of 4 rows per epoch.
  EXPECT(model->optimizer().iterations() == 8);
  auto collective = strategy.collective();
  expect_same_on_every_worker(collective, model->trainable_variables());
  EXPECT(max_abs_diff(single.trainable_variables()[0].value(),
                      model->trainable_variables()[0].value()) <= 1e-5f);
  EXPECT(history.history["loss"].size() == 2);
  std::filesystem::remove_all(dir);
}

// Two replicas on each of two workers (logical CPUs): four replicas in sync, collectives in
// global replica order, and fit equal to one replica on the global batch, every copy identical.
void local_replicas_case() {
  tf::config::set_logical_device_configuration(
      tf::config::list_physical_devices("CPU").at(0),
      std::vector<tf::config::LogicalDeviceConfiguration>(2));
  dist::MultiWorkerMirroredStrategy strategy({.devices = {"/cpu:0", "/cpu:1"}, .timeout = 30s});
  rank_for_messages = strategy.cluster_resolver().rank;
  EXPECT(strategy.num_replicas_in_sync() == 4);
  const auto results = strategy.run([] {
    auto* ctx = dist::get_replica_context();
    const int id = ctx->replica_id_in_sync_group();
    const auto mine = tf::constant<float>({float(id + 1), 10.0f * float(id)});
    const auto sum = ctx->all_reduce(dist::ReduceOp::sum, mine).numpy();
    const auto mean = ctx->all_reduce(dist::ReduceOp::mean, mine).numpy();
    std::vector<tf::AnyTensor> root = {tf::AnyTensor(mine)};
    ctx->collective().broadcast(root, 3);
    std::vector<float> gathered;
    for (const auto& piece : ctx->collective().all_gather(tf::AnyTensor(mine))) {
      gathered.push_back(values<float>(piece).at(0));
    }
    ctx->collective().barrier();
    return std::vector<std::vector<float>>{
        sum, mean, values<float>(root[0]), gathered, {float(id), float(ctx->local_replica_id())}};
  });
  for (std::size_t r = 0; r < results.values.size(); ++r) {
    const auto& got = results.values[r];
    EXPECT((got[0] == std::vector<float>{10.0f, 60.0f}));
    EXPECT((got[1] == std::vector<float>{2.5f, 15.0f}));
    EXPECT((got[2] == std::vector<float>{4.0f, 30.0f}));
    EXPECT((got[3] == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}));
    EXPECT((got[4] == std::vector<float>{float(2 * rank_for_messages + int(r)), float(r)}));
  }

  auto [x, y] = seed_mlp_batch(100, 5);  // batches of 32, 32, 32 and 4 (4: one row each)
  auto compile = [](auto& model) {
    model.compile(
        {.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1, .momentum = 0.9}),
         .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true})});
  };
  auto single = seed_mlp(11);
  compile(single);
  auto single_history =
      single.fit(x, y, {.batch_size = 32, .epochs = 2, .verbose = 0, .shuffle = false});
  std::optional<decltype(seed_mlp(0))> model;
  {
    auto scope = strategy.scope();
    model.emplace(seed_mlp(rank_for_messages == 0 ? 11 : 5));
    compile(*model);
  }
  auto history = model->fit(x, y, {.batch_size = 32, .epochs = 2, .verbose = 0, .shuffle = false});
  auto collective = strategy.collective();
  expect_same_on_every_worker(collective, model->trainable_variables());
  const auto a = single.trainable_variables();
  const auto b = model->trainable_variables();
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT(b[i].num_copies() == 2);
    EXPECT(max_abs_diff(b[i].copy_value(0), b[i].copy_value(1)) == 0.0f);
    EXPECT(max_abs_diff(a[i].value(), b[i].value()) <= 1e-5f);
  }
  for (std::size_t e = 0; e < 2; ++e) {
    EXPECT(std::abs(history.history["loss"][e] - single_history.history["loss"][e]) <= 1e-5);
  }

  // BatchNormalization(synchronized) over the 4 replicas of both workers normalizes with the
  // global batch's statistics, so it trains as one replica, moving statistics included. 97
  // rows: the last batch's one row leaves three replicas none, and they still join its
  // all-reduces (one process: tests/unit/distribute/sync_batch_norm.test.cpp).
  tf::random::set_seed(1);  // the workers' global seeds differ since seed_mlp above
  auto [bx, by] = seed_mlp_batch(97, 8);
  auto bn_model = [&] {
    tf::random::set_seed(5);
    auto m = tf::keras::Sequential(
        tf::keras::layers::Dense(16),
        tf::keras::layers::BatchNormalization({.momentum = 0.9, .synchronized = true}),
        tf::keras::layers::Activation(tf::nn::relu), tf::keras::layers::Dense(10));
    (void)m(tf::zeros<float>({1, 784}));
    m.compile({.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1}),
               .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true})});
    return m;
  };
  auto single_bn = bn_model();
  single_bn.fit(bx, by, {.batch_size = 32, .epochs = 2, .verbose = 0, .shuffle = false});
  std::optional<decltype(bn_model())> mirrored_bn;
  {
    auto scope = strategy.scope();
    mirrored_bn.emplace(bn_model());
  }
  mirrored_bn->fit(bx, by, {.batch_size = 32, .epochs = 2, .verbose = 0, .shuffle = false});
  expect_same_on_every_worker(collective, mirrored_bn->variables());
  const auto c = single_bn.variables();
  const auto d = mirrored_bn->variables();
  EXPECT(c.size() == 8 && d.size() == 8);
  for (std::size_t i = 0; i < c.size() && i < d.size(); ++i) {
    EXPECT(max_abs_diff(d[i].copy_value(0), d[i].copy_value(1)) == 0.0f);
    EXPECT(max_abs_diff(c[i].value(), d[i].value()) <= 5e-5f);
  }
}

// Every element of an epoch reaches exactly one replica across the workers, under each
// AutoShardPolicy: splitting global batches (DATA), sharding TFRecord files by worker (FILE, and
// AUTO over files), the program's own tf::data::shard (OFF); a replica's batch is the same size
// under each.
void shard_case() {
  dist::MultiWorkerMirroredStrategy strategy({.timeout = 20s});
  const int rank = strategy.cluster_resolver().rank;
  rank_for_messages = rank;
  auto c = strategy.collective();
  const auto count_everywhere = [&](const std::vector<std::int64_t>& mine, std::int64_t n) {
    std::vector<int> seen(std::size_t(n), 0);
    for (const auto& part : c.all_gather(tf::AnyTensor(tf::from_vector(mine)))) {
      for (const auto id : values<std::int64_t>(part)) {
        ++seen.at(std::size_t(id));
      }
    }
    return std::ranges::all_of(seen, [](int k) { return k == 1; });
  };
  // The ids each worker's replica sees, every piece at most `rows` long.
  const auto ids_of = [&](auto&& distributed, std::int64_t rows) {
    std::vector<std::int64_t> mine;
    for (const auto& batch : distributed) {
      EXPECT(batch.values.at(0).dim(0) <= rows);
      for (const auto id : batch.values.at(0).numpy()) {
        mine.push_back(id);
      }
    }
    return mine;
  };
  constexpr std::int64_t n = 21;
  std::vector<std::int64_t> ids(n);
  for (std::int64_t i = 0; i < n; ++i) {
    ids[std::size_t(i)] = i;
  }
  auto ds = tf::data::from_tensor_slices(tf::from_vector(ids)) | tf::data::batch(4);
  EXPECT(count_everywhere(ids_of(strategy.experimental_distribute_dataset(ds), 2), n));
  // AutoShardPolicy::off: each worker shards its input itself (here by tf::data::shard before
  // batching by the global batch size).
  auto own = tf::data::from_tensor_slices(tf::from_vector(ids)) | tf::data::shard(2, rank) |
             tf::data::batch(4);
  EXPECT(count_everywhere(ids_of(strategy.experimental_distribute_dataset(
                                     own, {.auto_shard_policy = dist::AutoShardPolicy::off}),
                                 2),
                          n));
  EXPECT_THROW_AS(tf::invalid_argument,
                  (void)strategy.experimental_distribute_dataset(
                      ds, {.auto_shard_policy = dist::AutoShardPolicy::file}));
  std::vector<std::int64_t> mine;
  for (const auto& id :
       tf::data::from_tensor_slices(tf::from_vector(ids)) | tf::data::shard(2, rank)) {
    mine.push_back(id.item());
  }
  EXPECT(count_everywhere(mine, n));

  // Five TFRecord files of three records (ids 0..14), written by each worker in its own folder:
  // nothing is shared between the processes.
  const auto dir =
      std::filesystem::temp_directory_path() / ("tapeflow_mpi_shard_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (int f = 0; f < 5; ++f) {
    files.push_back((dir / ("part-" + std::to_string(f) + ".tfrecord")).string());
    tf::io::TFRecordWriter writer(files.back());
    for (int r = 0; r < 3; ++r) {
      writer.write(std::to_string(3 * f + r));
    }
    writer.close();
  }
  const auto parse = tf::data::map([](const tf::Tensor<std::string, 0>& record) {
    return tf::Tensor<std::int64_t, 0>(std::stoll(record.item()));
  });
  auto records = tf::data::list_files((dir / "*.tfrecord").string()) |
                 tf::data::interleave([](const tf::Tensor<std::string, 0>& file) {
                   return tf::data::TFRecordDataset(file.item());
                 }) |
                 parse | tf::data::batch(4);
  for (const auto policy : {dist::AutoShardPolicy::file, dist::AutoShardPolicy::auto_}) {
    const auto read =
        ids_of(strategy.experimental_distribute_dataset(records, {.auto_shard_policy = policy}), 2);
    EXPECT(read.size() == (rank == 0 ? 9u : 6u));  // files 0, 2, 4 and files 1, 3
    EXPECT(count_everywhere(read, 15));
  }
  // One file for two workers: FILE refuses it, AUTO splits the global batches instead.
  auto one_file = tf::data::TFRecordDataset(files[0]) | parse | tf::data::batch(2);
  EXPECT_THROW_AS(tf::invalid_argument,
                  (void)strategy.experimental_distribute_dataset(
                      one_file, {.auto_shard_policy = dist::AutoShardPolicy::file}));
  const auto first_file = ids_of(strategy.experimental_distribute_dataset(one_file), 1);
  EXPECT(first_file.size() == (rank == 0 ? 2u : 1u));
  EXPECT(count_everywhere(first_file, 3));
  std::filesystem::remove_all(dir);
}

// Only the chief's files are kept: TensorBoard logs of fit, and checkpoints every worker saves
// through write_dirpath (the others' temporary folders are gone after); every worker restores
// the chief's checkpoint with CheckpointManager, unchanged.
void chief_writes_case() {
  dist::MultiWorkerMirroredStrategy strategy({.timeout = 30s});
  const int rank = strategy.cluster_resolver().rank;
  rank_for_messages = rank;
  auto c = strategy.collective();
  const std::filesystem::path logs = "mw_logs";
  const std::filesystem::path ckpt_dir = "mw_ckpt";
  if (rank == 0) {
    std::filesystem::remove_all(logs);
    std::filesystem::remove_all(ckpt_dir);
  }
  c.barrier();
  auto [x, y] = seed_mlp_batch(64, 9);
  std::optional<decltype(seed_mlp(0))> model;
  {
    auto scope = strategy.scope();
    model.emplace(seed_mlp(3));
    model->compile(
        {.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1}),
         .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true})});
  }
  auto board = std::make_shared<tf::keras::callbacks::TensorBoard>(logs);
  (void)model->fit(x, y, {.batch_size = 32, .epochs = 1, .verbose = 0, .callbacks = {board}});

  tf::train::Checkpoint ckpt({{"model", *model}});
  tf::train::CheckpointManager manager(ckpt, dist::write_dirpath(ckpt_dir, strategy).string(),
                                       {.max_to_keep = 2});
  const std::string saved = manager.save();
  dist::remove_temp_dirpath(ckpt_dir, strategy);
  c.barrier();  // every worker has written and cleaned up
  EXPECT(std::filesystem::exists(logs / "train"));
  EXPECT(!std::filesystem::exists(logs / "workertemp_1"));
  EXPECT(std::filesystem::exists(ckpt_dir / "checkpoint"));
  EXPECT(!std::filesystem::exists(ckpt_dir / "workertemp_1"));
  EXPECT(strategy.should_checkpoint() == (rank == 0));

  // Every worker restores the chief's checkpoint.
  const auto trained = model->trainable_variables();
  std::vector<tf::AnyTensor> before;
  for (const auto& v : trained) {
    before.push_back(v.value());
    v.assign(tf::AnyTensor(v.zeros_like()));
  }
  tf::train::CheckpointManager reader(ckpt, ckpt_dir.string());
  EXPECT(!reader.latest_checkpoint().empty());
  ckpt.restore(reader.latest_checkpoint()).assert_existing_objects_matched();
  for (std::size_t i = 0; i < trained.size(); ++i) {
    EXPECT(max_abs_diff(before[i], trained[i].value()) == 0.0f);
  }
  expect_same_on_every_worker(c, trained);
  c.barrier();
}

// A model that differs across workers is an error at creation on every worker, naming the
// variable and both shapes.
void mismatch_case() {
  dist::MultiWorkerMirroredStrategy strategy({.timeout = 20s});
  rank_for_messages = strategy.cluster_resolver().rank;
  auto scope = strategy.scope();
  const std::string what =
      EXPECT_THROW_AS(tf::invalid_argument, (void)seed_mlp(11, rank_for_messages == 0 ? 100 : 50));
  EXPECT(contains(what,
                  "variable 'dense/kernel' is float32[784,100] on worker 0 but "
                  "float32[784,50] on worker 1"));
  std::printf("mismatch: %s\n", what.c_str());
}

// TF_CONFIG, where set, names each worker's task; it must agree with MPI.
void tf_config_case() {
  const char* rank_env = std::getenv("OMPI_COMM_WORLD_RANK");
  const int rank = rank_env != nullptr ? std::atoi(rank_env) : 0;
  const std::string cluster =
      R"({"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"]}, "task": )";
  setenv("TF_CONFIG",
         (cluster +
          (rank == 0 ? R"({"type": "chief", "index": 0}})" : R"({"type": "worker", "index": 0}})"))
             .c_str(),
         1);
  dist::MultiWorkerMirroredStrategy strategy({.timeout = 20s});
  rank_for_messages = strategy.cluster_resolver().rank;
  EXPECT(strategy.cluster_resolver().task_type == (rank == 0 ? "chief" : "worker"));
  EXPECT(strategy.cluster_resolver().task_id == 0);
  EXPECT(strategy.is_chief() == (rank == 0));
  // A TF_CONFIG that names a third worker disagrees with mpirun -np 2.
  setenv(
      "TF_CONFIG",
      R"({"cluster": {"worker": ["a:1", "b:1", "c:1"]}, "task": {"type": "worker", "index": 0}})",
      1);
  EXPECT(contains(EXPECT_THROW_AS(tf::invalid_argument, dist::MultiWorkerMirroredStrategy()),
                  "of 3 tasks, but MPI runs this process as rank"));
  unsetenv("TF_CONFIG");
}

// Worker 1 dies (SIGKILL) or hangs at step 3; worker 0 must fail with a typed error naming it
// within the timeout, never hang.
void fault_case(bool kill) {
  constexpr auto timeout = 3s;
  dist::MultiWorkerMirroredStrategy strategy({.timeout = timeout});
  const int rank = strategy.cluster_resolver().rank;
  rank_for_messages = rank;
  auto scope = strategy.scope();
  auto model = seed_mlp(11);
  tf::keras::optimizers::SGD opt({.learning_rate = 0.1});
  auto [x, y] = seed_mlp_batch(64, 7);
  auto loss_fn = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true});
  const auto step = [&] {
    strategy.run([&] {
      tf::GradientTape tape;
      auto loss = loss_fn(tf::AnyTensor(y), tf::AnyTensor(model(x)));
      tape.stop();
      auto vars = model.trainable_variables();
      opt.apply_gradients(tf::keras::gradient(tape, loss, vars), vars);
    });
  };
  for (int s = 0; s < 3; ++s) {
    step();
  }
  if (rank == 1) {
    if (kill) {
      std::raise(SIGKILL);
    }
    std::this_thread::sleep_for(timeout + 4s);  // hung: answers no ping
    // Worker 0 gave up on us meanwhile and said so.
    const std::string what = EXPECT_THROW_AS(tf::unavailable, step());
    EXPECT(contains(what, "worker 0 failed"));
    std::printf("fault: worker 1 got: %s\n", what.c_str());
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  // deadline_exceeded, or unavailable where MPI itself notices the dead peer first.
  const std::string what = EXPECT_THROW_AS(tf::error, step());
  const auto waited = std::chrono::steady_clock::now() - start;
  std::printf("fault: worker 0 got after %.1f s: %s\n",
              std::chrono::duration<double>(waited).count(), what.c_str());
  EXPECT(contains(what, "worker 1 did not respond (dead or hung)"));
  EXPECT(waited < timeout + 4s);
  // The group is broken now: every later call fails at once.
  EXPECT_THROW_AS(tf::unavailable, step());
}

// A worker killed while the payload moves, after both joined the operation's rendezvous:
// MPI cannot cancel the blocking call worker 0 is in. Worker 0 must still end within its
// timeout: with a typed error where MPI reports the dead peer, else by the watchdog (exit 70
// and its message; CTest's pass expression accepts either).
void fault_inside_case() {
  constexpr auto timeout = 3s;
  dist::MpiCollective c({.timeout = timeout});
  const int rank = c.rank();
  // Large enough that moving it over TCP takes far longer than the rendezvous.
  std::vector<tf::AnyTensor> big = {tf::AnyTensor(tf::fill<float>({std::int64_t{1} << 26}, 1.0f))};
  c.barrier();
  if (rank == 1) {
    std::thread([] {
      std::this_thread::sleep_for(100ms);
      std::raise(SIGKILL);
    }).detach();
    c.all_reduce(big, dist::ReduceOp::sum);
    std::this_thread::sleep_for(60s);  // not reached: killed first
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string what = EXPECT_THROW_AS(tf::error, c.all_reduce(big, dist::ReduceOp::sum));
  const auto waited = std::chrono::steady_clock::now() - start;
  std::printf("fault_inside: worker 0 got after %.1f s: %s\n",
              std::chrono::duration<double>(waited).count(), what.c_str());
  EXPECT(waited < timeout + 4s);
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, std::function<void()>> cases = {
      {"collective", collective_case},
      {"equivalence", equivalence_case},
      {"fit", fit_case},
      {"fit_files", fit_files_case},
      {"shard", shard_case},
      {"local_replicas", local_replicas_case},
      {"mismatch", mismatch_case},
      {"tf_config", tf_config_case},
      {"chief_writes", chief_writes_case},
      {"fault_kill", [] { fault_case(true); }},
      {"fault_hang", [] { fault_case(false); }},
      {"fault_inside", fault_inside_case},
      {"traced_reduce", traced_reduce_case},
  };
  const std::string name = argc > 1 ? argv[1] : "";
  const auto it = cases.find(name);
  if (it == cases.end()) {
    std::fprintf(stderr, "usage: mpirun -np 2 %s <case>; cases:", argv[0]);
    for (const auto& [n, f] : cases) {
      std::fprintf(stderr, " %s", n.c_str());
    }
    std::fprintf(stderr, "\n");
    return 2;
  }
  const char* rank_env = std::getenv("OMPI_COMM_WORLD_RANK");
  rank_for_messages = rank_env != nullptr ? std::atoi(rank_env) : -1;
  try {
    it->second();
  } catch (const std::exception& e) {
    std::printf("FAIL on worker %d: %s\n", rank_for_messages, e.what());
    ++failures;
  }
  if (failures == 0) {
    std::printf("%s: PASS on worker %d\n", name.c_str(), rank_for_messages);
  }
  std::fflush(stdout);
  if (name.starts_with("fault")) {
    _exit(failures == 0 ? 0 : 1);  // MPI cannot be finalized with a dead peer
  }
  return failures == 0 ? 0 : 1;
}
