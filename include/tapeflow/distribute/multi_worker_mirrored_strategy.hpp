// `tf::distribute::MultiWorkerMirroredStrategy`: synchronous data parallelism across worker
// processes (TensorFlow: `tf.distribute.MultiWorkerMirroredStrategy`), launched by `mpirun -np N`
// (or srun), with one replica per worker or one per device of `devices` on every worker; the
// collective is MPI's (distribute/mpi_collective.hpp, compiled in tapeflow::mpi, which a
// program using this header links), below each worker's in-process group when it runs several.
//
// Note [Multi-worker variables]. Each worker holds its own copy of every variable created
// under the scope. The copies start equal because creating one is a collective: every worker
// passes its variable's dtype and shape to the others (a model that differs across workers is
// invalid_argument on every worker, naming the variable and the shapes), then takes worker 0's
// initial value. They stay equal because every worker applies the same all-reduced gradients.
// Workers must therefore create the same variables in the same order, as they do running the
// same program (TensorFlow requires the same).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <tapeflow/config/config.hpp>
#include <tapeflow/config/context.hpp>
#include <tapeflow/config/device_scope.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/any_collective.hpp>
#include <tapeflow/distribute/detail/hierarchical_collective.hpp>
#include <tapeflow/distribute/detail/tf_config.hpp>
#include <tapeflow/distribute/in_process_collective.hpp>
#include <tapeflow/distribute/mpi_collective.hpp>
#include <tapeflow/distribute/replica_context.hpp>
#include <tapeflow/distribute/strategy.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// Options of MultiWorkerMirroredStrategy (TensorFlow's `CommunicationOptions`, and the
/// devices).
struct MultiWorkerMirroredStrategyOptions {
  /// This worker's replica device when `devices` is empty; empty: "/gpu:0" where there is a
  /// GPU, else "/cpu:0".
  std::string device = {};
  /// This worker's replica devices, one replica each (every worker must run as many);
  /// empty: the one `device`.
  std::vector<std::string> devices = {};
  /// How long a worker waits for the others in a collective before it fails with
  /// deadline_exceeded naming the workers that do not respond (TensorFlow: `timeout_seconds`).
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  /// The most gradient bytes one all-reduce carries (TensorFlow: `bytes_per_pack`).
  std::int64_t bytes_per_pack = std::int64_t{32} << 20;
};

/// Where this worker stands in the cluster (TensorFlow: `strategy.cluster_resolver`).
struct ClusterResolver {
  std::string task_type = "worker";  ///< "chief" or "worker"
  int task_id = 0;                   ///< index within the task type
  int num_workers = 1;               ///< every task of the cluster
  int rank = 0;                      ///< the MPI rank (0 is the chief)
  std::string host;                  ///< the host it runs on
};

namespace detail {

struct MultiWorkerState final : StrategyState {
  explicit MultiWorkerState(MpiOptions options) : collective(options) {}

  MpiCollective collective;

  void all_reduce_across_workers(std::span<AnyTensor> values) const override {
    auto c = collective;  // a handle: the state is const, the group is not
    c.all_reduce(values, ReduceOp::sum);
  }

  // One replica: the workers' collective itself. Several: each worker's replicas combine
  // first, and local replica 0 alone calls MPI (distribute/detail/hierarchical_collective.hpp).
  [[nodiscard]] std::shared_ptr<ReplicaGroup> step_group() const override {
    if (num_local_replicas() == 1) {
      return std::make_shared<WorkerGroup>(collective);
    }
    auto shared = std::make_shared<HierarchicalShared<MpiCollective>>(
        HierarchicalShared<MpiCollective>{collective, num_workers, worker_index, {}});
    return std::make_shared<LocalReplicasGroup>(
        InProcessGroup(num_local_replicas(), InProcessOptions{.timeout = timeout}),
        std::move(shared));
  }

