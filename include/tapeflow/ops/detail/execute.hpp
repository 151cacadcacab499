// Running an op: the one path every op call takes (see Note [One definition per op]).
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/tape_record.hpp>
#include <tapeflow/ops/kernel_registry.hpp>
#include <tapeflow/ops/math/add_n.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

template <class X>
struct is_tensor_list : std::false_type {};
template <class T, std::size_t R>
struct is_tensor_list<std::vector<Tensor<T, R>>> : std::true_type {};

/// The tensors of an input: a tensor input's one, or a list input's. The helpers below walk
/// them; they are templates of the input type alone, not of a lambda per op and call site, so
/// a program compiles each once per tensor type (compile time, Note [Tracing]).
template <class X>
std::span<const X> tensors_of(const X& x) noexcept {
  return {&x, 1};
}
template <class T, std::size_t R>
std::span<const Tensor<T, R>> tensors_of(const std::vector<Tensor<T, R>>& list) noexcept {
  return list;
}

[[noreturn]] TAPEFLOW_COLD inline void throw_input_without_value(std::string_view op) {
  throw failed_precondition(std::string(op) +
                            ": an input tensor holds no value (default-constructed)");
}

template <class X>
void require_value(const X& x, std::string_view op) {
  for (const auto& t : tensors_of(x)) {
    if (!t.has_value()) {
      throw_input_without_value(op);  // out of line: one copy, not one per op
    }
  }
}

template <class Op>
void require_inputs(const Op&, const auto&... in) {
  (require_value(in, Op::name), ...);
}

/// Appends the ids of an input's tensors.
template <class X>
void append_ids(std::vector<std::int64_t>& ids, const X& x) {
  for (const auto& t : tensors_of(x)) {
    ids.push_back(t.id());
  }
}

/// Appends an input's tensors, type-erased.
template <class X>
void append_erased(std::vector<AnyTensor>& values, const X& x) {
  for (const auto& t : tensors_of(x)) {
    values.push_back(AnyTensor(t));  // push_back of AnyTensor: one vector growth path
  }
}

template <class Op, class... In>
concept has_gradient = requires(const Op& op, const In&... in) { op.gradient(in...); };

template <class Op>
constexpr bool stops_gradient() {
  if constexpr (requires { Op::differentiable; }) {
    return !Op::differentiable;
  } else {
    return false;
  }
}

// Turns one entry of an op's gradient result into tensors: entries may be a tensor (list),
// a lambda computing it, or no_gradient.
template <class In, class Entry>
auto materialize(Entry&& entry) {
  using E = std::remove_cvref_t<Entry>;
  if constexpr (!is_tensor<E>::value && !is_tensor_list<E>::value && std::is_invocable_v<Entry>) {
    return entry();
  } else {
    return std::forward<Entry>(entry);
  }
}

/// Whether the backprop needs the gradient of any of an input's tensors.
template <class X>
bool any_needed(const tape::Backprop& bp, const X& x) {
  bool needed = false;
  for (const auto& t : tensors_of(x)) {
    needed = bp.needed(t.id()) || needed;
  }
  return needed;
}

template <class Op, class Out, class... In>
class OpNode final : public tape::Node {
 public:
  OpNode(const Op& op, const Out& out, const In&... in) : op_(op), out_(out), in_(in...) {}

  [[nodiscard]] std::string_view op_name() const noexcept override { return Op::name; }

