// The SavedModel loader behind tf::saved_model::load (saved_model/load.hpp). Header-only
// programs compile it where they call load; with TAPEFLOW_PRECOMPILED it comes compiled in
// tapeflow::instantiations (src/instantiations/saved_model_load.cpp).
//
// Note [SavedModel loading]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A signature is rebuilt BY TRACING (docs/formats.md 12.1-12.3, 12.5, 12.8):
//  1. saved_model.pb is parsed (saved_model/detail/parse.hpp); the MetaGraphDef tagged "serve"
//     is used, through its object graph (the TF2 path): root child `signatures` -> one bare
//     concrete function per signature -> its FunctionDef and `bound_inputs`.
//  2. Each bound input is a SavedVariable node; the bundle's TrackableObjectGraph has the same
//     node ids (docs/formats.md 12.3), whose VARIABLE_VALUE attribute names the bundle key. The
//     value becomes an ordinary tf::Variable<T, R> (one dtype x rank dispatch per variable),
//     shared by every signature that captures it.
//  3. A trace graph is started as tf::function starts one; the data arguments become symbolic
//     tensors of the SignatureDef's dtype and shape (-1 dims stay unknown), the resource
//     arguments the variables. The FunctionDef's nodes are visited in dependency order: calls
//     (StatefulPartitionedCall, PartitionedCall, a library function used as an op) are
//     inlined, ReadVariableOp is a traced read of the bound variable (so is the resource input
//     of a table entry marked reads_variables: ResourceGather is a read, then our gather), NoOp
//     and control edges are dropped (nodes run in program order), and every other op goes
//     through the one table of saved_model/detail/op_table.hpp, which calls our public typed
//     op. A node whose inputs are all constants runs at once (constant folding, as
//     TensorFlow's graph optimizer does): Shape of a tensor gives its static shape, -1 for a
//     dim unknown while tracing (Note [Dims unknown while tracing]), so the Shape ->
//     StridedSlice -> Pack -> Reshape chain of Keras' Flatten under a dynamic batch becomes one
//     Reshape to [-1, n], and a Fill of constant dims (tf.zeros) becomes a constant.
//  4. The finished graph is a ConcreteFunction: it runs on the executor, shows in TensorBoard,
//     and is differentiable where its ops are (its variables are ordinary Variables).
// Errors: an op outside the table is unimplemented naming the op, the node and the function; a
// corrupt saved_model.pb is data_loss with the byte offset (the parser); a variable missing
// from the bundle is not_found naming the key.
//
// Note [Dims unknown while tracing]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A folded Shape gives -1 for a dim unknown while tracing (the dynamic batch). That -1 is not a
// number: Reshape reads it as "infer this dim", but Add, Fill, Range or a slice's begin would
// compute with it and give a wrong value without a word. So the interpreter marks every value
// that holds such a -1 (Value::unknown_dims): a Shape result holding one, and the result of an
// op whose table entry lets a marked input through (OpEntry::unknown_dim_inputs: StridedSlice's
// and Pack's data, Reshape's target) when it still holds a -1 (slicing the known dims out of
// [-1, 6] gives an ordinary 6). A marked value reaching any other input is unimplemented,
// naming the op, node and function.
// IWYU pragma: private, include <tapeflow/saved_model/load.hpp>
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/function/graph.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/ops/state/variable.hpp>
#include <tapeflow/saved_model/detail/op_table.hpp>
#include <tapeflow/saved_model/detail/parse.hpp>
#include <tapeflow/saved_model/detail/proto.hpp>
#include <tapeflow/saved_model/loaded_model.hpp>
#include <tapeflow/train/detail/object_graph.hpp>
#include <tapeflow/train/tensor_bundle.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace saved_model {
namespace detail {

namespace gp = tapeflow::detail::graph_proto;

/// A value inside an interpreted function: a tensor (symbolic while tracing, or a constant) or
/// a resource (a restored variable).
struct Value {
  AnyTensor tensor;      ///< set for tensors
  AnyVariable variable;  ///< set for DT_RESOURCE values
  /// A constant holding -1 for a dim unknown while tracing (Note [Dims unknown while tracing]).
  bool unknown_dims = false;
};

/// Whether `t` is a constant int32/int64 tensor holding a -1.
inline bool holds_minus_one(const AnyTensor& t) {
  if (t.is_symbolic() || !t.has_value() || t.rank() > 1) {
    return false;
  }
  auto any = [&]<class I>(const I* data) {
    return std::find(data, data + t.num_elements(), I{-1}) != data + t.num_elements();
  };
  if (t.dtype() == DType::int32) {
    return t.rank() == 0 ? any(t.unchecked_as<std::int32_t, 0>().data())
                         : any(t.unchecked_as<std::int32_t, 1>().data());
  }
  if (t.dtype() == DType::int64) {
    return t.rank() == 0 ? any(t.unchecked_as<std::int64_t, 0>().data())
                         : any(t.unchecked_as<std::int64_t, 1>().data());
  }
  return false;
}

/// Interprets FunctionDefs into the active trace (Note [SavedModel loading]).
class Interpreter {
 public:
  /// `library`: the GraphDef's functions.
  explicit Interpreter(const std::vector<FunctionDef>& library) {
    for (const auto& f : library) {
      functions_.emplace(f.signature.name, &f);
    }
  }

