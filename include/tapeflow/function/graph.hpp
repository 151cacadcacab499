// ConcreteFunction: one traced graph of a tf::function, its executor and its text form
// (TensorFlow: `ConcreteFunction`, `graph.as_graph_def()`).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/detail/observer.hpp>
#include <tapeflow/ops/detail/tape_record.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace detail {
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

template <class T, std::size_t... R>
AnyTensor allocate_any_typed(const Shape& shape, std::index_sequence<R...>) {
  AnyTensor out;
  auto make = [&]<std::size_t Rank>() {
    std::array<std::int64_t, Rank> dims{};
    for (std::size_t i = 0; i < Rank; ++i) {
      dims[i] = shape[i];
    }
    out = Tensor<T, Rank>::uninitialized(dims);
  };
  ((shape.rank() == R ? make.template operator()<R>() : void()), ...);
  return out;
}
/// A new uninitialised float tensor of run-time dtype and shape (executor outputs).
inline AnyTensor allocate_any(DType dtype, const Shape& shape) {
  if (dtype == DType::float64) {
    return allocate_any_typed<double>(shape, std::make_index_sequence<max_rank + 1>{});
  }
  return allocate_any_typed<float>(shape, std::make_index_sequence<max_rank + 1>{});
}
}  // namespace detail

/// A traced graph and how to run it. Nodes run in program order (keeping prints and
/// assignments ordered); each value is released after its last use.
class ConcreteFunction {
 public:
  /// Takes a finished trace and plans its execution (fusion groups, when each value is
  /// released); `name` is the tf::function's (FunctionOptions::name). Built by Function.
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
    for (auto slot : graph_->output_slots) {
      is_output_.insert(slot);
    }
    find_fusion_groups();
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
    // Fused chains bypass detail::execute, so an outside GradientTape would not see them:
    // while one records, every node runs on its own.
    const bool fuse = detail::tape::active().empty();
    // Note [Trace observer]: null unless tf::summary::trace_on is profiling.
    detail::trace::Observer* const observer =
        detail::trace::observer().load(std::memory_order_acquire);
    const std::int64_t call_start = observer != nullptr ? detail::trace::now_ns() : 0;
    std::size_t next_group = 0;
    for (std::size_t n = 0; n < graph_->nodes.size(); ++n) {
      while (next_group < groups_.size() && groups_[next_group].begin < n) {
        ++next_group;
      }
      if (fuse && next_group < groups_.size() && groups_[next_group].begin == n) {
        const auto& group = groups_[next_group];
        const std::int64_t start = observer != nullptr ? detail::trace::now_ns() : 0;
        run_group(group, values);
        if (observer != nullptr) {
          observer->ran(*this, group.begin, group.end, start, detail::trace::now_ns());
        }
        for (std::size_t k = group.begin; k < group.end; ++k) {
          for (auto slot : releases_[k]) {
            values[static_cast<std::size_t>(slot)] = AnyTensor{};
          }
        }
        n = group.end - 1;
        continue;
      }
      const auto& node = graph_->nodes[n];
      inputs.clear();
      for (auto slot : node.inputs) {
        inputs.push_back(values[static_cast<std::size_t>(slot)]);
      }
      const std::int64_t start = observer != nullptr ? detail::trace::now_ns() : 0;
      AnyTensor out = node.run(inputs);
      if (observer != nullptr) {
        observer->ran(*this, n, n + 1, start, detail::trace::now_ns());
      }
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
    if (observer != nullptr) {
      observer->called(*this, call_start, detail::trace::now_ns());
    }
    return outputs;
  }

  /// The tf::function's name (FunctionOptions::name), used in errors and graph export.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// Sizes (in nodes) of the fused elementwise chains (Note [Fusion]).
  [[nodiscard]] std::vector<std::size_t> fused_chains() const {
    std::vector<std::size_t> sizes;
    for (const auto& g : groups_) {
      sizes.push_back(g.end - g.begin);
    }
    return sizes;
  }
  /// The graph's nodes, in program (execution) order.
  [[nodiscard]] const std::vector<detail::trace::GraphNode>& nodes() const noexcept {
    return graph_->nodes;
  }
  /// The traced graph itself (slots, arguments, constants, outputs).
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
  // Note [Fusion]: consecutive elementwise nodes over the same element count (operands of that
  // count, or single values) run as one pass over chunks small enough to stay in L1, instead of
  // one pass over memory (and one allocation) per op. Intermediate values used only inside
  // the chain are never materialised.
  // Where one node input of a fused group comes from, decided once when the graph is built.
  enum class OperandKind : std::uint8_t {
    local,     // an earlier node of the group: its row of the per-thread scratch
    constant,  // a single-value graph constant: `splat` holds it broadcast to one chunk
    scalar,    // a single value known only at run time (an argument): broadcast per run
    vector,    // a full-length value: read in place
  };
  struct Operand {
    OperandKind kind = OperandKind::vector;
    std::int32_t index = 0;  // local: node in group; constant: offset into splat; else the slot
  };
  struct FusionGroup {
    std::size_t begin = 0;
    std::size_t end = 0;  // exclusive
    std::int64_t elements = 0;
    DType dtype = DType::invalid;
    std::vector<bool> materialize;  // per node of the group
    std::vector<Operand> operands;  // per node input, in order
    std::vector<double> splat;      // constant operands, broadcast to fused_chunk elements
    std::int32_t num_scalars = 0;   // run-time single-value operands
    std::vector<std::size_t> inputs_per_node;
    std::vector<std::int32_t> row;  // per node: its scratch row, -1 when materialised
    std::int32_t num_rows = 0;      // rows are reused once their value is dead
  };
  static constexpr std::int64_t fused_chunk = 256;  // 1-2 KiB per row: a chain stays in L1