 private:
  // Only replica 0's thread calls MPI (MPI_THREAD_SERIALIZED): another replica's failure
  // reaches replica 0 through the local group, and replica 0 then tells the other workers.
  struct WorkerGroup final : ReplicaGroup {
    explicit WorkerGroup(MpiCollective c) : collective(std::move(c)) {}
    AnyCollective replica(int) override { return AnyCollective(collective); }
    void abort(int, const std::string& why) override { collective.abort(why); }
    MpiCollective collective;
  };
  struct LocalReplicasGroup final : ReplicaGroup {
    LocalReplicasGroup(InProcessGroup l, std::shared_ptr<HierarchicalShared<MpiCollective>> s)
        : local(std::move(l)), shared(std::move(s)) {}
    AnyCollective replica(int rank) override {
      return AnyCollective(HierarchicalCollective<MpiCollective>(local.replica(rank), shared));
    }
    void abort(int rank, const std::string& why) override {
      local.abort(rank, why);
      if (rank == 0) {
        shared->across.abort(why);
      }
    }
    InProcessGroup local;
    std::shared_ptr<HierarchicalShared<MpiCollective>> shared;
  };
};

// Agrees a new variable's initial value: same dtype and shape on every worker, worker 0's
// value (Note [Multi-worker variables]).
inline void agree_initial_value(MpiCollective& c, std::int64_t ordinal, const std::string& name,
                                AnyTensor& value) {
  std::vector<std::int64_t> mine = {static_cast<std::int64_t>(value.dtype()),
                                    static_cast<std::int64_t>(value.rank())};
  for (std::size_t i = 0; i < value.rank(); ++i) {
    mine.push_back(value.shape()[i]);
  }
  mine.resize(2 + max_rank, 0);
  const std::vector<AnyTensor> all = c.all_gather(AnyTensor(tapeflow::from_vector(mine)));
  const auto describe = [](const AnyTensor& signature) {
    const auto* s = static_cast<const std::int64_t*>(signature.raw_data());
    std::string dims;
    for (std::int64_t i = 0; i < s[1] && i < std::int64_t(max_rank); ++i) {
      dims += (i == 0 ? "" : ",") + std::to_string(s[2 + i]);
    }
    return std::string(dtype_name(static_cast<DType>(s[0]))) + "[" + dims + "]";
  };
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (std::memcmp(all[r].raw_data(), all[0].raw_data(), sizeof(std::int64_t) * (2 + max_rank)) !=
        0) {
      throw invalid_argument("MultiWorkerMirroredStrategy: variable '" +
                             (name.empty() ? "#" + std::to_string(ordinal) + " (unnamed)" : name) +
                             "' is " + describe(all[0]) + " on worker 0 but " + describe(all[r]) +
                             " on worker " + std::to_string(r) +
                             ": every worker must build the same model");
    }
  }
  std::array<AnyTensor, 1> v = {value};
  c.broadcast(v, 0);
  value = std::move(v[0]);
}

inline ClusterResolver resolve_cluster(const MpiCollective& c) {
  ClusterResolver out;
  out.rank = c.rank();
  out.num_workers = c.num_replicas();
  out.task_id = c.rank();
  out.host = c.processor_name();
  const char* env = std::getenv("TF_CONFIG");
  if (env == nullptr || *env == '\0') {
    return out;  // the cluster is MPI's: every rank a worker, rank 0 the chief
  }
  const TfConfig config = parse_tf_config(env);
  const auto size_of = [&](const std::string& job) {
    const auto it = config.cluster.find(job);
    return it == config.cluster.end() ? 0 : static_cast<int>(it->second.size());
  };
  for (const auto& [job, tasks] : config.cluster) {
    if (job != "chief" && job != "worker") {
      throw invalid_argument("TF_CONFIG: job '" + job +
                             "' has no place in MultiWorkerMirroredStrategy (chief and worker "
                             "jobs only)");
    }
  }
  const int chiefs = size_of("chief");
  if (chiefs > 1) {
    throw invalid_argument("TF_CONFIG: the cluster has " + std::to_string(chiefs) +
                           " chiefs; at most one");
  }
  const int tasks = chiefs + size_of("worker");
  if (config.task_type != "chief" && config.task_type != "worker") {
    throw invalid_argument("TF_CONFIG: task type '" + config.task_type +
                           "' (MultiWorkerMirroredStrategy runs chief and worker tasks)");
  }
  if (config.task_index < 0 || config.task_index >= size_of(config.task_type)) {
    throw invalid_argument("TF_CONFIG: task " + config.task_type + ":" +
                           std::to_string(config.task_index) + " is not in the cluster");
  }
  const int rank = config.task_type == "chief" ? 0 : chiefs + int(config.task_index);
  if (tasks != out.num_workers || rank != out.rank) {
    throw invalid_argument("TF_CONFIG names task " + config.task_type + ":" +
                           std::to_string(config.task_index) + " of " + std::to_string(tasks) +
                           " tasks, but MPI runs this process as rank " + std::to_string(out.rank) +
                           " of " + std::to_string(out.num_workers) +
                           " (chief first, then workers in order)");
  }
  out.task_type = config.task_type;
  out.task_id = int(config.task_index);
  return out;
}

}  // namespace detail

