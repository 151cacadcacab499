// IWYU pragma: private, include <tapeflow/function/function.hpp>
// The executor of one traced graph: nodes in program order (keeping prints and assignments
// ordered), each value released after its last use, and chains of elementwise nodes fused
// (Note [Fusion]). A ConcreteFunction holds one for the graph as traced and one for the
// optimized graph (Note [Graph passes] in graph_passes.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <span>
#include <unordered_set>
#include <utility>
#include <vector>

#include <tapeflow/backend/cpu/output_epilogue.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/detail/memory_plan.hpp>
#include <tapeflow/function/detail/observer.hpp>

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

/// A fused chain's last chunk shorter than this joins the one before: every run but a whole
/// tensor's of fewer elements then spans at least one packet, as eager's runs do (unary_run's
/// tail).
inline constexpr std::int64_t min_last_chunk = 16;

/// How a fused chain's elements are cut into chunks: `chunks` of `chunk` elements, the last one
/// holding the rest (Note [Fusion]).
struct FusedChunks {
  std::int64_t chunk = 0;
  std::int64_t chunks = 0;
};

/// The cut for one run on `threads` threads: the planned one, or, where the whole tensor is
/// one planned chunk holding at least two tasks' work (`task_elements` each), one piece per
/// thread, of whole `unit`s (a short end joins the piece before, as a planned chunk's does). The
/// planned chunk's rows hold the whole tensor, so any such piece fits them.
inline FusedChunks split_for_threads(FusedChunks planned, std::int64_t elements, std::int64_t unit,
                                     std::int64_t task_elements, int threads) {
  const std::int64_t pieces = std::min<std::int64_t>(threads, elements / task_elements);
  if (planned.chunks != 1 || pieces < 2) {
    return planned;
  }
  const std::int64_t chunk = ((elements + pieces - 1) / pieces + unit - 1) / unit * unit;
  std::int64_t chunks = (elements + chunk - 1) / chunk;
  if (chunks > 1 && elements - (chunks - 1) * chunk < min_last_chunk) {
    --chunks;
  }
  return chunks > 1 ? FusedChunks{chunk, chunks} : planned;
}

/// Runs one graph; built once per graph (fusion groups, release points), then shared by calls.
class Executor {
 public:
  /// Plans `graph`, which must outlive the executor; `fuse` false: no fused chains;
  /// `plan_memory`: fused runs place their buffers by a memory plan (Note [Memory plan]).
  Executor(const trace::Graph& graph, bool fuse, bool plan_memory = false)
      : graph_(&graph), plan_memory_(plan_memory) {
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
    read_from_values_.assign(static_cast<std::size_t>(graph_->num_slots), true);
    deferred_.assign(graph_->nodes.size(), false);
    if (fuse) {
      find_fusion_groups();
      mark_values_read();
    }
    releases_.resize(graph_->nodes.size());
    for (std::size_t s = 0; s < last_use_.size(); ++s) {
      if (last_use_[s] >= 0) {
        releases_[static_cast<std::size_t>(last_use_[s])].push_back(static_cast<std::int32_t>(s));
      } else {
        residual_.push_back(static_cast<std::int32_t>(s));
      }
    }
    plan_group_releases();
  }

  /// The graph it runs.
  [[nodiscard]] const trace::Graph& graph() const noexcept { return *graph_; }

  /// Runs the graph on `args` (one per argument slot, checked by the caller) and returns its
  /// outputs; `fuse` false runs every node on its own (an outside GradientTape records them);
  /// `observer` (may be null) hears of each node or chain, reported as part of `owner`.
  std::vector<AnyTensor> run(const ConcreteFunction& owner, std::span<const AnyTensor> args,
                             bool fuse, trace::Observer* observer) const {
    // Before `held`: the values it releases at the end go back to the plan's arena.
    std::optional<MemoryPlan::CallScope> planned;
    if (fuse && plan_memory_) {
      planned.emplace(memory_plan_, args);
    }
    SlotValues held(static_cast<std::size_t>(graph_->num_slots));
    std::vector<AnyTensor>& values = held.values;
    for (const auto& [slot, value] : graph_->constants) {
      // A constant read only as a fused chain's splat needs no (atomically counted) copy.
      if (!fuse || read_from_values_[static_cast<std::size_t>(slot)]) {
        values[static_cast<std::size_t>(slot)] = value;
      }
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
      values[static_cast<std::size_t>(graph_->arg_slots[i])] = args[i];
    }
    std::vector<AnyTensor> inputs;
    std::size_t next_group = 0;
    for (std::size_t n = 0; n < graph_->nodes.size(); ++n) {
      while (next_group < groups_.size() && groups_[next_group].begin < n) {
        ++next_group;
      }
      if (fuse && deferred_[n]) {
        continue;  // runs with the chain that reads its output (Note [Output epilogues])
      }
      if (fuse && next_group < groups_.size() && groups_[next_group].begin == n) {
        // A group with a producer runs it too: the chain may be its output epilogue.
        const auto& group = groups_[next_group];
        const auto producer = static_cast<std::size_t>(group.producer);
        inputs.clear();
        if (group.producer >= 0) {
          for (auto slot : graph_->nodes[producer].inputs) {
            inputs.push_back(values[static_cast<std::size_t>(slot)]);
          }
        }
        const std::int64_t start = observer != nullptr ? trace::now_ns() : 0;
        run_group(group, values, inputs);
        if (observer != nullptr) {
          const std::int64_t end = trace::now_ns();
          if (group.producer >= 0) {
            observer->ran(owner, *graph_, producer, producer + 1, start, end);
          }
          observer->ran(owner, *graph_, group.begin, group.end, start, end);
        }
        if (group.producer >= 0) {
          inputs.clear();
          for (auto slot : releases_[producer]) {
            values[static_cast<std::size_t>(slot)].reset();
          }
        }
        for (auto slot : group.releases) {
          values[static_cast<std::size_t>(slot)].reset();
        }
        n = group.end - 1;
        continue;
      }
      const auto& node = graph_->nodes[n];
      inputs.clear();
      for (auto slot : node.inputs) {
        inputs.push_back(values[static_cast<std::size_t>(slot)]);
      }
      const std::int64_t start = observer != nullptr ? trace::now_ns() : 0;
      AnyTensor out = node.run(inputs);
      if (observer != nullptr) {
        observer->ran(owner, *graph_, n, n + 1, start, trace::now_ns());
      }
      if (node.output >= 0) {
        values[static_cast<std::size_t>(node.output)] = std::move(out);
      }
      for (auto slot : releases_[n]) {
        values[static_cast<std::size_t>(slot)].reset();
      }
    }
    std::vector<AnyTensor> outputs;
    outputs.reserve(graph_->output_slots.size());
    const auto& out_slots = graph_->output_slots;
    for (auto it = out_slots.begin(); it != out_slots.end(); ++it) {
      AnyTensor& value = values[static_cast<std::size_t>(*it)];
      // Moved where the slot is not returned again (saves a reference count round trip).
      const bool again = std::find(it + 1, out_slots.end(), *it) != out_slots.end();
      outputs.push_back(again ? value : std::move(value));
    }
    held.release(residual_);
    return outputs;
  }