  void find_fusion_groups() {
    const auto& nodes = graph_->nodes;
    std::vector<std::int64_t> elements(static_cast<std::size_t>(graph_->num_slots), -1);
    std::vector<const AnyTensor*> constant(static_cast<std::size_t>(graph_->num_slots), nullptr);
    for (std::size_t i = 0; i < graph_->arg_slots.size(); ++i) {
      elements[static_cast<std::size_t>(graph_->arg_slots[i])] =
          graph_->arg_shapes()[i].num_elements();
    }
    for (const auto& [slot, value] : graph_->constants) {
      elements[static_cast<std::size_t>(slot)] = value.num_elements();
      constant[static_cast<std::size_t>(slot)] = &value;
    }
    for (const auto& node : nodes) {
      if (node.output >= 0) {
        elements[static_cast<std::size_t>(node.output)] = node.shape.num_elements();
      }
    }
    auto fusible = [&](std::size_t k, std::int64_t n, DType dtype) {
      const auto& node = nodes[k];
      if (node.fused_kernel == nullptr || node.output < 0 || node.dtype != dtype ||
          node.shape.num_elements() != n || n <= 1) {
        return false;
      }
      for (auto slot : node.inputs) {
        const std::int64_t e = elements[static_cast<std::size_t>(slot)];
        if (e != n && e != 1) {
          return false;
        }
      }
      return true;
    };
    std::size_t i = 0;
    while (i < nodes.size()) {
      const std::int64_t n = nodes[i].shape.num_elements();
      if (!fusible(i, n, nodes[i].dtype)) {
        ++i;
        continue;
      }
      std::size_t j = i + 1;
      while (j < nodes.size() && fusible(j, n, nodes[i].dtype)) {
        ++j;
      }
      if (j - i >= 2) {
        FusionGroup group;
        group.begin = i;
        group.end = j;
        group.elements = n;
        group.dtype = nodes[i].dtype;
        const std::size_t width = group.dtype == DType::float64 ? sizeof(double) : sizeof(float);
        for (std::size_t k = i; k < j; ++k) {
          const auto slot = nodes[k].output;
          const auto last = last_use_[static_cast<std::size_t>(slot)];
          group.materialize.push_back(is_output_.count(slot) > 0 || last < 0 ||
                                      static_cast<std::size_t>(last) >= j);
          group.inputs_per_node.push_back(nodes[k].inputs.size());
          for (auto in : nodes[k].inputs) {
            Operand operand{OperandKind::vector, in};
            for (std::size_t p = i; p < k; ++p) {
              if (nodes[p].output == in) {
                operand = {OperandKind::local, static_cast<std::int32_t>(p - i)};
              }
            }
            const AnyTensor* value = constant[static_cast<std::size_t>(in)];
            if (operand.kind == OperandKind::vector &&
                elements[static_cast<std::size_t>(in)] == 1) {
              if (value != nullptr) {
                // Stored as raw bytes of the group's dtype in a double array (aligned for both).
                const std::size_t offset = group.splat.size();
                group.splat.resize(offset + fused_chunk * width / sizeof(double));
                auto* bytes = reinterpret_cast<std::byte*>(group.splat.data() + offset);
                for (std::int64_t e = 0; e < fused_chunk; ++e) {
                  std::memcpy(bytes + e * static_cast<std::int64_t>(width), value->raw_data(),
                              width);
                }
                operand = {OperandKind::constant, static_cast<std::int32_t>(offset)};
              } else {
                operand.kind = OperandKind::scalar;
                ++group.num_scalars;
              }
            }
            group.operands.push_back(operand);
          }
        }
        assign_rows(group);
        groups_.push_back(std::move(group));
      }
      i = j;
    }
  }

