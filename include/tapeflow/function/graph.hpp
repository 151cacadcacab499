// ConcreteFunction: one traced graph of a tf::function, its executor and its text form
// (TensorFlow: `ConcreteFunction`, `graph.as_graph_def()`).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/tape_record.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace detail {
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
    std::size_t next_group = 0;
    for (std::size_t n = 0; n < graph_->nodes.size(); ++n) {
      while (next_group < groups_.size() && groups_[next_group].begin < n) {
        ++next_group;
      }
      if (fuse && next_group < groups_.size() && groups_[next_group].begin == n) {
        const auto& group = groups_[next_group];
        run_group(group, values);
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
  /// Sizes (in nodes) of the fused elementwise chains (Note [Fusion]).
  [[nodiscard]] std::vector<std::size_t> fused_chains() const {
    std::vector<std::size_t> sizes;
    for (const auto& g : groups_) {
      sizes.push_back(g.end - g.begin);
    }
    return sizes;
  }
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
  // Note [Fusion]: consecutive elementwise nodes over the same element count (operands of that
  // count, or single values) run as one pass over chunks small enough to stay in L1, instead of
  // one pass over memory (and one allocation) per op. Intermediate values used only inside
  // the chain are never materialised.
  struct FusionGroup {
    std::size_t begin = 0;
    std::size_t end = 0;  // exclusive
    std::int64_t elements = 0;
    DType dtype = DType::invalid;
    std::vector<bool> materialize;       // per node of the group
    std::vector<std::int32_t> producer;  // per node input: group-local producer index or -1
  };

  void find_fusion_groups() {
    const auto& nodes = graph_->nodes;
    std::vector<std::int64_t> elements(static_cast<std::size_t>(graph_->num_slots), -1);
    for (std::size_t i = 0; i < graph_->arg_slots.size(); ++i) {
      elements[static_cast<std::size_t>(graph_->arg_slots[i])] =
          graph_->arg_shapes()[i].num_elements();
    }
    for (const auto& [slot, value] : graph_->constants) {
      elements[static_cast<std::size_t>(slot)] = value.num_elements();
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
        for (std::size_t k = i; k < j; ++k) {
          const auto slot = nodes[k].output;
          const auto last = last_use_[static_cast<std::size_t>(slot)];
          group.materialize.push_back(is_output_.count(slot) > 0 || last < 0 ||
                                      static_cast<std::size_t>(last) >= j);
          for (auto in : nodes[k].inputs) {
            std::int32_t local = -1;
            for (std::size_t p = i; p < k; ++p) {
              if (nodes[p].output == in) {
                local = static_cast<std::int32_t>(p - i);
              }
            }
            group.producer.push_back(local);
          }
        }
        groups_.push_back(std::move(group));
      }
      i = j;
    }
  }

  template <class T>
  void run_group_typed(const FusionGroup& group, std::vector<AnyTensor>& values) const {
    const auto& nodes = graph_->nodes;
    const std::size_t count = group.end - group.begin;
    constexpr std::int64_t chunk = 256;  // 1-2 KiB per intermediate: a chain stays in L1/L2
    std::vector<AnyTensor> outputs(count);
    std::vector<T*> out_data(count, nullptr);
    for (std::size_t k = 0; k < count; ++k) {
      if (group.materialize[k]) {
        outputs[k] = detail::allocate_any(group.dtype, nodes[group.begin + k].shape);
        out_data[k] = static_cast<T*>(const_cast<void*>(outputs[k].raw_data()));
      }
    }
    // Single-value operands (constants like the 0.9 of `y * 0.9f`) are broadcast into a
    // chunk-sized buffer once per run, so every kernel call is a plain vector-vector pass.
    std::vector<std::vector<T>> broadcast;
    std::vector<const T*> broadcast_of(group.producer.size(), nullptr);
    {
      std::size_t input = 0;
      for (std::size_t k = 0; k < count; ++k) {
        for (auto slot : nodes[group.begin + k].inputs) {
          const AnyTensor& v = values[static_cast<std::size_t>(slot)];
          if (group.producer[input] < 0 && v.num_elements() == 1) {
            broadcast.emplace_back(static_cast<std::size_t>(chunk),
                                   *static_cast<const T*>(v.raw_data()));
            broadcast_of[input] = broadcast.back().data();
          }
          ++input;
        }
      }
    }
    const std::int64_t chunks = (group.elements + chunk - 1) / chunk;
    backend::cpu::parallel_for(chunks, 32, [&](std::int64_t cb, std::int64_t ce) {
      thread_local std::vector<T> scratch;  // reused across calls: no allocation, no zeroing
      if (scratch.size() < count * static_cast<std::size_t>(chunk)) {
        scratch.resize(count * static_cast<std::size_t>(chunk));
      }
      for (std::int64_t c = cb; c < ce; ++c) {
        const std::int64_t start = c * chunk;
        const std::int64_t len = std::min(chunk, group.elements - start);
        std::size_t input = 0;
        for (std::size_t k = 0; k < count; ++k) {
          const auto& node = nodes[group.begin + k];
          const void* operand[2] = {nullptr, nullptr};
          for (std::size_t q = 0; q < node.inputs.size(); ++q, ++input) {
            const std::int32_t local = group.producer[input];
            if (local >= 0) {
              operand[q] = scratch.data() + static_cast<std::size_t>(local) * chunk;
            } else if (broadcast_of[input] != nullptr) {
              operand[q] = broadcast_of[input];
            } else {
              operand[q] = static_cast<const T*>(
                               values[static_cast<std::size_t>(node.inputs[q])].raw_data()) +
                           start;
            }
          }
          T* out = scratch.data() + k * chunk;
          node.fused_kernel(out, operand[0], true, operand[1], true, len);
          if (out_data[k] != nullptr) {
            std::copy_n(out, len, out_data[k] + start);
          }
        }
      }
    });
    for (std::size_t k = 0; k < count; ++k) {
      if (group.materialize[k]) {
        values[static_cast<std::size_t>(nodes[group.begin + k].output)] = std::move(outputs[k]);
      }
    }
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