  void backward(tape::Backprop& bp) override {
    AnyTensor* g = bp.find(out_id);
    if (g == nullptr) {
      return;
    }
    const Out dy = g->template unchecked_as<typename Out::value_type, Out::rank_v>();
    if constexpr (has_gradient<Op, Out, Out, In...>) {
      auto grads = std::apply([&](const auto&... x) { return op_.gradient(dy, out_, x...); }, in_);
      if constexpr (sizeof...(In) == 1 && !is_tuple(static_cast<decltype(grads)*>(nullptr))) {
        push<0>(bp, grads);
      } else {
        static_assert(std::tuple_size_v<decltype(grads)> == sizeof...(In),
                      "an op's gradient must return one entry per input");
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          (push<I>(bp, std::get<I>(grads)), ...);
        }(std::index_sequence_for<In...>{});
      }
    } else {
      throw unimplemented(std::string("GradientTape: no gradient is defined for op ") +
                          std::string(Op::name));
    }
  }

 private:
  template <class... X>
  static constexpr bool is_tuple(std::tuple<X...>*) {
    return true;
  }
  static constexpr bool is_tuple(void*) { return false; }

  template <std::size_t I, class Entry>
  void push(tape::Backprop& bp, Entry& entry) {
    using InI = std::tuple_element_t<I, std::tuple<In...>>;
    using E = std::remove_cvref_t<Entry>;
    if constexpr (std::is_same_v<E, no_gradient_t>) {
      return;
    } else {
      const auto& input = std::get<I>(in_);
      if (!any_needed(bp, input)) {
        return;  // the lambda (if any) is never called: that gradient is not computed
      }
      auto grad = materialize<InI>(entry);
      if constexpr (is_tensor_list<InI>::value) {
        for (std::size_t k = 0; k < input.size(); ++k) {
          if (bp.needed(input[k].id())) {
            bp.accumulate(input[k].id(), grad[k]);
          }
        }
      } else {
        static_assert(std::is_same_v<decltype(grad), InI>,
                      "an op's gradient for an input must have the input's dtype and rank");
        bp.accumulate(input.id(), std::move(grad));
      }
    }
  }

  Op op_;
  Out out_;
  std::tuple<In...> in_;
};

/// Whether an op reads or changes state beyond its inputs: its `stateful` member (default no).
template <class Op>
constexpr bool is_stateful_op() {
  if constexpr (requires { Op::stateful; }) {
    return Op::stateful;
  } else {
    return false;
  }
}

/// Whether an op's CPU kernel takes an output epilogue: its `output_epilogue` member (default
/// no; Note [Output epilogues] in backend/cpu/output_epilogue.hpp).
template <class Op>
constexpr bool output_epilogue_op() {
  if constexpr (requires { Op::output_epilogue; }) {
    return Op::output_epilogue;
  } else {
    return false;
  }
}

template <class Out>
constexpr bool records_gradient = floating_element<typename Out::value_type>;

/// Makes an op's tape node in a recorder's arena: record()'s one typed step.
using MakeTapeNode = tape::Node* (*)(tape::Recorder&, std::size_t num_ids, const void* context);

/// The part of record() that does not depend on the op's types, compiled once (compile time):
/// for each active recorder that watches one of `ids`, a node made by `make`, its ids set.
TAPEFLOW_NOINLINE inline void record_node(std::span<const std::int64_t> ids, std::int64_t out_id,
                                          MakeTapeNode make, const void* context) {
  for (tape::Recorder* recorder : tape::active()) {
    if (recorder->paused > 0) {
      continue;
    }
    bool wanted = false;
    for (std::int64_t const id : ids) {
      wanted = recorder->wants(id) || wanted;  // every id: wants() may watch a variable
    }
    if (!wanted) {
      continue;
    }
    tape::Node* node = make(*recorder, ids.size(), context);
    node->out_id = out_id;
    std::copy(ids.begin(), ids.end(), const_cast<std::int64_t*>(node->in_ids));
    recorder->watch(out_id);
  }
}

