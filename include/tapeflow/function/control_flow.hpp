// Tensor-dependent control flow: tf::cond and tf::while_loop (TensorFlow: `tf.cond`,
// `tf.while_loop`; what AutoGraph turns `if`/`while` on tensors into).
//
// Plain C++ `if`/`for` on C++ values are resolved while tracing (the body runs once); these
// functions branch and loop on tensor values, so a traced graph keeps the control flow.
//
// Eagerly (no active trace) they are ordinary C++: cond calls one branch, while_loop loops.
// While a tf::function traces, each callable is traced into a sub-graph (Note [Tracing])
// whose parent is the enclosing graph: symbolic tensors of the enclosing trace used inside
// become extra arguments of the sub-graph (Graph::captured) and inputs of the node. ONE node
// ("StatelessIf"/"If", "While") is appended to the enclosing graph; at run time it evaluates
// the predicate and runs sub-graphs through the executor (ConcreteFunction::run). Results
// beyond the first come out of "IfOutput"/"WhileOutput" nodes (index attribute) that read what
// the node produced, since a graph node has one output.
//
// Gradients: the sub-graphs' ops run through detail::execute, so a GradientTape active
// outside the traced function records the branch actually taken / every loop iteration.
// A GradientTape opened inside a traced body records a cond or while node as a whole; its
// gradient node re-runs the branch taken / replays the loop's iterations eagerly under a
// tape at run time (Note [Control-flow gradients] in detail/control_flow_gradient.hpp).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/detail/control_flow_gradient.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/function/graph.hpp>
#include <tapeflow/function/tensor_array.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// Options of tf::while_loop (TensorFlow's keyword arguments).
struct WhileOptions {
  /// Stop after this many iterations even while the condition holds; -1: no limit.
  std::int64_t maximum_iterations = -1;
};

namespace detail::cf {

// Flattening a (normalized) result: a tensor, or a tuple/pair of them (nested allowed).
template <class X>
void flatten(const X& x, std::vector<AnyTensor>& out) {
  if constexpr (is_tensor<X>::value) {
    out.emplace_back(x);
  } else if constexpr (requires { std::tuple_size<X>::value; }) {
    std::apply([&](const auto&... e) { (flatten(e, out), ...); }, x);
  } else {
    static_assert(sizeof(X) == 0, "tf::cond: a branch must return tensors");
  }
}

// A result of the same type whose tensors are new symbolic tensors of the same dims.
template <class X>
X symbolic_like(const X& x) {
  if constexpr (is_tensor<X>::value) {
    return tensor_access::symbolic<typename X::value_type, X::rank_v>(x.dims());
  } else {
    return std::apply([](const auto&... e) { return X{symbolic_like(e)...}; }, x);
  }
}

// Whether a sub-graph holds a node that reads or changes state (each node carries its op's
// `stateful` member; nested If and While nodes are stateful).
inline bool is_stateful(const trace::Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), [](const auto& n) { return n.stateful; });
}

inline std::unique_ptr<trace::Graph> sub_graph(trace::Graph* parent) {
  auto g = std::make_unique<trace::Graph>();
  g->parent = parent;
  return g;
}

/// Adds the outer slots a sub-graph captured to the node's inputs (each slot once); returns
/// where each captured argument is found among the inputs.
inline std::vector<std::size_t> add_captures(std::vector<std::int32_t>& inputs,
                                             const std::vector<std::int32_t>& captured) {
  std::vector<std::size_t> where;
  for (auto slot : captured) {
    auto it = std::find(inputs.begin(), inputs.end(), slot);
    where.push_back(static_cast<std::size_t>(it - inputs.begin()));
    if (it == inputs.end()) {
      inputs.push_back(slot);
    }
  }
  return where;
}

/// Runs a sub-graph on `leading` arguments followed by its captured values.
inline std::vector<AnyTensor> run_with(const ConcreteFunction& fn,
                                       std::span<const AnyTensor> leading,
                                       std::span<const AnyTensor> values,
                                       const std::vector<std::size_t>& captured) {
  std::vector<AnyTensor> args(leading.begin(), leading.end());
  for (auto i : captured) {
    args.push_back(values[i]);
  }
  return fn.run(args);
}

