// The graph that tf::function builds while tracing, and the thread's active trace.
//
// Note [Tracing]: while a trace is active on a thread, every op (through detail::execute),
// every variable read and every variable assignment appends a node instead of computing.
// Inputs are "symbolic" tensors (no buffer; an id with symbolic_id_bit) standing for function
// arguments or node outputs; ordinary tensors used inside are captured as constants. Each
// node keeps a type-erased closure that runs the op eagerly on real inputs, so the executor,
// the tape and graph export all work from the op definitions. Nodes run in program order,
// which keeps side effects (print, assign) ordered.
// IWYU pragma: private, include <tapeflow/function/function.hpp>
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
class ConcreteFunction;  // function/graph.hpp: the sub-graphs a control-flow node calls

namespace detail::trace {

/// A node's run function: a shared, immutable, reference-counted closure. Tracing makes one
/// per op type, so it is kept cheap to instantiate: per closure type, one call and one delete
/// function (std::function or std::make_shared would add a control block class each).
class NodeFn {
 public:
  NodeFn() = default;
  template <class Fun>
  NodeFn(Fun fun)  // NOLINT(google-explicit-constructor): built from lambdas in place
      : state_(new Holder<Fun>(std::move(fun))) {}
  NodeFn(const NodeFn& other) noexcept : state_(other.state_) {
    if (state_ != nullptr) {
      state_->refs.fetch_add(1, std::memory_order_relaxed);
    }
  }
  NodeFn(NodeFn&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  NodeFn& operator=(NodeFn other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }
  ~NodeFn() {
    if (state_ != nullptr && state_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      state_->destroy(state_);
    }
  }
  AnyTensor operator()(std::span<const AnyTensor> values) const {
    return state_->call(state_, values);
  }
  explicit operator bool() const noexcept { return state_ != nullptr; }

 private:
  struct State {
    std::atomic<long> refs{1};
    AnyTensor (*call)(const State*, std::span<const AnyTensor>);
    void (*destroy)(const State*);
  };
  template <class Fun>
  struct Holder final : State {
    explicit Holder(Fun f) : fun(std::move(f)) {
      call = [](const State* s, std::span<const AnyTensor> values) {
        return static_cast<const Holder*>(s)->fun(values);
      };
      destroy = [](const State* s) { delete static_cast<const Holder*>(s); };
    }
    Fun fun;
  };
  State* state_ = nullptr;
};

/// One node: an op applied to value slots, producing at most one value slot. The export
/// fields come from the op struct (Note [One definition per op] in ops/op_concepts.hpp): what
/// a SavedModel exporter writes as a TensorFlow NodeDef.
struct GraphNode {
  std::string name;  // unique within the graph, e.g. "MatMul_2"
  std::string op;    // TensorFlow op name
  /// TensorFlow's attributes, typed (the op's `attributes()`); `type_attr` is not among them.
  OpAttributes attrs;
  /// The attribute holding the dtype of the first tensor input (or of the output for ops
  /// without tensor inputs), e.g. "T"; empty when the op has none.
  std::string type_attr;
  /// The value of `type_attr`.
  DType type_attr_dtype = DType::invalid;
  /// TensorFlow's output argument name, e.g. "z"; `no_output_arg` ("^") for TensorFlow ops
  /// without output; empty when the op has no TensorFlow equivalent (not exportable).
  std::string output_arg;
  /// TensorFlow inputs the op holds as members (TensorFlow input name, constant value), in
  /// TensorFlow's order: they go into the NodeDef's inputs before `inputs[const_inputs_at]`.
  std::vector<std::pair<std::string, AnyTensor>> const_inputs;
  /// Where `const_inputs` go among `inputs` (`inputs.size()`: after them all).
  std::size_t const_inputs_at = 0;
  /// Ids of the variables the op reads or writes (`Variable::id()`), in TensorFlow's order:
  /// resource inputs that come before all other inputs of the NodeDef.
  std::vector<std::int64_t> resources;
  /// Why TensorFlow's op cannot express this node (e.g. Softmax over a non-last axis); empty
  /// when it can.
  std::string export_error;
  std::vector<std::int32_t> inputs;  // value slots
  std::int32_t output = -1;          // value slot, -1 for ops without output (assign, print)
  /// Reads or changes state beyond its inputs (variables, output streams, random generators):
  /// the op's own `stateful` member, so a tf::cond around it is an `If`, not a `StatelessIf`.
  bool stateful = false;
  DType dtype = DType::invalid;
  Shape shape;
  NodeFn run;
  /// The functions a control-flow node calls, in the order of its `FunctionName` attributes
  /// (If: then, else; While: cond, body); empty for ops. Kept on the node (not only in `run`)
  /// so that to_code and graph export can show the branches and bodies.
  std::vector<std::shared_ptr<const ConcreteFunction>> functions;
  /// Set for elementwise ops whose output dtype equals their inputs' (Note [Fusion]).
  void (*fused_kernel)(void* out, const void* a, bool a_vec, const void* b, bool b_vec,
                       std::int64_t n) = nullptr;
  /// Whether `fused_kernel` may take an operand repeated along leading axes (a bias).
  bool fused_rows = false;
  /// Whether the value is the input's elements in their order under this node's shape, whatever
  /// the input's shape (a Reshape): a fused chain takes such a node only between two others, as a
  /// copy (`fused_kernel`) or a view (Note [Fusion]), and a chain of them reads its first one's
  /// input (Note [Graph passes]).
  bool same_elements = false;
  /// Set for reductions a fused chain may end in: sums and means of every element, of leading
  /// axes ([rows, inner] -> [inner]), of trailing ones ([inner, block] -> [inner]) or of middle
  /// ones ([outer, red, columns] -> [outer, columns]) (Note [Fusion]): the op's own kernel, split
  /// into blocks a chain produces chunk by chunk. The hooks get this struct for its sizes.
  struct FusedReduction {
    std::int64_t block = 0;    // chunk starts must be multiples of it
    std::int64_t inner = 1;    // values of the output (1: a sum of every element)
    std::int64_t columns = 1;  // output values one block of a middle-axis sum adds up to
    /// Values of partial results `accumulate` writes for `n` input elements.
    std::int64_t (*partials)(std::int64_t n, const FusedReduction& self) = nullptr;
    /// Writes the partial results of input elements [start, start + n), read from `in`.
    void (*accumulate)(void* partials, const void* in, std::int64_t start, std::int64_t n,
                       const FusedReduction& self) = nullptr;
    /// The op's `inner` output values from the partial results of all `n` input elements.
    void (*finish)(void* out, const void* partials, std::int64_t n,
                   const FusedReduction& self) = nullptr;
  };
  FusedReduction fused_reduction;
  /// Set for ops whose output is, by channel (the last axis), x * a + b with per-channel a and
  /// b computed from their other inputs (batch normalization with known statistics): a fused chain
  /// streams x and repeats a and b like a bias (Note [Fusion]).
  struct FusedAffine {
    /// Writes a and b (`c` values each) from the raw data of the inputs after x.
    void (*coefficients)(const void* const* params, std::int64_t c, double attribute, void* a,
                         void* b) = nullptr;
    double attribute = 0;  // the op attribute they depend on (FusedBatchNormV3: epsilon)
    /// y = x * a + b over n elements, a and b given per element; y may be x.
    void (*kernel)(void* y, const void* x, const void* a, const void* b, std::int64_t n) = nullptr;
  };
  FusedAffine fused_affine;
  /// Whether the op's CPU kernel takes an output epilogue: a fused chain that reads its output
  /// then runs on it while it is in cache (Note [Output epilogues] in
  /// backend/cpu/output_epilogue.hpp).
  bool output_epilogue = false;
  /// Set for convolutions whose first input is the convolution's input: makes this node the same
  /// op with zero padding {top, bottom, left, right} of that input in its window (TensorFlow's
  /// EXPLICIT padding), so it can read the input unpadded; false, and unchanged, when the op
  /// cannot (Note [Padding folding] in function/detail/graph_passes.hpp).
  std::function<bool(GraphNode& self, const std::array<std::int64_t, 4>& paddings)>
      absorb_input_padding;
  /// Set for convolutions' input gradients: makes this node the same op computing only rows and
  /// columns [begin, begin + size) of its value (the gradient of the unpadded input when a Pad
  /// folded into the convolution); false, and unchanged, when the op cannot.
  std::function<bool(GraphNode& self, const std::array<std::int64_t, 4>& begin,
                     const std::array<std::int64_t, 4>& size)>
      absorb_output_crop;
};

/// A traced function body. Value slots: arguments first, then constants and node outputs.
class Graph {
 public:
  std::vector<GraphNode> nodes;
  std::vector<std::int32_t> arg_slots;     // slot of each tensor argument, in order
  std::vector<std::int32_t> output_slots;  // slots of the returned tensors
  std::vector<std::pair<std::int32_t, AnyTensor>> constants;
  std::int32_t num_slots = 0;
  /// Set on the sub-graph of a control-flow branch or loop (tf::cond, tf::while_loop): a
  /// symbolic tensor of an enclosing trace used here is captured as an extra argument of this
  /// graph (after the declared ones), and `captured` keeps the parent's slot for each.
  Graph* parent = nullptr;
  std::vector<std::int32_t> captured;
  /// Set while several threads trace sub-graphs of this graph at once (strategy.run's
  /// replicas, Note [strategy.run in a trace]): their captures through this graph, which may
  /// add arguments to it and to its own parents, hold this lock.
  std::mutex* capture_lock = nullptr;
  /// The tensor id of each captured argument (the enclosing trace's symbolic tensor).
  std::vector<std::int64_t> captured_ids;
  /// Variables read while tracing this graph (tf::cond / tf::while_loop add those their
  /// sub-graphs read): a GradientTape inside the body differentiates control flow through them.
  struct VariableRead {
    std::int64_t id = 0;  // the read's id (variable id bits, symbolic)
    DType dtype = DType::invalid;
    Shape shape;
  };
  std::vector<VariableRead> variable_reads;

