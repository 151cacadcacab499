// ConcreteFunction: one traced graph of a tf::function, its executor and its text form
// (TensorFlow: `ConcreteFunction`, `graph.as_graph_def()`).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/detail/graph_optimizer_options.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/detail/graph_optimization_report.hpp>
#include <tapeflow/function/detail/memory_plan_info.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace detail {
class Executor;  // function/detail/executor.hpp

/// Element `i` of a small constant as text: "2", "0.5", "true", "\"a\"".
inline std::string element_text(const AnyTensor& t, std::int64_t i) {
  const void* data = t.raw_data();
  switch (t.dtype()) {
    case DType::int32:
      return std::to_string(static_cast<const std::int32_t*>(data)[i]);
    case DType::int64:
      return std::to_string(static_cast<const std::int64_t*>(data)[i]);
    case DType::uint8:
      return std::to_string(static_cast<const std::uint8_t*>(data)[i]);
    case DType::bool_:
      return static_cast<const bool*>(data)[i] ? "true" : "false";
    case DType::float32:
      return AttrValue(static_cast<const float*>(data)[i]).to_string();
    case DType::float64:
      return AttrValue(static_cast<float>(static_cast<const double*>(data)[i])).to_string();
    case DType::string:
      return "\"" + static_cast<const std::string*>(data)[i] + "\"";
    default:
      return "?";
  }
}

/// A constant input as ConcreteFunction::to_string shows it: `1`, `[2, 3]`, `[[0, 1], [2, 2]]`.
inline std::string const_input_text(const AnyTensor& t) {
  if (!t.has_value()) {
    return "?";
  }
  const Shape& shape = t.shape();
  std::int64_t next = 0;
  auto emit = [&](auto& self, std::size_t axis) -> std::string {
    if (axis == shape.rank()) {
      return element_text(t, next++);
    }
    std::string out = "[";
    for (std::int64_t i = 0; i < shape[axis]; ++i) {
      out += (i > 0 ? ", " : "") + self(self, axis + 1);
    }
    return out + "]";
  };
  return emit(emit, 0);
}

/// One node as ConcreteFunction::to_string and autograph::to_code show it:
/// `name = Op[attr=value, ...](inputs) -> dtype shape`. `input_name(slot)` names an input;
/// `function_attrs` false leaves out the attributes naming a called function (to_code shows
/// those functions' bodies instead).
template <class InputName>
std::string node_text(const trace::GraphNode& node, InputName&& input_name,
                      bool function_attrs = true) {
  std::string out = node.name + " = " + node.op;
  // Attributes, then the inputs the op holds as members (Reshape's shape), which read as
  // attributes here. Type attributes are left out: the output's dtype shows them.
  std::string params;
  for (const auto& attr : node.attrs) {
    const auto& v = attr.second.value();
    if (std::holds_alternative<DType>(v) || std::holds_alternative<std::vector<DType>>(v) ||
        (!function_attrs && std::holds_alternative<FunctionName>(v))) {
      continue;
    }
    params += (params.empty() ? "" : ", ") + attr.first + "=" + attr.second.to_string();
  }
  for (const auto& input : node.const_inputs) {
    params += (params.empty() ? "" : ", ") + input.first + "=" + const_input_text(input.second);
  }
  if (!params.empty()) {
    out += "[" + params + "]";
  }
  out += "(";
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    out += (i ? ", " : "") + std::string(input_name(node.inputs[i]));
  }
  out += ")";
  if (node.output >= 0) {
    out += " -> " + std::string(dtype_name(node.dtype)) + node.shape.to_string();
  }
  return out;
}

}  // namespace detail

/// A traced graph and how to run it. Nodes run in program order (keeping prints and
/// assignments ordered); each value is released after its last use. The graph passes
/// (tf::config::optimizer) rewrite a copy of the graph as traced; the copy runs, except while
/// a GradientTape records the call, which then sees every op of the graph as traced.
class ConcreteFunction {
 public:
  /// Takes a finished trace, optimizes a copy (the tf::config::optimizer options now in force)
  /// and plans the execution of both (fusion groups, when each value is released); `name` is
  /// the tf::function's (FunctionOptions::name). Built by Function.
  ConcreteFunction(std::unique_ptr<detail::trace::Graph> graph, std::string name);
  ~ConcreteFunction();
  ConcreteFunction(const ConcreteFunction&) = delete;
  ConcreteFunction& operator=(const ConcreteFunction&) = delete;