  // Scratch rows by liveness (a linear scan): a chain keeps only a few values alive at a time,
  // so its working set stays a few KiB in L1 however long the chain is.
  static void assign_rows(FusionGroup& group) {
    const std::size_t count = group.end - group.begin;
    std::vector<std::size_t> last_read(count, 0);
    std::vector<std::vector<std::size_t>> reads(count);  // per node: local producers it reads
    std::size_t q = 0;  // operands are stored per node, in input order
    for (std::size_t k = 0; k < count; ++k) {
      for (std::size_t m = 0; m < group.inputs_per_node[k]; ++m, ++q) {
        if (group.operands[q].kind == OperandKind::local) {
          const auto p = static_cast<std::size_t>(group.operands[q].index);
          reads[k].push_back(p);
          last_read[p] = k;
        }
      }
    }
    std::vector<std::int32_t> free_rows;
    group.row.assign(count, -1);
    for (std::size_t k = 0; k < count; ++k) {
      if (!group.materialize[k]) {
        if (free_rows.empty()) {
          free_rows.push_back(group.num_rows++);
        }
        group.row[k] = free_rows.back();
        free_rows.pop_back();
      }
      // Freed after the output row is taken, so a kernel never writes the row it reads.
      for (std::size_t p : reads[k]) {
        if (last_read[p] == k && group.row[p] >= 0 &&
            std::find(free_rows.begin(), free_rows.end(), group.row[p]) == free_rows.end()) {
          free_rows.push_back(group.row[p]);
        }
      }
    }
  }

  template <class T>
  void run_group_typed(const FusionGroup& group, std::vector<AnyTensor>& values) const {
    const auto& nodes = graph_->nodes;
    const std::size_t count = group.end - group.begin;
    // Per-thread buffers reused across runs: no allocation per call.
    thread_local std::vector<T*> out_data;
    thread_local std::vector<const T*> source;  // per operand: vector base or scalar splat
    thread_local std::vector<T> scalars;        // run-time single values, one chunk each
    out_data.assign(count, nullptr);
    source.assign(group.operands.size(), nullptr);
    scalars.resize(static_cast<std::size_t>(group.num_scalars * fused_chunk));
    for (std::size_t k = 0; k < count; ++k) {
      if (group.materialize[k]) {
        const auto& node = nodes[group.begin + k];
        AnyTensor& slot = values[static_cast<std::size_t>(node.output)];
        slot = detail::allocate_any(group.dtype, node.shape);
        out_data[k] = static_cast<T*>(slot.mutable_raw_data());
      }
    }
    std::size_t next_scalar = 0;
    for (std::size_t q = 0; q < group.operands.size(); ++q) {
      const Operand& operand = group.operands[q];
      if (operand.kind == OperandKind::vector) {
        source[q] =
            static_cast<const T*>(values[static_cast<std::size_t>(operand.index)].raw_data());
      } else if (operand.kind == OperandKind::constant) {
        source[q] = reinterpret_cast<const T*>(group.splat.data() + operand.index);
      } else if (operand.kind == OperandKind::scalar) {
        T* splat = scalars.data() + next_scalar++ * fused_chunk;
        std::fill_n(
            splat, fused_chunk,
            *static_cast<const T*>(values[static_cast<std::size_t>(operand.index)].raw_data()));
        source[q] = splat;
      }
    }
    const std::int64_t chunks = (group.elements + fused_chunk - 1) / fused_chunk;
    const T* const* sources = source.data();
    T* const* outs = out_data.data();
    backend::cpu::parallel_for(chunks, 32, [&](std::int64_t cb, std::int64_t ce) {
      thread_local std::vector<T> scratch;  // group.num_rows rows; reused, never zeroed
      const auto rows = static_cast<std::size_t>(group.num_rows);
      if (scratch.size() < rows * static_cast<std::size_t>(fused_chunk)) {
        scratch.resize(rows * static_cast<std::size_t>(fused_chunk));
      }
      auto row_of = [&](std::size_t k) {
        return scratch.data() + static_cast<std::size_t>(group.row[k]) * fused_chunk;
      };
      for (std::int64_t c = cb; c < ce; ++c) {
        const std::int64_t start = c * fused_chunk;
        const std::int64_t len = std::min(fused_chunk, group.elements - start);
        std::size_t q = 0;
        for (std::size_t k = 0; k < count; ++k) {
          const auto& node = nodes[group.begin + k];
          const void* operand[2] = {nullptr, nullptr};
          for (std::size_t m = 0; m < node.inputs.size(); ++m, ++q) {
            const Operand& from = group.operands[q];
            if (from.kind == OperandKind::local) {
              const std::size_t p = static_cast<std::size_t>(from.index);
              operand[m] = outs[p] != nullptr ? outs[p] + start : row_of(p);
            } else if (from.kind == OperandKind::vector) {
              operand[m] = sources[q] + start;
            } else {
              operand[m] = sources[q];
            }
          }
          // A materialised value is written straight into its tensor and read from there.
          T* out = outs[k] != nullptr ? outs[k] + start : row_of(k);
          node.fused_kernel(out, operand[0], true, operand[1], true, len);
        }
      }
    });
  }

  void run_group(const FusionGroup& group, std::vector<AnyTensor>& values) const {
    if (group.dtype == DType::float32) {
      run_group_typed<float>(group, values);
    } else {
      run_group_typed<double>(group, values);
    }
  }

  std::unique_ptr<detail::trace::Graph> graph_;
  std::vector<FusionGroup> groups_;
  std::unordered_set<std::int32_t> is_output_;
  std::string name_;
  std::vector<std::int32_t> last_use_;
  std::vector<std::vector<std::int32_t>> releases_;
};

TAPEFLOW_END_NAMESPACE
