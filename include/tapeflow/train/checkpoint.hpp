// `tf::train::Checkpoint` (tf.train.Checkpoint): object-based save and restore in TensorFlow's
// own format (tensor bundle V2 + `_CHECKPOINTABLE_OBJECT_GRAPH`, docs/formats.md), so
// checkpoints move between C++ and Python, under Keras 3 and tf_keras names alike.
//
// Note [Checkpoint object graph]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The root is the Checkpoint; its children are the named objects given to the constructor plus
// `save_counter`, ordered by name as TensorFlow orders keyword arguments. Objects are walked
// breadth first through `train::Trackable::trackable_children(layout)`; each object gets one
// node (objects by address, variables by id), its first BFS path names it, and a variable's
// value is stored under `<escaped path>/.ATTRIBUTES/VARIABLE_VALUE`. tf_keras legacy optimizer
// slots become nodes after all others, keyed `<variable path>/.OPTIMIZER_SLOT/<optimizer
// path>/<slot>/.ATTRIBUTES/VARIABLE_VALUE`.
//
// Restore detects the layout from the file's local names (Note [Object-graph layouts]) and
// binds checkpoint nodes to live objects by local name only, so node numbering and key text
// never matter. Values whose live object does not exist yet (an unbuilt Keras layer, an
// optimizer before its first step) wait: every object reached installs a hook that reruns the
// binding pass when it creates children, and each value is applied once.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/ops/state/variable.hpp>
#include <tapeflow/train/checkpoint_state.hpp>
#include <tapeflow/train/detail/object_graph.hpp>
#include <tapeflow/train/tensor_bundle.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace train {

/// The object-graph key of the serialized TrackableObjectGraph.
inline constexpr const char* object_graph_key = "_CHECKPOINTABLE_OBJECT_GRAPH";

/// Something a checkpoint tracks (a model of `train::trackable`): a Keras layer, model,
/// optimizer or metric (any `train::Trackable`), a `tf::Variable`, a dataset iterator (anything
/// with `save_state()` / `restore_state(s)`, e.g. `tf::data::Iterator`) or a `tf::function` (a
/// node without values). Holds a reference: the object must outlive the Checkpoint.
class CheckpointObject {
 public:
  /// A trackable object (layer, model, optimizer, metric, ...): a node with its children.
  CheckpointObject(Trackable& t) : trackable_(&t) {}  // NOLINT(google-explicit-constructor)
  /// A variable: its value is stored under `<path>/.ATTRIBUTES/VARIABLE_VALUE`.
  template <class T, std::size_t R>
  CheckpointObject(const Variable<T, R>& v)  // NOLINT(google-explicit-constructor)
      : variable_(AnyVariable(v)) {}
  /// A type-erased variable, stored as a typed one is.
  CheckpointObject(AnyVariable v)  // NOLINT(google-explicit-constructor)
      : variable_(std::move(v)) {}
  /// A dataset iterator: its state (position, shuffle buffer, RNG) is stored as a string
  /// tensor under `<path>/.ATTRIBUTES/ITERATOR_STATE`.
  template <class It>
    requires(!std::derived_from<It, Trackable> && stateful_iterator<It>)
  CheckpointObject(It& it)  // NOLINT(google-explicit-constructor)
      : state_(std::make_shared<StateFns>()) {
    state_->save = [&it] {
      std::string out;
      const auto s = it.save_state();
      tapeflow::detail::wire::append_varint(out, s.entries().size());
      for (const auto& [k, v] : s.entries()) {
        tapeflow::detail::wire::append_varint(out, k.size());
        out += k;
        tapeflow::detail::wire::append_varint(out, v.size());
        out += v;
      }
      return out;
    };
    state_->restore = [&it](const std::string& bytes) {
      auto s = it.save_state();
      s.entries().clear();
      tapeflow::detail::wire::Reader r(bytes, "iterator state");
      const std::uint64_t n = r.varint();
      for (std::uint64_t i = 0; i < n; ++i) {
        std::string k(r.bytes());
        s.entries()[k] = std::string(r.bytes());
      }
      it.restore_state(s);
    };
  }
  /// A traced function: a node of its own with no values (TensorFlow tracks tf.functions the
  /// same way; the SavedModel writer exports them).
  template <class F>
    requires(!std::derived_from<F, Trackable> && !stateful_iterator<F> && traced_function<F>)
  CheckpointObject(F& f)  // NOLINT(google-explicit-constructor)
      : function_(&f) {}