  /// The FunctionDef `name`; not_found when the library lacks it.
  [[nodiscard]] const FunctionDef& function(const std::string& name) const {
    auto it = functions_.find(name);
    if (it == functions_.end()) {
      throw not_found("tf::saved_model::load: function '" + name + "' is not in the library");
    }
    return *it->second;
  }

  /// Traces `f` on `args` (one per input_arg); returns one value per output_arg.
  std::vector<Value> call(const FunctionDef& f, std::vector<Value> args, int depth = 0) const {
    const std::string& fname = f.signature.name;
    if (depth > 64) {
      throw invalid_argument("tf::saved_model::load: function calls nest deeper than 64 at '" +
                             fname + "'");
    }
    if (args.size() != f.signature.input_arg.size()) {
      throw invalid_argument("tf::saved_model::load: function '" + fname + "' takes " +
                             std::to_string(f.signature.input_arg.size()) + " arguments, got " +
                             std::to_string(args.size()));
    }
    std::map<std::string, Value, std::less<>> env;
    for (std::size_t i = 0; i < args.size(); ++i) {
      env[f.signature.input_arg[i].name] = std::move(args[i]);
    }
    for (const gp::NodeDef* node : dependency_order(f)) {
      run_node(f, *node, env, depth);
    }
    std::vector<Value> out;
    for (const auto& arg : f.signature.output_arg) {
      auto it = f.ret.find(arg.name);
      if (it == f.ret.end()) {
        throw data_loss("tf::saved_model::load: function '" + fname + "' returns no '" + arg.name +
                        "'");
      }
      out.push_back(lookup(env, it->second, fname));
    }
    return out;
  }

 private:
  static const Value& lookup(const std::map<std::string, Value, std::less<>>& env,
                             const std::string& ref, const std::string& fname) {
    auto it = env.find(ref);
    if (it == env.end()) {
      throw data_loss("tf::saved_model::load: function '" + fname + "' refers to '" + ref +
                      "', which no node or argument provides (docs/formats.md 12.5)");
    }
    return it->second;
  }

  // Nodes in an order where every node follows its data and control inputs (TensorFlow does
  // not promise one in node_def).
  static std::vector<const gp::NodeDef*> dependency_order(const FunctionDef& f) {
    std::map<std::string_view, const gp::NodeDef*> by_name;
    for (const auto& n : f.node_def) {
      by_name.emplace(n.name, &n);
    }
    std::vector<const gp::NodeDef*> order;
    std::map<const gp::NodeDef*, int> state;  // 1 visiting, 2 done
    std::function<void(const gp::NodeDef*)> visit = [&](const gp::NodeDef* n) {
      int& s = state[n];
      if (s == 2) {
        return;
      }
      if (s == 1) {
        throw data_loss("tf::saved_model::load: function '" + f.signature.name +
                        "' has a cycle through node '" + n->name + "'");
      }
      s = 1;
      for (const auto& in : n->inputs) {
        std::string_view ref = in;
        if (!ref.empty() && ref[0] == '^') {
          ref.remove_prefix(1);
        }
        ref = ref.substr(0, ref.find(':'));
        if (auto it = by_name.find(ref); it != by_name.end()) {
          visit(it->second);
        }
      }
      state[n] = 2;
      order.push_back(n);
    };
    for (const auto& n : f.node_def) {
      visit(&n);
    }
    return order;
  }

  static std::string where(const gp::NodeDef& node, const std::string& fname) {
    return "op '" + node.op + "' (node '" + node.name + "' in function '" + fname + "')";
  }