  /// Runs the graph on the tensor arguments (in order) and returns its outputs.
  std::vector<AnyTensor> run(std::span<const AnyTensor> args) const;

  /// The tf::function's name (FunctionOptions::name), used in errors and graph export.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// Sizes (in nodes) of the fused elementwise chains of the graph that runs (Note [Fusion]).
  [[nodiscard]] std::vector<std::size_t> fused_chains() const;
  /// How many of them the op before them may run on its output while that is in cache
  /// (Note [Output epilogues] in backend/cpu/output_epilogue.hpp).
  [[nodiscard]] std::size_t output_epilogues() const;
  /// The memory plan of the graph that runs untaped (Note [Memory plan] in MAINTAINERS.md):
  /// recorded on its second call, after which calls place their buffers in one block.
  [[nodiscard]] detail::MemoryPlanInfo memory_plan() const;
  /// The graph's nodes as traced, in program (execution) order.
  [[nodiscard]] const std::vector<detail::trace::GraphNode>& nodes() const noexcept {
    return traced_->nodes;
  }
  /// The traced graph itself (slots, arguments, constants, outputs), as exported and shown.
  [[nodiscard]] const detail::trace::Graph& graph() const noexcept { return *traced_; }
  /// The graph that runs: the traced graph after the passes (the same graph when they changed
  /// nothing). Slots keep their numbers; folded values join `constants`.
  [[nodiscard]] const detail::trace::Graph& optimized_graph() const noexcept {
    return optimized_ ? *optimized_ : *traced_;
  }
  /// What the passes did to this function's graph.
  [[nodiscard]] const GraphOptimizationReport& optimization_report() const noexcept {
    return report_;
  }

  /// A readable listing: one line per node, "name = Op[attr=value](inputs) -> dtype shape";
  /// of the graph as traced, or with `optimized` of the graph that runs (Note [Graph passes]).
  [[nodiscard]] std::string to_string(bool optimized = false) const {
    const detail::trace::Graph* graph_ = optimized ? &optimized_graph() : traced_.get();
    std::vector<std::string> slot_names(static_cast<std::size_t>(graph_->num_slots));
    for (std::size_t i = 0; i < graph_->arg_slots.size(); ++i) {
      slot_names[static_cast<std::size_t>(graph_->arg_slots[i])] = "arg" + std::to_string(i);
    }
    for (const auto& [slot, value] : graph_->constants) {
      slot_names[static_cast<std::size_t>(slot)] = "Const" + std::to_string(slot);
    }
    std::string out = "function " + name_ + "(";
    for (std::size_t i = 0; i < graph_->arg_slots.size(); ++i) {
      out += (i ? ", " : "") + std::string("arg") + std::to_string(i) + ": " +
             std::string(dtype_name(graph_->arg_dtypes()[i])) + graph_->arg_shapes()[i].to_string();
    }
    out += ")\n";
    for (const auto& node : graph_->nodes) {
      if (node.output >= 0) {
        slot_names[static_cast<std::size_t>(node.output)] = node.name;
      }
      out += "  " + detail::node_text(node, [&](std::int32_t slot) -> const std::string& {
               return slot_names[static_cast<std::size_t>(slot)];
             });
      out += "\n";
    }
    out += "  return (";
    for (std::size_t i = 0; i < graph_->output_slots.size(); ++i) {
      out += (i ? ", " : "") + slot_names[static_cast<std::size_t>(graph_->output_slots[i])];
    }
    out += ")\n";
    return out;
  }

 private:
  std::unique_ptr<detail::trace::Graph> traced_;
  std::unique_ptr<detail::trace::Graph> optimized_;  // null: the passes changed nothing
  std::string name_;
  GraphOptimizationReport report_;
  // Behind pointers, so that this header need not parse the executor (see the end).
  std::unique_ptr<detail::Executor> traced_executor_;
  std::unique_ptr<detail::Executor> optimized_executor_;  // null: the passes changed nothing

  [[nodiscard]] const detail::Executor& executor_that_runs() const noexcept {
    return optimized_executor_ ? *optimized_executor_ : *traced_executor_;
  }
};

TAPEFLOW_END_NAMESPACE

// What builds and runs the graph: with TAPEFLOW_PRECOMPILED it comes compiled from
// tapeflow::instantiations, and programs parse neither the executor nor the graph passes.
#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/function/detail/concrete_function_impl.hpp>
#endif
