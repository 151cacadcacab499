// `tf::distribute::Strategy`: the API every distribution strategy shares (TensorFlow:
// `tf.distribute.Strategy`): `scope()`, `run`, `reduce`, `experimental_local_results`, and the
// default strategy outside any scope (one replica on the current device).
//
// Note [Mirrored variables]. A variable created under a strategy's scope (or by a merge_call
// inside `strategy.run`) holds one copy per replica, on that replica's device: `value` is
// replica 0's, `mirrors` the others' (ops/state/variable_ops.hpp). A thread-local replica index
// picks the copy every variable op works on: inside `run` each replica thread reads and updates
// its own copy; outside (cross-replica context) reads see replica 0's and writes (assign, a
// checkpoint restore) reach every copy. The copies stay identical because every replica applies
// the same update: the optimizer sums the replicas' gradients with one all-reduce (in rank
// order, so every replica gets the same bits) before its fused updates. Nothing else knows:
// tapes, tf::function graphs and kernels see an ordinary variable whose buffer is the current
// replica's, and a variable that is not mirrored pays one empty-vector check per access.
// Variables created lazily inside `run` (a layer's first call, an optimizer's slots) are made
// once by replica 0 in a merge_call while the others wait, so they are mirrored too and their
// random initial values are the ones a single replica would draw.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/backend/cpu/thread_budget.hpp>
#include <tapeflow/config/context.hpp>
#include <tapeflow/config/device_scope.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/detail/shard_input_files.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/any_collective.hpp>
#include <tapeflow/distribute/collective.hpp>
#include <tapeflow/distribute/detail/replica_group.hpp>
#include <tapeflow/distribute/detail/replica_threads.hpp>
#include <tapeflow/distribute/distributed_dataset.hpp>
#include <tapeflow/distribute/in_process_collective.hpp>
#include <tapeflow/distribute/per_replica.hpp>
#include <tapeflow/distribute/replica_context.hpp>
#include <tapeflow/function/control_flow.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/function/graph.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

namespace detail {

/// An in-process group as a strategy's replica group (one per step).
class InProcessReplicaGroup final : public ReplicaGroup {
 public:
  explicit InProcessReplicaGroup(InProcessGroup group) : group_(std::move(group)) {}
  AnyCollective replica(int rank) override { return AnyCollective(group_.replica(rank)); }
  void abort(int rank, const std::string& why) override { group_.abort(rank, why); }

 private:
  InProcessGroup group_;
};

/// What a strategy is: its replicas' devices and how it runs them. Strategy handles share one.
struct StrategyState {
  virtual ~StrategyState() = default;
  std::string class_name = "_DefaultDistributionStrategy";
  std::vector<std::string> device_names;                        // full names, replica order
  std::vector<tapeflow::detail::devices::DeviceId> device_ids;  // the same devices' ids
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  std::int64_t bytes_per_pack = std::int64_t{32} << 20;
  // Across processes (MultiWorkerMirroredStrategy): this process is worker `worker_index` of
  // `num_workers`, its replicas the global replicas worker_index * local + 0, 1, ...
  int num_workers = 1;
  int worker_index = 0;
  // Agrees new variables' initial values across workers (null on one machine).
  std::shared_ptr<const tapeflow::detail::InitialValueSync> initial_value_sync;
  // The replicas' collectives kept across steps (NCCL); null: an in-process group per step.
  std::shared_ptr<ReplicaGroup> replica_group;
  // Runs replicas 1..n-1 of each step.
  mutable ReplicaThreads replica_threads;

  /// This process's replicas.
  [[nodiscard]] int num_local_replicas() const noexcept {
    return static_cast<int>(device_ids.size());
  }
  /// Every replica of every worker.
  [[nodiscard]] int num_replicas_in_sync() const noexcept {
    return num_local_replicas() * num_workers;
  }
  /// The global index of this process's first replica.
  [[nodiscard]] int first_local_replica() const noexcept {
    return worker_index * num_local_replicas();
  }
  /// Sums `values` over the workers in place (cross-replica context; nothing on one machine).
  virtual void all_reduce_across_workers(std::span<AnyTensor> values) const { (void)values; }