  /// A custom state: `save()` returns bytes, `restore(bytes)` applies them.
  struct StateFns {
    std::function<std::string()> save;                ///< serializes the state
    std::function<void(const std::string&)> restore;  ///< applies what `save` returned
  };

  /// The trackable object, or nullptr when this is another kind.
  [[nodiscard]] Trackable* trackable() const noexcept { return trackable_; }
  /// The variable (without a value when this is another kind).
  [[nodiscard]] const AnyVariable& variable() const noexcept { return variable_; }
  /// The state functions of a dataset iterator, or null when this is another kind.
  [[nodiscard]] const std::shared_ptr<StateFns>& state() const noexcept { return state_; }
  /// The tf::function's address when this object is one (its identity in the graph).
  [[nodiscard]] const void* function() const noexcept { return function_; }

 private:
  Trackable* trackable_ = nullptr;
  AnyVariable variable_;
  std::shared_ptr<StateFns> state_;
  const void* function_ = nullptr;
};

/// Options of `Checkpoint::save` / `write` (TensorFlow: tf.train.CheckpointOptions).
struct CheckpointOptions {
  /// Whose object-graph names to write. Keras 3 is what `pip install tensorflow` gives today;
  /// tf_keras and its legacy optimizers for programs on Keras 2.
  Layout layout = Layout::keras3;
};

/// Options of `Checkpoint::restore`.
struct RestoreOptions {
  /// Record dtype/shape mismatches in the report instead of throwing invalid_argument.
  bool skip_mismatch = false;
};

/// What a restore did, by checkpoint key (variables) or variable name (missing).
struct RestoreReport {
  Layout layout = Layout::keras3;       ///< the layout detected in the checkpoint
  std::vector<std::string> matched;     ///< keys restored into a live variable
  std::vector<std::string> missing;     ///< live variables with no value in the checkpoint
  std::vector<std::string> unexpected;  ///< checkpoint keys no live object took (yet)
  std::vector<std::string> pending;     ///< keys waiting for a variable to be created
  std::vector<std::string> mismatched;  ///< "key: why" for dtype/shape mismatches

  /// Prints the layout, then each list with its count, one entry per line.
  friend std::ostream& operator<<(std::ostream& os, const RestoreReport& r) {
    os << "layout: " << layout_name(r.layout) << "\n";
    auto list = [&](const char* name, const std::vector<std::string>& v) {
      os << name << " (" << v.size() << ")";
      for (const auto& s : v) {
        os << "\n  " << s;
      }
      os << "\n";
    };
    list("matched", r.matched);
    list("missing", r.missing);
    list("unexpected", r.unexpected);
    list("pending", r.pending);
    list("mismatched", r.mismatched);
    return os;
  }
};

namespace detail_ckpt {

namespace og = tapeflow::detail::object_graph;
using Root = std::vector<std::pair<std::string, CheckpointObject>>;

/// A live object in the graph walk (Note [Checkpoint object graph]).
struct Live {
  Trackable* trackable = nullptr;                     ///< a trackable object, or nullptr
  std::shared_ptr<Trackable> owned;                   ///< keeps a node made by a listing alive
  AnyVariable variable;                               ///< a variable (no value if this is not one)
  std::shared_ptr<CheckpointObject::StateFns> state;  ///< an iterator's state functions
  const void* function = nullptr;                     ///< a tf::function's address
  const Root* root = nullptr;  ///< the Checkpoint's named objects (root node)
};

inline Live live_of(const CheckpointObject& o) {
  return Live{o.trackable(), nullptr, o.variable(), o.state(), o.function(), nullptr};
}

/// Named children of a live object under `layout`.
inline std::vector<std::pair<std::string, Live>> children_of(const Live& l, Layout layout) {
  std::vector<std::pair<std::string, Live>> out;
  if (l.root != nullptr) {
    for (const auto& [name, obj] : *l.root) {
      out.emplace_back(name, live_of(obj));
    }
  } else if (l.trackable != nullptr) {
    for (auto& c : l.trackable->trackable_children(layout)) {
      if (c.target() != nullptr) {
        out.emplace_back(c.name, Live{c.target(), c.owned, {}, nullptr, nullptr, nullptr});
      } else if (c.variable.has_value()) {
        out.emplace_back(c.name, Live{nullptr, nullptr, c.variable, nullptr, nullptr, nullptr});
      }
    }
  }
  return out;
}

/// What makes two live objects the same node: objects by address, variables by id.
inline std::pair<int, std::int64_t> identity(const Live& l) {
  auto address = [](const void* p) {
    return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(p));
  };
  if (l.root != nullptr) {
    return {0, address(l.root)};
  }
  if (l.trackable != nullptr) {
    return {0, address(l.trackable)};
  }
  if (l.state) {
    return {1, address(l.state.get())};
  }
  if (l.function != nullptr) {
    return {3, address(l.function)};
  }
  return {2, l.variable.id()};
}