  static std::string func_attr(const gp::NodeDef& node, const std::string& fname) {
    for (const auto& [k, v] : node.attrs.values) {
      if (k == "f") {
        if (const auto* fn = std::get_if<FunctionName>(&v.value())) {
          return fn->name;
        }
      }
    }
    for (const auto& [k, v] : node.attrs.others) {
      if (k == "f" && v.kind == gp::AttrValueProto::Kind::func) {
        return v.func.name;
      }
    }
    throw data_loss("tf::saved_model::load: " + where(node, fname) + " has no function `f`");
  }

  void run_node(const FunctionDef& f, const gp::NodeDef& node,
                std::map<std::string, Value, std::less<>>& env, int depth) const {
    const std::string& fname = f.signature.name;
    std::vector<Value> inputs;
    for (const auto& in : node.inputs) {
      if (!in.empty() && in[0] == '^') {
        continue;  // control edges: nodes run in program order
      }
      inputs.push_back(lookup(env, in, fname));
    }
    const std::string& op = node.op;
    if (op == "NoOp") {
      return;
    }
    if (op == "StatefulPartitionedCall" || op == "PartitionedCall" || functions_.count(op) != 0) {
      const bool via_f = functions_.count(op) == 0;
      const FunctionDef& callee = function(via_f ? func_attr(node, fname) : op);
      auto outs = call(callee, std::move(inputs), depth + 1);
      for (std::size_t i = 0; i < outs.size(); ++i) {
        // Calls through `f` return the list argument `output`; a function used as an op names
        // each result by its own output argument.
        env[via_f ? node.name + ":output:" + std::to_string(i)
                  : node.name + ":" + callee.signature.output_arg[i].name + ":0"] =
            std::move(outs[i]);
      }
      return;
    }
    if (op == "ReadVariableOp") {
      if (inputs.size() != 1 || !inputs[0].variable.has_value()) {
        throw invalid_argument("tf::saved_model::load: " + where(node, fname) +
                               " reads something that is not a restored variable");
      }
      env[node.name + ":value:0"] = Value{inputs[0].variable.value(), {}};  // a traced read
      return;
    }
    const auto& table = op_table();
    auto entry = table.find(op);
    if (entry == table.end()) {
      throw unimplemented("tf::saved_model::load: " + where(node, fname) +
                          " has no tapeflow definition (saved_model/detail/op_table.hpp)");
    }
    if (op == "Identity" && inputs.size() == 1 && inputs[0].variable.has_value()) {
      env[node.name + ":output:0"] = inputs[0];  // a resource passed through (While bodies)
      return;
    }
    const OpEntry& e = entry->second;
    std::vector<AnyTensor> tensors;
    bool unknown_dims_in = false;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      Value& v = inputs[i];
      if (v.variable.has_value()) {
        if (!e.reads_variables) {
          throw unimplemented("tf::saved_model::load: " + where(node, fname) +
                              " takes a resource input");
        }
        tensors.push_back(v.variable.value());  // a traced read
        continue;
      }
      if (v.unknown_dims) {
        if (i >= 32 || ((e.unknown_dim_inputs >> i) & 1U) == 0) {
          throw unimplemented("tf::saved_model::load: " + where(node, fname) + " takes input " +
                              std::to_string(i) +
                              " holding -1 for a dim unknown while tracing (from a Shape); only "
                              "shape plumbing and Reshape's target can take one (Note [Dims "
                              "unknown while tracing])");
        }
        unknown_dims_in = true;
      }
      tensors.push_back(std::move(v.tensor));
    }
    if (e.num_inputs >= 0 && tensors.size() != static_cast<std::size_t>(e.num_inputs)) {
      throw invalid_argument("tf::saved_model::load: " + where(node, fname) + " has " +
                             std::to_string(tensors.size()) + " inputs, the op takes " +
                             std::to_string(e.num_inputs));
    }
    std::vector<AnyTensor> outs;
    try {
      // Constant folding: a node whose inputs are all constants (a Shape's result, Const
      // nodes) runs now instead of becoming a graph node, as TensorFlow's graph optimizer folds
      // it; this is how a shape computed from a dynamic batch reaches Reshape as a constant.
      const bool fold = std::none_of(tensors.begin(), tensors.end(),
                                     [](const AnyTensor& t) { return t.is_symbolic(); });
      std::optional<tapeflow::detail::trace::Suspend> eager;
      if (fold) {
        eager.emplace();
      }
      outs = e.run(tensors, NodeAttrs(node.attrs, e.defaults));
    } catch (const unimplemented& err) {
      throw unimplemented("tf::saved_model::load: " + where(node, fname) + ": " + err.what());
    } catch (const invalid_argument& err) {
      throw invalid_argument("tf::saved_model::load: " + where(node, fname) + ": " + err.what());
    }
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const bool list = e.output_args.size() == 1;
      const bool unknown_dims =
          (e.makes_unknown_dims || unknown_dims_in) && holds_minus_one(outs[i]);
      env[node.name + ":" + std::string(e.output_args[list ? 0 : i]) + ":" +
          std::to_string(list ? i : 0)] = Value{std::move(outs[i]), {}, unknown_dims};
    }
  }

  std::map<std::string, const FunctionDef*, std::less<>> functions_;
};