/// Appends a node to each active recorder that watches one of the inputs.
template <class Op, class Out, class... In>
void record(const Op& op, const Out& out, const In&... in) {
  if constexpr (!records_gradient<Out> || stops_gradient<Op>()) {
    return;
  } else {
    auto make = [&](tape::Recorder& recorder, std::size_t num_ids) -> tape::Node* {
      return recorder.template emplace<OpNode<Op, Out, In...>>(num_ids, op, out, in...);
    };
    MakeTapeNode const make_fn = [](tape::Recorder& recorder, std::size_t num_ids,
                                    const void* context) -> tape::Node* {
      return (*static_cast<const decltype(make)*>(context))(recorder, num_ids);
    };
    if constexpr ((is_tensor_list<In>::value || ...)) {
      std::vector<std::int64_t> ids;
      (append_ids(ids, in), ...);
      record_node(ids, out.id(), make_fn, &make);
    } else {
      std::array<std::int64_t, sizeof...(In)> const ids{in.id()...};
      record_node(ids, out.id(), make_fn, &make);
    }
  }
}

// The output type of an op on given inputs: its `forward`'s, or the tensor its `infer` spec
// describes. Spelled out so execute() and the tracer's closures can name it before defining.
template <class Op, class... In>
auto op_result_type() {
  if constexpr (requires(const Op& op, const In&... in) { op.forward(in...); }) {
    return std::type_identity<decltype(std::declval<const Op&>().forward(
        std::declval<const In&>()...))>{};
  } else {
    using Spec = decltype(std::declval<const Op&>().infer(std::declval<const In&>()...));
    return std::type_identity<Tensor<typename Spec::value_type, Spec::rank>>{};
  }
}
template <class Op, class... In>
using execute_result_t = typename decltype(op_result_type<Op, In...>())::type;

template <class Op, class... In>
execute_result_t<Op, In...> execute(const Op& op, const In&... in);

// True for the specializations tapeflow::instantiations compiles (set in
// ops/detail/precompiled.hpp under TAPEFLOW_PRECOMPILED): execute() then calls the library's
// execute_precompiled. A flag per specialization costs the umbrella's parse far less than an
// `extern template` per specialization, whose return type the compiler must work out for every
// entry of the list, used or not (bench/RESULTS.md, issue 15).
template <class Op, class... In>
inline constexpr bool precompiled_v = false;
template <class Op, class... In>
execute_result_t<Op, In...> execute_precompiled(const Op& op, const In&... in);

// Rebuilds a typed input from the executor's value slots (Note [Tracing]).
template <class X>
X rebuild(std::span<const AnyTensor> values, std::size_t offset, std::size_t size) {
  if constexpr (is_tensor_list<X>::value) {
    using T = typename X::value_type::value_type;
    constexpr std::size_t R = X::value_type::rank_v;
    X list;
    list.reserve(size);
    for (std::size_t i = 0; i < size; ++i) {
      list.push_back(values[offset + i].template unchecked_as<T, R>());
    }
    return list;
  } else {
    return values[offset].template unchecked_as<typename X::value_type, X::rank_v>();
  }
}

/// The dtype of an op's first tensor input (of a list input, of its tensors), or of its
/// output when it has no tensor input: the value of the op's `type_attr`.
template <class Out, class... In>
constexpr DType type_attr_dtype() {
  if constexpr (sizeof...(In) == 0) {
    return dtype_v<typename Out::value_type>;
  } else {
    using First = std::tuple_element_t<0, std::tuple<In...>>;
    if constexpr (is_tensor_list<First>::value) {
      return dtype_v<typename First::value_type::value_type>;
    } else {
      return dtype_v<typename First::value_type>;
    }
  }
}

/// The export metadata of a traced node that depends on the op alone (Note [One definition
/// per op]): attributes, type attribute, output argument, inputs held as members, variables,
/// and why it cannot export, if so. Compiled once per op, not per input types (compile time).
template <class Op>
TAPEFLOW_COLD void set_op_metadata(trace::GraphNode& node, const Op& op) {
  if constexpr (requires { op.attributes(); }) {
    node.attrs = op.attributes();
  }
  if constexpr (requires { Op::type_attr; }) {
    node.type_attr = std::string(Op::type_attr);
  }
  if constexpr (requires { Op::output_arg; }) {
    node.output_arg = std::string(Op::output_arg);
  }
  if constexpr (requires { op.graph_inputs(); }) {
    node.const_inputs = op.graph_inputs();
  }
  if constexpr (requires { op.resources(); }) {
    node.resources = op.resources();
  }
  if constexpr (requires { op.export_error(); }) {
    node.export_error = op.export_error();
  }
}