template <class X>
struct is_tensor_array : std::false_type {};
template <class T, std::size_t R>
struct is_tensor_array<TensorArray<T, R>> : std::true_type {};

// A loop variable after its body: a tensor keeps its shape; a TensorArray may change size
// (dynamic_size), as in TensorFlow.
template <class X>
void check_loop_shape(std::size_t i, const X& before, const X& after) {
  if constexpr (is_tensor<X>::value) {
    if (before.shape() != after.shape()) {
      throw invalid_argument("tf::while_loop: loop variable " + std::to_string(i) + " has shape " +
                             before.shape().to_string() + " on entry but " +
                             after.shape().to_string() +
                             " after the body; loop variables must keep their shape");
    }
  }
}
template <class... X, std::size_t... I>
void check_loop_shapes(const std::tuple<X...>& before, const std::tuple<X...>& after,
                       std::index_sequence<I...> /*indices*/) {
  (check_loop_shape(I, std::get<I>(before), std::get<I>(after)), ...);
}
template <class... X>
void check_loop_shapes(const std::tuple<X...>& before, const std::tuple<X...>& after) {
  check_loop_shapes(before, after, std::index_sequence_for<X...>{});
}

template <class CondFn, class BodyFn, class... X>
std::tuple<X...> eager_while(CondFn& cond_fn, BodyFn& body_fn, std::tuple<X...> vars,
                             std::int64_t max) {
  for (std::int64_t it = 0; max < 0 || it < max; ++it) {
    const Tensor<bool, 0> c = std::apply(cond_fn, std::as_const(vars));
    if (!c.item()) {
      break;
    }
    std::tuple<X...> next(std::apply(body_fn, std::as_const(vars)));
    check_loop_shapes(vars, next);
    vars = std::move(next);
  }
  return vars;
}
template <class CondFn, class BodyFn, class... X>
std::tuple<X...> traced_while(trace::Graph* outer, CondFn& cond_fn, BodyFn& body_fn,
                              const std::tuple<X...>& loop_vars, std::int64_t max);

// What a traced loop carries for a loop variable: a tensor itself, a TensorArray in its dense
// form (Note [TensorArray in loops] in tensor_array.hpp).
template <class X>
X densify(const X& x) {
  if constexpr (is_tensor_array<X>::value) {
    return x.densified("while_loop");
  } else {
    return x;
  }
}
template <class X>
auto loop_tensor(const X& x) {
  if constexpr (is_tensor_array<X>::value) {
    return densify(x).dense();
  } else {
    return x;
  }
}
template <class X, class Carried>
X from_loop_tensor(const X& like, const Carried& t) {
  if constexpr (is_tensor_array<X>::value) {
    return like.with_dense(t);
  } else {
    return t;
  }
}

}  // namespace detail::cf

