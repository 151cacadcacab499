// tf::config::optimizer: which graph passes run on traced functions (TensorFlow:
// `tf.config.optimizer.set_experimental_options` / `get_experimental_options`). Note [Graph
// passes] in function/detail/graph_passes.hpp describes the passes.
#pragma once

#include <mutex>

#include <tapeflow/core/detail/graph_optimizer_options.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace config::optimizer {

/// Sets the passes for functions traced from now on, e.g.
/// `tf::config::optimizer::set_experimental_options({.constant_folding = false})`.
inline void set_experimental_options(const Options& options) {
  auto& s = detail::graph_optimizer_state();
  std::lock_guard lock(s.mutex);
  s.options = options;
}

/// The passes in force.
inline Options get_experimental_options() { return detail::graph_optimizer_options(); }

}  // namespace config::optimizer
TAPEFLOW_END_NAMESPACE
