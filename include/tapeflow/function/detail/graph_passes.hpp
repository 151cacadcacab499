// IWYU pragma: private, include <tapeflow/function/function.hpp>
// Passes over a traced graph, run once per ConcreteFunction on a copy of the graph as traced.
//
// Note [Graph passes]. The passes know ops only through what every node carries (Note [One
// definition per op]): its TensorFlow name, attributes, constant inputs, `stateful`, and `run`.
// They change which nodes run and which slot a node reads; they never renumber slots or change
// a node's kernel (but padding folding, below), so every value still comes from the op's one
// definition, and results are bitwise those of the graph as traced.
// - A node is *pure* when it is a TensorFlow op (output_arg set) with an output, not stateful,
//   and calls no sub-graph. Only pure nodes are removed, merged or evaluated early: stateful
//   nodes (variables, prints, random), control flow and tapeflow's own bookkeeping nodes (which
//   may share state with their neighbours) stay as traced, in order.
// - *Pinned* slots keep their value: the graph's outputs (a caller must not receive an alias of
//   an argument or a constant it might change) and the enclosing-graph slots that sub-graphs of
//   control-flow nodes captured by number (to_code names their arguments through them).
// - Pruning (off with `disable_model_pruning`): pure nodes whose value reaches no output and no
//   kept node are dropped (a backward sweep).
// - Constant folding (`constant_folding`): a pure node whose inputs are all constants runs at
//   trace time and its value becomes a constant of the graph (values up to 10 MiB, as
//   TensorFlow's grappler). Graph constants are captured values, so folding also freezes
//   computations on captured tensors: TensorFlow's tensors are immutable and so are captures.
// - CSE (`arithmetic_optimization`): a pure node equal to an earlier one (same op, attributes,
//   constant inputs, dtype, shape and input slots, equal graph constants being one slot) reads
//   the earlier one's value instead. Those fields are what export writes, so they are the whole
//   op only where TensorFlow can express it: a node with an `export_error` (Softmax over a
//   non-last axis keeps the axis as a member) is never merged.
// - Simplification (`arithmetic_optimization`): x * 1, 1 * x, x / 1, x - (+0), x + (-0)
//   (floating point x + (+0) is not x when x is -0), integer x + 0 and x - 0, Cast to its input's
//   dtype, Reshape to its input's shape, Transpose by the identity permutation or of a Transpose
//   that undoes it: the node reads through to x, when its dtype and shape are x's. A Reshape of a
//   Reshape reads the inner one's input (and reads through when that has its shape).
// - Identity removal (`dependency_optimization`).
// - Padding folding (`remapping`, Note [Padding folding] below): the one pass that changes a
//   node's op, into the same op with TensorFlow's EXPLICIT padding, through the node's own
//   `absorb_input_padding` or `absorb_output_crop` (the op's definition makes the new node, as
//   when it was traced).
// A GradientTape recording a call runs the graph as traced instead (ConcreteFunction::run), so
// its gradients see every op, captured constants included.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/graph_optimizer_options.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/detail/graph_optimization_report.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace detail {
namespace passes {

inline constexpr std::int64_t max_folded_bytes = std::int64_t{10} << 20;
/// Graph constants larger than this are not compared with others for CSE (they are hashed whole).
inline constexpr std::size_t max_merged_bytes = std::size_t{1} << 20;

inline bool is_pure(const trace::GraphNode& node) {
  return !node.stateful && node.output >= 0 && node.functions.empty() && !node.output_arg.empty() &&
         node.output_arg != no_output_arg;
}

// Equal dtype, shape and elements (bitwise: -0 and +0 differ, a NaN equals itself).
inline bool same_value(const AnyTensor& a, const AnyTensor& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape()) || !a.has_value() || !b.has_value()) {
    return false;
  }
  const auto n = static_cast<std::size_t>(a.num_elements());
  if (a.dtype() == DType::string) {
    const auto* x = static_cast<const std::string*>(a.raw_data());
    const auto* y = static_cast<const std::string*>(b.raw_data());
    return std::equal(x, x + n, y);
  }
  return std::memcmp(a.raw_data(), b.raw_data(), n * dtype_size(a.dtype())) == 0;
}