namespace detail::cf {

// Records, on the active tapes, how to differentiate the If node at `index` (Note
// [Control-flow gradients]): the IfGrad node reruns the branch taken under a tape.
template <class Deferred = void>
void record_if_gradient(trace::Graph& outer, std::size_t index,
                        const std::vector<AnyTensor>& outer_outs, std::vector<Port> sources,
                        std::shared_ptr<const ConcreteFunction> (&fns)[2],
                        std::vector<std::size_t> (&where)[2], std::size_t num_inputs) {
  auto spec = std::make_shared<GradSpec>();
  spec->op = "IfGrad";
  spec->forward_op = "cond";
  spec->graph = &outer;
  spec->inputs = outer.nodes[index].inputs;
  for (const auto& o : outer_outs) {
    spec->outputs.push_back({o.id(), o.dtype(), o.shape(), -1});
  }
  spec->sources = sources;
  spec->make_run = [then_fn = fns[0], else_fn = fns[1], where_then = std::move(where[0]),
                    where_else = std::move(where[1]), num_inputs,
                    sources](std::vector<std::int64_t> upstream_at,
                             std::shared_ptr<std::vector<AnyTensor>> grad_stash) {
    return trace::NodeFn([=](std::span<const AnyTensor> values) -> AnyTensor {
      const bool take = values[0].unchecked_as<bool, 0>().item();
      std::vector<AnyTensor> vals(values.begin(),
                                  values.begin() + static_cast<std::ptrdiff_t>(num_inputs));
      std::vector<AnyTensor> watched;
      std::vector<std::int64_t> ids;
      for (const auto& s : sources) {
        if (s.input >= 0) {
          auto& v = vals[static_cast<std::size_t>(s.input)];
          v = fresh(v);
          watched.push_back(v);
          ids.push_back(v.id());
        } else {
          ids.push_back(tape::tape_id(s.id));
        }
      }
      std::vector<AnyTensor> upstream(upstream_at.size());
      for (std::size_t k = 0; k < upstream_at.size(); ++k) {
        if (upstream_at[k] >= 0) {
          upstream[k] = values[static_cast<std::size_t>(upstream_at[k])];
        }
      }
      auto grads = eager_vjp(
          [&] {
            return take ? run_with(*then_fn, {}, vals, where_then)
                        : run_with(*else_fn, {}, vals, where_else);
          },
          watched, ids, upstream);
      for (std::size_t m = 0; m < grads.size(); ++m) {
        if (!grads[m].engaged()) {
          const auto& s = sources[m];
          grads[m] = zeros_of(
              s.dtype, s.input >= 0 ? vals[static_cast<std::size_t>(s.input)].shape() : s.shape);
        }
      }
      if (grads.size() > 1) {
        *grad_stash = grads;
      }
      return grads[0];
    });
  };
  record_on_tapes(spec);
}

// The If/StatelessIf node of a tf::cond whose branches were traced into `graphs`, appended to
// `outer`; `outs`: each branch's flattened results, `outer_outs`: the node's symbolic results.
// A template only so that it compiles in programs that use tf::cond (MAINTAINERS.md,
// "Compile time").
template <class Deferred = void>
void append_if(trace::Graph& outer, std::int32_t pred_slot,
               std::unique_ptr<trace::Graph> (&graphs)[2], const std::vector<AnyTensor> (&outs)[2],
               const std::vector<AnyTensor>& outer_outs) {
  for (std::size_t i = 0; i < outs[0].size(); ++i) {
    if (outs[0][i].shape() != outs[1][i].shape()) {
      throw invalid_argument("tf::cond: result " + std::to_string(i) + " has shape " +
                             outs[0][i].shape().to_string() + " in true_fn but " +
                             outs[1][i].shape().to_string() + " in false_fn");
    }
  }
  trace::GraphNode node;
  const bool stateful = is_stateful(*graphs[0]) || is_stateful(*graphs[1]);
  node.op = stateful ? "If" : "StatelessIf";
  node.stateful = stateful;
  node.inputs.push_back(pred_slot);
  std::vector<std::size_t> where[2];
  for (int b = 0; b < 2; ++b) {
    where[b] = add_captures(node.inputs, graphs[b]->captured);
  }
  // What a tape inside the traced body may differentiate (Note [Control-flow gradients]).
  std::vector<Port> sources;
  for (int b = 0; b < 2; ++b) {
    const auto& g = *graphs[b];
    for (std::size_t j = 0; j < g.captured.size(); ++j) {
      const auto input = static_cast<std::int64_t>(where[b][j]);
      const bool seen = std::any_of(sources.begin(), sources.end(),
                                    [&](const auto& s) { return s.input == input; });
      if (is_float_dtype(g.arg_dtypes()[j]) && !seen) {
        sources.push_back({g.captured_ids[j], g.arg_dtypes()[j], g.arg_shapes()[j], input});
      }
    }
    add_variable_sources(sources, g.variable_reads);
    outer.variable_reads.insert(outer.variable_reads.end(), g.variable_reads.begin(),
                                g.variable_reads.end());
  }
  const std::size_t num_inputs = node.inputs.size();
  auto stash = std::make_shared<std::vector<AnyTensor>>();
  const std::size_t index = append(outer, std::move(node), outer_outs, stash);
  auto& added = outer.nodes[index];
  const std::string name = added.name;
  std::shared_ptr<const ConcreteFunction> fns[2] = {
      std::make_shared<const ConcreteFunction>(std::move(graphs[0]), name + "_true"),
      std::make_shared<const ConcreteFunction>(std::move(graphs[1]), name + "_false")};
  added.attrs = OpAttributes{{"then_branch", FunctionName{fns[0]->name()}},
                             {"else_branch", FunctionName{fns[1]->name()}}};
  added.functions = {fns[0], fns[1]};
  added.run = [then_fn = fns[0], else_fn = fns[1], where_then = where[0], where_else = where[1],
               stash](std::span<const AnyTensor> values) -> AnyTensor {
    const bool take = values[0].unchecked_as<bool, 0>().item();
    return hand_out(take ? run_with(*then_fn, {}, values, where_then)
                         : run_with(*else_fn, {}, values, where_else),
                    *stash);
  };
  if (!tape::active().empty() && !sources.empty()) {
    record_if_gradient(outer, index, outer_outs, std::move(sources), fns, where, num_inputs);
  }
}
}  // namespace detail::cf