/// Copies what graph export needs from the op into a traced node: set_op_metadata's, then what
/// depends on the inputs (the type attribute's value, where inputs held as members go, and
/// attributes or export errors of ops that read their inputs' types). `sizes` holds the number
/// of tensors of each input.
template <class Out, class Op, class... In>
void set_export_metadata(trace::GraphNode& node, const Op& op,
                         const std::array<std::size_t, sizeof...(In)>& sizes, const In&... in) {
  set_op_metadata(node, op);
  if constexpr (
      requires { op.attributes(in...); } && !requires { op.attributes(); }) {
    node.attrs = op.attributes(in...);
  }
  if (!node.type_attr.empty()) {
    node.type_attr_dtype = type_attr_dtype<Out, In...>();
  }
  std::size_t inputs_before_members = sizeof...(In);
  if constexpr (requires { Op::graph_inputs_at; }) {
    static_assert(Op::graph_inputs_at <= sizeof...(In),
                  "an op's graph_inputs_at must name one of its tensor inputs");
    inputs_before_members = Op::graph_inputs_at;
  }
  node.const_inputs_at = 0;
  for (std::size_t i = 0; i < inputs_before_members; ++i) {
    node.const_inputs_at += sizes[i];
  }
  if constexpr (
      requires { op.export_error(in...); } && !requires { op.export_error(); }) {
    node.export_error = op.export_error(in...);
  }
}

/// The part of a traced node that does not depend on the op's types: compiled once, not once
/// per op (tracing is cold; Note [Tracing]). Returns the node, for its export metadata.
TAPEFLOW_COLD inline trace::GraphNode& append_traced_node(
    trace::Graph& graph, std::string_view op, DType dtype, const Shape& shape,
    std::vector<std::int32_t> inputs, trace::NodeFn run,
    decltype(trace::GraphNode::fused_kernel) fused, bool fused_rows,
    trace::GraphNode::FusedReduction fused_reduction, trace::GraphNode::FusedAffine fused_affine,
    bool output_epilogue, bool stateful, std::int64_t out_id) {
  if (devices::DeviceId const d = devices::scope_device();
      d > 0 && devices::backend_of(d) != backend::cpu_backend) {
    fused = nullptr;  // fused chains are CPU kernels: a trace for another backend runs its own
    fused_reduction = {};
    fused_affine = {};
    output_epilogue = false;
  }
  trace::GraphNode node;
  node.op = std::string(op);
  node.stateful = stateful;
  node.dtype = dtype;
  node.shape = shape;
  node.inputs = std::move(inputs);
  node.run = std::move(run);
  node.fused_kernel = fused;
  node.fused_rows = fused != nullptr && fused_rows;
  node.fused_reduction = fused_reduction;
  node.fused_affine = fused_affine;
  node.output_epilogue = output_epilogue;
  graph.add_node(std::move(node), out_id);
  return graph.nodes.back();
}

/// Runs `op` on a traced node's input values (`sizes`: values per input).
template <class Op, class... In>
AnyTensor run_traced(const Op& op, const std::size_t* sizes, std::span<const AnyTensor> values) {
  std::array<std::size_t, sizeof...(In)> offsets{};
  for (std::size_t i = 1; i < sizeof...(In); ++i) {
    offsets[i] = offsets[i - 1] + sizes[i - 1];
  }
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return AnyTensor(execute(op, rebuild<In>(values, offsets[I], sizes[I])...));
  }(std::index_sequence_for<In...>{});
}