/// The live object graph, numbered as TensorFlow numbers it.
struct LiveGraph {
  std::vector<Live> nodes;         ///< the live object of each node, by node id
  std::vector<std::string> paths;  ///< each node's escaped path, "" for the root
  og::Graph graph;                 ///< the TrackableObjectGraph to write
  std::vector<std::pair<std::string, AnyVariable>> values;  ///< checkpoint key -> variable
  /// Checkpoint key -> iterator state functions.
  std::vector<std::pair<std::string, std::shared_ptr<CheckpointObject::StateFns>>> states;
};

/// Sets has_checkpoint_values: the node or a descendant holds values (iterating to a fixpoint,
/// since a node can be reached again through a later edge).
inline void mark_checkpoint_values(og::Graph& graph) {
  std::vector<char> hv(graph.nodes.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = graph.nodes.size(); i-- > 0;) {
      const auto& n = graph.nodes[i];
      bool v = !n.attributes.empty() || !n.slot_variables.empty();
      for (const auto& c : n.children) {
        v = v || hv[static_cast<std::size_t>(c.node_id)] != 0;
      }
      if (v && hv[i] == 0) {
        hv[i] = 1;
        changed = true;
      }
    }
  }
  for (std::size_t i = 0; i < hv.size(); ++i) {
    graph.nodes[i].has_checkpoint_values = hv[i] != 0;
  }
}

/// The graph below `root`: a Checkpoint's named objects, or one object that is the root
/// itself (Keras `save_weights`).
inline LiveGraph build(const Live& root, Layout layout) {
  LiveGraph g;
  g.nodes.push_back(root);
  g.paths.emplace_back();
  g.graph.nodes.emplace_back();
  std::map<std::pair<int, std::int64_t>, std::size_t> ids;  // identity -> node id
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Live cur = g.nodes[i];
    for (auto& [name, child] : children_of(cur, layout)) {
      auto [pos, inserted] = ids.emplace(identity(child), g.nodes.size());
      const std::size_t id = pos->second;
      if (inserted) {
        g.nodes.push_back(child);
        const std::string esc = og::escape(name);
        g.paths.push_back(g.paths[i].empty() ? esc : g.paths[i] + "/" + esc);
        g.graph.nodes.emplace_back();
      }
      g.graph.nodes[i].children.push_back({static_cast<std::int32_t>(id), name});
    }
  }
  const std::size_t normal = g.nodes.size();
  for (std::size_t i = 0; i < normal; ++i) {
    const Live& n = g.nodes[i];
    if (n.variable.has_value()) {
      const std::string key = g.paths[i] + "/.ATTRIBUTES/VARIABLE_VALUE";
      g.graph.nodes[i].attributes.push_back({"VARIABLE_VALUE", n.variable.name(), key});
      g.values.emplace_back(key, n.variable);
    } else if (n.state) {
      const std::string key = g.paths[i] + "/.ATTRIBUTES/ITERATOR_STATE";
      g.graph.nodes[i].attributes.push_back({"ITERATOR_STATE", "", key});
      g.states.emplace_back(key, n.state);
    }
  }
  for (std::size_t i = 0; i < normal; ++i) {
    if (g.nodes[i].trackable == nullptr) {
      continue;
    }
    for (const auto& s : g.nodes[i].trackable->trackable_slot_variables(layout)) {
      auto found = ids.find({2, s.original.id()});
      if (found == ids.end()) {
        continue;  // a slot of a variable this checkpoint does not track
      }
      const std::size_t orig = found->second;
      const auto id = static_cast<std::int32_t>(g.nodes.size());
      g.nodes.push_back(Live{nullptr, nullptr, s.slot, nullptr, nullptr, nullptr});
      const std::string key = g.paths[orig] + "/.OPTIMIZER_SLOT/" + g.paths[i] + "/" +
                              og::escape(s.slot_name) + "/.ATTRIBUTES/VARIABLE_VALUE";
      g.paths.push_back(key);
      g.graph.nodes.emplace_back();
      g.graph.nodes.back().attributes.push_back({"VARIABLE_VALUE", s.slot.name(), key});
      g.values.emplace_back(key, s.slot);
      g.graph.nodes[i].slot_variables.push_back({static_cast<std::int32_t>(orig), s.slot_name, id});
    }
  }
  mark_checkpoint_values(g.graph);
  return g;
}
inline LiveGraph build(const Root& root, Layout layout) {
  return build(Live{nullptr, nullptr, {}, nullptr, nullptr, &root}, layout);
}