/// Runs `true_fn()` if `pred` holds, else `false_fn()` (TensorFlow: `tf.cond`).
///
///     auto y = tf::cond(x > 0.0f, [&] { return x; }, [&] { return -x; });
///
/// `pred` is a `Tensor<bool, 0>` (or a Variable of one). Both callables take no arguments and
/// return the same type: nothing, a tensor, or a tuple/pair of tensors (variables are read).
/// Inside a traced tf::function with a symbolic `pred` both branches are traced and one
/// "StatelessIf" ("If" when a branch holds a stateful op: variables, printing, random) node picks
/// one per run; corresponding results of the two branches must have the same shape at trace time
/// (invalid_argument otherwise). A `pred` with a value (not symbolic) picks a branch at once.
template <class Pred, class TrueFn, class FalseFn>
  requires std::invocable<TrueFn&> && std::invocable<FalseFn&>
auto cond(const Pred& pred, TrueFn&& true_fn, FalseFn&& false_fn) {
  static_assert(std::is_convertible_v<const Pred&, Tensor<bool, 0>>,
                "tf::cond: pred must be a Tensor<bool, 0> (or a Variable<bool, 0>)");
  using RT = std::remove_cvref_t<std::invoke_result_t<TrueFn&>>;
  using RF = std::remove_cvref_t<std::invoke_result_t<FalseFn&>>;
  static_assert(std::is_void_v<RT> == std::is_void_v<RF>,
                "tf::cond: both branches must return the same type");
  using Type = typename detail::fn::result_traits<RT>::type;
  if constexpr (!std::is_void_v<RT>) {
    static_assert(std::is_same_v<Type, typename detail::fn::result_traits<RF>::type>,
                  "tf::cond: both branches must return the same type");
  }
  const Tensor<bool, 0> p = pred;
  detail::trace::Graph* outer = detail::trace::active();
  if (outer == nullptr || !p.is_symbolic()) {
    if constexpr (std::is_void_v<RT>) {
      if (p.item()) {
        true_fn();
      } else {
        false_fn();
      }
      return;
    } else {
      return p.item() ? Type(true_fn()) : Type(false_fn());
    }
  } else {
    const std::int32_t pred_slot = outer->slot_of(p);
    // Held: what a branch gives (tuple<> for void branches).
    using Held = std::conditional_t<std::is_void_v<RT>, std::tuple<>, Type>;
    std::optional<Held> results[2];
    std::unique_ptr<detail::trace::Graph> graphs[2];
    auto trace_branch = [&](int b, auto& fn) {
      graphs[b] = detail::cf::sub_graph(outer);
      detail::trace::Scope scope(graphs[b].get());
      if constexpr (std::is_void_v<RT>) {
        fn();
        results[b].emplace();
      } else {
        results[b].emplace(fn());
      }
      detail::fn::result_traits<Held>::collect(*graphs[b], *results[b]);
    };
    {
      detail::cf::PauseTapes pause;  // Note [Control-flow gradients]
      trace_branch(0, true_fn);
      trace_branch(1, false_fn);
    }
    std::vector<AnyTensor> outs[2];
    detail::cf::flatten(*results[0], outs[0]);
    detail::cf::flatten(*results[1], outs[1]);
    Held symbolic = detail::cf::symbolic_like(*results[0]);
    std::vector<AnyTensor> outer_outs;
    detail::cf::flatten(symbolic, outer_outs);
    detail::cf::append_if(*outer, pred_slot, graphs, outs, outer_outs);
    if constexpr (!std::is_void_v<RT>) {
      return symbolic;
    }
  }
}