/// A traced node's run closure. Its type depends on the op alone, not on the input types, so a
/// program compiles one NodeFn holder per op (compile time, Note [Tracing]).
template <class Op>
struct TracedRun {
  Op op;
  std::vector<std::size_t> sizes;
  AnyTensor (*run)(const Op&, const std::size_t*, std::span<const AnyTensor>);
  AnyTensor operator()(std::span<const AnyTensor> values) const {
    return run(op, sizes.data(), values);
  }
};

/// What a traced node of `op` runs: `op` on its inputs' values (`sizes`: values per input).
template <class Op, class... In>
TAPEFLOW_COLD trace::NodeFn traced_node_fn(const Op& op,
                                           const std::array<std::size_t, sizeof...(In)>& sizes) {
  return TracedRun<Op>{op, std::vector<std::size_t>(sizes.begin(), sizes.end()),
                       &run_traced<Op, In...>};
}

/// Makes `self` a node of `op`, a changed copy of the op it was traced with (a graph pass's
/// rewrite, Note [Padding folding]): what it runs and the attributes and constant inputs that
/// export and TensorBoard show.
template <class Op, class... In>
TAPEFLOW_COLD void rebuild_traced_node(trace::GraphNode& self, const Op& op,
                                       const std::array<std::size_t, sizeof...(In)>& sizes) {
  self.run = traced_node_fn<Op, In...>(op, sizes);
  self.attrs = op.attributes();
  if constexpr (requires { op.graph_inputs(); }) {
    self.const_inputs = op.graph_inputs();
  }
}

/// Appends the value slots of an input's tensors.
template <class X>
void append_slots(trace::Graph& graph, std::vector<std::int32_t>& slots, const X& x) {
  for (const auto& t : tensors_of(x)) {
    slots.push_back(graph.slot_of(t));
  }
}

/// Appends `op` to the graph being traced and returns its symbolic output (Note [Tracing]).
/// Cold: tracing runs once per signature, so this is compiled for size, not speed.
template <class Op, class... In>
TAPEFLOW_COLD execute_result_t<Op, In...> trace_node(trace::Graph& graph, const Op& op,
                                                     const In&... in) {
  auto out = [&]() -> execute_result_t<Op, In...> {
    if constexpr (requires { op.infer(in...); }) {
      auto spec = op.infer(in...);
      using Spec = decltype(spec);
      return tensor_access::symbolic<typename Spec::value_type, Spec::rank>(spec.dims);
    } else {
      // forward-style ops only compute dims and share a buffer: on symbolic inputs they give
      // a tensor without buffer, of the right dims. The symbolic output keeps the identity
      // forward gave (a variable read keeps the variable's, so tapes in the body watch it).
      auto o = op.forward(in...);
      using O = decltype(o);
      return tensor_access::symbolic<typename O::value_type, O::rank_v>(o.dims(), o.id());
    }
  }();
  using Out = decltype(out);
  using OutT = typename Out::value_type;
  const std::array<std::size_t, sizeof...(In)> sizes{tensors_of(in).size()...};
  decltype(trace::GraphNode::fused_kernel) fused = nullptr;
  bool fused_rows = false;
  if constexpr (std::is_floating_point_v<OutT> &&
                (std::is_same_v<typename In::value_type, OutT> && ...) &&
                requires { &Op::template fused_kernel<OutT>; }) {
    fused = &Op::template fused_kernel<OutT>;
    if constexpr (requires { Op::fused_rows; }) {
      fused_rows = Op::fused_rows;
    }
  }
  trace::GraphNode::FusedReduction fused_reduction;
  if constexpr (std::is_floating_point_v<OutT> && sizeof...(In) == 1 &&
                (std::is_same_v<typename In::value_type, OutT> && ...) &&
                requires { op.template fused_reduction<OutT>(in...); }) {
    fused_reduction = op.template fused_reduction<OutT>(in...);
  }
  trace::GraphNode::FusedAffine fused_affine;
  if constexpr (std::is_floating_point_v<OutT> && requires { op.template fused_affine<OutT>(); }) {
    fused_affine = op.template fused_affine<OutT>();
  }
  std::vector<std::int32_t> inputs;
  (append_slots(graph, inputs, in), ...);
  trace::GraphNode& node =
      append_traced_node(graph, Op::name, dtype_v<OutT>, out.shape(), std::move(inputs),
                         traced_node_fn<Op, In...>(op, sizes), fused, fused_rows, fused_reduction,
                         fused_affine, output_epilogue_op<Op>(), is_stateful_op<Op>(), out.id());
  set_export_metadata<Out>(node, op, sizes, in...);
  if constexpr (requires { Op::same_elements; }) {
    node.same_elements = Op::same_elements;
  }
  if constexpr (requires { Op::folds_input_padding; }) {
    node.absorb_input_padding = [op, sizes](trace::GraphNode& self,
                                            const std::array<std::int64_t, 4>& paddings) {
      Op padded = op;
      if (!padded.absorb_input_padding(paddings)) {
        return false;
      }
      rebuild_traced_node<Op, In...>(self, padded, sizes);
      return true;
    };
  }
  if constexpr (requires(Op o, std::array<std::int64_t, 4> a) { o.absorb_output_crop(a, a); }) {
    node.absorb_output_crop = [op, sizes](trace::GraphNode& self,
                                          const std::array<std::int64_t, 4>& begin,
                                          const std::array<std::int64_t, 4>& size) {
      Op cropped = op;
      if (!cropped.absorb_output_crop(begin, size)) {
        return false;
      }
      rebuild_traced_node<Op, In...>(self, cropped, sizes);
      self.shape = Shape(size);
      return true;
    };
  }
  if (!tape::active().empty()) {
    record(op, out, in...);  // a GradientTape inside the traced body records symbolically
  }
  return out;
}