  /// How many fused chains the op before them may run as its output epilogue (Note [Output
  /// epilogues] in backend/cpu/output_epilogue.hpp).
  [[nodiscard]] std::size_t output_epilogues() const {
    return static_cast<std::size_t>(std::count_if(
        groups_.begin(), groups_.end(), [](const FusionGroup& g) { return g.producer >= 0; }));
  }

  /// What its memory plan holds (Note [Memory plan]).
  [[nodiscard]] MemoryPlanInfo memory_plan() const { return memory_plan_.info(); }

  /// Sizes (in nodes) of the fused elementwise chains (Note [Fusion]).
  [[nodiscard]] std::vector<std::size_t> fused_chains() const {
    std::vector<std::size_t> sizes;
    for (const auto& g : groups_) {
      sizes.push_back(g.end - g.begin);
    }
    return sizes;
  }

 private:
  // One run's value per slot. The vectors are kept per thread for the next run (a nested run,
  // a control-flow body, takes another), so a call allocates none; they go back empty. A run
  // that ends normally has released every slot but the few `release` names (constants,
  // outputs, values nothing reads), so only those are reset; one that throws resets them all.
  struct SlotValues {
    explicit SlotValues(std::size_t slots) {
      auto& spare = pool();
      if (!spare.empty()) {
        values = std::move(spare.back());
        spare.pop_back();
      }
      values.resize(slots);
    }
    SlotValues(const SlotValues&) = delete;
    SlotValues& operator=(const SlotValues&) = delete;
    ~SlotValues() {
      if (!released) {
        for (auto& value : values) {
          value.reset();
        }
      }
      auto& spare = pool();
      if (spare.size() < 8) {
        try {
          spare.push_back(std::move(values));
        } catch (...) {  // NOLINT(bugprone-empty-catch): then it is freed as usual
        }
      }
    }
    void release(std::span<const std::int32_t> remaining) {
      for (auto slot : remaining) {
        values[static_cast<std::size_t>(slot)].reset();
      }
      released = true;
    }
    static std::vector<std::vector<AnyTensor>>& pool() {
      thread_local std::vector<std::vector<AnyTensor>> spare;
      return spare;
    }
    std::vector<AnyTensor> values;
    bool released = false;
  };