  /// Adds a replica on logical device `name` ("/gpu:1", "/cpu:0", ...): invalid_argument for a
  /// device this process does not have, or one already added.
  void add_replica_device(const std::string& name) {
    const DeviceSpec spec = DeviceSpec::from_string(name);
    const auto infos = config::detail_context::logical_device_infos();
    const config::detail_context::LogicalDeviceInfo* found = nullptr;
    if (spec.device_type && spec.device_index && config::detail_context::is_local(spec)) {
      found = config::detail_context::find(infos, *spec.device_type, spec.device_index);
    }
    if (found == nullptr) {
      throw invalid_argument(
          class_name + ": device '" + name + "' is not one of this process's logical devices (" +
          std::to_string(infos.size()) + " listed by tf::config::list_logical_devices)");
    }
    std::string full = config::detail_context::full_name(*found);
    if (std::ranges::find(device_names, full) != device_names.end()) {
      throw invalid_argument(class_name + ": device '" + name +
                             "' is named twice (no duplicates allowed in devices)");
    }
    device_names.push_back(std::move(full));
    device_ids.push_back(static_cast<tapeflow::detail::devices::DeviceId>(found->id));
  }

  // The collectives of one step's replicas: the group kept across steps, else a fresh
  // in-process one (cheap to make). Several workers override it.
  [[nodiscard]] virtual std::shared_ptr<ReplicaGroup> step_group() const {
    if (replica_group) {
      return replica_group;
    }
    return std::make_shared<InProcessReplicaGroup>(
        InProcessGroup(num_local_replicas(), InProcessOptions{.timeout = timeout}));
  }

  // Runs body(r) for every replica r, each on its own thread (replica 0 on the caller's, the
  // others on replica_threads, or on fresh ones in a nested step) under its device scope and
  // replica context. One replica's exception breaks the step for all; the root cause is
  // rethrown here once every replica has stopped.
  void run_replicas(const std::function<void(int)>& body) const {
    const int n = num_local_replicas();
    const std::shared_ptr<ReplicaGroup> group = step_group();
    const auto abort = [&group](int r, const std::string& why) { group->abort(r, why); };
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
    auto replica = [&](int r) {
      // Each replica uses its logical CPU's share of the intra-op threads, CPU:0's included
      // (outside a strategy, ops on CPU:0 may use the whole pool).
      const int previous_budget = std::exchange(
          backend::cpu::thread_budget(),
          tapeflow::detail::devices::host(device_ids[std::size_t(r)]).thread_budget());
      try {
        const config::DeviceScope on_device(DeviceSpec::from_string(device_names[std::size_t(r)]));
        ReplicaContext context(
            first_local_replica() + r, group->replica(r), &device_ids,
            [&abort, r](const std::string& why) { abort(r, why); }, bytes_per_pack, r,
            initial_value_sync.get());
        const ContextScope as_replica(context);
        body(r);
      } catch (const std::exception& e) {
        errors[std::size_t(r)] = std::current_exception();
        abort(r, e.what());
      } catch (...) {
        errors[std::size_t(r)] = std::current_exception();
        abort(r, "an exception not derived from std::exception");
      }
      backend::cpu::thread_budget() = previous_budget;
    };
    if (!replica_threads.run(n, replica)) {
      std::vector<std::jthread> others;
      for (int r = 1; r < n; ++r) {
        others.emplace_back(replica, r);
      }
      replica(0);
    }  // joins every replica
    // The replica that failed first threw something other than the `unavailable` the others
    // got from its abort.
    std::exception_ptr first;
    for (const auto& e : errors) {
      if (!e) {
        continue;
      }
      if (!first) {
        first = e;
      }
      try {
        std::rethrow_exception(e);
      } catch (const unavailable&) {
      } catch (...) {
        std::rethrow_exception(e);
      }
    }
    if (first) {
      std::rethrow_exception(first);
    }
  }
};

inline std::shared_ptr<StrategyState>& scoped_strategy() noexcept {
  thread_local std::shared_ptr<StrategyState> strategy;
  return strategy;
}

// The argument replica `r` gets: its own value of a PerReplica, the same value otherwise.
template <class A>
decltype(auto) replica_arg(const A& a, int r) {
  if constexpr (is_per_replica<A>) {
    return a[static_cast<std::size_t>(r)];
  } else {
    return (a);
  }
}
template <class X>
constexpr bool is_tensor_result();
template <class X, std::size_t... I>
constexpr bool all_tensor_results(std::index_sequence<I...>) {
  return sizeof...(I) > 0 && (is_tensor_result<std::tuple_element_t<I, X>>() && ...);
}
/// Whether strategy.run can trace a replica function returning X: a typed tensor, or a tuple
/// or pair of them.
template <class X>
constexpr bool is_tensor_result() {
  if constexpr (is_tensor<X>::value) {
    return true;
  } else if constexpr (requires { std::tuple_size<X>::value; }) {
    return all_tensor_results<X>(std::make_index_sequence<std::tuple_size_v<X>>{});
  } else {
    return false;
  }
}

template <class A>
using replica_arg_t = decltype(replica_arg(std::declval<const std::remove_cvref_t<A>&>(), 0));

}  // namespace detail

