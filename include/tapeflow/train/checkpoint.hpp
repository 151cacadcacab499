// `tf::train::Checkpoint` (tf.train.Checkpoint): object-based save and restore in TensorFlow's
// own format (tensor bundle V2 + `_CHECKPOINTABLE_OBJECT_GRAPH`, docs/formats.md 9-11), so
// checkpoints move between C++ and Python.
//
// Note [Checkpoint object graph]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The root is the Checkpoint; its children are the named objects given to the constructor plus
// `save_counter`. Objects are walked breadth first through `keras::Trackable`
// (`trackable_children()`, then `trackable_variables()`); each object gets one node, its first
// BFS path names it, and a variable's value is stored under
// `<escaped path>/.ATTRIBUTES/VARIABLE_VALUE`. Optimizer slots become nodes after all others,
// keyed `<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot>/.ATTRIBUTES/VARIABLE_VALUE`.
// Restore binds checkpoint nodes to live objects by local name only, so node numbering never
// matters. A variable not created yet (an unbuilt Keras layer) is restored when `add_weight`
// creates it, through the layer's restore hook; slots likewise through the optimizer's slot hook.
//
// Deviation from docs/architecture.md: train should depend on io/core/autodiff only, but the
// Trackable interface lives in keras (keras/layer.hpp) for now; the lead may move it to a lower
// module, after which this header includes that instead.
#pragma once

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
#include <tapeflow/core/variable.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>
#include <tapeflow/keras/any_variable.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/train/checkpoint_state.hpp>
#include <tapeflow/train/detail/object_graph.hpp>
#include <tapeflow/train/tensor_bundle.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace train {

/// The object-graph key of the serialized TrackableObjectGraph.
inline constexpr const char* object_graph_key = "_CHECKPOINTABLE_OBJECT_GRAPH";

/// Something a checkpoint tracks: a Keras layer, model or optimizer (any `keras::Trackable`), a
/// `tf::Variable`, or a dataset iterator (anything with `save_state()` / `restore_state(s)`,
/// e.g. `tf::data::Iterator`). Holds a reference: the object must outlive the Checkpoint.
class CheckpointObject {
 public:
  CheckpointObject(keras::Trackable& t) : trackable_(&t) {}  // NOLINT(google-explicit-constructor)
  template <class T, std::size_t R>
  CheckpointObject(const Variable<T, R>& v)  // NOLINT(google-explicit-constructor)
      : variable_(keras::AnyVariable(v)) {}
  CheckpointObject(keras::AnyVariable v)  // NOLINT(google-explicit-constructor)
      : variable_(std::move(v)) {}
  /// A dataset iterator: its state (position, shuffle buffer, RNG) is stored as a string
  /// tensor under `<path>/.ATTRIBUTES/ITERATOR_STATE`.
  template <class It>
    requires(!std::derived_from<It, keras::Trackable> &&
             requires(It& it) {
               it.save_state().entries();
               it.restore_state(it.save_state());
             })
  CheckpointObject(It& it)  // NOLINT(google-explicit-constructor)
      : state_(std::make_shared<StateFns>()) {
    state_->save = [&it] {
      std::string out;
      const auto s = it.save_state();
      detail::wire::append_varint(out, s.entries().size());
      for (const auto& [k, v] : s.entries()) {
        detail::wire::append_varint(out, k.size());
        out += k;
        detail::wire::append_varint(out, v.size());
        out += v;
      }
      return out;
    };
    state_->restore = [&it](const std::string& bytes) {
      auto s = it.save_state();
      s.entries().clear();
      detail::wire::Reader r(bytes, "iterator state");
      const std::uint64_t n = r.varint();
      for (std::uint64_t i = 0; i < n; ++i) {
        std::string k(r.bytes());
        s.entries()[k] = std::string(r.bytes());
      }
      it.restore_state(s);
    };
  }

  /// A custom state: `save()` returns bytes, `restore(bytes)` applies them.
  struct StateFns {
    std::function<std::string()> save;
    std::function<void(const std::string&)> restore;
  };

  [[nodiscard]] keras::Trackable* trackable() const noexcept { return trackable_; }
  [[nodiscard]] const keras::AnyVariable& variable() const noexcept { return variable_; }
  [[nodiscard]] const std::shared_ptr<StateFns>& state() const noexcept { return state_; }

 private:
  keras::Trackable* trackable_ = nullptr;
  keras::AnyVariable variable_;
  std::shared_ptr<StateFns> state_;
};

/// Options of `Checkpoint::restore`.
struct RestoreOptions {
  /// Record dtype/shape mismatches in the report instead of throwing invalid_argument.
  bool skip_mismatch = false;
};