  // Note [Fusion]: consecutive elementwise nodes over the same element count (operands of that
  // count, single values, or, for ops that round exactly, values repeated along leading axes
  // such as a bias) run as one pass over chunks small enough to stay in L1, instead of
  // one pass over memory (and one allocation) per op. Intermediate values used only inside
  // the chain are never materialised. A sum or mean of every element of a chain's value, or of
  // its leading axes ([rows, C] -> [C]), that follows the chain joins it: each chunk adds its
  // blocks (Notes [Full sums] and [Leading-axis sums] in ops/reduce/reduce.hpp), so the summed
  // value need not be written out either. A materialised
  // output writes over an input that dies there when nothing else holds that input's buffer (in
  // place, as TensorFlow's kernels forward an input buffer), so a lone elementwise node is a group
  // of one. A node whose output is x * a + b by channel (batch normalization with known statistics,
  // `GraphNode::fused_affine`) joins a chain too: a and b are computed once per run from its
  // other inputs and repeated like a bias, so the normalization and the activation after it make
  // one pass over the convolution's output. A reshape between two chain nodes joins the chain
  // (`GraphNode::same_elements`: the elements keep their order), so `reshape(a * b, s) + c` and the
  // gradients' reshapes stay one pass. Read only inside the chain it is a view there too: its
  // readers read its input's row and it never runs; read after the chain it copies each chunk
  // into its tensor. At either end of a chain it stays outside, the view it is eagerly. Where
  // one node input of a fused group comes from, decided once when the graph is built.
  enum class OperandKind : std::uint8_t {
    local,      // an earlier node of the group: its row of the per-thread scratch
    constant,   // a single-value graph constant: row `index` of `splat` holds it broadcast
    scalar,     // a single value known only at run time (an argument): broadcast per run
    vector,     // a full-length value: read in place
    repeated,   // a value repeated along leading axes (a bias): tiled to a chunk per run
    parameter,  // an input a fused affine node's coefficients are computed from (never streamed)
  };
  struct Operand {
    OperandKind kind = OperandKind::vector;
    std::int32_t index = 0;   // local: node in group; constant: row of splat; else the slot
    std::int64_t period = 0;  // repeated: its element count
  };
  struct FusionGroup {
    std::size_t begin = 0;
    std::size_t end = 0;  // exclusive
    std::int64_t elements = 0;
    DType dtype = DType::invalid;
    std::vector<bool> materialize;   // per node of the group
    std::vector<bool> view;          // per node: a copy whose readers read its input; never runs
    std::vector<Operand> operands;   // per node input, in order
    std::vector<double> splat;       // distinct constant operands, one chunk each (raw bytes)
    std::int64_t chunk = 0;          // elements per pass through the chain
    std::int64_t chunks = 0;         // passes; the last one may be longer (`span`)
    std::int64_t span = 0;           // elements each row, splat, scalar and tile holds
    std::int32_t num_scalars = 0;    // run-time single-value operands
    std::int32_t num_repeated = 0;   // repeated operands, and two per fused affine node
    std::int64_t unit = 16;          // chunk starts are multiples of it
    std::int64_t task_elements = 0;  // a parallel task's least share (Note [Fusion])
    std::vector<std::size_t> inputs_per_node;
    std::vector<std::int32_t> row;       // per node: its scratch row, -1 when materialised
    std::vector<std::int32_t> donor;     // per node: a slot whose buffer it may write, or -1
    std::int32_t num_rows = 0;           // rows are reused once their value is dead
    std::int32_t reduce_input = -1;      // node in group a fused reduction (node end - 1) reads
    std::vector<std::int32_t> written;   // nodes whose value is materialised, in order
    std::vector<std::int32_t> releases;  // slots holding a value that dies in the group
    // The node just before the group when its kernel may run the chain as an output epilogue
    // (Note [Output epilogues]): the chain reads its output, which has the chain's length.
    std::int32_t producer = -1;
    std::int32_t producer_slot = -1;
    std::vector<bool> onto_producer;  // per node: written over the producer's output buffer
    [[nodiscard]] std::size_t chain_size() const { return end - begin - (reduce_input >= 0); }
  };
  // A chunk's rows, splats and scalars should fit a 32 KiB L1 with room for the streamed
  // operands; long chunks pay each kernel's call and loop tail once per 1024 elements, not 4x.
  static constexpr std::int64_t max_fused_chunk = 1024;
  static constexpr std::int64_t min_fused_chunk = 256;
  // A chain ending in a reduction runs chunks of whole reduction blocks (2K elements and more for
  // leading-axis sums, Note [Leading-axis sums]), in L2 up to this.
  static constexpr std::int64_t max_reduction_unit = 16384;
  static constexpr std::int64_t fused_scratch_budget = 24 * 1024;
  // A parallel task gets at least about this many kernel-elements, 1.5 us or more of even the
  // cheapest kernels (a hand-off costs ~0.5 us): a chain of k kernels splits at 24K / k
  // elements, within these bounds, so a long chain of a thousand elements uses every thread,
  // while a short one pays no hand-off.
  static constexpr std::int64_t fused_task_work = 24 * 1024;
  static constexpr std::int64_t fused_task_elements = 8192;
  static constexpr std::int64_t min_task_elements = 256;