/// The device of the first input holding a value (none without one).
template <class X>
devices::DeviceId input_device(const X& x) noexcept {
  for (const auto& t : tensors_of(x)) {
    if (const Buffer* b = tensor_access::buffer(t); b != nullptr) {
      return b->device;
    }
  }
  return devices::none;
}
template <class... In>
devices::DeviceId first_input_device(const In&... in) noexcept {
  devices::DeviceId device = devices::none;
  ((device = device == devices::none ? input_device(in) : device), ...);
  return device;
}

/// The dtype of the first tensor among `in` (lists flattened), or DType::invalid: what a
/// backend's kernel registration is keyed on (TensorFlow's type attribute, e.g. "T").
template <class X>
DType input_dtype(const X& x) noexcept {
  using T = typename decltype(tensors_of(x))::value_type::value_type;
  return tensors_of(x).empty() ? DType::invalid : dtype_v<T>;
}
template <class... In>
DType first_input_dtype(const In&... in) noexcept {
  DType dtype = DType::invalid;
  ((dtype = dtype == DType::invalid ? input_dtype(in) : dtype), ...);
  return dtype;
}

/// An op's own placement (its `placement_device()`, e.g. a variable write goes where the
/// variable lives), or none.
template <class Op>
devices::DeviceId preferred_device(const Op& op) {
  if constexpr (requires { op.placement_device(); }) {
    return op.placement_device();
  } else {
    return devices::none;
  }
}

/// The part of run_registered_kernel that does not depend on the op's types, compiled once:
/// a device outside host memory gets copies of inputs held elsewhere (as TensorFlow copies
/// eager inputs to the op's device; host-memory devices read them in place), then the kernel
/// writes into `result`.
TAPEFLOW_NOINLINE inline void run_erased_kernel(ErasedKernel kernel, const void* op,
                                                AnyTensor result, std::vector<AnyTensor>& inputs) {
  if (devices::device_memory(devices::allocation_device()) != nullptr) {
    for (auto& t : inputs) {
      t = t.on_allocation_device();
    }
  }
  kernel(op, result, inputs);
}