/// What a restore did, by checkpoint key (variables) or variable name (missing).
struct RestoreReport {
  std::vector<std::string> matched;     ///< keys restored into a live variable
  std::vector<std::string> missing;     ///< live variables with no value in the checkpoint
  std::vector<std::string> unexpected;  ///< checkpoint keys no live object took (yet)
  std::vector<std::string> pending;     ///< keys waiting for a variable to be created
  std::vector<std::string> mismatched;  ///< "key: why" for dtype/shape mismatches

  friend std::ostream& operator<<(std::ostream& os, const RestoreReport& r) {
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

/// A live object in the graph walk (Note [Checkpoint object graph]).
struct Live {
  keras::Trackable* trackable = nullptr;
  keras::AnyVariable variable;
  std::shared_ptr<CheckpointObject::StateFns> state;
  const std::vector<std::pair<std::string, CheckpointObject>>* root = nullptr;
};

inline Live live_of(const CheckpointObject& o) {
  return Live{o.trackable(), o.variable(), o.state(), nullptr};
}

/// Named children of a live object, children first then variables.
inline std::vector<std::pair<std::string, Live>> children_of(const Live& l) {
  std::vector<std::pair<std::string, Live>> out;
  if (l.root != nullptr) {
    for (const auto& [name, obj] : *l.root) {
      out.emplace_back(name, live_of(obj));
    }
  } else if (l.trackable != nullptr) {
    for (const auto& c : l.trackable->trackable_children()) {
      if (c.object != nullptr) {
        out.emplace_back(c.name, Live{c.object, {}, nullptr, nullptr});
      }
    }
    for (const auto& v : l.trackable->trackable_variables()) {
      out.emplace_back(v.name, Live{nullptr, v.variable, nullptr, nullptr});
    }
  }
  return out;
}

/// What makes two live objects the same node: objects by address, variables by id.
inline std::pair<int, std::int64_t> identity(const Live& l) {
  if (l.trackable != nullptr) {
    return {0, static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(l.trackable))};
  }
  if (l.state) {
    return {1, static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(l.state.get()))};
  }
  return {2, l.variable.id()};
}

/// The live object graph, numbered as TensorFlow numbers it.
struct LiveGraph {
  std::vector<Live> nodes;
  std::vector<std::string> paths;  // escaped, "" for the root
  og::Graph graph;
  std::vector<std::pair<std::string, keras::AnyVariable>> values;  // key -> variable
  std::vector<std::pair<std::string, std::shared_ptr<CheckpointObject::StateFns>>> states;
};

inline LiveGraph build(const std::vector<std::pair<std::string, CheckpointObject>>& root) {
  LiveGraph g;
  g.nodes.push_back(Live{nullptr, {}, nullptr, &root});
  g.paths.emplace_back();
  g.graph.nodes.emplace_back();
  std::map<std::pair<int, std::int64_t>, std::size_t> ids;  // identity -> node id
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Live cur = g.nodes[i];
    for (auto& [name, child] : children_of(cur)) {
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
    auto* opt = dynamic_cast<keras::optimizers::Optimizer*>(g.nodes[i].trackable);
    if (opt == nullptr) {
      continue;
    }
    for (const auto& s : opt->slot_variables()) {
      auto found = ids.find({2, s.original.id()});
      if (found == ids.end()) {
        continue;  // a slot of a variable this checkpoint does not track
      }
      const std::size_t orig = found->second;
      const auto id = static_cast<std::int32_t>(g.nodes.size());
      g.nodes.push_back(Live{nullptr, s.slot, nullptr, nullptr});
      const std::string key = g.paths[orig] + "/.OPTIMIZER_SLOT/" + g.paths[i] + "/" +
                              og::escape(s.slot_name) + "/.ATTRIBUTES/VARIABLE_VALUE";
      g.paths.push_back(key);
      g.graph.nodes.emplace_back();
      g.graph.nodes.back().attributes.push_back({"VARIABLE_VALUE", s.slot.name(), key});
      g.values.emplace_back(key, s.slot);
      g.graph.nodes[i].slot_variables.push_back({static_cast<std::int32_t>(orig), s.slot_name, id});
    }
  }
  // has_checkpoint_values: the node or a descendant holds values (children have larger ids
  // only along first-discovery edges, so iterate to a fixpoint).
  std::vector<char> hv(g.graph.nodes.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = g.graph.nodes.size(); i-- > 0;) {
      const auto& n = g.graph.nodes[i];
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
    g.graph.nodes[i].has_checkpoint_values = hv[i] != 0;
  }
  return g;
}