  void find_fusion_groups() {
    const auto& nodes = graph_->nodes;
    std::vector<std::int64_t> elements(static_cast<std::size_t>(graph_->num_slots), -1);
    std::vector<const AnyTensor*> constant(static_cast<std::size_t>(graph_->num_slots), nullptr);
    std::vector<const Shape*> shape(static_cast<std::size_t>(graph_->num_slots), nullptr);
    for (std::size_t i = 0; i < graph_->arg_slots.size(); ++i) {
      elements[static_cast<std::size_t>(graph_->arg_slots[i])] =
          graph_->arg_shapes()[i].num_elements();
      shape[static_cast<std::size_t>(graph_->arg_slots[i])] = &graph_->arg_shapes()[i];
    }
    for (const auto& [slot, value] : graph_->constants) {
      elements[static_cast<std::size_t>(slot)] = value.num_elements();
      constant[static_cast<std::size_t>(slot)] = &value;
      shape[static_cast<std::size_t>(slot)] = &value.shape();
    }
    for (const auto& node : nodes) {
      if (node.output >= 0) {
        elements[static_cast<std::size_t>(node.output)] = node.shape.num_elements();
        shape[static_cast<std::size_t>(node.output)] = &node.shape;
      }
    }
    // Whether node k joins a chain over n elements of `dtype`; a repeated operand makes the
    // chain's chunks whole multiples of its length (`unit`, updated when k joins).
    auto fusible = [&](std::size_t k, std::int64_t n, DType dtype, std::int64_t& unit) {
      const auto& node = nodes[k];
      const bool affine = node.fused_affine.kernel != nullptr;
      if ((node.fused_kernel == nullptr && !affine) || node.output < 0 || node.dtype != dtype ||
          node.shape.num_elements() != n || n <= 1) {
        return false;
      }
      std::int64_t joined = unit;
      auto repeats = [&](std::int64_t period) {  // chunks must hold whole periods
        joined = std::lcm(joined, period);
        return joined <= max_fused_chunk;
      };
      if (affine) {  // x streams; the coefficients repeat with the channels
        const std::int64_t c = node.shape.rank() == 0 ? 1 : node.shape[node.shape.rank() - 1];
        if (node.inputs.size() < 3 || elements[static_cast<std::size_t>(node.inputs[0])] != n ||
            c < 1 || c == n || !repeats(c)) {
          return false;
        }
      } else {
        for (auto slot : node.inputs) {
          const std::int64_t e = elements[static_cast<std::size_t>(slot)];
          if (e == n || e == 1) {
            continue;
          }
          const Shape* s = shape[static_cast<std::size_t>(slot)];
          if (!node.fused_rows || s == nullptr || !repeats_along_leading_axes(*s, node.shape) ||
              !repeats(e)) {
            return false;
          }
        }
      }
      unit = joined;
      return true;
    };
    std::size_t i = 0;
    while (i < nodes.size()) {
      const std::int64_t n = nodes[i].shape.num_elements();
      std::int64_t unit = 16;  // eager kernels' vector loops start at multiples of 16 elements
      if (!fusible(i, n, nodes[i].dtype, unit)) {
        ++i;
        continue;
      }
      std::size_t j = i + 1;
      while (j < nodes.size() && fusible(j, n, nodes[i].dtype, unit)) {
        ++j;
      }
      // Copies (a Reshape) join only between two other nodes: at an end of a chain one would
      // turn a view, which costs nothing, into a pass over the elements.
      const std::size_t run_end = j;
      while (j > i && nodes[j - 1].same_elements) {
        --j;
      }
      while (i < j && nodes[i].same_elements) {
        ++i;
      }
      if (i == j) {
        i = run_end;
        continue;
      }
      // One node is a group too: it may then write in place (Note [Fusion]).
      FusionGroup group;
      group.begin = i;
      group.elements = n;
      group.dtype = nodes[i].dtype;
      group.reduce_input = fused_reduction_input(i, j, n);
      if (group.reduce_input >= 0) {
        const std::int64_t with_blocks = std::lcm(unit, nodes[j].fused_reduction.block);
        if (with_blocks > max_reduction_unit) {
          group.reduce_input = -1;
        } else {
          unit = with_blocks;
        }
      }
      group.unit = unit;
      group.end = j + (group.reduce_input >= 0 ? 1 : 0);
      const std::size_t width = group.dtype == DType::float64 ? sizeof(double) : sizeof(float);
      std::vector<const void*> splats;  // distinct constant values, by their bytes
      for (std::size_t k = i; k < j; ++k) {
        const auto slot = nodes[k].output;
        const auto last = last_use_[static_cast<std::size_t>(slot)];
        group.materialize.push_back(is_output_.count(slot) > 0 || last < 0 ||
                                    static_cast<std::size_t>(last) >= group.end);
        // A copy only the chain reads is a view there too: its readers read its input instead.
        group.view.push_back(nodes[k].same_elements && !group.materialize.back() &&
                             group.reduce_input != static_cast<std::int32_t>(k - i));
        group.inputs_per_node.push_back(nodes[k].inputs.size());
        const bool affine = nodes[k].fused_affine.kernel != nullptr;
        group.num_repeated += affine ? 2 : 0;
        for (std::size_t m = 0; m < nodes[k].inputs.size(); ++m) {
          std::int32_t in = nodes[k].inputs[m];
          for (std::size_t p = k; p-- > i;) {
            if (nodes[p].output == in && group.view[p - i]) {
              in = nodes[p].inputs[0];  // and on back, through a view of a view
            }
          }
          if (affine && m > 0) {
            group.operands.push_back({OperandKind::parameter, in});
            continue;
          }
          Operand operand{OperandKind::vector, in};
          for (std::size_t p = i; p < k; ++p) {
            if (nodes[p].output == in) {
              operand = {OperandKind::local, static_cast<std::int32_t>(p - i)};
            }
          }
          const AnyTensor* value = constant[static_cast<std::size_t>(in)];
          const std::int64_t e = elements[static_cast<std::size_t>(in)];
          if (operand.kind == OperandKind::vector && e != 1 && e != n) {
            operand = {OperandKind::repeated, in, e};
            ++group.num_repeated;
          }
          if (operand.kind == OperandKind::vector && e == 1) {
            if (value != nullptr) {
              const auto row = std::find_if(splats.begin(), splats.end(),
                                            [&](const void* v) {
                                              return std::memcmp(v, value->raw_data(), width) == 0;
                                            }) -
                               splats.begin();
              if (row == std::ssize(splats)) {
                splats.push_back(value->raw_data());
              }
              operand = {OperandKind::constant, static_cast<std::int32_t>(row)};
            } else {
              operand.kind = OperandKind::scalar;
              ++group.num_scalars;
            }
          }
          group.operands.push_back(operand);
        }
      }
      assign_rows(group);
      assign_donors(group);
      find_producer(group);
      const auto buffers = static_cast<std::int64_t>(group.num_rows + group.num_scalars +
                                                     group.num_repeated + splats.size());
      group.chunk = max_fused_chunk;
      while (group.chunk > min_fused_chunk &&
             buffers * group.chunk * static_cast<std::int64_t>(width) > fused_scratch_budget) {
        group.chunk /= 2;
      }
      group.chunk = std::min(group.chunk, (n + 63) / 64 * 64);  // small groups fill no more
      if (group.chunk < n) {  // every chunk but the last is whole units
        group.chunk = std::max(group.unit, group.chunk / group.unit * group.unit);
      }
      group.chunks = (n + group.chunk - 1) / group.chunk;
      const auto kernels = static_cast<std::int64_t>(
          std::count(group.view.begin(), group.view.end(), false) + (group.reduce_input >= 0));
      group.task_elements = std::clamp(fused_task_work / std::max<std::int64_t>(1, kernels),
                                       min_task_elements, fused_task_elements);
      group.span = group.chunk;
      if (const std::int64_t rest = n % group.chunk;
          group.chunks > 1 && rest > 0 && rest < min_last_chunk) {
        --group.chunks;
        group.span = group.chunk + rest;
      }
      if (group.producer >= 0) {  // an epilogue range's short end joins the piece before it
        group.span = std::max(group.span, group.chunk + min_last_chunk - 1);
      }
      // Raw bytes of the group's dtype in a double array (aligned for both).
      const std::size_t splat_bytes = splats.size() * static_cast<std::size_t>(group.span) * width;
      group.splat.resize((splat_bytes + sizeof(double) - 1) / sizeof(double) + splat_pad);
      auto* bytes = const_cast<std::byte*>(aligned_splats<std::byte>(group));
      for (const void* value : splats) {
        for (std::int64_t e = 0; e < group.span; ++e, bytes += width) {
          std::memcpy(bytes, value, width);
        }
      }
      groups_.push_back(std::move(group));
      i = j;
    }
  }

