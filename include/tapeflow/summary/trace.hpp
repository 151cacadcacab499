// Graph and profile traces (TensorFlow: `tf.summary.trace_on`, `trace_export`, `trace_off`).
//
//     tf::summary::trace_on({.graph = true, .profiler = true});
//     ...  // call tf::function<>s: new traces are recorded, graph runs are timed
//     { auto scope = writer.as_default();
//       tf::summary::trace_export("model_trace", 0, {.profiler_outdir = logdir}); }
//
// What is written:
// - graphs: a summary (tag = name) holding a RunMetadata whose function_graphs carry the
//   GraphDef of every function traced while tracing was on (Graphs tab); with the profiler
//   the RunMetadata also holds step_stats (per-node compute times in the Graphs tab);
// - profile: `<profiler_outdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb`, an
//   XSpace that TensorBoard's Profile plugin (tensorboard_plugin_profile) opens in its trace
//   viewer, with one event per executed node (fused elementwise chains as one event) and per
//   function call, and an empty `events.out.tfevents.<T>.<host>.profile-empty` beside
//   `plugins/` so the directory counts as a run (docs/formats.md 8.3).
// Only tf::function graph execution is timed (Note [Trace observer]); eager ops are not.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/detail/observer.hpp>
#include <tapeflow/function/graph.hpp>
#include <tapeflow/summary/detail/encode.hpp>
#include <tapeflow/summary/detail/profile.hpp>
#include <tapeflow/summary/graph.hpp>
#include <tapeflow/summary/writer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// Options of trace_on (TensorFlow's keyword arguments).
struct TraceOptions {
  /// Record the graphs of tf::functions traced while tracing is on.
  bool graph = true;
  /// Record each graph as it runs, after the graph passes, instead of as traced.
  bool optimized_graph = false;
  /// Time every node the graph executor runs.
  bool profiler = false;
  /// Where trace_export writes the profile, unless it names a directory itself.
  std::string profiler_outdir{};
};

/// Options of trace_export.
struct TraceExportOptions {
  /// Where to write the profile (default: trace_on's, else the default writer's logdir).
  std::string profiler_outdir{};
};

namespace detail {

/// The observer trace_on installs (Note [Trace observer]).
class TraceRecorder final : public tapeflow::detail::trace::Observer {
 public:
  void start(const TraceOptions& options) {
    std::lock_guard lock(mutex_);
    options_ = options;
    graphs_.clear();
    events_.clear();
    steady_origin_ = tapeflow::detail::trace::now_ns();
    wall_origin_ = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
    on_ = true;
    graphing_ = options.graph;
    profiling_ = options.profiler;
  }
  void stop() {
    std::lock_guard lock(mutex_);
    on_ = false;
    graphing_ = false;
    profiling_ = false;
  }

  void traced(const ConcreteFunction& fn) override {
    if (!recording_graphs()) {
      return;
    }
    // outside the lock: conversion is the slow part
    std::string def = summary::graph_def(fn, {.optimized = options().optimized_graph});
    std::lock_guard lock(mutex_);
    if (on_ && options_.graph) {
      graphs_.push_back(std::move(def));
    }
  }
  void ran(const ConcreteFunction&, const tapeflow::detail::trace::Graph& graph, std::size_t begin,
           std::size_t end, std::int64_t start_ns, std::int64_t end_ns) override {
    if (!recording_profile()) {
      return;
    }
    const auto& nodes = graph.nodes;
    ProfileEvent e;
    e.name = nodes[begin].name;
    e.op = nodes[begin].op;
    if (end - begin > 1) {  // a fused chain (Note [Fusion]) runs as one pass
      e.op = "_FusedElementwise";
      for (std::size_t k = begin + 1; k < end; ++k) {
        e.name += "+" + nodes[k].name;
      }
    }
    add(std::move(e), start_ns, end_ns);
  }
  void called(const ConcreteFunction& fn, std::int64_t start_ns, std::int64_t end_ns) override {
    if (!recording_profile()) {
      return;
    }
    ProfileEvent e;
    e.name = fn.name();
    add(std::move(e), start_ns, end_ns);
  }

  [[nodiscard]] bool on() const {
    std::lock_guard lock(mutex_);
    return on_;
  }
  TraceOptions options() const {
    std::lock_guard lock(mutex_);
    return options_;
  }
  /// Takes the recorded graphs and events and stops recording.
  void take(std::vector<std::string>& graphs, std::vector<ProfileEvent>& events,
            std::int64_t& start_ns) {
    std::lock_guard lock(mutex_);
    graphs.swap(graphs_);
    events.swap(events_);
    start_ns = wall_origin_;
    on_ = false;
    graphing_ = false;
    profiling_ = false;
    graphs_.clear();
    events_.clear();
  }

 private:
  bool recording_graphs() const { return graphing_.load(std::memory_order_relaxed); }
  bool recording_profile() const { return profiling_.load(std::memory_order_relaxed); }
  static std::int32_t thread_number() {
    static std::atomic<std::int32_t> next{1};
    thread_local const std::int32_t mine = next.fetch_add(1);
    return mine;
  }
  void add(ProfileEvent e, std::int64_t start_ns, std::int64_t end_ns) {
    e.thread = thread_number();
    std::lock_guard lock(mutex_);
    if (!on_ || !options_.profiler) {
      return;
    }
    e.start_ns = wall_origin_ + (start_ns - steady_origin_);
    e.end_ns = wall_origin_ + (end_ns - steady_origin_);
    events_.push_back(std::move(e));
  }