/// Calls `f.template operator()<T, R>()` for the dtype and rank of a variable, argument or
/// result: float32 of rank 0-4 (weights, activations), int32/int64 of rank 0-2 (token ids,
/// counters). Each pair instantiates a Variable, an argument and an output slot, so the list
/// stays short (Note [SavedModel loading]).
template <class F>
auto with_type(DType dtype, std::size_t rank, const std::string& what, F&& f) {
  auto fail = [&]() {
    throw unimplemented("tf::saved_model::load: " + what + " is " + std::string(dtype_name(dtype)) +
                        " of rank " + std::to_string(rank) +
                        " (float32 of rank 0-4 and int32/int64 of rank 0-2 are supported)");
  };
  auto by_rank = [&]<class T, std::size_t... Rs>(std::index_sequence<Rs...>) {
    using Out = decltype(f.template operator()<float, 0>());
    Out out{};
    if (!((rank == Rs && (out = f.template operator()<T, Rs>(), true)) || ...)) {
      fail();
    }
    return out;
  };
  switch (dtype) {
    case DType::float32:
      return by_rank.template operator()<float>(std::make_index_sequence<5>{});
    case DType::int32:
      return by_rank.template operator()<std::int32_t>(std::make_index_sequence<3>{});
    case DType::int64:
      return by_rank.template operator()<std::int64_t>(std::make_index_sequence<3>{});
    default:
      fail();
  }
  return decltype(f.template operator()<float, 0>()){};
}