// Whether every element of `t` is `value`; for floating point also of `value`'s sign.
inline bool all_equal(const AnyTensor& t, double value) {
  if (!t.has_value()) {
    return false;
  }
  const auto n = static_cast<std::size_t>(t.num_elements());
  const auto check = [&]<class T>(const void* data) {
    const auto* x = static_cast<const T*>(data);
    return std::all_of(x, x + n, [&](T v) {
      if constexpr (std::is_floating_point_v<T>) {
        return v == static_cast<T>(value) && std::signbit(v) == std::signbit(value);
      } else {
        return v == static_cast<T>(value);
      }
    });
  };
  switch (t.dtype()) {
    case DType::float32:
      return check.template operator()<float>(t.raw_data());
    case DType::float64:
      return check.template operator()<double>(t.raw_data());
    case DType::int32:
      return check.template operator()<std::int32_t>(t.raw_data());
    case DType::int64:
      return check.template operator()<std::int64_t>(t.raw_data());
    default:
      return false;
  }
}

inline bool is_integer(DType d) { return d == DType::int32 || d == DType::int64; }

// A permutation held as a constant input ("perm"), or empty.
inline std::vector<std::int64_t> permutation(const trace::GraphNode& node) {
  for (const auto& [name, value] : node.const_inputs) {
    if (name != "perm" || !value.has_value()) {
      continue;
    }
    std::vector<std::int64_t> perm(static_cast<std::size_t>(value.num_elements()));
    for (std::size_t i = 0; i < perm.size(); ++i) {
      perm[i] =
          value.dtype() == DType::int32   ? static_cast<const std::int32_t*>(value.raw_data())[i]
          : value.dtype() == DType::int64 ? static_cast<const std::int64_t*>(value.raw_data())[i]
                                          : -1;
    }
    return perm;
  }
  return {};
}

class Optimizer {
 public:
  Optimizer(trace::Graph& graph, const config::optimizer::Options& options,
            std::vector<std::int32_t> captured)
      : g_(graph), options_(options), captured_(std::move(captured)) {}

  GraphOptimizationReport run() {
    if (options_.disable_meta_optimizer) {
      return report_;
    }
    index_slots();
    // Each pass can expose work for the others (a folded constant makes x * 1 visible, a
    // simplification makes two nodes equal); a few rounds reach the fixed point.
    for (int round = 0; round < 4; ++round) {
      const GraphOptimizationReport before = report_;
      if (options_.constant_folding) {
        fold_constants();
      }
      if (options_.arithmetic_optimization) {
        simplify();
        eliminate_common_subexpressions();
      }
      if (options_.dependency_optimization) {
        remove_identities();
      }
      if (options_.remapping) {
        fold_paddings();
        fold_crops();
      }
      if (!options_.disable_model_pruning) {
        prune();
      }
      if (!changed_since(before)) {
        break;
      }
    }
    return report_;
  }

 private:
  struct SlotInfo {
    DType dtype = DType::invalid;
    Shape shape;
    const AnyTensor* constant = nullptr;
    std::int64_t producer = -1;  // node index, -1: argument or constant
  };

  [[nodiscard]] bool changed_since(const GraphOptimizationReport& r) const {
    return report_.pruned != r.pruned || report_.constants_folded != r.constants_folded ||
           report_.common_subexpressions != r.common_subexpressions ||
           report_.simplified != r.simplified ||
           report_.identities_removed != r.identities_removed ||
           report_.paddings_folded != r.paddings_folded || report_.crops_folded != r.crops_folded;
  }

