// `tf::train::Trackable` and the `tf::train::trackable` concept: what checkpoints (and the
// SavedModel writer) walk. It lives in train so that train never includes keras: Keras layers,
// models, optimizers and metrics derive from Trackable; Variables, dataset iterators and
// tf::functions model the concept structurally (docs/checkpoints.md).
//
// Note [Object-graph layouts]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The same Python model writes different object graphs under Keras 3 (TensorFlow >= 2.16's
// `tf.keras`) and under tf_keras (Keras 2): Keras 3 Dense names its kernel `_kernel`, keeps a
// Sequential's layers under `_functional/_operations/<i>` and an optimizer's state in a flat
// `_variables` list; tf_keras uses `kernel`, `layer_with_weights-<j>`/`layer-<i>` and, for its
// pre-2.11 ("legacy") optimizers, `iter`, hyperparameter variables and slot references.
// A Trackable therefore lists its children *for a layout*; the checkpoint writer asks for the
// layout it writes, the reader for the layout it detected in the file (docs/checkpoints.md,
// "Layouts").
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace train {

/// Whose object-graph names a checkpoint uses (Note [Object-graph layouts]).
enum class Layout {
  keras3,           ///< Keras 3 (TensorFlow >= 2.16 `tf.keras`): `_kernel`, `_variables/<n>`
  tf_keras,         ///< tf_keras (Keras 2) with its default optimizers: `kernel`, `_variables/<n>`
  tf_keras_legacy,  ///< tf_keras with `optimizers.legacy.*`: `iter`, slots `m`/`v`/...
};

/// "keras3", "tf_keras" or "tf_keras_legacy".
constexpr std::string_view layout_name(Layout l) noexcept {
  switch (l) {
    case Layout::keras3:
      return "keras3";
    case Layout::tf_keras:
      return "tf_keras";
    case Layout::tf_keras_legacy:
      return "tf_keras_legacy";
  }
  return "?";
}

class Trackable;

/// One edge of the object graph: a named child that is an object or a variable.
struct TrackableReference {
  std::string name = {};  ///< the child's local name (its object-graph edge label)
  /// A long-lived child object (a member layer, the compiled optimizer, ...).
  Trackable* object = nullptr;
  /// Or a node made for this listing: the lists and dicts Python wraps attributes in
  /// (`_variables`, `_operations`, ...). Kept alive by whoever walks the graph.
  std::shared_ptr<Trackable> owned = nullptr;
  /// Or a variable.
  AnyVariable variable = {};

  /// The child object (`object`, else `owned`), or nullptr when the child is a variable.
  [[nodiscard]] Trackable* target() const noexcept {
    return object != nullptr ? object : owned.get();
  }
};

/// A slot of a tf_keras legacy optimizer: per-variable state the object graph stores as a
/// slot reference (`<var>/.OPTIMIZER_SLOT/<optimizer>/<slot>`) rather than as a child.
struct SlotVariableReference {
  AnyVariable original;   ///< the variable the slot belongs to
  std::string slot_name;  ///< e.g. "m", "v", "momentum"
  AnyVariable slot;       ///< the slot variable itself
};

/// A node of the object graph (tf.train Trackable): lists its children for a layout.
///
///     struct Counter : tf::train::Trackable {
///       tf::Variable<std::int64_t, 0> n{std::int64_t{0}};
///       std::vector<tf::train::TrackableReference> trackable_children(tf::train::Layout) override
///       {
///         return {{.name = "n", .variable = n}};
///       }
///     };
///
/// Objects that create variables later (a Keras layer on its first call, an optimizer on its
/// first step) call `notify_children_changed()` afterwards, so a checkpoint restored earlier
/// applies the values it holds for them then (deferred restoration).
class Trackable {
 public:
  /// Called by notify_children_changed (a checkpoint restore installs one).
  using ChildrenChangedHook = std::function<void()>;

  Trackable() = default;
  /// Copies the base state, the children-changed hook included.
  Trackable(const Trackable&) = default;
  /// Moves the base state, the children-changed hook included.
  Trackable(Trackable&&) noexcept = default;
  /// Copies the base state, the children-changed hook included.
  Trackable& operator=(const Trackable&) = default;
  /// Moves the base state, the children-changed hook included.
  Trackable& operator=(Trackable&&) noexcept = default;
  virtual ~Trackable() = default;

  /// Children (objects and variables) under their object-graph local names for `layout`, in
  /// the order Python creates them (the order decides node numbering and checkpoint keys).
  [[nodiscard]] virtual std::vector<TrackableReference> trackable_children(Layout layout) {
    (void)layout;
    return {};
  }
  /// Slot references (only tf_keras legacy optimizers have them).
  [[nodiscard]] virtual std::vector<SlotVariableReference> trackable_slot_variables(Layout layout) {
    (void)layout;
    return {};
  }
  /// Whether the object may still create children (a layer before its first call, an
  /// optimizer before its first step): a restore keeps values it has no object for yet
  /// pending rather than unexpected.
  [[nodiscard]] virtual bool may_create_children() const { return false; }
  /// Installs (or clears, with nullptr) the hook `notify_children_changed` calls.
  virtual void set_children_changed_hook(ChildrenChangedHook hook) { hook_ = std::move(hook); }

 protected:
  /// Call after creating variables or children that a restore may be waiting for.
  virtual void notify_children_changed() const {
    if (hook_) {
      hook_();
    }
  }

 private:
  ChildrenChangedHook hook_;
};

/// A Python list attribute (`trackable_list_wrapper`): children "0", "1", ... in order.
class TrackableList final : public Trackable {
 public:
  TrackableList() = default;
  /// A list of these children (their names are replaced by their positions).
  explicit TrackableList(std::vector<TrackableReference> items) : items_(std::move(items)) {}
  /// A list of variables.
  static std::shared_ptr<TrackableList> of(const std::vector<AnyVariable>& vars) {
    auto list = std::make_shared<TrackableList>();
    for (const auto& v : vars) {
      list->push_back({.variable = v});
    }
    return list;
  }
  /// Appends a child (named by its position).
  void push_back(TrackableReference item) { items_.push_back(std::move(item)); }
  [[nodiscard]] std::vector<TrackableReference> trackable_children(Layout) override {
    auto out = items_;
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].name = std::to_string(i);
    }
    return out;
  }

 private:
  std::vector<TrackableReference> items_;
};

