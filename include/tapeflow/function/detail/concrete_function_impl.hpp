// IWYU pragma: private, include <tapeflow/function/function.hpp>
// ConcreteFunction's construction and calls: the graph passes and the executor behind it.
// Header-only programs get them through function/graph.hpp; with TAPEFLOW_PRECOMPILED they
// are compiled once in tapeflow::instantiations (src/instantiations/concrete_function.cpp),
// so programs parse neither (MAINTAINERS.md, "tapeflow::instantiations").
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/graph_optimizer_options.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/detail/executor.hpp>
#include <tapeflow/function/detail/graph_passes.hpp>
#include <tapeflow/function/detail/observer.hpp>
#include <tapeflow/function/graph.hpp>
#include <tapeflow/ops/detail/tape_record.hpp>

// `inline` where a header defines them; the compiled source defines it empty, so that its
// definitions are the program's.
#ifndef TAPEFLOW_CONCRETE_FUNCTION_INLINE
#define TAPEFLOW_CONCRETE_FUNCTION_INLINE inline
#endif

TAPEFLOW_BEGIN_NAMESPACE

TAPEFLOW_CONCRETE_FUNCTION_INLINE ConcreteFunction::ConcreteFunction(
    std::unique_ptr<detail::trace::Graph> graph, std::string name)
    : traced_(std::move(graph)), name_(std::move(name)) {
  const auto options = detail::graph_optimizer_options();
  const bool fuse = options.remapping && !options.disable_meta_optimizer;
  const bool plan_memory = options.memory_optimization && !options.disable_meta_optimizer;
  auto optimized = std::make_unique<detail::trace::Graph>(*traced_);
  std::vector<std::int32_t> captured;  // by the sub-graphs of control-flow nodes
  for (const auto& node : traced_->nodes) {
    for (const auto& f : node.functions) {
      captured.insert(captured.end(), f->graph().captured.begin(), f->graph().captured.end());
    }
  }
  report_ = detail::optimize_graph(*optimized, options, std::move(captured));
  if (report_.changed()) {
    optimized_ = std::move(optimized);
    optimized_executor_ = std::make_unique<detail::Executor>(*optimized_, fuse, plan_memory);
  }
  // Fused and planned only when it runs untaped.
  traced_executor_ =
      std::make_unique<detail::Executor>(*traced_, fuse && !optimized_, plan_memory && !optimized_);
}

TAPEFLOW_CONCRETE_FUNCTION_INLINE ConcreteFunction::~ConcreteFunction() = default;

TAPEFLOW_CONCRETE_FUNCTION_INLINE std::vector<AnyTensor> ConcreteFunction::run(
    std::span<const AnyTensor> args) const {
  detail::trace::Suspend eager;  // nodes run eagerly, even when called from a trace
  if (args.size() != traced_->arg_slots.size()) {
    throw invalid_argument("ConcreteFunction '" + name_ + "': expects " +
                           std::to_string(traced_->arg_slots.size()) + " tensor arguments, got " +
                           std::to_string(args.size()));
  }
  // A GradientTape outside records ops as they run through detail::execute: it gets the graph
  // as traced, node by node (fused chains bypass execute), like the eager code it stands for.
  const bool taped = !detail::tape::active().empty();
  const detail::Executor& executor = taped ? *traced_executor_ : executor_that_runs();
  // Note [Trace observer]: null unless tf::summary::trace_on is profiling.
  detail::trace::Observer* const observer =
      detail::trace::observer().load(std::memory_order_acquire);
  const std::int64_t call_start = observer != nullptr ? detail::trace::now_ns() : 0;
  auto outputs = executor.run(*this, args, !taped, observer);
  if (observer != nullptr) {
    observer->called(*this, call_start, detail::trace::now_ns());
  }
  return outputs;
}

TAPEFLOW_CONCRETE_FUNCTION_INLINE std::vector<std::size_t> ConcreteFunction::fused_chains() const {
  return executor_that_runs().fused_chains();
}

TAPEFLOW_CONCRETE_FUNCTION_INLINE std::size_t ConcreteFunction::output_epilogues() const {
  return executor_that_runs().output_epilogues();
}

TAPEFLOW_CONCRETE_FUNCTION_INLINE detail::MemoryPlanInfo ConcreteFunction::memory_plan() const {
  return executor_that_runs().memory_plan();
}

TAPEFLOW_END_NAMESPACE