/// The layout a checkpoint was written in, from local names only Keras 3 (or only tf_keras's
/// optimizers) use (Note [Object-graph layouts]); a file with none of them restores the same
/// way under every layout.
inline Layout detect_layout(const og::Graph& graph) {
  bool tf_keras_optimizer = false, legacy = false, tf_keras_layers = false;
  for (const auto& n : graph.nodes) {
    legacy = legacy || !n.slot_variables.empty();
    for (const auto& c : n.children) {
      const std::string& name = c.local_name;
      if (name == "_kernel" || name == "_embeddings" || name == "_functional" ||
          name == "_operations" || name == "_trainable_variables" ||
          name == "_trainable_variables_indices") {
        return Layout::keras3;
      }
      tf_keras_optimizer = tf_keras_optimizer || name == "_index_dict";
      legacy = legacy || name == "iter";
      tf_keras_layers = tf_keras_layers || name.starts_with("layer_with_weights-") ||
                        name == "kernel" || name == "embeddings";
    }
  }
  if (tf_keras_optimizer) {
    return Layout::tf_keras;
  }
  if (legacy) {
    return Layout::tf_keras_legacy;
  }
  return tf_keras_layers ? Layout::tf_keras : Layout::keras3;
}

/// Shared by a load status and the deferred-restoration hooks it installs.
struct RestoreState {
  std::shared_ptr<CheckpointReader> reader;  ///< the checkpoint (null for an empty path)
  Root root;                                 ///< the Checkpoint's named objects
  Trackable* root_object = nullptr;          ///< the root itself, when it is one object
  og::Graph graph;                           ///< the checkpoint's object graph
  Layout layout = Layout::keras3;            ///< the layout detected in it
  RestoreOptions options;                    ///< as given to restore
  std::set<std::string> consumed;            ///< keys applied (or recorded as mismatched)
  std::set<std::int64_t> restored_ids;       ///< ids of the variables assigned
  std::set<std::string> pending;        ///< keys whose live object does not exist yet (last pass)
  std::vector<std::string> mismatched;  ///< "key: why" (skip_mismatch only)
  std::map<Trackable*, std::set<std::int32_t>> hooked;  ///< object -> its checkpoint nodes
  std::map<std::int32_t, AnyVariable> variable_nodes;   ///< bound by any pass (slot owners)
  bool in_pass = false;         ///< a pass is running (a nested hook call sets `rerun`)
  bool rerun = false;           ///< children appeared during the pass: run it again
  bool expect_partial = false;  ///< CheckpointLoadStatus::expect_partial was called
  bool no_checkpoint = false;   ///< restore was given an empty path

  /// The live object of checkpoint node 0.
  [[nodiscard]] Live root_live() const {
    return root_object != nullptr ? Live{root_object, nullptr, {}, nullptr, nullptr, nullptr}
                                  : Live{nullptr, nullptr, {}, nullptr, nullptr, &root};
  }

  /// Assigns checkpoint value `key` to `var` once; a dtype or shape mismatch throws
  /// invalid_argument, or is recorded with RestoreOptions::skip_mismatch.
  void restore_var(const std::string& key, const AnyVariable& var) {
    if (consumed.count(key) != 0) {
      return;  // each value is applied once: later passes must not undo training
    }
    const TensorInfo& info = reader->info(key);
    if (info.dtype != var.dtype() || info.shape != var.shape()) {
      std::string why = "checkpoint has " + std::string(dtype_name(info.dtype)) + " " +
                        info.shape.to_string() + ", variable '" + var.name() + "' is " +
                        std::string(dtype_name(var.dtype())) + " " + var.shape().to_string();
      if (!options.skip_mismatch) {
        throw invalid_argument("tf::train::Checkpoint::restore: key '" + key + "' in '" +
                               reader->prefix() + ".index': " + why);
      }
      mismatched.push_back(key + ": " + why);
      consumed.insert(key);
      return;
    }
    var.assign(reader->get_tensor(key));
    consumed.insert(key);
    restored_ids.insert(var.id());
  }