/// A node with fixed named children (a Python dict attribute or a plain object made for the
/// listing, e.g. Keras 3 Sequential's `_functional`).
class TrackableNode final : public Trackable {
 public:
  TrackableNode() = default;
  /// A node with these named children.
  explicit TrackableNode(std::vector<TrackableReference> children)
      : children_(std::move(children)) {}
  [[nodiscard]] std::vector<TrackableReference> trackable_children(Layout) override {
    return children_;
  }

 private:
  std::vector<TrackableReference> children_;
};

/// A dataset iterator (or anything) whose position saves and restores as bytes.
template <class It>
concept stateful_iterator = requires(It& it) {
  it.save_state().entries();
  it.restore_state(it.save_state());
};

/// A traced function (`tf::function`): a node of the object graph with no values of its own
/// (the SavedModel writer exports its concrete functions).
template <class F>
concept traced_function = requires(const F& f) {
  f.concrete_functions();
  { f.trace_count() } -> std::convertible_to<int>;
};

/// What `tf::train::Checkpoint` (and the SavedModel writer) can track: Keras layers, models,
/// optimizers and metrics (derived from Trackable), Variables, dataset iterators and
/// tf::functions.
template <class T>
concept trackable =
    std::derived_from<std::remove_cvref_t<T>, Trackable> ||
    is_variable<std::remove_cvref_t<T>>::value ||
    std::same_as<std::remove_cvref_t<T>, AnyVariable> ||
    stateful_iterator<std::remove_cvref_t<T>> || traced_function<std::remove_cvref_t<T>>;

}  // namespace train
TAPEFLOW_END_NAMESPACE
