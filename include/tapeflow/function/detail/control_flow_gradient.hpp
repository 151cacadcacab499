// Gradients through a traced tf::cond / tf::while_loop for a GradientTape opened INSIDE the
// traced body (Note [Control-flow gradients]).
//
// Note [Control-flow gradients]: a tape inside a traced body records ops symbolically, but a
// cond or while node runs its sub-graphs only at run time, so the tape cannot see through it
// op by op. Instead, when a tape wants one of the node's differentiable inputs (captured outer
// tensors, loop variables, variables read inside), one tape node is recorded for the whole
// cond/while (plus alias nodes for results 1..n-1, so the tape's `needed` pass sees every
// result). Its backward, which runs while the body is traced (inside tape.gradient), appends an
// "IfGrad"/"WhileGrad" graph node: at run time it re-runs the branch taken / replays every loop
// iteration (the forward While node keeps each iteration's loop values when a gradient was
// recorded) eagerly under a fresh GradientTape and computes the vector-Jacobian product with
// the upstream gradients. Each gradient comes out of the node like the node's results do
// (stash + extract nodes); inputs a branch taken does not depend on get zeros, as in TF.
// IWYU pragma: private, include <tapeflow/function/control_flow.hpp>
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/visit_rank.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/tape_record.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::cf {

inline bool is_float_dtype(DType d) noexcept { return d == DType::float32 || d == DType::float64; }

// The helpers below that dispatch over dtype x rank (each case instantiates ops, their tape
// nodes and gradients) are templates on a defaulted `Deferred` parameter only so that they
// compile when a program uses tf::cond or tf::while_loop, not in every program that includes
// the umbrella (detail/deferred.hpp; MAINTAINERS.md, "Compile time").

/// Calls `f.template operator()<T, R>()` for a float/double dtype of rank 0 to 4.
template <class F>
decltype(auto) with_float_type(DType dtype, std::size_t rank, F&& f) {
  auto by_rank = [&]<class T>() -> decltype(auto) {
    return visit_rank<0, 4>(
        rank, "GradientTape inside tf::function: a gradient through tf::cond / tf::while_loop",
        [&]<std::size_t R>() -> decltype(auto) { return f.template operator()<T, R>(); });
  };
  if (dtype == DType::float32) {
    return by_rank.template operator()<float>();
  }
  if (dtype != DType::float64) {
    throw unimplemented(
        "GradientTape inside tf::function: gradients through tf::cond / tf::while_loop support "
        "float32 and float64 tensors, not " +
        std::string(dtype_name(dtype)));
  }
  return by_rank.template operator()<double>();
}

template <std::size_t R>
std::array<std::int64_t, R> dims_of(const Shape& shape) {
  std::array<std::int64_t, R> dims{};
  for (std::size_t i = 0; i < R; ++i) {
    dims[i] = shape[i];
  }
  return dims;
}

/// The same value under a new tensor id: a watched copy whose gradient stays apart from other
/// uses of the value (a loop variable that is also captured, a value read twice).
template <class Deferred = void>
AnyTensor fresh(const AnyTensor& v) {
  return with_float_type(v.dtype(), v.rank(), [&]<class T, std::size_t R>() {
    Tensor<T, R> t = v.unchecked_as<T, R>();
    tensor_access::set_id(t, new_tensor_id());
    return AnyTensor(t);
  });
}
template <class Deferred = void>
AnyTensor zeros_of(DType dtype, const Shape& shape) {
  return with_float_type(dtype, shape.rank(), [&]<class T, std::size_t R>() {
    return AnyTensor(zeros<T>(dims_of<R>(shape)));
  });
}
template <class Deferred = void>
AnyTensor add_any(const AnyTensor& a, const AnyTensor& b) {
  if (!a.engaged()) {
    return b;
  }
  if (!b.engaged()) {
    return a;
  }
  return with_float_type(a.dtype(), a.rank(), [&]<class T, std::size_t R>() {
    return AnyTensor(a.unchecked_as<T, R>() + b.unchecked_as<T, R>());
  });
}
template <class Deferred = void>
AnyTensor symbolic_of(DType dtype, const Shape& shape) {
  return with_float_type(dtype, shape.rank(), [&]<class T, std::size_t R>() {
    return AnyTensor(tensor_access::symbolic<T, R>(dims_of<R>(shape)));
  });
}

/// d(sum_k <outputs_k, upstream_k>) / d(ids), with `run` computing the outputs while a fresh
/// tape watches `watched`. Unconnected ids give disengaged tensors. (`D` is double; a template
/// parameter so that the sum below is not compiled where eager_vjp is not.)
template <class Run, class D = double>
std::vector<AnyTensor> eager_vjp(Run&& run, const std::vector<AnyTensor>& watched,
                                 const std::vector<std::int64_t>& ids,
                                 const std::vector<AnyTensor>& upstream) {
  GradientTape tape;
  for (const auto& w : watched) {
    tape.watch(w);
  }
  const std::vector<AnyTensor> outs = run();
  std::optional<Tensor<D, 0>> target;
  for (std::size_t k = 0; k < outs.size() && k < upstream.size(); ++k) {
    if (!upstream[k].engaged() || !is_float_dtype(outs[k].dtype())) {
      continue;
    }
    Tensor<D, 0> term =
        with_float_type(outs[k].dtype(), outs[k].rank(), [&]<class T, std::size_t R>() {
          return cast<D>(
              reduce_sum(outs[k].unchecked_as<T, R>() * upstream[k].unchecked_as<T, R>()));
        });
    target = target ? *target + term : term;
  }
  if (!target) {
    return std::vector<AnyTensor>(ids.size());
  }
  return tape.gradient_by_id(*target, ids);
}

/// One result or differentiable input of a cond/while node, as the tracing tape sees it.
struct Port {
  std::int64_t id = 0;
  DType dtype = DType::invalid;
  Shape shape;
  std::int64_t input = -1;  // index among the node's inputs; -1: a variable read inside
};

/// Every iteration's loop values of the last run of a While node, kept when a tape inside the
/// traced body recorded the loop (its gradient replays them).
struct WhileHistory {
  bool record = false;
  std::vector<std::vector<AnyTensor>> iterations;
};

/// What a tape node needs to append the gradient node (Note [Control-flow gradients]).
struct GradSpec {
  std::string op;  // "IfGrad" or "WhileGrad"
  std::string forward_op;
  trace::Graph* graph = nullptr;     // where the forward node lives
  std::vector<std::int32_t> inputs;  // the forward node's input slots
  std::vector<Port> outputs;         // the forward node's results
  std::vector<Port> sources;         // its differentiable inputs
  /// The gradient node's run closure; `upstream_at[k]`: where result k's upstream gradient is
  /// among the gradient node's inputs (-1: none). It returns one gradient per source.
  std::function<trace::NodeFn(std::vector<std::int64_t> upstream_at,
                              std::shared_ptr<std::vector<AnyTensor>> stash)>
      make_run;
};

/// What the run of a node `append`ed with `stash` returns: result 0 (empty when there is
/// none), with all results left in `stash` when the output nodes of results 1..n-1 need them
/// (the last of those clears it, so no buffer stays held between calls).
inline AnyTensor hand_out(std::vector<AnyTensor> results, std::vector<AnyTensor>& stash) {
  if (results.empty()) {
    return AnyTensor{};
  }
  AnyTensor first = results[0];
  if (results.size() > 1) {
    stash = std::move(results);
  }
  return first;
}

/// Appends the node (and output nodes for results 1..n-1); `stash` receives all results at
/// run time (hand_out). Returns the node's index.
inline std::size_t append(trace::Graph& graph, trace::GraphNode node,
                          const std::vector<AnyTensor>& outputs,
                          const std::shared_ptr<std::vector<AnyTensor>>& stash) {
  if (!outputs.empty()) {
    node.dtype = outputs[0].dtype();
    node.shape = outputs[0].shape();
  }
  const std::string op = node.op;
  const std::int32_t out_slot =
      graph.add_node(std::move(node), outputs.empty() ? 0 : outputs[0].id());
  const std::size_t index = graph.nodes.size() - 1;
  const std::string out_op = op == "While"                       ? std::string("WhileOutput")
                             : op == "If" || op == "StatelessIf" ? std::string("IfOutput")
                                                                 : op + "Output";
  for (std::size_t k = 1; k < outputs.size(); ++k) {
    trace::GraphNode extract;
    extract.op = out_op;
    extract.attrs = OpAttributes{{"index", AttrValue(static_cast<std::int64_t>(k))}};
    extract.dtype = outputs[k].dtype();
    extract.shape = outputs[k].shape();
    extract.inputs = {out_slot};
    extract.run = [stash, k, last = k + 1 == outputs.size()](std::span<const AnyTensor>) {
      AnyTensor out = (*stash)[k];
      if (last) {
        stash->clear();
      }
      return out;
    };
    graph.add_node(std::move(extract), outputs[k].id());
  }
  return index;
}

template <class Deferred = void>
void symbolic_backward(const GradSpec& spec, tape::Backprop& bp) {
  std::vector<AnyTensor> upstream(spec.outputs.size());
  bool any = false;
  for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
    if (AnyTensor* g = bp.find(spec.outputs[k].id)) {
      upstream[k] = *g;
      any = true;
    }
  }
  bool needed = false;
  for (const auto& s : spec.sources) {
    needed = needed || bp.needed(s.id);
  }
  if (!any || !needed) {
    return;  // e.g. a tape outside the traced function: its gradients are eager
  }
  trace::Graph* graph = trace::active();
  if (graph != spec.graph) {
    throw unimplemented("GradientTape: a gradient through tf::" + spec.forward_op +
                        " must be computed in the traced body (or branch) that ran it, not in "
                        "another cond/while sub-graph or outside the trace");
  }
  trace::GraphNode node;
  node.op = spec.op;
  node.inputs = spec.inputs;
  std::vector<std::int64_t> upstream_at(spec.outputs.size(), -1);
  for (std::size_t k = 0; k < upstream.size(); ++k) {
    if (upstream[k].engaged()) {
      upstream_at[k] = static_cast<std::int64_t>(node.inputs.size());
      node.inputs.push_back(
          with_float_type(upstream[k].dtype(), upstream[k].rank(), [&]<class T, std::size_t R>() {
            return graph->slot_of(upstream[k].unchecked_as<T, R>());
          }));
    }
  }
  std::vector<AnyTensor> grads;
  grads.reserve(spec.sources.size());
  for (const auto& s : spec.sources) {
    grads.push_back(symbolic_of(s.dtype, s.shape));
  }
  auto stash = std::make_shared<std::vector<AnyTensor>>();
  node.run = spec.make_run(std::move(upstream_at), stash);
  append(*graph, std::move(node), grads, stash);
  for (std::size_t m = 0; m < spec.sources.size(); ++m) {
    if (bp.needed(spec.sources[m].id)) {
      with_float_type(grads[m].dtype(), grads[m].rank(), [&]<class T, std::size_t R>() {
        bp.accumulate(spec.sources[m].id, grads[m].unchecked_as<T, R>());
      });
    }
  }
}