  void index_slots() {
    slots_.assign(static_cast<std::size_t>(g_.num_slots), {});
    pinned_.assign(static_cast<std::size_t>(g_.num_slots), false);
    for (std::size_t i = 0; i < g_.arg_slots.size(); ++i) {
      auto& s = slots_[static_cast<std::size_t>(g_.arg_slots[i])];
      s.dtype = g_.arg_dtypes()[i];
      s.shape = g_.arg_shapes()[i];
    }
    for (const auto& [slot, value] : g_.constants) {
      auto& s = slots_[static_cast<std::size_t>(slot)];
      s.dtype = value.dtype();
      s.shape = value.shape();
      s.constant = &value;
    }
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      const auto& node = g_.nodes[n];
      if (node.output >= 0) {
        auto& s = slots_[static_cast<std::size_t>(node.output)];
        s.dtype = node.dtype;
        s.shape = node.shape;
        s.producer = static_cast<std::int64_t>(n);
      }
    }
    for (auto slot : captured_) {
      pinned_[static_cast<std::size_t>(slot)] = true;
    }
    for (auto slot : g_.output_slots) {
      pinned_[static_cast<std::size_t>(slot)] = true;
    }
  }

  SlotInfo& slot(std::int32_t s) { return slots_[static_cast<std::size_t>(s)]; }

  // Every later read of node n's value reads `to` instead (n then dies, unless pinned).
  bool read_through(std::size_t n, std::int32_t to) {
    const std::int32_t from = g_.nodes[n].output;
    if (pinned_[static_cast<std::size_t>(from)] || from == to) {
      return false;
    }
    for (std::size_t k = n + 1; k < g_.nodes.size(); ++k) {
      for (auto& in : g_.nodes[k].inputs) {
        in = in == from ? to : in;
      }
    }
    dead_.push_back(n);
    return true;
  }

  // Whether node n may read through to slot `to`: the same dtype and shape as its value.
  bool same_type(std::size_t n, std::int32_t to) {
    const auto& node = g_.nodes[n];
    return slot(to).dtype == node.dtype && slot(to).shape == node.shape;
  }

  void fold_constants() {
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      auto& node = g_.nodes[n];
      if (!is_pure(node) || node.dtype == DType::string || folded_[n] ||
          node.shape.num_elements() * static_cast<std::int64_t>(dtype_size(node.dtype)) >
              max_folded_bytes) {
        continue;
      }
      std::vector<AnyTensor> inputs;
      bool constant = true;
      for (auto in : node.inputs) {
        const AnyTensor* value = slot(in).constant;
        constant = constant && value != nullptr;
        if (value != nullptr) {
          inputs.push_back(*value);
        }
      }
      if (!constant) {
        continue;
      }
      AnyTensor value;
      try {
        trace::Suspend eager;
        value = node.run(inputs);
      } catch (...) {
        continue;  // it fails the same way when the graph runs, where the error belongs
      }
      if (!value.has_value() || value.dtype() != node.dtype || !(value.shape() == node.shape)) {
        continue;
      }
      g_.constants.emplace_back(node.output, std::move(value));
      reindex_constants();
      folded_[n] = true;
      dead_.push_back(n);
      ++report_.constants_folded;
    }
    drop_dead();
  }

  void reindex_constants() {
    for (const auto& [s, value] : g_.constants) {
      slot(s).constant = &value;  // the vector may have moved its elements
    }
  }

  void simplify() {
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      const auto& node = g_.nodes[n];
      if (!is_pure(node) || is_dead(n)) {
        continue;
      }
      const std::int32_t to = simplified_input(node);
      if (to >= 0 && same_type(n, to) && read_through(n, to)) {
        ++report_.simplified;
      } else if (read_past_reshape(n)) {
        ++report_.simplified;
      }
    }
    drop_dead();
  }

  // A node whose value is its input's elements in order (`GraphNode::same_elements`, a Reshape)
  // reading another such node reads that one's input instead, as grappler folds Reshape(Reshape(x,
  // s1), s2) into Reshape(x, s2); the one read past dies unless something else reads it. The node
  // still runs its op on the shape it was traced with: its run views the new input that way first.
  bool read_past_reshape(std::size_t n) {
    auto& node = g_.nodes[n];
    if (!node.same_elements || node.inputs.size() != 1) {
      return false;
    }
    const std::int64_t p = slot(node.inputs[0]).producer;
    if (p < 0 || is_dead(static_cast<std::size_t>(p))) {
      return false;
    }
    const auto& inner = g_.nodes[static_cast<std::size_t>(p)];
    if (!inner.same_elements || !is_pure(inner) || inner.inputs.size() != 1 ||
        inner.dtype != node.dtype) {
      return false;
    }
    node.run = [run = std::move(node.run),
                traced = inner.shape](std::span<const AnyTensor> values) -> AnyTensor {
      const AnyTensor viewed = values[0].with_shape(traced);
      return run(std::span<const AnyTensor>(&viewed, 1));
    };
    node.inputs[0] = inner.inputs[0];
    return true;
  }

  // The slot node's value equals, or -1.
  std::int32_t simplified_input(const trace::GraphNode& node) {
    const auto& in = node.inputs;
    const auto constant_is = [&](std::size_t i, double v) {
      return in.size() == 2 && slot(in[i]).constant != nullptr &&
             all_equal(*slot(in[i]).constant, v);
    };
    const bool integer = is_integer(node.dtype);
    if (node.op == "Mul") {
      return constant_is(1, 1.0) ? in[0] : constant_is(0, 1.0) ? in[1] : -1;
    }
    if (node.op == "RealDiv" || node.op == "Div") {
      return constant_is(1, 1.0) ? in[0] : -1;
    }
    if (node.op == "Sub") {
      return constant_is(1, 0.0) ? in[0] : -1;  // +0, or integer 0
    }
    if (node.op == "AddV2" || node.op == "Add") {
      const double zero = integer ? 0.0 : -0.0;
      return constant_is(1, zero) ? in[0] : constant_is(0, zero) ? in[1] : -1;
    }
    if ((node.op == "Cast" || node.op == "Reshape") && !in.empty()) {
      return in[0];  // read through when dtype and shape agree (same_type)
    }
    if (node.op == "Transpose" && in.size() == 1) {
      const auto perm = permutation(node);
      if (perm.empty()) {
        return -1;
      }
      bool identity = true;
      for (std::size_t i = 0; i < perm.size(); ++i) {
        identity = identity && perm[i] == static_cast<std::int64_t>(i);
      }
      if (identity) {
        return in[0];
      }
      const std::int64_t p = slot(in[0]).producer;
      if (p < 0 || is_dead(static_cast<std::size_t>(p))) {
        return -1;
      }
      const auto& inner = g_.nodes[static_cast<std::size_t>(p)];
      const auto inner_perm = permutation(inner);
      if (inner.op != "Transpose" || !is_pure(inner) || inner.inputs.size() != 1 ||
          inner_perm.size() != perm.size()) {
        return -1;
      }
      // Output axis i is the inner output's axis perm[i], which is x's axis inner_perm[perm[i]].
      for (std::size_t i = 0; i < perm.size(); ++i) {
        const auto j = perm[i];
        if (j < 0 || j >= static_cast<std::int64_t>(perm.size()) ||
            inner_perm[static_cast<std::size_t>(j)] != static_cast<std::int64_t>(i)) {
          return -1;
        }
      }
      return inner.inputs[0];
    }
    return -1;
  }

  // Equal graph constants become one slot (each `x * 2.0f` captures a 2 of its own), so nodes
  // reading equal constants compare equal below, as TensorFlow's equal Const nodes merge. Equal
  // means the same dtype, shape and bytes (+0 and -0 differ); constants over `max_merged_bytes`
  // are left alone, which bounds what a trace hashes.
  void merge_equal_constants() {
    std::unordered_map<std::size_t, std::vector<std::int32_t>> by_hash;
    std::vector<std::int32_t> canonical(static_cast<std::size_t>(g_.num_slots), -1);
    bool any = false;
    for (const auto& [s, value] : g_.constants) {
      const auto bytes = static_cast<std::size_t>(value.num_elements()) * dtype_size(value.dtype());
      if (value.dtype() == DType::string || !value.has_value() || bytes > max_merged_bytes) {
        continue;
      }
      const std::size_t hash = std::hash<std::string_view>{}(std::string_view(
                                   static_cast<const char*>(value.raw_data()), bytes)) ^
                               (static_cast<std::size_t>(value.dtype()) << 1U) ^
                               std::hash<std::string>{}(value.shape().to_string());
      auto& bucket = by_hash[hash];
      for (auto earlier : bucket) {
        if (same_value(*slot(earlier).constant, value)) {
          canonical[static_cast<std::size_t>(s)] = earlier;
          any = true;
          break;
        }
      }
      if (canonical[static_cast<std::size_t>(s)] < 0) {
        bucket.push_back(s);
      }
    }
    if (!any) {
      return;
    }
    std::vector<bool> merged(canonical.size(), false);
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      for (auto& in : g_.nodes[n].inputs) {
        const std::int32_t to = canonical[static_cast<std::size_t>(in)];
        if (to >= 0 && !is_dead(n)) {
          report_.common_subexpressions += merged[static_cast<std::size_t>(in)] ? 0 : 1;
          merged[static_cast<std::size_t>(in)] = true;
          in = to;
        }
      }
    }
  }

  void eliminate_common_subexpressions() {
    merge_equal_constants();
    // Candidates share op and inputs; the full comparison runs only within those buckets.
    std::unordered_map<std::string, std::vector<std::size_t>> seen;
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      const auto& node = g_.nodes[n];
      if (!is_pure(node) || is_dead(n) || !node.export_error.empty()) {
        continue;
      }
      std::string key = node.op;
      for (auto in : node.inputs) {
        key += "," + std::to_string(in);
      }
      auto& bucket = seen[key];
      bool merged = false;
      for (std::size_t earlier : bucket) {
        if (equal_nodes(g_.nodes[earlier], node) && read_through(n, g_.nodes[earlier].output)) {
          ++report_.common_subexpressions;
          merged = true;
          break;
        }
      }
      if (!merged) {
        bucket.push_back(n);
      }
    }
    drop_dead();
  }

  static bool equal_nodes(const trace::GraphNode& a, const trace::GraphNode& b) {
    if (a.op != b.op || a.dtype != b.dtype || !(a.shape == b.shape) || a.inputs != b.inputs ||
        a.attrs != b.attrs || a.type_attr_dtype != b.type_attr_dtype ||
        a.const_inputs_at != b.const_inputs_at || a.resources != b.resources ||
        a.const_inputs.size() != b.const_inputs.size()) {
      return false;
    }
    for (std::size_t i = 0; i < a.const_inputs.size(); ++i) {
      if (a.const_inputs[i].first != b.const_inputs[i].first ||
          !same_value(a.const_inputs[i].second, b.const_inputs[i].second)) {
        return false;
      }
    }
    return true;
  }

  // Note [Padding folding]: a Pad of zeros around the rows and columns of an NHWC value, read
  // only as the input of convolutions that can take the padding into their window (VALID
  // Conv2D and DepthwiseConv2dNative, and their filter gradients: `absorb_input_padding`),
  // leaves the graph; each reader becomes the same op with TensorFlow's EXPLICIT padding over
  // the unpadded value, so nothing copies the padded tensor. The kernels skip taps outside the
  // input where they would have multiplied a zero: sums are those of the padded input, bitwise
  // but for the sign of a sum that is zero. All readers fold or none does. In a training step
  // Pad's gradient, a Slice of the convolution's input gradient, folds the same way
  // (`fold_crops`): the input gradient's op then computes only the unpadded rows and columns.
  void fold_paddings() {
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      const auto& pad = g_.nodes[n];
      if (pad.op != "Pad" || !is_pure(pad) || is_dead(n) || pad.inputs.size() != 1 ||
          pad.shape.rank() != 4 || pinned_[static_cast<std::size_t>(pad.output)] ||
          pad.const_inputs.size() != 1) {
        continue;
      }
      const AnyTensor& p = pad.const_inputs[0].second;
      if (p.dtype() != DType::int32 || !(p.shape() == Shape({4, 2}))) {
        continue;
      }
      const auto* pairs = static_cast<const std::int32_t*>(p.raw_data());
      if (pairs[0] != 0 || pairs[1] != 0 || pairs[6] != 0 || pairs[7] != 0) {
        continue;  // only rows and columns
      }
      const std::array<std::int64_t, 4> paddings{pairs[2], pairs[3], pairs[4], pairs[5]};
      std::vector<std::size_t> readers;
      std::vector<trace::GraphNode> folded;
      bool all = true;
      for (std::size_t k = n + 1; k < g_.nodes.size() && all; ++k) {
        const auto& node = g_.nodes[k];
        const auto reads = std::count(node.inputs.begin(), node.inputs.end(), pad.output);
        if (reads == 0 || is_dead(k)) {
          continue;
        }
        all = reads == 1 && node.inputs[0] == pad.output && node.absorb_input_padding &&
              node.dtype == pad.dtype;
        if (all) {
          folded.push_back(node);
          all = folded.back().absorb_input_padding(folded.back(), paddings);
          readers.push_back(k);
        }
      }
      if (!all || readers.empty()) {
        continue;
      }
      for (std::size_t i = 0; i < readers.size(); ++i) {
        folded[i].inputs[0] = pad.inputs[0];
        g_.nodes[readers[i]] = std::move(folded[i]);
      }
      dead_.push_back(n);
      ++report_.paddings_folded;
    }
    drop_dead();
  }

  // A Slice of rows and columns of an input gradient that only it reads (Note [Padding folding]).
  void fold_crops() {
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      const auto& slice = g_.nodes[n];
      if (slice.op != "Slice" || !is_pure(slice) || is_dead(n) || slice.inputs.size() != 1 ||
          slice.shape.rank() != 4 || slice.const_inputs.size() != 2) {
        continue;
      }
      const std::int64_t p = slot(slice.inputs[0]).producer;
      if (p < 0 || is_dead(static_cast<std::size_t>(p))) {
        continue;
      }
      auto& grad = g_.nodes[static_cast<std::size_t>(p)];
      std::array<std::int64_t, 4> begin{};
      std::array<std::int64_t, 4> size{};
      if (!grad.absorb_output_crop || grad.dtype != slice.dtype ||
          pinned_[static_cast<std::size_t>(grad.output)] || readers(grad.output) != 1 ||
          !int32_quad(slice.const_inputs[0].second, begin) ||
          !int32_quad(slice.const_inputs[1].second, size)) {
        continue;
      }
      trace::GraphNode cropped = grad;
      if (!cropped.absorb_output_crop(cropped, begin, size) || !(cropped.shape == slice.shape)) {
        continue;
      }
      // The input gradient writes the Slice's slot (which may be an output); its own slot, which
      // only the Slice read, is left without a producer or a reader.
      slot(grad.output).producer = -1;
      slot(slice.output).producer = p;
      grad = std::move(cropped);
      grad.output = slice.output;
      dead_.push_back(n);
      ++report_.crops_folded;
    }
    drop_dead();
  }

  // How many inputs of live nodes read slot `s`.
  [[nodiscard]] std::int64_t readers(std::int32_t s) const {
    std::int64_t count = 0;
    for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
      if (!is_dead(k)) {
        count += std::count(g_.nodes[k].inputs.begin(), g_.nodes[k].inputs.end(), s);
      }
    }
    return count;
  }

  // The four values of an int32 [4] constant.
  static bool int32_quad(const AnyTensor& t, std::array<std::int64_t, 4>& out) {
    if (t.dtype() != DType::int32 || !(t.shape() == Shape({4}))) {
      return false;
    }
    const auto* values = static_cast<const std::int32_t*>(t.raw_data());
    std::copy_n(values, 4, out.begin());
    return true;
  }

  void remove_identities() {
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      const auto& node = g_.nodes[n];
      if (node.op == "Identity" && is_pure(node) && !is_dead(n) && node.inputs.size() == 1 &&
          same_type(n, node.inputs[0]) && read_through(n, node.inputs[0])) {
        ++report_.identities_removed;
      }
    }
    drop_dead();
  }

  void prune() {
    std::vector<bool> live(static_cast<std::size_t>(g_.num_slots), false);
    for (std::size_t s = 0; s < live.size(); ++s) {
      live[s] = pinned_[s];
    }
    for (std::size_t n = g_.nodes.size(); n-- > 0;) {
      const auto& node = g_.nodes[n];
      if (is_pure(node) && !live[static_cast<std::size_t>(node.output)]) {
        dead_.push_back(n);
        ++report_.pruned;
        continue;
      }
      for (auto in : node.inputs) {
        live[static_cast<std::size_t>(in)] = true;
      }
    }
    drop_dead();
  }

  [[nodiscard]] bool is_dead(std::size_t n) const {
    return std::find(dead_.begin(), dead_.end(), n) != dead_.end();
  }

  // Removes the nodes in dead_ (their slots are no longer read) and re-indexes.
  void drop_dead() {
    if (dead_.empty()) {
      return;
    }
    std::vector<bool> remove(g_.nodes.size(), false);
    for (auto n : dead_) {
      remove[n] = true;
    }
    std::vector<trace::GraphNode> kept;
    kept.reserve(g_.nodes.size() - dead_.size());
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      if (!remove[n]) {
        kept.push_back(std::move(g_.nodes[n]));
      }
    }
    g_.nodes = std::move(kept);
    dead_.clear();
    folded_.assign(g_.nodes.size(), false);
    for (auto& s : slots_) {
      s.producer = -1;
    }
    for (std::size_t n = 0; n < g_.nodes.size(); ++n) {
      if (g_.nodes[n].output >= 0) {
        slot(g_.nodes[n].output).producer = static_cast<std::int64_t>(n);
      }
    }
  }

  trace::Graph& g_;
  config::optimizer::Options options_;
  std::vector<std::int32_t> captured_;  // slots sub-graphs captured by number
  GraphOptimizationReport report_;
  std::vector<SlotInfo> slots_;
  std::vector<bool> pinned_;
  std::vector<std::size_t> dead_;
  std::vector<bool> folded_ = std::vector<bool>(g_.nodes.size(), false);
};

}  // namespace passes

/// Runs the passes `options` enables on `graph` (Note [Graph passes]); `captured`: the slots of
/// `graph` that sub-graphs of its control-flow nodes captured. Returns what the passes did.
inline GraphOptimizationReport optimize_graph(trace::Graph& graph,
                                              const config::optimizer::Options& options,
                                              std::vector<std::int32_t> captured) {
  return passes::Optimizer(graph, options, std::move(captured)).run();
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