class Strategy;

/// How a multi-worker strategy divides a dataset among the workers (TensorFlow:
/// `tf.data.experimental.AutoShardPolicy`).
enum class AutoShardPolicy {
  auto_,  ///< `file` where the pipeline reads a file list with a file for every worker, else `data`
  file,   ///< by input file: each worker reads its share of the files of every file source
  data,   ///< every worker reads every global batch and keeps its replicas' rows
  off,    ///< none: each worker's dataset is already its own
};

/// Options of `experimental_distribute_dataset` (TensorFlow: `options.experimental_distribute`).
struct DistributeOptions {
  AutoShardPolicy auto_shard_policy = AutoShardPolicy::auto_;  ///< who reads what
};

/// While it lives, variables (and Keras models and optimizers) are created for the strategy
/// (TensorFlow: `with strategy.scope():`).
class [[nodiscard]] StrategyScope {
 public:
  /// Opens `s`'s scope on this thread (invalid_argument inside another strategy's scope).
  explicit StrategyScope(std::shared_ptr<detail::StrategyState> s) {
    auto& current = detail::scoped_strategy();
    if (current != nullptr && current != s) {
      throw invalid_argument("Mixing different tf.distribute.Strategy objects: a " + s->class_name +
                             " scope inside a " + current->class_name + " scope");
    }
    previous_strategy_ = std::exchange(current, std::move(s));
    previous_mirroring_ =
        std::exchange(tapeflow::detail::mirroring_devices(), &current->device_ids);
    previous_sync_ =
        std::exchange(tapeflow::detail::initial_value_sync(), current->initial_value_sync.get());
  }
  StrategyScope(const StrategyScope&) = delete;
  StrategyScope& operator=(const StrategyScope&) = delete;
  ~StrategyScope() {
    detail::scoped_strategy() = std::move(previous_strategy_);
    tapeflow::detail::mirroring_devices() = previous_mirroring_;
    tapeflow::detail::initial_value_sync() = previous_sync_;
  }

 private:
  std::shared_ptr<detail::StrategyState> previous_strategy_;
  const std::vector<tapeflow::detail::devices::DeviceId>* previous_mirroring_ = nullptr;
  const tapeflow::detail::InitialValueSync* previous_sync_ = nullptr;
};

/// A distribution strategy; copies share it. Default-constructed: TensorFlow's default
/// strategy, one replica on the current device.
class Strategy {
 public:
  Strategy() : s_(std::make_shared<detail::StrategyState>()) {
    s_->device_names = {config::current_device()};
    s_->device_ids = {tapeflow::detail::devices::resolve(s_->device_names[0])};
  }
  /// A handle on an existing strategy's state.
  explicit Strategy(std::shared_ptr<detail::StrategyState> state) : s_(std::move(state)) {}

  /// How many replicas run each step, on every worker.
  [[nodiscard]] int num_replicas_in_sync() const noexcept { return s_->num_replicas_in_sync(); }
  /// This process's replicas' devices, full names in replica order (TensorFlow:
  /// `strategy.extended.worker_devices`).
  [[nodiscard]] const std::vector<std::string>& worker_devices() const noexcept {
    return s_->device_names;
  }
  /// Variables, models and optimizers created while the scope lives belong to the strategy.
  [[nodiscard]] StrategyScope scope() const { return StrategyScope(s_); }