  /// Applies iterator state `key` to `state` once; data_loss if it is not a string scalar.
  void restore_state(const std::string& key, CheckpointObject::StateFns& state) {
    if (consumed.count(key) != 0) {
      return;
    }
    auto t = reader->get_tensor(key);
    if (t.dtype() != DType::string || t.num_elements() != 1) {
      throw data_loss("tf::train::Checkpoint::restore: key '" + key + "' in '" + reader->prefix() +
                      ".index' is not a string scalar");
    }
    state.restore(*static_cast<const std::string*>(t.raw_data()));
    consumed.insert(key);
  }

  /// The value keys of node `id` and everything below it.
  void collect_keys(std::int32_t id, std::set<std::int32_t>& seen, std::set<std::string>& out) {
    if (!seen.insert(id).second) {
      return;
    }
    const auto& node = graph.nodes[static_cast<std::size_t>(id)];
    for (const auto& a : node.attributes) {
      if (reader->has_tensor(a.checkpoint_key)) {
        out.insert(a.checkpoint_key);
      }
    }
    for (const auto& c : node.children) {
      collect_keys(c.node_id, seen, out);
    }
    for (const auto& s : node.slot_variables) {
      collect_keys(s.slot_variable_node_id, seen, out);
    }
  }

  /// A binding pass from checkpoint node `start`, bound to `live`: applies every value below
  /// it whose live object exists and has not been restored yet, and records what still waits.
  /// Hooks rerun it from the object that created children, so a pass touches only that
  /// object and what it owns (never objects of the root that may have died since).
  void pass(std::int32_t start, const Live& live) {
    if (in_pass) {
      rerun = true;  // a listing created children (lazy slots): bind them after this pass
      return;
    }
    in_pass = true;
    try {
      do {
        rerun = false;
        pass_once(start, live);
      } while (rerun);
    } catch (...) {
      in_pass = false;
      throw;
    }
    in_pass = false;
  }

  /// Installs the hook of `t`, bound (this pass) to checkpoint node `id`.
  void hook(const std::shared_ptr<RestoreState>& self, Trackable* t, std::int32_t id) {
    auto& ids = hooked[t];
    if (ids.insert(id).second && ids.size() == 1) {
      t->set_children_changed_hook([self, t] {
        for (const std::int32_t n : self->hooked[t]) {
          self->pass(n, Live{t, nullptr, {}, nullptr, nullptr, nullptr});
        }
      });
    }
  }
  std::weak_ptr<RestoreState> self;  ///< this object, for the hooks it installs

