// tf::autograph::to_code: a traced function as readable pseudo-code (TensorFlow:
// `tf.autograph.to_code`, which shows the Python AutoGraph generated).
//
// tapeflow has no source transformation to show: C++ `if`/`for` run while tracing and tf::cond
// and tf::while_loop build the control flow (control_flow.hpp). What AutoGraph's listing is for
// -- seeing which ops and which branches the graph holds -- is the traced graph itself, so this
// prints it: one line per node as ConcreteFunction::to_string writes it (detail::node_text),
// small constants inline, and under each If/StatelessIf/While node the functions it calls
// (branches, loop condition and body), indented, as the node carries them
// (GraphNode::functions). A branch's arguments are the enclosing values it captured, named as
// outside; a loop's leading arguments are its loop variables, named after the node's results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/function/graph.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace autograph {

/// Options of to_code.
struct ToCodeOptions {
  /// Constants with at most this many elements are written inline (`Greater(arg0, 0)`);
  /// larger ones are named and declared at the top of their function.
  std::int64_t inline_constants = 8;
  /// Spaces per nesting level.
  int indent = 2;
};

namespace detail {

/// Appends `fn`'s body at `depth`; `names` (in: the argument names) names every value slot.
inline void body_code(std::string& out, const tapeflow::detail::trace::Graph& g,
                      std::vector<std::string> names, int depth, const ToCodeOptions& options) {
  const std::string pad(static_cast<std::size_t>(depth * options.indent), ' ');
  names.resize(static_cast<std::size_t>(g.num_slots));
  for (const auto& [slot, value] : g.constants) {
    auto& name = names[static_cast<std::size_t>(slot)];
    if (value.has_value() && value.num_elements() <= options.inline_constants) {
      name = tapeflow::detail::const_input_text(value);
    } else {
      name = "Const" + std::to_string(slot);
      out += pad + name + " = Const() -> " + std::string(dtype_name(value.dtype())) +
             value.shape().to_string() + "\n";
    }
  }
  auto name_of = [&](std::int32_t slot) -> const std::string& {
    return names[static_cast<std::size_t>(slot)];
  };
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    const auto& node = g.nodes[n];
    if (node.output >= 0) {
      names[static_cast<std::size_t>(node.output)] = node.name;
    }
    out += pad + tapeflow::detail::node_text(node, name_of, node.functions.empty());
    if (node.functions.empty()) {
      out += "\n";
      continue;
    }
    out += ":\n";
    // The node's results: its own output, then the `index` of each *Output node reading it.
    std::vector<std::string> results;
    if (node.output >= 0) {
      results.push_back(node.name);
      for (std::size_t k = n + 1; k < g.nodes.size(); ++k) {
        const auto& extract = g.nodes[k];
        if (extract.inputs.size() == 1 && extract.inputs[0] == node.output &&
            extract.op.ends_with("Output")) {
          results.push_back(extract.name);
        }
      }
    }
    std::vector<std::string> labels;
    for (const auto& attr : node.attrs) {
      if (std::holds_alternative<FunctionName>(attr.second.value())) {
        labels.push_back(attr.first);
      }
    }
    for (std::size_t f = 0; f < node.functions.size(); ++f) {
      const auto& sub = node.functions[f]->graph();
      const std::size_t leading = sub.arg_slots.size() - sub.captured.size();
      std::vector<std::string> args(static_cast<std::size_t>(sub.num_slots));
      std::string header;
      for (std::size_t a = 0; a < sub.arg_slots.size(); ++a) {
        std::string name =
            a < leading ? (a < results.size() ? results[a] : node.name + "_" + std::to_string(a))
                        : name_of(sub.captured[a - leading]);
        header += (a > 0 ? ", " : "") + name;
        args[static_cast<std::size_t>(sub.arg_slots[a])] = std::move(name);
      }
      const std::string label = f < labels.size() ? labels[f] : "function";
      out += pad + std::string(static_cast<std::size_t>(options.indent), ' ') + label + " " +
             node.functions[f]->name() + "(" + header + "):\n";
      body_code(out, sub, std::move(args), depth + 2, options);
    }
  }
  std::string ret;
  for (std::size_t i = 0; i < g.output_slots.size(); ++i) {
    ret += (i > 0 ? ", " : "") + name_of(g.output_slots[i]);
  }
  out += pad + "return" + (ret.empty() ? "" : " " + ret) + "\n";
}

}  // namespace detail

/// The traced graph of `fn` as pseudo-code (TensorFlow: `tf.autograph.to_code`): a `def` line
/// with the arguments' dtypes and shapes, one line per node
/// (`name = Op[attrs](inputs) -> dtype shape`), and under each control-flow node the functions
/// it calls, indented:
///
///     def square_if_positive(arg0: int32()):
///       Greater = Greater(arg0, 0) -> bool()
///       StatelessIf = StatelessIf(Greater, arg0) -> int32():
///         then_branch StatelessIf_true(arg0):
///           Mul = Mul(arg0, arg0) -> int32()
///           return Mul
///         else_branch StatelessIf_false(arg0):
///           return 0
///       return StatelessIf
inline std::string to_code(const ConcreteFunction& fn, const ToCodeOptions& options = {}) {
  const auto& g = fn.graph();
  std::vector<std::string> names(static_cast<std::size_t>(g.num_slots));
  std::string out = "def " + (fn.name().empty() ? std::string("function") : fn.name()) + "(";
  for (std::size_t i = 0; i < g.arg_slots.size(); ++i) {
    std::string name = "arg" + std::to_string(i);
    out += (i > 0 ? ", " : "") + name + ": " + std::string(dtype_name(g.arg_dtypes()[i])) +
           g.arg_shapes()[i].to_string();
    names[static_cast<std::size_t>(g.arg_slots[i])] = std::move(name);
  }
  out += "):\n";
  detail::body_code(out, g, std::move(names), 1, options);
  return out;
}

/// Every graph `f` traced so far, in trace order, as to_code writes one, separated by a blank
/// line. Throws failed_precondition when `f` has not traced yet (call it once first: unlike
/// AutoGraph, tapeflow shows the graph a call built, not a rewritten source).
template <class F>
std::string to_code(const Function<F>& f, const ToCodeOptions& options = {}) {
  const auto traced = f.concrete_functions();
  if (traced.empty()) {
    throw failed_precondition(
        "tf::autograph::to_code: the tf::function has not been traced; call it once first");
  }
  std::string out;
  for (std::size_t i = 0; i < traced.size(); ++i) {
    out += (i > 0 ? "\n" : "") + to_code(*traced[i], options);
  }
  return out;
}

}  // namespace autograph
TAPEFLOW_END_NAMESPACE