  /// Runs `fn(args...)` on every replica of this process (TensorFlow: `strategy.run(fn,
  /// args)`): a PerReplica argument gives each replica its own value, any other argument is
  /// shared. Returns the replicas' results as a PerReplica (nothing for a void fn). Inside,
  /// `get_replica_context()` is the replica's; an exception in one replica stops every replica
  /// (the others' collective calls throw `unavailable`) and is rethrown here.
  template <class F, class... Args>
  auto run(F&& fn, const Args&... args) const {
    using Result = std::invoke_result_t<F&, detail::replica_arg_t<Args>...>;
    const int n = s_->num_local_replicas();
    (check_per_replica(args, n), ...);
    if (auto* outer = tapeflow::detail::trace::active()) {
      if constexpr (std::is_void_v<Result> || detail::is_tensor_result<Result>()) {
        return run_traced<Result>(*outer, fn, args...);
      } else {
        throw unimplemented(
            "strategy.run inside a tf::function being traced: fn must return a tensor, a tuple "
            "or pair of tensors, or nothing");
      }
    }
    if constexpr (std::is_void_v<Result>) {
      s_->run_replicas(
          [&]([[maybe_unused]] int r) { std::invoke(fn, detail::replica_arg(args, r)...); });
    } else {
      std::vector<std::optional<Result>> results(static_cast<std::size_t>(n));
      s_->run_replicas([&]([[maybe_unused]] int r) {
        results[std::size_t(r)].emplace(std::invoke(fn, detail::replica_arg(args, r)...));
      });
      PerReplica<Result> out;
      out.values.reserve(results.size());
      for (auto& v : results) {
        out.values.push_back(std::move(*v));
      }
      return out;
    }
  }

  /// The replicas' values combined elementwise (TensorFlow: `strategy.reduce(op, value,
  /// axis=None)`): their sum, or their mean, over every worker's replicas.
  template <class T, std::size_t R>
  [[nodiscard]] Tensor<T, R> reduce(ReduceOp op, const PerReplica<Tensor<T, R>>& value) const {
    Tensor<T, R> total = sum_of(value, [](const Tensor<T, R>& v) { return v; });
    return op == ReduceOp::mean
               ? total / static_cast<T>(value.size() * std::size_t(s_->num_workers))
               : total;
  }
  /// The replicas' values reduced over `axis` too (TensorFlow: `strategy.reduce(op, value,
  /// axis)`): the sum over every replica's rows, or their mean, dividing by all replicas' rows
  /// together (replicas' batches may differ in size).
  template <class T, std::size_t R>
    requires(R > 0)
  [[nodiscard]] Tensor<T, R - 1> reduce(ReduceOp op, const PerReplica<Tensor<T, R>>& value,
                                        int axis) const {
    std::int64_t rows = 0;
    for (const auto& v : value.values) {
      rows += v.shape()[static_cast<std::size_t>(axis < 0 ? axis + int(R) : axis)];
    }
    Tensor<T, R - 1> total =
        sum_of(value, [&](const Tensor<T, R>& v) { return tapeflow::reduce_sum(v, axis); });
    if (op == ReduceOp::mean && s_->num_workers > 1) {
      // Every worker's rows: an op, so a trace counts them at each call, not once.
      return total / tapeflow::cast<T>(across_workers(Tensor<std::int64_t, 0>(rows)));
    }
    return op == ReduceOp::mean ? total / static_cast<T>(rows) : total;
  }

  /// `dataset`'s global batches split across the replicas (TensorFlow:
  /// `strategy.experimental_distribute_dataset(ds)`): iterating yields one PerReplica per
  /// batch, for `run`. Batch the dataset by the global batch size first. Across workers the
  /// policy says who reads what (docs/guide/distribute.md, "Input across workers"): `file`:
  /// each worker reads its share of the files of every file source of the pipeline
  /// (TFRecordDataset, list_files; invalid_argument if there is none, or fewer files than
  /// workers); `data`: every worker reads every global batch and keeps its replicas' rows;
  /// `off`: each worker's dataset is its own (sharded by the program); `auto_`: `file` where it
  /// applies, else `data`. Under `file` and `off` each of a worker's batches is split across all
  /// replicas as a global batch is, its pieces going to this worker's replicas over
  /// consecutive steps: a replica's batch has the same size under every policy.
  template <std::ranges::viewable_range Dataset>
  [[nodiscard]] auto experimental_distribute_dataset(Dataset&& dataset,
                                                     DistributeOptions options = {}) const {
    using View = std::views::all_t<Dataset>;
    View view = std::views::all(std::forward<Dataset>(dataset));
    AutoShardPolicy policy = options.auto_shard_policy;
    if (s_->num_workers > 1 &&
        (policy == AutoShardPolicy::auto_ || policy == AutoShardPolicy::file)) {
      policy = shard_by_file(view, policy);
    }
    const bool own = policy == AutoShardPolicy::file || policy == AutoShardPolicy::off;
    return DistributedDataset<View>(std::move(view), s_->device_names,
                                    own ? 0 : s_->first_local_replica(), s_->num_replicas_in_sync(),
                                    own);
  }