  /// A new argument placeholder of the given dims; returns the symbolic tensor standing for it.
  template <class T, std::size_t R>
  Tensor<T, R> add_argument(const std::array<std::int64_t, R>& dims) {
    auto t = tensor_access::symbolic<T, R>(dims);
    std::int32_t slot = new_slot(t.id());
    arg_slots.push_back(slot);
    arg_dtypes_.push_back(dtype_v<T>);
    arg_shapes_.push_back(Shape(dims));
    return t;
  }

  /// add_argument for a type known only at run time (an AnyTensor argument).
  AnyTensor add_argument(DType dtype, const Shape& shape) {
    auto t = AnyTensor::symbolic(dtype, shape);
    std::int32_t slot = new_slot(t.id());
    arg_slots.push_back(slot);
    arg_dtypes_.push_back(dtype);
    arg_shapes_.push_back(shape);
    return t;
  }

  /// The slot holding `t`: a symbolic tensor of this graph, or an ordinary tensor captured as
  /// a constant (once per tensor id).
  template <class T, std::size_t R>
  std::int32_t slot_of(const Tensor<T, R>& t) {
    if (auto it = slot_by_id_.find(t.id()); it != slot_by_id_.end()) {
      return it->second;
    }
    return slot_of(AnyTensor(t));
  }
  std::int32_t slot_of(const AnyTensor& t) {
    if (auto it = slot_by_id_.find(t.id()); it != slot_by_id_.end()) {
      return it->second;
    }
    if (t.is_symbolic() && parent != nullptr) {
      std::int32_t outer = 0;
      {
        std::unique_lock<std::mutex> lock;
        if (parent->capture_lock != nullptr) {
          lock = std::unique_lock(*parent->capture_lock);
        }
        outer = parent->slot_of(t);  // throws if no enclosing trace owns it
      }
      std::int32_t slot = new_slot(t.id());
      arg_slots.push_back(slot);
      arg_dtypes_.push_back(t.dtype());
      arg_shapes_.push_back(t.shape());
      captured.push_back(outer);
      captured_ids.push_back(t.id());
      return slot;
    }
    if (t.is_symbolic()) {
      throw invalid_argument(
          "tf::function: a symbolic tensor from another trace (or one that escaped its function) "
          "was used "
          "while tracing; tensors created inside a tf::function body exist only in that body");
    }
    if (!t.has_value()) {
      throw failed_precondition(
          "tf::function capture: the tensor holds no value (it was default-constructed)");
    }
    std::int32_t slot = new_slot(t.id());
    constants.emplace_back(slot, t);
    return slot;
  }

