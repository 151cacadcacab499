// What every op does when a GradientTape records: the recorder, its nodes and the backward
// accumulator. The tape (autodiff/) owns recorders; ops only append to the active ones.
//
// Note [Tape storage]: a recorder keeps its nodes in an arena and its watched ids in a flat
// open-addressing set. Recorders are reused per thread (GradientTape takes one from a
// thread-local pool and returns it reset), so a training loop that makes a new tape every
// step allocates nothing per recorded op once warm.
// IWYU pragma: private, include <tapeflow/autodiff/gradient_tape.hpp>
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::tape {

/// The identity a tape uses for a tensor id: a variable read inside a tf::function trace
/// (symbolic, with the variable's id bits) counts as the variable itself.
inline std::int64_t tape_id(std::int64_t id) noexcept {
  return (id & variable_id_bit) != 0 ? (id & ~symbolic_id_bit) : id;
}

/// A set of non-zero tensor ids (as tape_id() sees them) with open addressing.
class IdSet {
 public:
  [[nodiscard]] bool contains(std::int64_t id) const noexcept {
    id = tape_id(id);
    if (slots_.empty()) {
      return false;
    }
    std::size_t const mask = slots_.size() - 1;
    for (std::size_t i = hash(id) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == id) {
        return true;
      }
      if (slots_[i] == 0) {
        return false;
      }
    }
  }
  /// Returns true when `id` was not present.
  bool insert(std::int64_t id) {
    id = tape_id(id);
    if ((size_ + 1) * 2 > slots_.size()) {
      grow();
    }
    std::size_t const mask = slots_.size() - 1;
    for (std::size_t i = hash(id) & mask;; i = (i + 1) & mask) {
      if (slots_[i] == id) {
        return false;
      }
      if (slots_[i] == 0) {
        slots_[i] = id;
        ++size_;
        return true;
      }
    }
  }
  void clear() noexcept {
    std::fill(slots_.begin(), slots_.end(), 0);
    size_ = 0;
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  static std::size_t hash(std::int64_t id) noexcept {
    return static_cast<std::size_t>(static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull >> 17);
  }
  void grow() {
    std::vector<std::int64_t> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(64, old.size() * 2), 0);
    size_ = 0;
    for (auto id : old) {
      if (id != 0) {
        insert(id);
      }
    }
  }
  std::vector<std::int64_t> slots_;
  std::size_t size_ = 0;
};

/// Map from non-zero tensor ids (as tape_id() sees them) to small indices, open addressing;
/// clear() keeps capacity.
class IdIndex {
 public:
  [[nodiscard]] std::int32_t find(std::int64_t id) const noexcept {
    id = tape_id(id);
    if (keys_.empty()) {
      return -1;
    }
    const std::size_t mask = keys_.size() - 1;
    for (std::size_t i = hash(id) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == id) {
        return values_[i];
      }
      if (keys_[i] == 0) {
        return -1;
      }
    }
  }
  void insert(std::int64_t id, std::int32_t value) {
    id = tape_id(id);
    if ((size_ + 1) * 2 > keys_.size()) {
      grow();
    }
    const std::size_t mask = keys_.size() - 1;
    for (std::size_t i = hash(id) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == 0 || keys_[i] == id) {
        size_ += keys_[i] == 0 ? 1 : 0;
        keys_[i] = id;
        values_[i] = value;
        return;
      }
    }
  }
  void clear() noexcept {
    if (size_ > 0) {
      std::fill(keys_.begin(), keys_.end(), 0);
      size_ = 0;
    }
  }

 private:
  static std::size_t hash(std::int64_t id) noexcept {
    return static_cast<std::size_t>(static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull >> 17);
  }
  void grow() {
    std::vector<std::int64_t> old_keys = std::move(keys_);
    std::vector<std::int32_t> old_values = std::move(values_);
    keys_.assign(std::max<std::size_t>(32, old_keys.size() * 2), 0);
    values_.assign(keys_.size(), 0);
    size_ = 0;
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] != 0) {
        insert(old_keys[i], old_values[i]);
      }
    }
  }
  std::vector<std::int64_t> keys_;
  std::vector<std::int32_t> values_;
  std::size_t size_ = 0;
};

/// Bump allocator whose blocks survive reset() (see Note [Tape storage]).
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    for (auto* b : blocks_) {
      ::operator delete(b, std::align_val_t{64});
    }
  }
  void* allocate(std::size_t bytes, std::size_t align) {
    for (;;) {
      if (current_ < blocks_.size()) {
        std::size_t offset = (used_ + align - 1) & ~(align - 1);
        if (offset + bytes <= block_size_) {
          used_ = offset + bytes;
          return static_cast<std::byte*>(blocks_[current_]) + offset;
        }
        ++current_;
        used_ = 0;
        continue;
      }
      if (bytes > block_size_) {
        throw resource_exhausted("GradientTape: a recorded op needs " + std::to_string(bytes) +
                                 " bytes of tape storage, more than a block holds");
      }
      blocks_.push_back(::operator new(block_size_, std::align_val_t{64}));
    }
  }
  void reset() noexcept {
    current_ = 0;
    used_ = 0;
  }

 private:
  static constexpr std::size_t block_size_ = 64 * 1024;
  std::vector<void*> blocks_;
  std::size_t current_ = 0;
  std::size_t used_ = 0;
};

class Backprop;