 private:
  void pass_once(std::int32_t start, const Live& start_live) {
    std::map<std::int32_t, Live> bound;
    bound.emplace(start, start_live);
    // Whether the object a node belongs to may still create children; nodes made by a
    // listing (lists, dicts) belong to the object that listed them.
    std::map<std::int32_t, bool> may_grow{
        {start, start_live.trackable != nullptr && start_live.trackable->may_create_children()}};
    std::vector<std::int32_t> queue{start};
    std::set<std::string> waiting;
    std::set<std::int32_t> waiting_seen;
    for (std::size_t qi = 0; qi < queue.size(); ++qi) {
      const std::int32_t id = queue[qi];
      const Live live = bound.at(id);
      const auto& node = graph.nodes[static_cast<std::size_t>(id)];
      if (live.variable.has_value()) {
        variable_nodes.emplace(id, live.variable);
      }
      for (const auto& a : node.attributes) {
        if (!reader->has_tensor(a.checkpoint_key)) {
          continue;
        }
        if (a.name == "VARIABLE_VALUE" && live.variable.has_value()) {
          restore_var(a.checkpoint_key, live.variable);
        } else if (a.name == "ITERATOR_STATE" && live.state) {
          restore_state(a.checkpoint_key, *live.state);
        }
      }
      if (live.trackable != nullptr && !live.owned) {
        hook(self.lock(), live.trackable, id);
      }
      const auto kids = children_of(live, layout);
      for (const auto& c : node.children) {
        if (bound.count(c.node_id) != 0) {
          continue;
        }
        const Live* match = nullptr;
        for (const auto& [name, l] : kids) {
          if (name == c.local_name) {
            match = &l;
            break;
          }
        }
        if (match != nullptr) {
          bound.emplace(c.node_id, *match);
          may_grow[c.node_id] =
              match->owned ? may_grow[id]
                           : match->trackable != nullptr && match->trackable->may_create_children();
          queue.push_back(c.node_id);
        } else if (may_grow[id]) {
          // Not there yet (weights are created on a layer's first call, slots on an
          // optimizer's first step): the values below wait for the object's hook.
          collect_keys(c.node_id, waiting_seen, waiting);
        }
      }
    }
    // tf_keras legacy optimizer slots, by (original variable, slot name).
    for (const auto& [id, live] : bound) {
      const auto& node = graph.nodes[static_cast<std::size_t>(id)];
      if (live.trackable == nullptr || node.slot_variables.empty()) {
        continue;
      }
      const auto slots = live.trackable->trackable_slot_variables(layout);
      for (const auto& ref : node.slot_variables) {
        std::string key;
        for (const auto& a :
             graph.nodes[static_cast<std::size_t>(ref.slot_variable_node_id)].attributes) {
          if (a.name == "VARIABLE_VALUE" && reader->has_tensor(a.checkpoint_key)) {
            key = a.checkpoint_key;
          }
        }
        if (key.empty()) {
          continue;
        }
        // The original variable may have been bound by an earlier pass from another object.
        auto orig = variable_nodes.find(ref.original_variable_node_id);
        const SlotVariableReference* slot = nullptr;
        if (orig != variable_nodes.end()) {
          for (const auto& s : slots) {
            if (s.slot_name == ref.slot_name && s.original.same_as(orig->second)) {
              slot = &s;
            }
          }
        }
        if (slot != nullptr) {
          restore_var(key, slot->slot);
        } else if (live.trackable->may_create_children()) {
          waiting.insert(key);
        }
      }
    }
    pending.insert(waiting.begin(), waiting.end());
    std::erase_if(pending, [&](const std::string& k) { return consumed.count(k) != 0; });
  }
};

}  // namespace detail_ckpt

/// The result of `Checkpoint::restore` (TensorFlow: CheckpointLoadStatus).
class CheckpointLoadStatus {
 public:
  /// Wraps the state of a restore (made by Checkpoint::restore).
  explicit CheckpointLoadStatus(std::shared_ptr<detail_ckpt::RestoreState> s) : s_(std::move(s)) {}

  /// The layout detected in the checkpoint (Note [Object-graph layouts]).
  [[nodiscard]] Layout layout() const noexcept { return s_->layout; }

  /// Keys matched, missing, unexpected, pending and mismatched, as of now.
  [[nodiscard]] RestoreReport report() const {
    RestoreReport r;
    r.layout = s_->layout;
    std::set<std::string> bad;
    for (const auto& m : s_->mismatched) {
      bad.insert(m.substr(0, m.find(": ")));
    }
    for (const auto& k : s_->consumed) {
      if (bad.count(k) == 0) {
        r.matched.push_back(k);
      }
    }
    r.mismatched = s_->mismatched;
    r.pending.assign(s_->pending.begin(), s_->pending.end());
    if (s_->reader) {
      for (const auto& k : s_->reader->keys()) {
        if (k != object_graph_key && s_->consumed.count(k) == 0 && s_->pending.count(k) == 0) {
          r.unexpected.push_back(k);
        }
      }
    }
    const auto live = detail_ckpt::build(s_->root_live(), s_->layout);
    for (const auto& [key, var] : live.values) {
      const bool counter_absent = key == "save_counter/.ATTRIBUTES/VARIABLE_VALUE" &&
                                  (!s_->reader || !s_->reader->has_tensor(key));
      if (s_->restored_ids.count(var.id()) == 0 && !counter_absent) {
        r.missing.push_back(key + " (" + var.name() + ")");
      }
    }
    for (const auto& [key, st] : live.states) {
      if (s_->consumed.count(key) == 0) {
        r.missing.push_back(key);
      }
    }
    return r;
  }

  /// Throws failed_precondition unless every checkpoint value went into a live object and every
  /// live variable got a value (values waiting for unbuilt layers count as not consumed).
  const CheckpointLoadStatus& assert_consumed() const {
    auto r = report();
    if (s_->no_checkpoint || !r.unexpected.empty() || !r.pending.empty() || !r.missing.empty() ||
        !r.mismatched.empty()) {
      fail("assert_consumed", r);
    }
    return *this;
  }
  /// Throws failed_precondition unless every variable that exists now was restored.
  const CheckpointLoadStatus& assert_existing_objects_matched() const {
    auto r = report();
    if (s_->no_checkpoint || !r.missing.empty() || !r.mismatched.empty()) {
      fail("assert_existing_objects_matched", r);
    }
    return *this;
  }
  /// Marks a partial restore as intended (TensorFlow then stays quiet about unused values).
  const CheckpointLoadStatus& expect_partial() const {
    s_->expect_partial = true;
    return *this;
  }