  /// Appends a node; `output_id` (0 for none) names its output for later slot_of() calls.
  std::int32_t add_node(GraphNode node, std::int64_t output_id) {
    node.name = unique_name(node.op);
    if ((output_id & variable_id_bit) != 0) {
      variable_reads.push_back({output_id, node.dtype, node.shape});
    }
    if (output_id != 0) {
      node.output = new_slot(output_id);
    }
    nodes.push_back(std::move(node));
    return nodes.back().output;
  }

  [[nodiscard]] const std::vector<DType>& arg_dtypes() const noexcept { return arg_dtypes_; }
  [[nodiscard]] const std::vector<Shape>& arg_shapes() const noexcept { return arg_shapes_; }

 private:
  std::int32_t new_slot(std::int64_t id) {
    std::int32_t slot = num_slots++;
    slot_by_id_[id] = slot;  // a later producer of the same id (a re-read variable) wins
    return slot;
  }
  std::string unique_name(std::string_view op) {
    int& n = name_counts_[std::string(op)];
    std::string name(op);
    if (n > 0) {
      name += "_" + std::to_string(n);
    }
    ++n;
    return name;
  }

  std::unordered_map<std::int64_t, std::int32_t> slot_by_id_;
  std::unordered_map<std::string, int> name_counts_;
  std::vector<DType> arg_dtypes_;
  std::vector<Shape> arg_shapes_;
};

/// The graph being traced on this thread, or null (innermost last).
inline std::vector<Graph*>& stack() {
  thread_local std::vector<Graph*> graphs;
  return graphs;
}
inline Graph* active() noexcept {
  auto& s = stack();
  return s.empty() ? nullptr : s.back();
}

/// Makes `graph` the active trace while alive.
class Scope {
 public:
  explicit Scope(Graph* graph) { stack().push_back(graph); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  ~Scope() { stack().pop_back(); }
};

/// Suspends tracing while alive (the executor runs nodes eagerly).
class Suspend {
 public:
  Suspend() : saved_(std::move(stack())) { stack().clear(); }
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;
  ~Suspend() { stack() = std::move(saved_); }

 private:
  std::vector<Graph*> saved_;
};

}  // namespace detail::trace
TAPEFLOW_END_NAMESPACE