/// The whole of a file, or not_found.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw not_found("tf::saved_model::load: cannot open '" + path.string() + "'");
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Restores the variables of a SavedModel, by object-graph node id (Note [SavedModel loading],
/// step 2).
class VariableStore {
 public:
  VariableStore(const SavedObjectGraph& objects, const std::string& prefix)
      : objects_(&objects), reader_(prefix) {
    if (!reader_.has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH")) {
      throw not_found("tf::saved_model::load: the variables bundle '" + prefix +
                      "' has no key '_CHECKPOINTABLE_OBJECT_GRAPH'");
    }
    const auto bytes = reader_.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH");
    graph_ = tapeflow::detail::object_graph::decode(bytes.as<std::string, 0>().item(),
                                                    prefix + ".index");
  }

  /// The variable of object-graph node `id`, restored once (captures share it).
  AnyVariable variable(std::int32_t id, std::map<std::string, AnyVariable>& by_key) {
    if (auto it = by_id_.find(id); it != by_id_.end()) {
      return it->second;
    }
    const auto& obj = objects_->nodes.at(static_cast<std::size_t>(id));
    const auto* saved = std::get_if<SavedVariable>(&obj.kind);
    if (saved == nullptr) {
      throw unimplemented("tf::saved_model::load: captured object " + std::to_string(id) +
                          " is not a variable (constants and other resources are not loaded yet)");
    }
    if (id < 0 || static_cast<std::size_t>(id) >= graph_.nodes.size()) {
      throw not_found("tf::saved_model::load: variable node " + std::to_string(id) +
                      " is not in the bundle's object graph");
    }
    std::string key;
    for (const auto& a : graph_.nodes[static_cast<std::size_t>(id)].attributes) {
      if (a.name == "VARIABLE_VALUE") {
        key = a.checkpoint_key;
      }
    }
    if (key.empty()) {
      throw not_found("tf::saved_model::load: variable node " + std::to_string(id) + " ('" +
                      saved->name + "') has no VARIABLE_VALUE key in the bundle");
    }
    if (!reader_.has_tensor(key)) {
      throw not_found("tf::saved_model::load: variable key '" + key +
                      "' is not in the variables bundle '" + reader_.prefix() + "'");
    }
    const AnyTensor value = reader_.get_tensor(key);
    std::string name = saved->name.empty() ? key : saved->name;
    AnyVariable v = with_type(
        value.dtype(), value.rank(), "variable '" + key + "'",
        [&]<class T, std::size_t R>() -> AnyVariable {
          return Variable<T, R>(value.as<T, R>(), {.name = name, .trainable = saved->trainable});
        });
    by_id_.emplace(id, v);
    by_key.emplace(key, v);
    return v;
  }

 private:
  const SavedObjectGraph* objects_;
  train::CheckpointReader reader_;
  tapeflow::detail::object_graph::Graph graph_;
  std::map<std::int32_t, AnyVariable> by_id_;
};

/// The object tree of `objects` from node `id`: a TrackableNode per user object (children in
/// saved order, functions and signatures left out: they are not state), the restored Variable
/// per variable node. A node reached twice (Keras' `variables` and `_all_variables` lists) is
/// one object; an edge back to a node being built is dropped (Trackable children are fixed).
inline std::shared_ptr<train::Trackable> object_tree(
    const SavedObjectGraph& objects, std::int32_t id, VariableStore& store,
    std::map<std::string, AnyVariable>& by_key,
    std::map<std::int32_t, std::shared_ptr<train::Trackable>>& built) {
  if (auto it = built.find(id); it != built.end()) {
    return it->second;
  }
  built[id] = nullptr;  // being built
  std::vector<train::TrackableReference> children;
  for (const auto& c : objects.nodes[static_cast<std::size_t>(id)].children) {
    const auto& kind = objects.nodes[static_cast<std::size_t>(c.node_id)].kind;
    if (std::holds_alternative<SavedVariable>(kind)) {
      children.push_back({.name = c.local_name, .variable = store.variable(c.node_id, by_key)});
    } else if (const auto* u = std::get_if<SavedUserObject>(&kind);
               u != nullptr && u->identifier != "signature_map") {
      auto child = object_tree(objects, c.node_id, store, by_key, built);
      if (child != nullptr) {
        children.push_back({.name = c.local_name, .owned = child});
      }
    }
  }
  auto node = std::make_shared<train::TrackableNode>(std::move(children));
  built[id] = node;
  return node;
}

/// The k of a top-level tensor name `node:k` (0 for `node`).
inline std::size_t output_index(const std::string& name) {
  const auto colon = name.rfind(':');
  if (colon == std::string::npos) {
    return 0;
  }
  return static_cast<std::size_t>(std::stoul(name.substr(colon + 1)));
}

/// Traces signature `sig_name` (Note [SavedModel loading], step 3).
inline LoadedSignature trace_signature(const std::string& sig_name, const std::string& fn_name,
                                       const SignatureDef& sig, const Interpreter& interp,
                                       const std::vector<AnyVariable>& captures) {
  const FunctionDef& f = interp.function(fn_name);
  std::vector<std::string> keys;
  for (const auto& [k, info] : sig.inputs) {
    keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end());  // the function's data arguments: keys sorted bytewise
  if (keys.size() + captures.size() != f.signature.input_arg.size()) {
    throw data_loss("tf::saved_model::load: signature '" + sig_name + "' has " +
                    std::to_string(keys.size()) + " inputs and " + std::to_string(captures.size()) +
                    " captures, but function '" + fn_name + "' takes " +
                    std::to_string(f.signature.input_arg.size()) + " arguments");
  }
  auto graph = std::make_unique<tapeflow::detail::trace::Graph>();
  std::vector<TensorSpec> specs;
  std::vector<Value> args;
  for (const auto& k : keys) {
    const TensorInfo& info = sig.inputs.find(k)->second;
    if (!info.tensor_shape || info.tensor_shape->unknown_rank) {
      throw unimplemented("tf::saved_model::load: signature '" + sig_name + "' input '" + k +
                          "' has an unknown rank");
    }
    Shape shape(info.tensor_shape->dims);
    specs.push_back(TensorSpec{info.dtype, shape});
    args.push_back(Value{with_type(info.dtype, shape.rank(), "input '" + k + "'",
                                   [&]<class T, std::size_t R>() -> AnyTensor {
                                     std::array<std::int64_t, R> dims{};
                                     for (std::size_t d = 0; d < R; ++d) {
                                       dims[d] = shape[d];
                                     }
                                     return graph->add_argument<T, R>(dims);
                                   }),
                         {}});
  }
  for (const auto& v : captures) {
    args.push_back(Value{{}, v});
  }
  // Output keys in the function's output order: `node:k` of each SignatureDef output.
  std::vector<std::string> out_keys(sig.outputs.size());
  for (const auto& [k, info] : sig.outputs) {
    const std::size_t i = output_index(info.name);
    if (i >= out_keys.size() || !out_keys[i].empty()) {
      throw data_loss("tf::saved_model::load: signature '" + sig_name + "' output '" + k +
                      "' names tensor '" + info.name + "'");
    }
    out_keys[i] = k;
  }
  {
    tapeflow::detail::trace::Scope scope(graph.get());
    auto outs = interp.call(f, std::move(args));
    if (outs.size() != out_keys.size()) {
      throw data_loss("tf::saved_model::load: function '" + fn_name + "' returns " +
                      std::to_string(outs.size()) + " values, signature '" + sig_name + "' lists " +
                      std::to_string(out_keys.size()));
    }
    for (const auto& o : outs) {
      if (!o.tensor.engaged()) {
        throw unimplemented("tf::saved_model::load: signature '" + sig_name +
                            "' returns a resource");
      }
      const AnyTensor& t = o.tensor;
      graph->output_slots.push_back(with_type(
          t.dtype(), t.rank(), "an output of '" + sig_name + "'",
          [&]<class T, std::size_t R>() { return graph->slot_of(t.unchecked_as<T, R>()); }));
    }
  }
  return LoadedSignature(std::move(keys), std::move(specs), std::move(out_keys),
                         std::make_shared<ConcreteFunction>(std::move(graph), sig_name));
}

/// Loads the SavedModel in `dir`: tf::saved_model::load without the PRECOMPILED switch.
inline LoadedModel load_model(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  const std::string pb_path = (root / "saved_model.pb").string();
  const detail::SavedModel sm = detail::parse_saved_model(detail::read_file(pb_path), pb_path);
  const detail::MetaGraphDef* mg = nullptr;
  for (const auto& m : sm.meta_graphs) {
    if (std::find(m.meta_info_def.tags.begin(), m.meta_info_def.tags.end(), "serve") !=
        m.meta_info_def.tags.end()) {
      mg = &m;
    }
  }
  if (mg == nullptr && sm.meta_graphs.size() == 1) {
    mg = &sm.meta_graphs.front();
  }
  if (mg == nullptr) {
    throw not_found("tf::saved_model::load: '" + pb_path + "' has no MetaGraphDef tagged 'serve'");
  }
  if (!mg->object_graph_def) {
    throw unimplemented("tf::saved_model::load: '" + pb_path +
                        "' has no object graph (a TF1 SavedModel; only the TF2 layout is read)");
  }
  const detail::SavedObjectGraph& objects = *mg->object_graph_def;
  LoadedModel model;
  detail::VariableStore store(objects, (root / "variables" / "variables").string());
  detail::Interpreter interp(mg->graph_def.library);
  // root -> `signatures` (signature_map) -> one bare concrete function per signature.
  const detail::SavedObject& root_obj = objects.nodes.at(0);
  for (const auto& child : root_obj.children) {
    if (child.local_name != "signatures") {
      continue;
    }
    for (const auto& s : objects.nodes[static_cast<std::size_t>(child.node_id)].children) {
      const auto* bare = std::get_if<detail::SavedBareConcreteFunction>(
          &objects.nodes[static_cast<std::size_t>(s.node_id)].kind);
      auto sig = mg->signature_def.find(s.local_name);
      if (bare == nullptr || sig == mg->signature_def.end()) {
        continue;
      }
      auto cf = objects.concrete_functions.find(bare->concrete_function_name);
      if (cf == objects.concrete_functions.end()) {
        throw data_loss("tf::saved_model::load: signature '" + s.local_name +
                        "' names concrete function '" + bare->concrete_function_name +
                        "', which the object graph lacks");
      }
      std::vector<AnyVariable> captures;
      for (auto id : cf->second.bound_inputs) {
        captures.push_back(store.variable(id, model.variables));
      }
      model.signatures.emplace(s.local_name,
                               detail::trace_signature(s.local_name, bare->concrete_function_name,
                                                       sig->second, interp, captures));
    }
  }
  std::map<std::int32_t, std::shared_ptr<train::Trackable>> built;
  model.root = detail::object_tree(objects, 0, store, model.variables, built);
  return model;
}

}  // namespace detail
}  // namespace saved_model
TAPEFLOW_END_NAMESPACE