  /// Whether this process writes checkpoints: false on every worker but the chief (TensorFlow:
  /// `strategy.extended.should_checkpoint`); see distribute/file_paths.hpp.
  [[nodiscard]] bool should_checkpoint() const noexcept { return s_->worker_index == 0; }
  /// Whether this process writes TensorBoard summaries: the chief only (TensorFlow:
  /// `strategy.extended.should_save_summary`).
  [[nodiscard]] bool should_save_summary() const noexcept { return s_->worker_index == 0; }
  /// This process's index among the workers (0, the chief, on one machine).
  [[nodiscard]] int worker_index() const noexcept { return s_->worker_index; }

  /// The values held by this process's replicas, in replica order.
  template <class T>
  [[nodiscard]] const std::vector<T>& experimental_local_results(const PerReplica<T>& value) const {
    return value.values;
  }

  /// The shared state (what Keras models keep to train under the strategy).
  [[nodiscard]] const std::shared_ptr<detail::StrategyState>& state() const noexcept { return s_; }

 protected:
  std::shared_ptr<detail::StrategyState> s_;  ///< shared by the strategy's handles

 private:
  // Note [strategy.run in a trace]: inside a tf::function being traced, strategy.run records
  // one node. Every replica traces `fn` on its own thread, as when it runs, into its own
  // sub-graph of the trace: its device, its replica context (collectives become graph nodes;
  // a merge_call's barrier meets the other replicas' traces) and its PerReplica values, which
  // the sub-graph captures from the trace. Each run of the node runs every replica's graph on
  // its replica thread, so the collectives in them meet as in an eager strategy.run.
  template <class Result, class F, class... Args>
  auto run_traced(tapeflow::detail::trace::Graph& outer, F& fn, const Args&... args) const {
    namespace trace = tapeflow::detail::trace;
    namespace cf = tapeflow::detail::cf;
    const auto n = static_cast<std::size_t>(s_->num_local_replicas());
    std::vector<std::unique_ptr<trace::Graph>> graphs;
    for (std::size_t r = 0; r < n; ++r) {
      graphs.push_back(cf::sub_graph(&outer));
    }
    using Results = std::conditional_t<std::is_void_v<Result>, int, Result>;
    std::vector<std::optional<Results>> results(n);
    // The replicas trace at once; a capture from `outer` may add to it (and, inside a cond
    // branch or loop body, to the graphs around it), so captures through it take turns.
    std::mutex capture_lock;
    struct LockCaptures {
      trace::Graph& graph;
      ~LockCaptures() { graph.capture_lock = nullptr; }
    } const lock_captures{outer};
    outer.capture_lock = &capture_lock;
    s_->run_replicas([&](int r) {
      trace::Graph& graph = *graphs[std::size_t(r)];
      const trace::Scope scope(&graph);
      if constexpr (std::is_void_v<Result>) {
        std::invoke(fn, detail::replica_arg(args, r)...);
      } else {
        auto& result =
            results[std::size_t(r)].emplace(std::invoke(fn, detail::replica_arg(args, r)...));
        tapeflow::detail::fn::result_traits<Result>::collect(graph, result);
      }
    });
    trace::GraphNode node;
    node.op = "StrategyRun";
    node.stateful = true;  // the replicas' collectives and variable updates
    node.export_error =
        "strategy.run: a TensorFlow graph holds no replicas; export a function of one replica";
    std::vector<std::vector<std::size_t>> where;
    for (const auto& graph : graphs) {
      where.push_back(cf::add_captures(node.inputs, graph->captured));
      outer.variable_reads.insert(outer.variable_reads.end(), graph->variable_reads.begin(),
                                  graph->variable_reads.end());
    }
    PerReplica<Results> symbolic;
    std::vector<AnyTensor> outputs;
    if constexpr (!std::is_void_v<Result>) {
      for (const auto& result : results) {
        symbolic.values.push_back(cf::symbolic_like(*result));
        cf::flatten(symbolic.values.back(), outputs);
      }
    }
    auto stash = std::make_shared<std::vector<AnyTensor>>();
    const std::size_t index = cf::append(outer, std::move(node), outputs, stash);
    auto& added = outer.nodes[index];
    std::vector<std::shared_ptr<const ConcreteFunction>> replicas;
    for (std::size_t r = 0; r < n; ++r) {
      replicas.push_back(std::make_shared<const ConcreteFunction>(
          std::move(graphs[r]), added.name + "_replica_" + std::to_string(r)));
    }
    added.functions = replicas;
    added.run = [state = s_, replicas, where = std::move(where),
                 stash](std::span<const AnyTensor> values) -> AnyTensor {
      std::vector<std::vector<AnyTensor>> outs(replicas.size());
      state->run_replicas([&](int r) {
        outs[std::size_t(r)] =
            cf::run_with(*replicas[std::size_t(r)], {}, values, where[std::size_t(r)]);
      });
      std::vector<AnyTensor> all;
      for (auto& out : outs) {
        all.insert(all.end(), std::make_move_iterator(out.begin()),
                   std::make_move_iterator(out.end()));
      }
      return cf::hand_out(std::move(all), *stash);
    };
    if constexpr (!std::is_void_v<Result>) {
      return symbolic;
    }
  }