  // Whether `operand` broadcasts to `out` by repeating along leading axes ([C] or [1, C] to
  // [N, C]; [W, C] to [N, H, W, C]): element e of the result then reads operand[e % size].
  static bool repeats_along_leading_axes(const Shape& operand, const Shape& out) {
    std::size_t first = 0;  // leading 1s change nothing
    while (first < operand.rank() && operand[first] == 1) {
      ++first;
    }
    const std::size_t kept = operand.rank() - first;
    if (kept > out.rank()) {
      return false;
    }
    for (std::size_t d = 0; d < kept; ++d) {
      if (operand[first + d] != out[out.rank() - kept + d] || operand[first + d] < 1) {
        return false;
      }
    }
    return true;
  }

  // The node of chain [begin, end) that a fusible reduction of all its `n` elements at `end`
  // reads, or -1 when the node at `end` is no such reduction.
  [[nodiscard]] std::int32_t fused_reduction_input(std::size_t begin, std::size_t end,
                                                   std::int64_t n) const {
    const auto& nodes = graph_->nodes;
    if (end >= nodes.size()) {
      return -1;
    }
    const auto& node = nodes[end];
    if (node.fused_reduction.accumulate == nullptr || node.inputs.size() != 1 || node.output < 0 ||
        node.dtype != nodes[begin].dtype ||
        node.shape.num_elements() != node.fused_reduction.inner) {
      return -1;
    }
    for (std::size_t k = begin; k < end; ++k) {
      if (nodes[k].output == node.inputs[0] && nodes[k].shape.num_elements() == n) {
        return static_cast<std::int32_t>(k - begin);
      }
    }
    return -1;
  }