/// One recorded op: its output id, input ids, and how to push a gradient through it.
class Node {
 public:
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual ~Node() = default;
  virtual void backward(Backprop& bp) = 0;
  [[nodiscard]] virtual std::string_view op_name() const noexcept = 0;

  std::int64_t out_id = 0;
  const std::int64_t* in_ids = nullptr;  // arena-owned
  std::uint32_t num_in = 0;
};

/// Scratch storage of a backward pass, kept by the recorder so repeated gradient() calls
/// reuse it (Note [Tape storage]).
struct BackpropStorage {
  IdSet needed;
  IdIndex index;
  std::vector<AnyTensor> grads;
  void clear() noexcept {
    needed.clear();
    index.clear();
    grads.clear();
  }
};

/// Gradients accumulated during one backward pass, keyed by tensor id.
class Backprop {
 public:
  explicit Backprop(BackpropStorage& storage) : s_(storage) {}

  /// Whether a gradient for `id` leads to a requested source (others are not computed).
  [[nodiscard]] bool needed(std::int64_t id) const noexcept { return s_.needed.contains(id); }
  /// The gradient of `id` so far, or null. Valid until the next set() or accumulate().
  [[nodiscard]] AnyTensor* find(std::int64_t id) {
    const std::int32_t i = s_.index.find(id);
    return i < 0 ? nullptr : &s_.grads[static_cast<std::size_t>(i)];
  }
  void set(std::int64_t id, AnyTensor grad) {
    if (AnyTensor* g = find(id)) {
      *g = std::move(grad);
      return;
    }
    s_.index.insert(id, static_cast<std::int32_t>(s_.grads.size()));
    s_.grads.push_back(std::move(grad));
  }
  /// Adds `grad` into the gradient of `id`. The sum is an op, so an outer tape records it
  /// (second-order gradients).
  template <class T, std::size_t R>
  void accumulate(std::int64_t id, Tensor<T, R> grad) {
    if (AnyTensor* g = find(id)) {
      *g = AnyTensor(accumulate_sum(g->template unchecked_as<T, R>(), grad));
    } else {
      set(id, AnyTensor(std::move(grad)));
    }
  }

 private:
  // Defined in ops/detail/execute.hpp: runs the AddN op (ops/math/add_n.hpp).
  template <class T, std::size_t R>
  static Tensor<T, R> accumulate_sum(const Tensor<T, R>& a, const Tensor<T, R>& b);

  BackpropStorage& s_;
};

/// The state behind one GradientTape.
class Recorder {
 public:
  bool persistent = false;
  bool watch_accessed_variables = true;
  int paused = 0;

  [[nodiscard]] bool watching(std::int64_t id) const noexcept { return watched_.contains(id); }
  void watch(std::int64_t id) {
    if (watched_.insert(id) && (id & variable_id_bit) != 0) {
      watched_variables_.push_back(tape_id(id));
    }
  }
  /// Whether this recorder wants an op with these input ids: any watched, or a trainable
  /// variable read (auto-watched when watch_accessed_variables).
  [[nodiscard]] bool wants(std::int64_t id) {
    if (watched_.contains(id)) {
      return true;
    }
    if (watch_accessed_variables && (id & variable_id_bit) != 0 && (id & trainable_id_bit) != 0) {
      watch(id);
      return true;
    }
    return false;
  }

  template <class NodeType, class... Args>
  NodeType* emplace(std::size_t num_ids, Args&&... args) {
    // One arena block: the node, then its input ids.
    constexpr std::size_t ids_offset =
        (sizeof(NodeType) + alignof(std::int64_t) - 1) & ~(alignof(std::int64_t) - 1);
    void* mem =
        arena_.allocate(ids_offset + sizeof(std::int64_t) * std::max<std::size_t>(num_ids, 1),
                        std::max(alignof(NodeType), alignof(std::int64_t)));
    auto* node = new (mem) NodeType(std::forward<Args>(args)...);
    node->in_ids = reinterpret_cast<std::int64_t*>(static_cast<std::byte*>(mem) + ids_offset);
    node->num_in = static_cast<std::uint32_t>(num_ids);
    nodes_.push_back(node);
    return node;
  }

  [[nodiscard]] const std::vector<Node*>& nodes() const noexcept { return nodes_; }
  /// Scratch for gradient(), reused across calls.
  BackpropStorage backprop_storage;
  [[nodiscard]] const std::vector<std::int64_t>& watched_variables() const noexcept {
    return watched_variables_;
  }

  /// Drops every node and watch, keeping capacity for reuse.
  void reset() noexcept {
    for (auto* node : nodes_) {
      node->~Node();
    }
    nodes_.clear();
    arena_.reset();
    watched_.clear();
    watched_variables_.clear();
    paused = 0;
    persistent = false;
    watch_accessed_variables = true;
  }
  /// Drops the nodes only (a non-persistent tape after gradient()).
  void release_nodes() noexcept {
    for (auto* node : nodes_) {
      node->~Node();
    }
    nodes_.clear();
    arena_.reset();
  }

 private:
  IdSet watched_;
  Arena arena_;
  std::vector<Node*> nodes_;
  std::vector<std::int64_t> watched_variables_;
};

/// Recorders of this thread's tapes, innermost last.
inline std::vector<Recorder*>& active() {
  thread_local std::vector<Recorder*> recorders;
  return recorders;
}

}  // namespace detail::tape
TAPEFLOW_END_NAMESPACE