/// Repeats `loop_vars = body_fn(loop_vars...)` while `cond_fn(loop_vars...)` holds, and
/// returns the final loop variables (TensorFlow: `tf.while_loop`).
///
///     auto [i, s] = tf::while_loop(
///         [&](const auto& i, const auto&) { return i <= n; },
///         [](const auto& i, const auto& s) { return std::tuple{i + 1, s + i}; },
///         std::tuple{tf::constant(1), tf::constant(0)});
///
/// `cond_fn` returns a `Tensor<bool, 0>`; `body_fn` returns the loop variables' tuple type.
/// Loop variables keep dtype, rank and shape: a body that changes a shape throws
/// invalid_argument naming the variable. Inside a traced tf::function both callables are
/// traced once into sub-graphs and one "While" node loops at run time.
///
/// A loop variable may also be a `TensorArray` written and read at the loop counter:
///
///     tf::TensorArray<float, 1> rows(n, {.element_shape = tf::Shape{d}});
///     auto [i, out] = tf::while_loop(
///         [&](const auto& i, const auto&) { return i < n; },
///         [&](const auto& i, const auto& a) { return std::tuple{i + 1, a.write(i, f(i))}; },
///         std::tuple{tf::constant(0), rows});
///
/// Traced, the array travels in its dense form (tensor_array.hpp): it needs a fixed size and
/// a known element shape (unimplemented / failed_precondition otherwise).
template <class CondFn, class BodyFn, class... X>
std::tuple<X...> while_loop(CondFn&& cond_fn, BodyFn&& body_fn, std::tuple<X...> loop_vars,
                            WhileOptions options = {}) {
  static_assert(
      sizeof...(X) > 0 && ((is_tensor<X>::value || detail::cf::is_tensor_array<X>::value) && ...),
      "tf::while_loop: loop_vars must be a tuple of tensors and TensorArrays");
  using Vars = std::tuple<X...>;
  static_assert(std::is_convertible_v<std::invoke_result_t<CondFn&, const X&...>, Tensor<bool, 0>>,
                "tf::while_loop: cond_fn must return a Tensor<bool, 0>");
  static_assert(std::is_constructible_v<Vars, std::invoke_result_t<BodyFn&, const X&...>>,
                "tf::while_loop: body_fn must return the loop variables' types");
  const std::int64_t max = options.maximum_iterations;
  detail::trace::Graph* outer = detail::trace::active();
  if constexpr ((detail::cf::is_tensor_array<X>::value || ...)) {
    if (outer != nullptr) {
      // Traced: the arrays travel as their dense tensors through the tensor-only loop below.
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        const std::tuple<X...> like{detail::cf::densify(std::get<I>(loop_vars))...};
        auto out = while_loop(
            [&](const auto&... t) {
              return cond_fn(detail::cf::from_loop_tensor(std::get<I>(like), t)...);
            },
            [&](const auto&... t) {
              const std::tuple<X...> next(
                  body_fn(detail::cf::from_loop_tensor(std::get<I>(like), t)...));
              return std::tuple{detail::cf::loop_tensor(std::get<I>(next))...};
            },
            std::tuple{detail::cf::loop_tensor(std::get<I>(like))...}, options);
        return std::tuple<X...>{
            detail::cf::from_loop_tensor(std::get<I>(like), std::get<I>(out))...};
      }(std::index_sequence_for<X...>{});
    }
    return detail::cf::eager_while(cond_fn, body_fn, std::move(loop_vars), max);
  } else {
    if (outer == nullptr) {
      return detail::cf::eager_while(cond_fn, body_fn, std::move(loop_vars), max);
    }
    return detail::cf::traced_while(outer, cond_fn, body_fn, loop_vars, max);
  }
}