/// Replicates the model on every worker process, splits each global batch across them and
/// keeps their variables identical; worker 0 is the chief.
///
///     // mpirun -np 2 ./train
///     tf::distribute::MultiWorkerMirroredStrategy strategy;
///     auto scope = strategy.scope();  // create the model and optimizer here
class MultiWorkerMirroredStrategy : public Strategy {
 public:
  /// Joins the MPI job's workers (initializing MPI if needed; unavailable without an MPI
  /// runtime) and reads TF_CONFIG where set (invalid_argument when it disagrees with MPI).
  explicit MultiWorkerMirroredStrategy(MultiWorkerMirroredStrategyOptions options = {})
      : Strategy(make_state(options)) {
    auto& s = state_();
    resolver_ = detail::resolve_cluster(s.collective);
  }

  /// Where this worker stands (TensorFlow: `strategy.cluster_resolver`).
  [[nodiscard]] const ClusterResolver& cluster_resolver() const noexcept { return resolver_; }
  /// Whether this worker is the chief, the one that writes checkpoints and summaries.
  [[nodiscard]] bool is_chief() const noexcept { return resolver_.rank == 0; }
  /// The workers' collective (cross-replica calls: broadcast, barrier, ...).
  [[nodiscard]] MpiCollective collective() const { return state_().collective; }

 private:
  static std::shared_ptr<detail::StrategyState> make_state(
      const MultiWorkerMirroredStrategyOptions& options) {
    auto state = std::make_shared<detail::MultiWorkerState>(MpiOptions{.timeout = options.timeout});
    state->class_name = "MultiWorkerMirroredStrategy";
    state->timeout = options.timeout;
    state->bytes_per_pack = options.bytes_per_pack;
    std::vector<std::string> devices = options.devices;
    if (devices.empty()) {
      std::string device = options.device;
      if (device.empty()) {
        device = config::list_logical_devices("GPU").empty() ? "/cpu:0" : "/gpu:0";
      }
      devices.push_back(std::move(device));
    }
    for (const auto& device : devices) {
      state->add_replica_device(device);
    }
    state->num_workers = state->collective.num_replicas();
    state->worker_index = state->collective.rank();
    // Every worker must run as many replicas: the global replica ids depend on it.
    const auto counts = state->collective.all_gather(
        AnyTensor(Tensor<std::int64_t, 0>(std::int64_t(devices.size()))));
    for (std::size_t w = 0; w < counts.size(); ++w) {
      const auto k = *static_cast<const std::int64_t*>(counts[w].raw_data());
      if (k != static_cast<std::int64_t>(devices.size())) {
        throw invalid_argument("MultiWorkerMirroredStrategy: worker " + std::to_string(w) +
                               " runs " + std::to_string(k) + " replica(s), worker " +
                               std::to_string(state->worker_index) + " runs " +
                               std::to_string(devices.size()) + ": every worker must run as many");
      }
    }
    auto collective = state->collective;
    auto ordinal = std::make_shared<std::int64_t>(0);
    state->initial_value_sync = std::make_shared<const tapeflow::detail::InitialValueSync>(
        [collective, ordinal](const std::string& name, AnyTensor& value) mutable {
          detail::agree_initial_value(collective, (*ordinal)++, name, value);
        });
    return state;
  }
  detail::MultiWorkerState& state_() const { return static_cast<detail::MultiWorkerState&>(*s_); }

  ClusterResolver resolver_;
};

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