 private:
  [[noreturn]] void fail(const char* what, const RestoreReport& r) const {
    std::ostringstream os;
    os << "tf::train::CheckpointLoadStatus::" << what << ": checkpoint '"
       << (s_->reader ? s_->reader->prefix() : std::string("<none>")) << "' does not match:\n"
       << r;
    throw failed_precondition(os.str());
  }
  std::shared_ptr<detail_ckpt::RestoreState> s_;
};

namespace detail_ckpt {

/// Writes a walked graph's values and object graph to `file_prefix`; returns the prefix.
inline std::string write_graph(const LiveGraph& live, const std::string& file_prefix) {
  BundleWriter w(file_prefix);
  for (const auto& [key, var] : live.values) {
    w.add(key, var.value());
  }
  for (const auto& [key, st] : live.states) {
    w.add(key, AnyTensor(Tensor<std::string, 0>(st->save())));
  }
  w.add(object_graph_key,
        AnyTensor(Tensor<std::string, 0>(detail::object_graph::encode(live.graph))));
  return w.finish();
}

/// Reads the object graph of `save_path` and runs the first binding pass from node 0 (bound to
/// `s`'s root); `what` names the caller in errors.
inline CheckpointLoadStatus restore(std::shared_ptr<RestoreState> s, const std::string& save_path,
                                    const std::string& what) {
  s->self = s;
  if (save_path.empty()) {
    s->no_checkpoint = true;
    return CheckpointLoadStatus(s);
  }
  s->reader = std::make_shared<CheckpointReader>(save_path);
  if (!s->reader->has_tensor(object_graph_key)) {
    throw invalid_argument(what + ": '" + save_path +
                           ".index' has no _CHECKPOINTABLE_OBJECT_GRAPH (a TF1 name-based "
                           "checkpoint); read it with tf::train::load_checkpoint");
  }
  auto graph_t = s->reader->get_tensor(object_graph_key);
  if (graph_t.dtype() != DType::string || graph_t.num_elements() != 1) {
    throw data_loss(what + ": '" + save_path +
                    ".index': _CHECKPOINTABLE_OBJECT_GRAPH is not a string scalar");
  }
  s->graph = tapeflow::detail::object_graph::decode(
      *static_cast<const std::string*>(graph_t.raw_data()), save_path + ".index");
  if (s->graph.nodes.empty()) {
    throw data_loss(what + ": '" + save_path + "': empty object graph");
  }
  s->layout = detect_layout(s->graph);
  s->pass(0, s->root_live());
  return CheckpointLoadStatus(s);
}

}  // namespace detail_ckpt

/// Writes `obj` as the root of a checkpoint at `file_prefix` (no `save_counter`, no state
/// file): what Keras's `model.save_weights(prefix)` and a SavedModel's `variables/` hold.
/// Returns `file_prefix`.
inline std::string write_object(Trackable& obj, const std::string& file_prefix,
                                Layout layout = Layout::keras3) {
  return detail_ckpt::write_graph(
      detail_ckpt::build(detail_ckpt::Live{&obj, nullptr, {}, nullptr, nullptr, nullptr}, layout),
      file_prefix);
}

/// Restores a checkpoint whose root is `obj` (written by `write_object` or Keras's
/// `save_weights`), as `Checkpoint::restore` does: values for variables that do not exist yet
/// wait for them.
inline CheckpointLoadStatus read_object(Trackable& obj, const std::string& save_path,
                                        RestoreOptions options = {},
                                        const std::string& what = "tf::train::read_object") {
  auto s = std::make_shared<detail_ckpt::RestoreState>();
  s->root_object = &obj;
  s->options = options;
  return detail_ckpt::restore(std::move(s), save_path, what);
}