  mutable std::mutex mutex_;
  bool on_ = false;
  std::atomic<bool> graphing_{false};
  std::atomic<bool> profiling_{false};
  TraceOptions options_;
  std::vector<std::string> graphs_;
  std::vector<ProfileEvent> events_;
  std::int64_t steady_origin_ = 0;
  std::int64_t wall_origin_ = 0;
};

/// The process's recorder; never destroyed, so a graph running on another thread while the
/// program exits never sees a dead observer.
inline TraceRecorder& trace_recorder() {
  static auto* recorder = new TraceRecorder();  // NOLINT: intentionally leaked
  return *recorder;
}

/// `YYYY_MM_DD_HH_MM_SS` in local time, the profile plugin's run directory name.
inline std::string profile_run_name(std::int64_t wall_ns) {
  const std::time_t t = static_cast<std::time_t>(wall_ns / 1000000000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y_%m_%d_%H_%M_%S", &tm);
  return buf;
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    throw data_loss("tf::summary::trace_export: cannot write '" + path.string() + "'");
  }
}

/// Writes the profile files under `outdir`; returns the .xplane.pb path.
inline std::filesystem::path write_profile(const std::filesystem::path& outdir,
                                           const std::vector<ProfileEvent>& events,
                                           std::int64_t start_ns, std::int64_t stop_ns) {
  std::string host = host_name();
  for (char& c : host) {
    c = c == ':' ? '_' : c;
  }
  const auto run_dir = outdir / "plugins" / "profile" / profile_run_name(stop_ns);
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec) {
    throw not_found("tf::summary::trace_export: cannot create '" + run_dir.string() +
                    "': " + ec.message());
  }
  const auto path = run_dir / (host + ".xplane.pb");
  write_file(path, xspace(events, host, start_ns, stop_ns));
  // An events file holding only the version record makes `outdir` a TensorBoard run.
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%010lld", static_cast<long long>(stop_ns / 1000000000));
  std::string record;
  append_record(record, version_event(static_cast<double>(stop_ns / 1000000000)));
  write_file(
      outdir / ("events.out.tfevents." + std::string(stamp) + "." + host_name() + ".profile-empty"),
      record);
  return path;
}

}  // namespace detail

/// Starts recording the graphs of newly traced tf::functions and, with `profiler`, the
/// execution time of every graph node (TensorFlow: `tf.summary.trace_on`). Restarting
/// discards what was recorded.
inline void trace_on(const TraceOptions& options = {}) {
  detail::trace_recorder().start(options);
  tapeflow::detail::trace::observer().store(&detail::trace_recorder(), std::memory_order_release);
}

/// Stops and discards the trace (TensorFlow: `tf.summary.trace_off`).
inline void trace_off() {
  detail::trace_recorder().stop();
  tapeflow::detail::trace::observer().store(nullptr, std::memory_order_release);
}

/// Writes what was recorded since trace_on and stops tracing (TensorFlow:
/// `tf.summary.trace_export(name, step, profiler_outdir)`): the graphs as a summary named
/// `name` to the default writer, and with the profiler the XSpace profile under
/// `profiler_outdir`. Returns false (and writes no summary) without a default writer.
inline bool trace_export(std::string_view name, std::optional<std::int64_t> step = {},
                         const TraceExportOptions& options = {}) {
  auto& recorder = detail::trace_recorder();
  if (!recorder.on()) {
    throw failed_precondition(
        "tf::summary::trace_export: tracing is off (call tf::summary::trace_on first)");
  }
  const TraceOptions trace_options = recorder.options();
  std::vector<std::string> graphs;
  std::vector<detail::ProfileEvent> events;
  std::int64_t start_ns = 0;
  recorder.take(graphs, events, start_ns);
  tapeflow::detail::trace::observer().store(nullptr, std::memory_order_release);
  const std::int64_t stop_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  detail::WriterState* writer = detail::active_writer();
  if (trace_options.profiler) {
    std::filesystem::path outdir = !options.profiler_outdir.empty()
                                       ? std::filesystem::path(options.profiler_outdir)
                                   : !trace_options.profiler_outdir.empty()
                                       ? std::filesystem::path(trace_options.profiler_outdir)
                                   : writer != nullptr ? writer->logdir()
                                                       : std::filesystem::path();
    if (outdir.empty()) {
      throw invalid_argument(
          "tf::summary::trace_export: the profiler is on but no profiler_outdir was given and "
          "no default writer is set");
    }
    detail::write_profile(outdir, events, start_ns, stop_ns);
  }
  if (writer == nullptr) {
    return false;
  }
  // RunMetadata{step_stats (profiler only), function_graphs[{pre_optimization_graph}]}.
  std::string run_metadata;
  detail::wire::Writer rm(run_metadata);
  if (trace_options.profiler) {
    rm.bytes_field(1, detail::step_stats(events));
  }
  for (const auto& g : graphs) {
    rm.message_field(4, [&](detail::wire::Writer& fg) { fg.bytes_field(2, g); });
  }
  detail::Item item;
  item.kind = detail::Item::Kind::value;
  item.step = detail::resolve_step(step, "trace_export");
  item.wall_time = detail::wall_time_now();
  const std::string strings[1] = {run_metadata};
  item.bytes = detail::summary_value(
      name, [&](detail::wire::Writer& t) { detail::write_tensor_strings(t, {}, strings); },
      trace_options.profiler ? "graph_run_metadata" : "graph_run_metadata_graph", "1");
  writer->push(std::move(item));
  return true;
}

}  // namespace summary
TAPEFLOW_END_NAMESPACE
