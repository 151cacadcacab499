// ConcreteFunction: one traced graph of a tf::function, its executor and its text form
// (TensorFlow: `ConcreteFunction`, `graph.as_graph_def()`).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// A traced graph and how to run it. Nodes run in program order (keeping prints and
/// assignments ordered); each value is released after its last use.
class ConcreteFunction {
 public:
  ConcreteFunction(std::unique_ptr<detail::trace::Graph> graph, std::string name)
      : graph_(std::move(graph)), name_(std::move(name)) {
    // Last node reading each slot; outputs and constants are never released.
    last_use_.assign(static_cast<std::size_t>(graph_->num_slots), -1);
    for (std::size_t i = 0; i < graph_->nodes.size(); ++i) {
      for (auto slot : graph_->nodes[i].inputs) {
        last_use_[static_cast<std::size_t>(slot)] = static_cast<std::int32_t>(i);
      }
    }
    for (auto slot : graph_->output_slots) {
      last_use_[static_cast<std::size_t>(slot)] = -1;
    }
    for (const auto& [slot, value] : graph_->constants) {
      last_use_[static_cast<std::size_t>(slot)] = -1;
    }
    releases_.resize(graph_->nodes.size());
    for (std::size_t s = 0; s < last_use_.size(); ++s) {
      if (last_use_[s] >= 0) {
        releases_[static_cast<std::size_t>(last_use_[s])].push_back(static_cast<std::int32_t>(s));
      }
    }
  }

  /// Runs the graph on the tensor arguments (in order) and returns its outputs.
  std::vector<AnyTensor> run(std::span<const AnyTensor> args) const {
    detail::trace::Suspend eager;  // nodes run eagerly, even when called from a trace
    if (args.size() != graph_->arg_slots.size()) {
      throw invalid_argument("ConcreteFunction '" + name_ + "': expects " +
                             std::to_string(graph_->arg_slots.size()) + " tensor arguments, got " +
                             std::to_string(args.size()));
    }
    std::vector<AnyTensor> values(static_cast<std::size_t>(graph_->num_slots));
    for (const auto& [slot, value] : graph_->constants) {
      values[static_cast<std::size_t>(slot)] = value;
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
      values[static_cast<std::size_t>(graph_->arg_slots[i])] = args[i];
    }
    std::vector<AnyTensor> inputs;
    for (std::size_t n = 0; n < graph_->nodes.size(); ++n) {
      const auto& node = graph_->nodes[n];
      inputs.clear();
      for (auto slot : node.inputs) {
        inputs.push_back(values[static_cast<std::size_t>(slot)]);
      }
      AnyTensor out = node.run(inputs);
      if (node.output >= 0) {
        values[static_cast<std::size_t>(node.output)] = std::move(out);
      }
      for (auto slot : releases_[n]) {
        values[static_cast<std::size_t>(slot)] = AnyTensor{};
      }
    }
    std::vector<AnyTensor> outputs;
    outputs.reserve(graph_->output_slots.size());
    for (auto slot : graph_->output_slots) {
      outputs.push_back(values[static_cast<std::size_t>(slot)]);
    }
    return outputs;
  }

  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::vector<detail::trace::GraphNode>& nodes() const noexcept {
    return graph_->nodes;
  }
  [[nodiscard]] const detail::trace::Graph& graph() const noexcept { return *graph_; }

  /// A readable listing: one line per node, "name = Op[attr=value](inputs) -> dtype shape".
  [[nodiscard]] std::string to_string() const {
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
      out += "  " + node.name + " = " + node.op;
      if (!node.attrs.empty()) {
        out += "[";
        for (std::size_t i = 0; i < node.attrs.size(); ++i) {
          out += (i ? ", " : "") + node.attrs[i].first + "=" + node.attrs[i].second;
        }
        out += "]";
      }
      out += "(";
      for (std::size_t i = 0; i < node.inputs.size(); ++i) {
        out += (i ? ", " : "") + slot_names[static_cast<std::size_t>(node.inputs[i])];
      }
      out += ")";
      if (node.output >= 0) {
        out += " -> " + std::string(dtype_name(node.dtype)) + node.shape.to_string();
      }
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
  std::unique_ptr<detail::trace::Graph> graph_;
  std::string name_;
  std::vector<std::int32_t> last_use_;
  std::vector<std::vector<std::int32_t>> releases_;
};

TAPEFLOW_END_NAMESPACE