  template <class A>
  static void check_per_replica(const A& a, int n) {
    if constexpr (detail::is_per_replica<A>) {
      if (a.size() != static_cast<std::size_t>(n)) {
        throw invalid_argument("Strategy::run: a PerReplica argument holds " +
                               std::to_string(a.size()) + " values for " + std::to_string(n) +
                               " replicas");
      }
    }
  }
  // AutoShardPolicy file (or auto_): this worker's files of `view` where that applies;
  // returns the policy in force.
  template <class View>
  AutoShardPolicy shard_by_file(View& view, AutoShardPolicy policy) const {
    const bool required = policy == AutoShardPolicy::file;
    std::string why;
    if constexpr (data::dataset<View>) {
      data::detail::FileShardReport report;
      View mine = data::detail::shard_input_files(view, s_->num_workers, s_->worker_index, report);
      const auto& counts = report.files_per_source;
      if (counts.empty()) {
        why = "the dataset reads no file list (TFRecordDataset, list_files)";
      } else if (const auto fewest = *std::ranges::min_element(counts);
                 fewest < static_cast<std::size_t>(s_->num_workers)) {
        why = "a file source lists " + std::to_string(fewest) + " file(s) for " +
              std::to_string(s_->num_workers) + " workers";
      } else {
        view = std::move(mine);
        return AutoShardPolicy::file;
      }
    } else {
      why = "the input is not a tf::data dataset";
    }
    if (required) {
      throw invalid_argument(
          "experimental_distribute_dataset: AutoShardPolicy::file cannot shard "
          "this input by file: " +
          why + "; use AutoShardPolicy::data or off");
    }
    return AutoShardPolicy::data;
  }
  template <class V, class Each>
  auto sum_of(const PerReplica<V>& value, Each&& each) const {
    if (value.size() == 0) {
      throw invalid_argument("Strategy::reduce: no replica values");
    }
    const config::DeviceScope on_first_replica(DeviceSpec::from_string(s_->device_names[0]));
    auto total = each(value.values[0]);
    for (std::size_t r = 1; r < value.size(); ++r) {
      total = total + each(value.values[r]);  // replica order: the same bits every run
    }
    return s_->num_workers > 1 ? across_workers(total) : total;
  }
  // `value` summed over the workers, as a CollectiveReduceV2 op: eager, or a node of the
  // function being traced (which then sums over the workers at each call).
  template <class T, std::size_t R>
  Tensor<T, R> across_workers(const Tensor<T, R>& value) const {
    auto sum = std::make_shared<const ops::CollectiveReduceV2::WorkersSum>(
        [state = s_](std::span<AnyTensor> values) { state->all_reduce_across_workers(values); });
    return tapeflow::detail::execute(ops::CollectiveReduceV2{ReduceOp::sum, std::move(sum)}, value);
  }
};

/// The strategy whose scope is open on this thread, else the default strategy (TensorFlow:
/// `tf.distribute.get_strategy()`).
[[nodiscard]] inline Strategy get_strategy() {
  if (auto& s = detail::scoped_strategy()) {
    return Strategy(s);
  }
  return Strategy();
}
/// Whether a strategy's scope is open on this thread (TensorFlow: `tf.distribute.has_strategy`).
[[nodiscard]] inline bool has_strategy() noexcept { return detail::scoped_strategy() != nullptr; }

}  // namespace distribute

namespace detail::fn {
/// A PerReplica argument of a tf::function is its replicas' values (Note [strategy.run in a
/// trace]): the function traces on them, and strategy.run inside gives each replica its own.
template <class E>
struct list_structure<distribute::PerReplica<E>> {
  using element = E;
  static const std::vector<E>& elements(const distribute::PerReplica<E>& x) { return x.values; }
  static distribute::PerReplica<E> from(std::vector<E> elements) {
    return distribute::PerReplica<E>{std::move(elements)};
  }
};
}  // namespace detail::fn

TAPEFLOW_END_NAMESPACE