/// Shared by a status and the deferred-restoration hooks it installs.
struct RestoreState {
  std::shared_ptr<CheckpointReader> reader;
  std::vector<std::pair<std::string, CheckpointObject>> root;
  RestoreOptions options;
  std::set<std::string> consumed;
  std::set<std::int64_t> restored_ids;
  std::map<std::string, std::string> pending;  // key -> where it waits
  std::vector<std::string> mismatched;
  std::map<std::int64_t, std::int32_t> var_node;  // live variable id -> checkpoint node
  std::map<std::pair<std::int32_t, std::string>, std::string> pending_slots;  // -> key
  bool expect_partial = false;
  bool no_checkpoint = false;

  void restore_var(const std::string& key, const keras::AnyVariable& var) {
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
      pending.erase(key);
      return;
    }
    var.assign(reader->get_tensor(key));
    consumed.insert(key);
    pending.erase(key);
    restored_ids.insert(var.id());
  }
};

}  // namespace detail_ckpt

/// The result of `Checkpoint::restore` (TensorFlow: CheckpointLoadStatus).
class CheckpointLoadStatus {
 public:
  explicit CheckpointLoadStatus(std::shared_ptr<detail_ckpt::RestoreState> s) : s_(std::move(s)) {}

  /// Keys matched, missing, unexpected, pending and mismatched, as of now.
  [[nodiscard]] RestoreReport report() const {
    RestoreReport r;
    r.matched.assign(s_->consumed.begin(), s_->consumed.end());
    std::erase_if(r.matched, [&](const std::string& k) {
      for (const auto& m : s_->mismatched) {
        if (m.rfind(k + ": ", 0) == 0) {
          return true;
        }
      }
      return false;
    });
    r.mismatched = s_->mismatched;
    for (const auto& [k, where] : s_->pending) {
      r.pending.push_back(k);
    }
    if (s_->reader) {
      for (const auto& k : s_->reader->keys()) {
        if (k != object_graph_key && s_->consumed.count(k) == 0 && s_->pending.count(k) == 0) {
          r.unexpected.push_back(k);
        }
      }
    }
    const auto live = detail_ckpt::build(s_->root);
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
    std::string name;
    CheckpointObject object;
  };

  Checkpoint(std::initializer_list<Item> items) : Checkpoint(std::vector<Item>(items)) {}
  explicit Checkpoint(const std::vector<Item>& items) {
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
  }

  /// Number of `save()` calls so far (restored by `restore`).
  [[nodiscard]] const Variable<std::int64_t, 0>& save_counter() const noexcept {
    return save_counter_;
  }