/// Runs `op`'s kernel of a registered backend (ops/kernel_registry.hpp), its inputs and output
/// type-erased. Placement checked the kernel exists. Cold: the CPU path is the common one.
template <class Op, class Out, class... In>
TAPEFLOW_NOINLINE void run_registered_kernel(const Op& op, backend::BackendId backend, Out& out,
                                             const In&... in) {
  std::vector<AnyTensor> inputs;
  inputs.reserve((tensors_of(in).size() + ... + std::size_t{0}));
  (append_erased(inputs, in), ...);
  // `result` shares out's buffer: the kernel writes the op's result there.
  run_erased_kernel(registered_kernel<Op>(backend), &op, AnyTensor(out), inputs);
}

/// execute()'s work: placement, shape rule, allocation, the kernel of the op's device's backend,
/// tape recording; or, while a tf::function traces, a graph node.
template <class Op, class... In>
execute_result_t<Op, In...> run_or_trace(const Op& op, const In&... in) {
  if (trace::Graph* graph = trace::active(); graph != nullptr) {
    return trace_node(*graph, op, in...);
  }
  require_inputs(op, in...);
  // Note [Placement]: the op's outputs are allocated on its device; a forward-style output that
  // shares a buffer on another device (a reshape or variable read under a tf::device scope) is
  // copied there, as TensorFlow copies eager tensors to the op's device.
  if constexpr (requires { op.forward(in...); }) {
    // Forward-style ops relabel or share buffers: no kernel, so any host-memory device runs them.
    devices::AllocationScope const allocation(
        devices::place_op(Op::name, nullptr, preferred_device(op), first_input_device(in...)));
    auto out = tensor_access::on_allocation_device(op.forward(in...));
    if (!tape::active().empty()) {
      record(op, out, in...);
    }
    return out;
  } else {
    auto const device =
        devices::place_op(Op::name, &has_registered_kernel<Op>, preferred_device(op),
                          first_input_device(in...), first_input_dtype(in...));
    devices::AllocationScope const allocation(device);
    auto spec = op.infer(in...);
    using Spec = decltype(spec);
    using Out = Tensor<typename Spec::value_type, Spec::rank>;
    Out out = Out::uninitialized(spec.dims);
    if (device == 0 || devices::backend_of(device) == backend::cpu_backend) [[likely]] {
      kernel<Op, backend::Cpu>::run(op, out, in...);
    } else {
      run_registered_kernel(op, devices::backend_of(device), out, in...);
    }
    if (!tape::active().empty()) {
      record(op, out, in...);
    }
    return out;
  }
}

/// Runs `op` on tensor inputs: placement, shape rule, allocation, the kernel of the op's
/// device's backend, tape recording; or, while a tf::function traces, appends a graph node.
template <class Op, class... In>
execute_result_t<Op, In...> execute(const Op& op, const In&... in) {
  if constexpr (precompiled_v<Op, In...>) {
    return execute_precompiled(op, in...);
  } else {
    return run_or_trace(op, in...);
  }
}

#ifndef TAPEFLOW_PRECOMPILED
// Defined for tapeflow::instantiations, which compiles the specializations that programs built
// with TAPEFLOW_PRECOMPILED call. It must not call execute(): a program's execute<Op, In...> is
// the forwarding branch above, and the linker keeps one execute<Op, In...> for the program and
// the library alike, so the two would call each other forever.
template <class Op, class... In>
execute_result_t<Op, In...> execute_precompiled(const Op& op, const In&... in) {
  return run_or_trace(op, in...);
}
#endif

/// Shape text for error messages: "(2, 3)".
template <std::size_t R>
std::string shape_text(const std::array<std::int64_t, R>& dims) {
  return Shape(dims).to_string();
}

// The tape sums gradient contributions with AddN: an op, so an outer tape records the sum.
template <class T, std::size_t R>
Tensor<T, R> tape::Backprop::accumulate_sum(const Tensor<T, R>& a, const Tensor<T, R>& b) {
  return execute(ops::AddN{}, a, b);
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