  // Which slots some reader takes from `values` in a fused run: every input of a node outside
  // the chains, a chain's full-length and run-time single operands, the outputs.
  void mark_values_read() {
    read_from_values_.assign(read_from_values_.size(), false);
    const auto& nodes = graph_->nodes;
    std::size_t next_group = 0;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      if (next_group < groups_.size() && groups_[next_group].begin == n) {
        for (const Operand& operand : groups_[next_group].operands) {
          if (operand.kind == OperandKind::vector || operand.kind == OperandKind::scalar ||
              operand.kind == OperandKind::repeated || operand.kind == OperandKind::parameter) {
            read_from_values_[static_cast<std::size_t>(operand.index)] = true;
          }
        }
        n = groups_[next_group++].end - 1;
        continue;
      }
      for (auto slot : nodes[n].inputs) {
        read_from_values_[static_cast<std::size_t>(slot)] = true;
      }
    }
    for (auto slot : graph_->output_slots) {
      read_from_values_[static_cast<std::size_t>(slot)] = true;
    }
  }

  // A materialised output may take the buffer of a full-length input read for the last time
  // at or before its node: in each chunk that input's readers have all run by then, and each
  // chunk writes only its own elements. Whether the buffer is unshared is known only at run
  // time (a caller's argument, or a value also held elsewhere, is not).
  void assign_donors(FusionGroup& group) const {
    const std::size_t count = group.chain_size();
    group.donor.assign(count, -1);
    std::vector<std::int32_t> taken;
    std::size_t q = 0;
    std::vector<std::int32_t> candidates;  // vector operands seen so far
    for (std::size_t k = 0; k < count; ++k) {
      for (std::size_t m = 0; m < group.inputs_per_node[k]; ++m, ++q) {
        if (group.operands[q].kind == OperandKind::vector) {
          candidates.push_back(group.operands[q].index);
        }
      }
      if (!group.materialize[k]) {
        continue;
      }
      for (auto slot : candidates) {
        const auto last = last_use_[static_cast<std::size_t>(slot)];
        if (last >= 0 && static_cast<std::size_t>(last) <= group.begin + k &&
            std::find(taken.begin(), taken.end(), slot) == taken.end() &&
            std::find(graph_->arg_slots.begin(), graph_->arg_slots.end(), slot) ==
                graph_->arg_slots.end()) {
          group.donor[k] = slot;
          taken.push_back(slot);
          break;
        }
      }
    }
  }

  // The node whose kernel may run the group as its output epilogue (Note [Output epilogues]):
  // one that says it can, whose output the group reads in full. It may come a few nodes before
  // the group (the variable reads of a batch normalization come between): it then runs at the
  // group, after them, which changes nothing when none of them reads its output or is the last
  // reader of one of its inputs, and it is not stateful. A materialised node whose donor is its
  // output writes over it (nobody else holds a kernel's fresh output).
  void find_producer(FusionGroup& group) {
    const auto& nodes = graph_->nodes;
    group.onto_producer.assign(group.chain_size(), false);
    constexpr std::size_t max_between = 8;
    const std::size_t first = group.begin > max_between + 1 ? group.begin - max_between - 1 : 0;
    std::int32_t found = -1;
    for (std::size_t p = group.begin; p-- > first && found < 0;) {
      const auto& node = nodes[p];
      if (!node.output_epilogue || node.stateful || deferred_[p] || node.output < 0 ||
          node.dtype != group.dtype || node.shape.num_elements() != group.elements ||
          std::none_of(group.operands.begin(), group.operands.end(), [&](const Operand& o) {
            return o.kind == OperandKind::vector && o.index == node.output;
          })) {
        continue;
      }
      bool movable = true;
      for (std::size_t m = p + 1; m < group.begin && movable; ++m) {
        for (auto slot : nodes[m].inputs) {
          movable = movable && slot != node.output;
        }
      }
      for (auto slot : node.inputs) {
        const auto last = last_use_[static_cast<std::size_t>(slot)];
        movable = movable && !(last > static_cast<std::int32_t>(p) &&
                               last < static_cast<std::int32_t>(group.begin));
      }
      if (movable) {
        found = static_cast<std::int32_t>(p);
      }
    }
    if (found < 0) {
      return;
    }
    const auto& producer = nodes[static_cast<std::size_t>(found)];
    group.producer = found;
    group.producer_slot = producer.output;
    deferred_[static_cast<std::size_t>(found)] = true;
    for (std::size_t k = 0; k < group.chain_size(); ++k) {
      group.onto_producer[k] =
          group.donor[k] == producer.output && nodes[group.begin + k].shape == producer.shape;
      if (group.donor[k] == producer.output && !group.onto_producer[k]) {
        group.donor[k] = -1;
      }
    }
  }

  // Each group's release list: the slots whose last reader is in it, less the values that live
  // only in scratch rows (never in `values`); the per-run loop then touches no empty slot.
  void plan_group_releases() {
    std::vector<bool> in_rows(static_cast<std::size_t>(graph_->num_slots), false);
    for (auto& group : groups_) {
      for (std::size_t k = 0; k < group.chain_size(); ++k) {
        if (group.materialize[k]) {
          group.written.push_back(static_cast<std::int32_t>(k));
        } else {
          in_rows[static_cast<std::size_t>(graph_->nodes[group.begin + k].output)] = true;
        }
      }
    }
    for (auto& group : groups_) {
      for (std::size_t k = group.begin; k < group.end; ++k) {
        for (auto slot : releases_[k]) {
          if (!in_rows[static_cast<std::size_t>(slot)]) {
            group.releases.push_back(slot);
          }
        }
      }
    }
  }

  // Scratch rows by liveness (a linear scan): a chain keeps only a few values alive at a time,
  // so its working set stays a few KiB in L1 however long the chain is.
  static void assign_rows(FusionGroup& group) {
    const std::size_t count = group.chain_size();
    std::vector<std::size_t> last_read(count, 0);
    std::vector<std::vector<std::size_t>> reads(count);  // per node: local producers it reads
    std::size_t q = 0;  // operands are stored per node, in input order
    for (std::size_t k = 0; k < count; ++k) {
      for (std::size_t m = 0; m < group.inputs_per_node[k]; ++m, ++q) {
        if (group.operands[q].kind == OperandKind::local && !group.view[k]) {
          const auto p = static_cast<std::size_t>(group.operands[q].index);
          reads[k].push_back(p);
          last_read[p] = k;
        }
      }
    }
    if (group.reduce_input >= 0) {  // read after the whole chain, in each chunk
      last_read[static_cast<std::size_t>(group.reduce_input)] = count;
    }
    std::vector<std::int32_t> free_rows;
    group.row.assign(count, -1);
    for (std::size_t k = 0; k < count; ++k) {
      if (!group.materialize[k] && !group.view[k]) {
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

  // One run of a group: where each operand and materialised value lives. Values read from or
  // written over the producer's output are null here and resolved against `produced`, which
  // exists only once the producer's kernel has allocated it.
  template <class T>
  struct ChainRun {
    const Executor* executor = nullptr;
    const FusionGroup* group = nullptr;
    const trace::GraphNode* reduction = nullptr;
    const T* const* sources = nullptr;  // per operand: vector base, splat or tile
    T* const* outs = nullptr;           // per node: its materialised tensor's data
    T* partials = nullptr;              // a fused reduction's, each written once
  };

  // `size` elements of `buffer` from a 64-byte boundary: rows and splats are read and written
  // in whole packets, and a packet that crosses a cache line costs two accesses.
  static constexpr std::size_t cache_line = 64;
  // The bytes from `p` to the next 64-byte boundary.
  static std::size_t to_line(const void* p) noexcept {
    return (cache_line - reinterpret_cast<std::uintptr_t>(p) % cache_line) % cache_line;
  }
  template <class T>
  static T* aligned_elements(std::vector<T>& buffer, std::size_t size) {
    if (buffer.size() < size + cache_line / sizeof(T)) {
      buffer.resize(size + cache_line / sizeof(T));
    }
    return buffer.data() + to_line(buffer.data()) / sizeof(T);
  }

  // A group's splat rows from the first 64-byte boundary of its storage (`splat_pad` spare).
  static constexpr std::size_t splat_pad = cache_line / sizeof(double);
  template <class T>
  static const T* aligned_splats(const FusionGroup& group) {
    return reinterpret_cast<const T*>(reinterpret_cast<const std::byte*>(group.splat.data()) +
                                      to_line(group.splat.data()));
  }

  template <class T>
  static T* chain_scratch(std::size_t size) {
    thread_local std::vector<T> scratch;  // a group's rows; reused, never zeroed
    return aligned_elements(scratch, size);
  }

  // Elements [start, start + len) through the whole chain, on this thread.
  template <class T>
  void run_chunk(const ChainRun<T>& run, T* produced, std::int64_t start, std::int64_t len,
                 T* scratch) const {
    const FusionGroup& group = *run.group;
    const auto& nodes = graph_->nodes;
    auto value_of = [&](std::size_t k) {  // where node k's value of this chunk lives
      if (run.outs[k] != nullptr) {
        return run.outs[k] + start;
      }
      // Materialised values without a tensor of their own write over the producer's output.
      const std::int32_t row = group.row[k];
      return row >= 0 ? scratch + static_cast<std::size_t>(row * group.span) : produced + start;
    };
    std::size_t q = 0;
    for (std::size_t k = 0; k < group.chain_size(); ++k) {
      const auto& node = nodes[group.begin + k];
      if (group.view[k]) {
        q += node.inputs.size();
        continue;
      }
      const void* operand[3] = {nullptr, nullptr, nullptr};
      for (std::size_t m = 0; m < node.inputs.size(); ++m, ++q) {
        const Operand& from = group.operands[q];
        if (m >= 3) {  // a fused affine node's other parameters: in its coefficients only
          continue;
        }
        if (from.kind == OperandKind::local) {
          operand[m] = value_of(static_cast<std::size_t>(from.index));
        } else if (from.kind == OperandKind::vector) {
          operand[m] = (run.sources[q] != nullptr ? run.sources[q] : produced) + start;
        } else {
          operand[m] = run.sources[q];
        }
      }
      // A materialised value is written straight into its tensor and read from there.
      T* out = value_of(k);
      if (node.fused_affine.kernel != nullptr) {
        node.fused_affine.kernel(out, operand[0], operand[1], operand[2], len);
      } else {
        node.fused_kernel(out, operand[0], true, operand[1], true, len);
      }
    }
    if (run.reduction != nullptr) {
      run.reduction->fused_reduction.accumulate(
          run.partials, value_of(static_cast<std::size_t>(group.reduce_input)), start, len,
          run.reduction->fused_reduction);
    }
  }

  // The chain as a producer's output epilogue: elements [start, start + n) are final.
  template <class T>
  static void run_epilogue(const void* context, void* output, std::int64_t start, std::int64_t n) {
    const auto& run = *static_cast<const ChainRun<T>*>(context);
    const FusionGroup& group = *run.group;
    T* const scratch = chain_scratch<T>(static_cast<std::size_t>(group.num_rows * group.span));
    const std::int64_t end = start + n;
    for (std::int64_t e = start; e < end;) {
      std::int64_t len = std::min(group.chunk, end - e);
      if (end == group.elements && end - e - len < min_last_chunk) {
        len = end - e;  // the tensor's short end joins this piece, as in a plain run
      }
      run.executor->run_chunk(run, static_cast<T*>(output), e, len, scratch);
      e += len;
    }
  }

  template <class T>
  void run_group_typed(const FusionGroup& group, std::vector<AnyTensor>& values,
                       std::span<const AnyTensor> producer_inputs) const {
    const auto& nodes = graph_->nodes;
    const std::size_t count = group.chain_size();
    // Per-thread buffers reused across runs: no allocation per call.
    thread_local std::vector<T*> out_data;
    thread_local std::vector<const T*> source;  // per operand: vector base or scalar splat
    thread_local std::vector<T> scalars;        // run-time single values, one chunk each
    thread_local std::vector<T> partials;       // a fused reduction's, each written once
    thread_local std::vector<T> tiles;          // repeated operands, one chunk each
    const trace::GraphNode* reduction = group.reduce_input >= 0 ? &nodes[group.end - 1] : nullptr;
    if (reduction != nullptr) {
      partials.resize(static_cast<std::size_t>(
          reduction->fused_reduction.partials(group.elements, reduction->fused_reduction)));
    }
    out_data.assign(count, nullptr);
    source.assign(group.operands.size(), nullptr);
    const std::int64_t span = group.span;
    T* const scalar_rows =
        aligned_elements(scalars, static_cast<std::size_t>(group.num_scalars * span));
    T* const tile_rows =
        aligned_elements(tiles, static_cast<std::size_t>(group.num_repeated * span));
    std::size_t next_scalar = 0;
    std::size_t next_tile = 0;
    const T* const splats = aligned_splats<T>(group);
    // Chunks start at multiples of every repeated period, so every chunk reads the same tile.
    auto tile_of = [&](const T* from, std::int64_t period) {
      T* tile = tile_rows + next_tile++ * span;
      for (std::int64_t e = 0; e < span; e += period) {
        std::copy_n(from, std::min(period, span - e), tile + e);
      }
      return tile;
    };
    std::size_t q = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t first = q;
      for (std::size_t m = 0; m < group.inputs_per_node[k]; ++m, ++q) {
        const Operand& operand = group.operands[q];
        auto slot_data = [&] {
          return static_cast<const T*>(values[static_cast<std::size_t>(operand.index)].raw_data());
        };
        if (operand.kind == OperandKind::vector) {  // the producer's output: not made yet
          source[q] = operand.index == group.producer_slot ? nullptr : slot_data();
        } else if (operand.kind == OperandKind::constant) {
          source[q] = splats + operand.index * span;
        } else if (operand.kind == OperandKind::scalar) {
          T* splat = scalar_rows + next_scalar++ * span;
          std::fill_n(splat, span, *slot_data());
          source[q] = splat;
        } else if (operand.kind == OperandKind::repeated) {
          source[q] = tile_of(slot_data(), operand.period);
        }
      }
      const auto& node = nodes[group.begin + k];
      if (node.fused_affine.kernel != nullptr) {  // a and b take the first two parameters' places
        thread_local std::vector<const void*> params;
        thread_local std::vector<T> coefficients;
        params.clear();
        for (std::size_t p = first + 1; p < q; ++p) {
          params.push_back(values[static_cast<std::size_t>(group.operands[p].index)].raw_data());
        }
        const std::int64_t c = node.shape[node.shape.rank() - 1];
        coefficients.resize(static_cast<std::size_t>(2 * c));
        node.fused_affine.coefficients(params.data(), c, node.fused_affine.attribute,
                                       coefficients.data(), coefficients.data() + c);
        source[first + 1] = tile_of(coefficients.data(), c);
        source[first + 2] = tile_of(coefficients.data() + c, c);
      }
    }
    for (const auto written : group.written) {
      const auto k = static_cast<std::size_t>(written);
      if (group.onto_producer[k]) {
        continue;  // takes the producer's tensor once it exists
      }
      const auto& node = nodes[group.begin + k];
      AnyTensor& slot = values[static_cast<std::size_t>(node.output)];
      const std::int32_t donor = group.donor[k];
      AnyTensor* from = donor >= 0 ? &values[static_cast<std::size_t>(donor)] : nullptr;
      if (from != nullptr && from->sole_owner() && from->dtype() == group.dtype &&
          from->shape() == node.shape) {
        slot = std::move(*from);  // in place: the sources above keep pointing at it
        out_data[k] = static_cast<T*>(slot.unshared_raw_data());  // a new tensor id
      } else {
        slot = allocate_any(group.dtype, node.shape);
        out_data[k] = static_cast<T*>(slot.mutable_raw_data());
      }
    }
    const ChainRun<T> run{this, &group, reduction, source.data(), out_data.data(), partials.data()};
    T* produced = nullptr;
    bool done = false;  // the producer's kernel ran the chain
    if (group.producer >= 0) {
      const backend::cpu::OutputEpilogue epilogue{&run_epilogue<T>, &run, group.elements,
                                                  group.unit};
      AnyTensor out;
      {
        const backend::cpu::OfferedEpilogue offer(epilogue);
        out = nodes[static_cast<std::size_t>(group.producer)].run(producer_inputs);
        done = offer.taken();
      }
      AnyTensor& held = values[static_cast<std::size_t>(group.producer_slot)];
      held = std::move(out);
      produced = static_cast<T*>(const_cast<void*>(held.raw_data()));
      for (const auto written : group.written) {
        const auto k = static_cast<std::size_t>(written);
        if (!group.onto_producer[k]) {
          continue;
        }
        AnyTensor& slot = values[static_cast<std::size_t>(nodes[group.begin + k].output)];
        if (done || held.sole_owner()) {  // a kernel's fresh output: nobody else holds it
          slot = std::move(held);
          produced = static_cast<T*>(slot.unshared_raw_data());  // a new tensor id
        } else {
          slot = allocate_any(group.dtype, nodes[group.begin + k].shape);
          out_data[k] = static_cast<T*>(slot.mutable_raw_data());
        }
      }
    }
    if (!done) {
      const FusedChunks cut =
          split_for_threads({group.chunk, group.chunks}, group.elements, group.unit,
                            group.task_elements, backend::cpu::ThreadPool::global().num_threads());
      const std::int64_t chunk = cut.chunk;
      const std::int64_t chunks = cut.chunks;
      const std::int64_t grain = std::max<std::int64_t>(1, group.task_elements / chunk);
      backend::cpu::parallel_for(chunks, grain, [&](std::int64_t cb, std::int64_t ce) {
        T* const scratch = chain_scratch<T>(static_cast<std::size_t>(group.num_rows * span));
        for (std::int64_t c = cb; c < ce; ++c) {
          const std::int64_t start = c * chunk;
          const std::int64_t len = c + 1 == chunks ? group.elements - start : chunk;
          run_chunk(run, produced, start, len, scratch);
        }
      });
    }
    if (reduction != nullptr) {
      AnyTensor out = allocate_any(group.dtype, reduction->shape);
      reduction->fused_reduction.finish(out.mutable_raw_data(), partials.data(), group.elements,
                                        reduction->fused_reduction);
      values[static_cast<std::size_t>(reduction->output)] = std::move(out);
    }
  }

  void run_group(const FusionGroup& group, std::vector<AnyTensor>& values,
                 std::span<const AnyTensor> producer_inputs) const {
    if (group.dtype == DType::float32) {
      run_group_typed<float>(group, values, producer_inputs);
    } else {
      run_group_typed<double>(group, values, producer_inputs);
    }
  }

  const trace::Graph* graph_;
  bool plan_memory_;
  mutable MemoryPlan memory_plan_;  // calls on any thread record and replay it
  std::vector<FusionGroup> groups_;
  std::vector<bool> deferred_;          // per node: runs with the group it is the producer of
  std::vector<bool> read_from_values_;  // per slot, for a fused run
  std::unordered_set<std::int32_t> is_output_;
  std::vector<std::int32_t> last_use_;
  std::vector<std::vector<std::int32_t>> releases_;
  std::vector<std::int32_t> residual_;  // slots no node releases: reset when a run ends
};

}  // namespace detail
TAPEFLOW_END_NAMESPACE