/// The tape node of a cond/while: the first result's node does the work, the others are
/// aliases so every result counts as depending on the sources.
template <class Deferred = void>
class GradNode final : public tape::Node {
 public:
  GradNode(std::shared_ptr<const GradSpec> spec, bool main) : spec_(std::move(spec)), main_(main) {}
  [[nodiscard]] std::string_view op_name() const noexcept override { return spec_->forward_op; }
  void backward(tape::Backprop& bp) override {
    if (main_) {
      symbolic_backward(*spec_, bp);
    }
  }

 private:
  std::shared_ptr<const GradSpec> spec_;
  bool main_;
};

/// Records the cond/while node on every active tape that wants one of its sources; returns
/// whether any did.
template <class Deferred = void>
bool record_on_tapes(const std::shared_ptr<const GradSpec>& spec) {
  if (spec->sources.empty() || spec->outputs.empty()) {
    return false;
  }
  bool recorded = false;
  for (tape::Recorder* recorder : tape::active()) {
    if (recorder->paused > 0) {
      continue;
    }
    bool wanted = false;
    for (const auto& s : spec->sources) {
      wanted = recorder->wants(s.id) || wanted;
    }
    if (!wanted) {
      continue;
    }
    for (std::size_t k = 0; k < spec->outputs.size(); ++k) {
      auto* node = recorder->emplace<GradNode<>>(spec->sources.size(), spec, k == 0);
      node->out_id = spec->outputs[k].id;
      auto* ids = const_cast<std::int64_t*>(node->in_ids);
      for (std::size_t m = 0; m < spec->sources.size(); ++m) {
        ids[m] = spec->sources[m].id;
      }
      if (is_float_dtype(spec->outputs[k].dtype)) {
        recorder->watch(spec->outputs[k].id);
      }
    }
    recorded = true;
  }
  return recorded;
}

/// Pauses the active tapes while sub-graphs are traced: their ops are differentiated through
/// the cond/while node as a whole, not one by one.
class PauseTapes {
 public:
  PauseTapes() : paused_(tape::active()) {
    for (auto* r : paused_) {
      ++r->paused;
    }
  }
  PauseTapes(const PauseTapes&) = delete;
  PauseTapes& operator=(const PauseTapes&) = delete;
  ~PauseTapes() {
    for (auto* r : paused_) {
      --r->paused;
    }
  }

 private:
  std::vector<tape::Recorder*> paused_;
};

/// Differentiable inputs from variables read inside sub-graphs (each variable once).
inline void add_variable_sources(std::vector<Port>& sources,
                                 const std::vector<trace::Graph::VariableRead>& reads) {
  for (const auto& read : reads) {
    if (!is_float_dtype(read.dtype)) {
      continue;
    }
    bool seen = false;
    for (const auto& s : sources) {
      seen = seen || (s.input < 0 && tape::tape_id(s.id) == tape::tape_id(read.id));
    }
    if (!seen) {
      sources.push_back({read.id, read.dtype, read.shape, -1});
    }
  }
}

}  // namespace detail::cf
TAPEFLOW_END_NAMESPACE