/// Groups trackable objects under names and saves/restores them (tf.train.Checkpoint).
///
///     tf::train::Checkpoint ckpt({{"myAwesomeModel", model}, {"myAwesomeOptimizer", optimizer}});
///     auto path = ckpt.save("./save/model.ckpt");          // "./save/model.ckpt-1"
///     ckpt.restore(tf::train::latest_checkpoint("./save")).assert_consumed();
///
/// The named objects are held by reference and must outlive the Checkpoint.
class Checkpoint {
 public:
  /// One named object: `{"model", model}`.
  struct Item {
    std::string name;         ///< the object's local name under the root
    CheckpointObject object;  ///< the object (held by reference)
  };

  /// A checkpoint of the named objects, e.g. `{{"model", model}, {"optimizer", opt}}`
  /// (TensorFlow's keyword arguments). Throws invalid_argument for a duplicate name or the
  /// reserved name "save_counter".
  Checkpoint(std::initializer_list<Item> items, CheckpointOptions options = {})
      : Checkpoint(std::vector<Item>(items), options) {}
  /// As the initializer-list constructor, from a vector.
  explicit Checkpoint(const std::vector<Item>& items, CheckpointOptions options = {})
      : options_(options) {
    for (const auto& it : items) {
      if (it.name == "save_counter") {
        throw invalid_argument("tf::train::Checkpoint: 'save_counter' is reserved");
      }
      for (const auto& [n, o] : root_) {
        if (n == it.name) {
          throw invalid_argument("tf::train::Checkpoint: duplicate name '" + it.name + "'");
        }
      }
      root_.emplace_back(it.name, it.object);
    }
    root_.emplace_back("save_counter", CheckpointObject(save_counter_));
    // TensorFlow orders a Checkpoint's keyword children by name; the order decides node ids
    // and, through breadth-first naming, which path keys a variable reached twice.
    std::stable_sort(root_.begin(), root_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }

  /// The options save and write use unless given others.
  [[nodiscard]] const CheckpointOptions& options() const noexcept { return options_; }

  /// Number of `save()` calls so far (restored by `restore`).
  [[nodiscard]] const Variable<std::int64_t, 0>& save_counter() const noexcept {
    return save_counter_;
  }

  /// Writes `file_prefix` (.index + .data-00000-of-00001) without numbering and without
  /// touching the `checkpoint` state file. Returns `file_prefix`.
  std::string write(const std::string& file_prefix) { return write(file_prefix, options_); }
  /// write() with these options instead of the checkpoint's.
  std::string write(const std::string& file_prefix, const CheckpointOptions& options) {
    return detail_ckpt::write_graph(detail_ckpt::build(root_, options.layout), file_prefix);
  }

  /// Increments `save_counter`, writes `file_prefix-<save_counter>` and points the directory's
  /// `checkpoint` file at it (replaced atomically, last). Returns the numbered prefix.
  std::string save(const std::string& file_prefix) { return save(file_prefix, options_); }
  /// save() with these options instead of the checkpoint's.
  std::string save(const std::string& file_prefix, const CheckpointOptions& options) {
    save_counter_.assign_add(Tensor<std::int64_t, 0>(1));
    const std::string path =
        write(file_prefix + "-" + std::to_string(save_counter_.value().item()), options);
    detail_bundle::stage("state");
    CheckpointState st;
    st.model_checkpoint_path = path;
    st.all_model_checkpoint_paths = {path};
    detail_state::write_state(detail_state::dirname(file_prefix), st);
    return path;
  }

  /// Restores from a prefix (e.g. `latest_checkpoint(dir)`); an empty path restores nothing
  /// (TensorFlow: restore(None)). Values for variables not created yet are applied when the
  /// variables are created. Throws not_found / data_loss for missing or corrupt files and
  /// invalid_argument on a dtype or shape mismatch (unless `skip_mismatch`).
  CheckpointLoadStatus restore(const std::string& save_path, RestoreOptions options = {}) {
    auto s = std::make_shared<detail_ckpt::RestoreState>();
    s->root = root_;
    s->options = options;
    return detail_ckpt::restore(std::move(s), save_path, "tf::train::Checkpoint::restore");
  }
  /// Same as restore (TensorFlow's `read`, the counterpart of `write`).
  CheckpointLoadStatus read(const std::string& save_path, RestoreOptions options = {}) {
    return restore(save_path, options);
  }

 private:
  CheckpointOptions options_;
  std::vector<std::pair<std::string, CheckpointObject>> root_;
  Variable<std::int64_t, 0> save_counter_{std::int64_t{0},
                                          {.name = "save_counter", .trainable = false}};
};

}  // namespace train
TAPEFLOW_END_NAMESPACE