namespace detail::cf {

/// Records a traced While node on the tapes inside the body that want one of its sources
/// (Note [Control-flow gradients]): loop variables, the body's captures, variables it reads.
template <class Deferred = void>  // compiled only with while_loop (control_flow_gradient.hpp)
void record_while_gradient(trace::Graph* outer, const std::vector<std::int32_t>& inputs,
                           const std::vector<AnyTensor>& outputs,
                           const std::vector<AnyTensor>& initial, const ConcreteFunction& body,
                           std::shared_ptr<const ConcreteFunction> body_fn,
                           std::vector<std::size_t> where_body, std::size_t num_inputs,
                           const std::shared_ptr<WhileHistory>& history) {
  const std::size_t num_vars = initial.size();
  std::vector<Port> sources;
  std::vector<std::size_t> var_k;   // floating loop variables
  std::vector<std::size_t> cap_in;  // floating captures of the body: their input index
  for (std::size_t k = 0; k < num_vars; ++k) {
    if (is_float_dtype(initial[k].dtype())) {
      var_k.push_back(k);
      sources.push_back(
          {initial[k].id(), initial[k].dtype(), initial[k].shape(), static_cast<std::int64_t>(k)});
    }
  }
  const auto& g = body.graph();
  for (std::size_t j = 0; j < g.captured.size(); ++j) {
    const DType dtype = g.arg_dtypes()[num_vars + j];
    if (is_float_dtype(dtype) &&
        std::find(cap_in.begin(), cap_in.end(), where_body[j]) == cap_in.end()) {
      cap_in.push_back(where_body[j]);
      sources.push_back({g.captured_ids[j], dtype, g.arg_shapes()[num_vars + j],
                         static_cast<std::int64_t>(where_body[j])});
    }
  }
  const std::size_t num_fixed = sources.size();
  add_variable_sources(sources, g.variable_reads);
  const std::vector<Port> var_ports(sources.begin() + static_cast<std::ptrdiff_t>(num_fixed),
                                    sources.end());
  auto spec = std::make_shared<GradSpec>();
  spec->op = "WhileGrad";
  spec->forward_op = "while_loop";
  spec->graph = outer;
  spec->inputs = inputs;
  for (const auto& o : outputs) {
    spec->outputs.push_back({o.id(), o.dtype(), o.shape(), -1});
  }
  spec->sources = std::move(sources);
  spec->make_run = [body_fn = std::move(body_fn), where_body = std::move(where_body), num_vars,
                    num_inputs, var_k, cap_in, var_ports,
                    history](std::vector<std::int64_t> upstream_at,
                             std::shared_ptr<std::vector<AnyTensor>> stash) {
    return trace::NodeFn([=](std::span<const AnyTensor> values) -> AnyTensor {
      std::vector<AnyTensor> vals(values.begin(),
                                  values.begin() + static_cast<std::ptrdiff_t>(num_inputs));
      for (auto idx : cap_in) {
        vals[idx] = fresh(vals[idx]);
      }
      // g[k]: the gradient with respect to loop variable k after the iteration replayed next.
      std::vector<AnyTensor> g(num_vars);
      for (auto k : var_k) {
        if (upstream_at[k] >= 0) {
          g[k] = values[static_cast<std::size_t>(upstream_at[k])];
        }
      }
      std::vector<AnyTensor> cap_g(cap_in.size());
      std::vector<AnyTensor> var_g(var_ports.size());
      const auto& iterations = history->iterations;
      for (std::size_t it = iterations.size(); it-- > 0;) {
        if (std::none_of(g.begin(), g.end(), [](const AnyTensor& t) { return t.engaged(); })) {
          break;
        }
        std::vector<AnyTensor> leading = iterations[it];
        std::vector<AnyTensor> watched;
        std::vector<std::int64_t> ids;
        for (auto k : var_k) {
          leading[k] = fresh(leading[k]);
          watched.push_back(leading[k]);
          ids.push_back(leading[k].id());
        }
        for (auto idx : cap_in) {
          watched.push_back(vals[idx]);
          ids.push_back(vals[idx].id());
        }
        for (const auto& p : var_ports) {
          ids.push_back(tape::tape_id(p.id));
        }
        auto grads = eager_vjp([&] { return run_with(*body_fn, leading, vals, where_body); },
                               watched, ids, g);
        std::size_t m = 0;
        std::vector<AnyTensor> next(num_vars);
        for (auto k : var_k) {
          next[k] = std::move(grads[m++]);
        }
        for (auto& c : cap_g) {
          c = add_any(c, grads[m++]);
        }
        for (auto& v : var_g) {
          v = add_any(v, grads[m++]);
        }
        g = std::move(next);
      }
      std::vector<AnyTensor> out;
      for (auto k : var_k) {
        out.push_back(g[k].engaged() ? g[k] : zeros_of(values[k].dtype(), values[k].shape()));
      }
      for (std::size_t j = 0; j < cap_in.size(); ++j) {
        out.push_back(cap_g[j].engaged()
                          ? cap_g[j]
                          : zeros_of(vals[cap_in[j]].dtype(), vals[cap_in[j]].shape()));
      }
      for (std::size_t v = 0; v < var_ports.size(); ++v) {
        out.push_back(var_g[v].engaged() ? var_g[v]
                                         : zeros_of(var_ports[v].dtype, var_ports[v].shape));
      }
      return hand_out(std::move(out), *stash);
    });
  };
  if (record_on_tapes(spec)) {
    history->record = true;
  }
}

template <class CondFn, class BodyFn, class... X>
std::tuple<X...> traced_while(trace::Graph* outer_graph, CondFn& cond_fn, BodyFn& body_fn,
                              const std::tuple<X...>& loop_vars, std::int64_t max) {
  using Vars = std::tuple<X...>;
  trace::Graph* outer = outer_graph;
  std::vector<std::int32_t> var_slots;
  std::apply([&](const auto&... v) { (var_slots.push_back(outer->slot_of(v)), ...); }, loop_vars);
  auto placeholders = [&](detail::trace::Graph& g) {
    return std::apply(
        [&](const auto&... v) {
          return Vars{g.template add_argument<typename X::value_type, X::rank_v>(v.dims())...};
        },
        loop_vars);
  };
  // Note [Control-flow gradients]: the sub-graphs are differentiated as a whole.
  std::optional<detail::cf::PauseTapes> pause_tapes(std::in_place);
  auto cond_graph = detail::cf::sub_graph(outer);
  {
    detail::trace::Scope scope(cond_graph.get());
    const Vars args = placeholders(*cond_graph);
    const Tensor<bool, 0> c = std::apply(cond_fn, args);
    cond_graph->output_slots.push_back(cond_graph->slot_of(c));
  }
  auto body_graph = detail::cf::sub_graph(outer);
  {
    detail::trace::Scope scope(body_graph.get());
    const Vars args = placeholders(*body_graph);
    const Vars next(std::apply(body_fn, args));
    detail::cf::check_loop_shapes(args, next);
    detail::fn::result_traits<Vars>::collect(*body_graph, next);
  }
  pause_tapes.reset();
  detail::trace::GraphNode node;
  node.op = "While";
  node.stateful = true;  // TensorFlow's stateful While: its body may run any op
  node.inputs = var_slots;
  const std::size_t num_vars = var_slots.size();
  auto where_cond = detail::cf::add_captures(node.inputs, cond_graph->captured);
  auto where_body = detail::cf::add_captures(node.inputs, body_graph->captured);
  const Vars symbolic = detail::cf::symbolic_like(loop_vars);
  std::vector<AnyTensor> outer_outs;
  detail::cf::flatten(symbolic, outer_outs);
  std::vector<AnyTensor> initial;
  detail::cf::flatten(loop_vars, initial);
  const std::size_t num_inputs = node.inputs.size();
  auto stash = std::make_shared<std::vector<AnyTensor>>();
  auto history = std::make_shared<detail::cf::WhileHistory>();
  const std::size_t index = detail::cf::append(*outer, std::move(node), outer_outs, stash);
  auto& added = outer->nodes[index];
  auto cond_fn_graph =
      std::make_shared<const ConcreteFunction>(std::move(cond_graph), added.name + "_cond");
  auto body_fn_graph =
      std::make_shared<const ConcreteFunction>(std::move(body_graph), added.name + "_body");
  added.attrs = OpAttributes{{"cond", FunctionName{cond_fn_graph->name()}},
                             {"body", FunctionName{body_fn_graph->name()}}};
  added.functions = {cond_fn_graph, body_fn_graph};
  if (max >= 0) {
    added.attrs.emplace_back("maximum_iterations", AttrValue(max));
  }
  added.run = [cond_fn_graph, body_fn_graph, num_vars, where_cond = std::move(where_cond),
               where_body, max, stash, history](std::span<const AnyTensor> values) -> AnyTensor {
    std::vector<AnyTensor> vars(values.begin(),
                                values.begin() + static_cast<std::ptrdiff_t>(num_vars));
    if (history->record) {
      history->iterations.clear();
    }
    for (std::int64_t it = 0; max < 0 || it < max; ++it) {
      auto c = detail::cf::run_with(*cond_fn_graph, vars, values, where_cond);
      if (!c[0].unchecked_as<bool, 0>().item()) {
        break;
      }
      if (history->record) {
        history->iterations.push_back(vars);  // what the gradient replays
      }
      auto next = detail::cf::run_with(*body_fn_graph, vars, values, where_body);
      for (std::size_t i = 0; i < num_vars; ++i) {
        if (next[i].shape() != vars[i].shape()) {  // dims unknown (-1) at trace time
          throw invalid_argument("tf::while_loop: loop variable " + std::to_string(i) +
                                 " has shape " + vars[i].shape().to_string() + " on entry but " +
                                 next[i].shape().to_string() +
                                 " after the body; loop variables must keep their shape");
        }
      }
      vars = std::move(next);
    }
    return detail::cf::hand_out(std::move(vars), *stash);
  };
  for (const auto* g : {&cond_fn_graph->graph(), &body_fn_graph->graph()}) {
    outer->variable_reads.insert(outer->variable_reads.end(), g->variable_reads.begin(),
                                 g->variable_reads.end());
  }
  if (!detail::tape::active().empty()) {
    record_while_gradient(outer, outer->nodes[index].inputs, outer_outs, initial, *body_fn_graph,
                          body_fn_graph, std::move(where_body), num_inputs, history);
  }
  return symbolic;
}

}  // namespace detail::cf

/// tf::while_loop with a single loop variable: `cond_fn(x)`, `body_fn(x) -> x'`.
template <class CondFn, class BodyFn, class T, std::size_t R>
Tensor<T, R> while_loop(CondFn&& cond_fn, BodyFn&& body_fn, const Tensor<T, R>& loop_var,
                        WhileOptions options = {}) {
  auto out = while_loop([&](const Tensor<T, R>& x) { return cond_fn(x); },
                        [&](const Tensor<T, R>& x) { return std::tuple<Tensor<T, R>>(body_fn(x)); },
                        std::tuple<Tensor<T, R>>(loop_var), options);
  return std::get<0>(std::move(out));
}

TAPEFLOW_END_NAMESPACE