  /// Writes `file_prefix` (.index + .data-00000-of-00001) without numbering and without
  /// touching the `checkpoint` state file. Returns `file_prefix`.
  std::string write(const std::string& file_prefix) {
    const auto live = detail_ckpt::build(root_);
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

  /// Increments `save_counter`, writes `file_prefix-<save_counter>` and points the directory's
  /// `checkpoint` file at it (replaced atomically, last). Returns the numbered prefix.
  std::string save(const std::string& file_prefix) {
    save_counter_.assign_add(Tensor<std::int64_t, 0>(1));
    const std::string path =
        write(file_prefix + "-" + std::to_string(save_counter_.value().item()));
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
    if (save_path.empty()) {
      s->no_checkpoint = true;
      return CheckpointLoadStatus(s);
    }
    s->reader = std::make_shared<CheckpointReader>(save_path);
    if (!s->reader->has_tensor(object_graph_key)) {
      throw invalid_argument("tf::train::Checkpoint::restore: '" + save_path +
                             ".index' has no _CHECKPOINTABLE_OBJECT_GRAPH (a TF1 name-based "
                             "checkpoint); read it with tf::train::load_checkpoint");
    }
    auto graph_t = s->reader->get_tensor(object_graph_key);
    if (graph_t.dtype() != DType::string || graph_t.num_elements() != 1) {
      throw data_loss("tf::train::Checkpoint::restore: '" + save_path +
                      ".index': _CHECKPOINTABLE_OBJECT_GRAPH is not a string scalar");
    }
    const auto graph = detail::object_graph::decode(
        *static_cast<const std::string*>(graph_t.raw_data()), save_path + ".index");
    if (graph.nodes.empty()) {
      throw data_loss("tf::train::Checkpoint::restore: '" + save_path + "': empty object graph");
    }
    bind(s, graph);
    return CheckpointLoadStatus(s);
  }
  /// Same as restore (TensorFlow's `read`, the counterpart of `write`).
  CheckpointLoadStatus read(const std::string& save_path, RestoreOptions options = {}) {
    return restore(save_path, options);
  }

 private:
  static void bind(const std::shared_ptr<detail_ckpt::RestoreState>& sp,
                   const detail::object_graph::Graph& graph) {
    using detail_ckpt::Live;
    detail_ckpt::RestoreState& s = *sp;
    std::map<std::int32_t, Live> bound;
    bound.emplace(0, Live{nullptr, {}, nullptr, &s.root});
    std::vector<std::int32_t> queue{0};
    // deferred[trackable][local name] = key
    std::map<keras::Trackable*, std::map<std::string, std::pair<std::string, std::int32_t>>>
        deferred;
    for (std::size_t qi = 0; qi < queue.size(); ++qi) {
      const std::int32_t id = queue[qi];
      const Live live = bound.at(id);
      const auto& node = graph.nodes[static_cast<std::size_t>(id)];
      for (const auto& a : node.attributes) {
        if (a.name == "VARIABLE_VALUE" && live.variable.has_value() &&
            s.reader->has_tensor(a.checkpoint_key)) {
          s.var_node[live.variable.id()] = id;
          s.restore_var(a.checkpoint_key, live.variable);
        } else if (a.name == "ITERATOR_STATE" && live.state &&
                   s.reader->has_tensor(a.checkpoint_key)) {
          auto t = s.reader->get_tensor(a.checkpoint_key);
          if (t.dtype() != DType::string || t.num_elements() != 1) {
            throw data_loss("tf::train::Checkpoint::restore: key '" + a.checkpoint_key + "' in '" +
                            s.reader->prefix() + ".index' is not a string scalar");
          }
          live.state->restore(*static_cast<const std::string*>(t.raw_data()));
          s.consumed.insert(a.checkpoint_key);
        }
      }
      const auto kids = detail_ckpt::children_of(live);
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
          queue.push_back(c.node_id);
          continue;
        }
        // Not there yet: a variable of a layer (which creates weights lazily, in build) is
        // restored when created; elsewhere the value stays unexpected.
        const auto& cn = graph.nodes[static_cast<std::size_t>(c.node_id)];
        if (dynamic_cast<keras::Layer*>(live.trackable) != nullptr) {
          for (const auto& a : cn.attributes) {
            if (a.name == "VARIABLE_VALUE" && s.reader->has_tensor(a.checkpoint_key)) {
              deferred[live.trackable][c.local_name] = {a.checkpoint_key, c.node_id};
              s.pending[a.checkpoint_key] = c.local_name;
            }
          }
        }
      }
    }
    for (auto& [trackable, names] : deferred) {
      trackable->set_restore_hook(
          [sp, names = names](const std::string& local_name, const keras::AnyVariable& var) {
            auto it = names.find(local_name);
            if (it != names.end() && sp->pending.count(it->second.first) != 0) {
              sp->var_node[var.id()] = it->second.second;
              sp->restore_var(it->second.first, var);
            }
          });
    }
    // Optimizer slots: restore the ones that exist, defer the others to slot creation.
    for (const auto& [id, live] : bound) {
      auto* opt = dynamic_cast<keras::optimizers::Optimizer*>(live.trackable);
      const auto& node = graph.nodes[static_cast<std::size_t>(id)];
      if (opt == nullptr || node.slot_variables.empty()) {
        continue;
      }
      for (const auto& ref : node.slot_variables) {
        std::string key;
        for (const auto& a :
             graph.nodes[static_cast<std::size_t>(ref.slot_variable_node_id)].attributes) {
          if (a.name == "VARIABLE_VALUE") {
            key = a.checkpoint_key;
          }
        }
        if (key.empty() || !s.reader->has_tensor(key)) {
          continue;
        }
        auto orig = bound.find(ref.original_variable_node_id);
        if (orig != bound.end() && orig->second.variable.has_value()) {
          if (auto slot = opt->get_slot(orig->second.variable, ref.slot_name)) {
            s.restore_var(key, *slot);
            continue;
          }
        }
        s.pending_slots[{ref.original_variable_node_id, ref.slot_name}] = key;
        s.pending[key] = "slot " + ref.slot_name;
      }
      opt->set_slot_restore_hook([sp](const keras::AnyVariable& var, const std::string& slot_name,
                                      const keras::AnyVariable& slot) {
        auto n = sp->var_node.find(var.id());
        if (n == sp->var_node.end()) {
          return;
        }
        auto k = sp->pending_slots.find({n->second, slot_name});
        if (k != sp->pending_slots.end()) {
          const std::string key = k->second;
          sp->pending_slots.erase(k);
          sp->restore_var(key, slot);
        }
      });
    }
  }

  std::vector<std::pair<std::string, CheckpointObject>> root_;
  Variable<std::int64_t, 0> save_counter_{std::int64_t{0},
                                          {.name = "save_counter", .trainable = false}};
};

}  // namespace train
TAPEFLOW_END_NAMESPACE
