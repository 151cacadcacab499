// IWYU pragma: private, include <tapeflow/config.hpp>
// The switches of the traced-graph optimizer, process-wide like TensorFlow's
// `tf.config.optimizer.set_experimental_options`. They live below both `config` (which sets
// them) and `function` (which reads them when a ConcreteFunction is built), since neither may
// include the other. Note [Graph passes] in function/detail/graph_passes.hpp says what each does.
#pragma once

#include <mutex>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace config::optimizer {

/// Which graph passes run on a traced function (`tf.config.optimizer`'s experimental options,
/// with TensorFlow's names). A function traced while a pass is off keeps its graph unchanged
/// by that pass; changing the options does not retrace functions already traced.
struct Options {
  /// Evaluates, at trace time, nodes whose inputs are all constants (results up to 10 MiB).
  bool constant_folding = true;
  /// Common-subexpression elimination and algebraic simplification (x * 1, x - 0, x / 1,
  /// transpose of a transpose, reshape of a reshape, reshape or cast to what the value already
  /// is).
  bool arithmetic_optimization = true;
  /// Removes Identity nodes.
  bool dependency_optimization = true;
  /// Runs chains of elementwise ops as one fused pass over cache-sized blocks, and folds a Pad
  /// of rows and columns into the VALID convolutions that read it (EXPLICIT padding).
  bool remapping = true;
  /// Places the buffers a call allocates in one block per function, at offsets planned from
  /// the first call's buffers and when each was released (TensorFlow's RewriterConfig names
  /// its memory rewrites so; Note [Memory plan] in MAINTAINERS.md).
  bool memory_optimization = true;
  /// Keeps nodes that no output, side effect or variable update needs.
  bool disable_model_pruning = false;
  /// Turns every pass above off.
  bool disable_meta_optimizer = false;

  friend bool operator==(const Options&, const Options&) = default;
};

}  // namespace config::optimizer

namespace detail {
struct GraphOptimizerState {
  std::mutex mutex;
  config::optimizer::Options options;
};
inline GraphOptimizerState& graph_optimizer_state() {
  static GraphOptimizerState state;
  return state;
}
/// The options in force now (a copy: a trace reads them once).
inline config::optimizer::Options graph_optimizer_options() {
  auto& s = graph_optimizer_state();
  std::lock_guard lock(s.mutex);
  return s.options;
}
}  // namespace detail

TAPEFLOW_END_NAMESPACE
