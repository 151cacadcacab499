// The trace observer: who listens to tf::function tracing and graph execution.
//
// Note [Trace observer]: tf::summary::trace_on installs one observer; the tracer reports each
// new ConcreteFunction and the executor reports the time each node (or fused chain) took.
// Nobody listens almost always, so the executor pays one atomic load per call and one
// predictable branch per node. The observer copies what it needs: the reported function may
// die right after the call.
// IWYU pragma: private, include <tapeflow/function/function.hpp>
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

class ConcreteFunction;

namespace detail::trace {

class Graph;  // core/detail/trace_graph.hpp

/// Receives tracing and execution reports; implementations must be thread-safe.
class Observer {
 public:
  Observer() = default;
  Observer(const Observer&) = delete;
  Observer& operator=(const Observer&) = delete;
  virtual ~Observer() = default;
  /// A tf::function traced a new graph.
  virtual void traced(const ConcreteFunction& fn) = 0;
  /// The executor ran nodes [begin, end) of `graph` (one node, or a fused chain), the graph of
  /// `fn` that runs (its traced or optimized graph), from `start_ns` to `end_ns` (steady clock,
  /// see now_ns()).
  virtual void ran(const ConcreteFunction& fn, const Graph& graph, std::size_t begin,
                   std::size_t end, std::int64_t start_ns, std::int64_t end_ns) = 0;
  /// One whole call of `fn` ran from `start_ns` to `end_ns`.
  virtual void called(const ConcreteFunction& fn, std::int64_t start_ns, std::int64_t end_ns) = 0;
};

/// The installed observer, or null. Whoever installs one keeps it alive until it is removed
/// and no call that loaded it can still be running (tf::summary never destroys its own).
inline std::atomic<Observer*>& observer() noexcept {
  static std::atomic<Observer*> installed{nullptr};
  return installed;
}

/// Steady-clock nanoseconds, the time base of Observer reports.
inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace detail::trace
TAPEFLOW_END_NAMESPACE
