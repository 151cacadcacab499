// `tf::saved_model::save` (tf.saved_model.save): writes a trackable object and its traced
// functions as a SavedModel that TensorFlow loads and serves (docs/formats.md 12).
//
// Note [SavedModel export]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// What we write (docs/formats.md 12.7, "the smallest model that loads", plus what the TF1
// loader behind `saved_model_cli run` needs):
//  * variables/variables.{index,data-00000-of-00001}: the object's checkpoint, walked as
//    tf::train::Checkpoint walks it (Keras 3 names), so node ids and keys match the object graph;
//  * saved_model.pb with one MetaGraphDef tagged "serve":
//    - one FunctionDef per signature, translated node by node from the traced graph: every field
//      comes from the op struct through the traced node (TensorFlow name, typed attrs, output
//      argument, constant inputs, variables read; Note [One definition per op]). Data arguments
//      come first, in sorted key order, then one DT_RESOURCE argument per variable read;
//    - the object graph: the checkpoint's nodes (user objects and variables), then a
//      `signatures` child of the root (`signature_map`) with one bare concrete function per
//      signature, whose bound inputs are the variables' node ids in resource-argument order;
//    - for the TF1 loader: a VarHandleOp per variable, a Placeholder per input, one
//      StatefulPartitionedCall per signature, a saver (RestoreV2 + AssignVariableOp, SaveV2)
//      and the SignatureDefs.
// An op TensorFlow cannot express, or a variable the object does not track, fails the export
// with `unimplemented` / `failed_precondition` before any file is written.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/attr_value.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/graph.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/ops/op_concepts.hpp>
#include <tapeflow/saved_model/detail/proto.hpp>
#include <tapeflow/train/checkpoint.hpp>
#include <tapeflow/train/tensor_bundle.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace saved_model {

/// One serving signature: a traced function and the names its inputs and outputs have in the
/// SignatureDef (TensorFlow takes them from the Python argument names and the returned dict).
struct Signature {
  /// The traced graph to serve (e.g. `fn.concrete_functions().front()`).
  const ConcreteFunction* function = nullptr;
  /// One key per tensor argument, in argument order; default `inputs` for a single argument
  /// (as Keras 3's export names it), else `input_0`, `input_1`, ...
  std::vector<std::string> input_names = {};
  /// One key per output; default `output_0`, `output_1`, ...
  std::vector<std::string> output_names = {};
};

/// Options of `save` (TensorFlow: the `signatures` argument of tf.saved_model.save).
struct SaveOptions {
  /// Signature name -> signature; TensorFlow Serving and `saved_model_cli` use
  /// "serving_default".
  std::vector<std::pair<std::string, Signature>> signatures = {};
};

namespace detail {

namespace gp = tapeflow::detail::graph_proto;
namespace pr = tapeflow::saved_model::detail;

/// A name TensorFlow accepts as an argument name: lower case letters, digits and underscores,
/// starting with a letter.
inline std::string arg_name(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    } else {
      out += '_';
    }
  }
  if (out.empty() || out[0] < 'a' || out[0] > 'z') {
    out = "a" + out;
  }
  return out;
}

/// The shape TensorFlow records for a value: its dims, -1 where unknown.
inline gp::TensorShapeProto shape_proto(const Shape& s) { return gp::TensorShapeProto(s); }

/// A variable the exported functions read: its node in the object graph and its key.
struct ExportedVariable {
  AnyVariable variable;
  std::int32_t node_id = 0;
  std::string handle;  // top-level VarHandleOp name
  std::string key;     // bundle key
};

/// The object graph walk shared with tf::train::Checkpoint.
struct ObjectWalk {
  train::detail_ckpt::Root root;
  std::vector<train::TrackableReference> keep_alive;  // owned list nodes of the root's children
  train::detail_ckpt::LiveGraph live;
  std::map<std::int64_t, ExportedVariable> variables;  // by variable id
};

inline ObjectWalk walk(train::Trackable& obj) {
  ObjectWalk w;
  w.keep_alive = obj.trackable_children(train::Layout::keras3);
  for (const auto& c : w.keep_alive) {
    if (c.target() != nullptr) {
      w.root.emplace_back(c.name, train::CheckpointObject(*c.target()));
    } else if (c.variable.has_value()) {
      w.root.emplace_back(c.name, train::CheckpointObject(c.variable));
    }
  }
  w.live = train::detail_ckpt::build(w.root, train::Layout::keras3);
  for (std::size_t i = 0; i < w.live.nodes.size(); ++i) {
    const AnyVariable& v = w.live.nodes[i].variable;
    if (v.has_value()) {
      const std::string handle =
          w.variables.empty() ? "Variable" : "Variable_" + std::to_string(w.variables.size());
      w.variables.emplace(v.id(),
                          ExportedVariable{v, static_cast<std::int32_t>(i), handle,
                                           w.live.paths[i] + "/.ATTRIBUTES/VARIABLE_VALUE"});
    }
  }
  return w;
}

/// A traced function translated to a FunctionDef.
struct TranslatedFunction {
  pr::FunctionDef def;
  std::vector<std::int64_t> captures;            // variable ids, in resource-argument order
  std::vector<std::string> input_keys;           // sorted, as the data arguments
  std::vector<std::pair<DType, Shape>> inputs;   // per sorted key
  std::vector<std::string> output_keys;          // sorted, as the results
  std::vector<std::pair<DType, Shape>> outputs;  // per sorted key
};

inline std::string fail_prefix(const std::string& fn,
                               const tapeflow::detail::trace::GraphNode* node) {
  std::string s = "tf::saved_model::save: function '" + fn + "'";
  if (node != nullptr) {
    s += ", node '" + node->name + "' (" + node->op + ")";
  }
  return s + ": ";
}

inline TranslatedFunction translate(const std::string& function_name, const Signature& sig,
                                    const ObjectWalk& objects) {
  const ConcreteFunction& cf = *sig.function;
  const tapeflow::detail::trace::Graph& g = cf.graph();
  const std::string label = cf.name().empty() ? function_name : cf.name();
  TranslatedFunction out;
  pr::FunctionDef& def = out.def;
  def.signature.name = function_name;

  // Input keys, then the data arguments in sorted key order.
  const std::size_t num_args = g.arg_slots.size();
  std::vector<std::string> keys = sig.input_names;
  if (keys.empty()) {
    for (std::size_t i = 0; i < num_args; ++i) {
      keys.push_back(num_args == 1 ? "inputs" : "input_" + std::to_string(i));
    }
  }
  if (keys.size() != num_args) {
    throw invalid_argument(fail_prefix(label, nullptr) + std::to_string(keys.size()) +
                           " input names for " + std::to_string(num_args) + " tensor arguments");
  }
  std::vector<std::size_t> order(num_args);
  for (std::size_t i = 0; i < num_args; ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::map<std::int32_t, std::string> slot_ref;  // value slot -> reference inside the function
  std::set<std::string> used;
  for (std::size_t k = 0; k < num_args; ++k) {
    const std::size_t i = order[k];
    const std::string name = arg_name(keys[i]);
    if (!used.insert(name).second) {
      throw invalid_argument(fail_prefix(label, nullptr) + "input name '" + keys[i] +
                             "' is given twice (or two names map to '" + name + "')");
    }
    def.signature.input_arg.push_back({name, g.arg_dtypes()[i]});
    slot_ref[g.arg_slots[i]] = name;
    out.input_keys.push_back(keys[i]);
    out.inputs.emplace_back(g.arg_dtypes()[i], g.arg_shapes()[i]);
  }

  // Resource arguments: one per variable the body reads or writes, in first-use order.
  std::map<std::int64_t, std::string> resource_ref;
  for (const auto& node : g.nodes) {
    for (std::int64_t id : node.resources) {
      if (resource_ref.count(id) > 0) {
        continue;
      }
      auto found = objects.variables.find(id);
      if (found == objects.variables.end()) {
        throw failed_precondition(fail_prefix(label, &node) +
                                  "reads a variable that the saved object does not track; "
                                  "make it an attribute (a tracked child) of the object");
      }
      std::string name = arg_name(found->second.variable.name()) + "_resource";
      while (!used.insert(name).second) {
        name += "_";
      }
      def.signature.input_arg.push_back({name, gp::dt_resource});
      resource_ref[id] = name;
      out.captures.push_back(id);
    }
  }

  // Nodes. Names are unique within the trace; constants get fresh names beside them.
  std::set<std::string> node_names;
  for (const auto& node : g.nodes) {
    node_names.insert(node.name);
  }
  auto fresh = [&](const std::string& base) {
    std::string name = base;
    for (int k = 1; node_names.count(name) > 0; ++k) {
      name = base + "_" + std::to_string(k);
    }
    node_names.insert(name);
    return name;
  };
  auto const_node = [&](const std::string& name, const AnyTensor& value) {
    gp::NodeDef c;
    c.name = name;
    c.op = "Const";
    c.attrs.values.emplace_back("dtype", value.dtype());
    c.attrs.tensors.emplace_back("value", value);
    def.node_def.push_back(std::move(c));
    return name + ":output:0";
  };
  for (const auto& [slot, value] : g.constants) {
    slot_ref[slot] = const_node(fresh("Const"), value);
  }
  for (const auto& node : g.nodes) {
    if (!node.export_error.empty()) {
      throw unimplemented(fail_prefix(label, &node) + node.export_error);
    }
    if (node.output_arg.empty()) {
      throw unimplemented(fail_prefix(label, &node) + "op " + node.op +
                          " has no TensorFlow equivalent to export");
    }
    gp::NodeDef n;
    n.name = node.name;
    n.op = node.op;
    for (std::int64_t id : node.resources) {
      n.inputs.push_back(resource_ref.at(id));
    }
    std::vector<std::string> consts;
    for (const auto& [input_name, value] : node.const_inputs) {
      consts.push_back(const_node(fresh(node.name + "/" + input_name), value));
    }
    for (std::size_t i = 0; i <= node.inputs.size(); ++i) {
      if (i == node.const_inputs_at) {
        n.inputs.insert(n.inputs.end(), consts.begin(), consts.end());
      }
      if (i == node.inputs.size()) {
        break;
      }
      auto ref = slot_ref.find(node.inputs[i]);
      if (ref == slot_ref.end()) {
        throw internal(fail_prefix(label, &node) + "input slot " + std::to_string(node.inputs[i]) +
                       " has no producer");
      }
      n.inputs.push_back(ref->second);
    }
    if (!node.type_attr.empty()) {
      n.attrs.values.emplace_back(node.type_attr, node.type_attr_dtype);
    }
    for (const auto& attr : node.attrs) {
      n.attrs.values.push_back(attr);
    }
    if (node.output >= 0) {
      if (node.output_arg == no_output_arg) {
        def.control_ret[node.name] = node.name;
        def.signature.control_output.push_back(node.name);
      } else {
        slot_ref[node.output] = node.name + ":" + node.output_arg + ":0";
      }
    }
    def.signature.is_stateful = def.signature.is_stateful || node.stateful;
    def.node_def.push_back(std::move(n));
  }
  std::sort(def.signature.control_output.begin(), def.signature.control_output.end());

  // Results, in sorted key order.
  const std::size_t num_outputs = g.output_slots.size();
  std::vector<std::string> out_keys = sig.output_names;
  if (out_keys.empty()) {
    for (std::size_t i = 0; i < num_outputs; ++i) {
      out_keys.push_back("output_" + std::to_string(i));
    }
  }
  if (out_keys.size() != num_outputs) {
    throw invalid_argument(fail_prefix(label, nullptr) + std::to_string(out_keys.size()) +
                           " output names for " + std::to_string(num_outputs) + " outputs");
  }
  std::vector<std::size_t> out_order(num_outputs);
  for (std::size_t i = 0; i < num_outputs; ++i) {
    out_order[i] = i;
  }
  std::sort(out_order.begin(), out_order.end(),
            [&](std::size_t a, std::size_t b) { return out_keys[a] < out_keys[b]; });
  // dtype and shape of each value slot (arguments, constants, node outputs).
  std::map<std::int32_t, std::pair<DType, Shape>> slot_type;
  for (std::size_t i = 0; i < num_args; ++i) {
    slot_type[g.arg_slots[i]] = {g.arg_dtypes()[i], g.arg_shapes()[i]};
  }
  for (const auto& [slot, value] : g.constants) {
    slot_type[slot] = {value.dtype(), value.shape()};
  }
  for (const auto& node : g.nodes) {
    if (node.output >= 0) {
      slot_type[node.output] = {node.dtype, node.shape};
    }
  }
  for (std::size_t k = 0; k < num_outputs; ++k) {
    const std::size_t i = out_order[k];
    const std::string name = arg_name(out_keys[i]);
    const std::int32_t slot = g.output_slots[i];
    const auto& [dtype, shape] = slot_type.at(slot);
    def.signature.output_arg.push_back({name, dtype});
    def.ret[name] = slot_ref.at(slot);
    out.output_keys.push_back(out_keys[i]);
    out.outputs.emplace_back(dtype, shape);
  }
  return out;
}

/// A top-level node.
inline gp::NodeDef node(std::string name, std::string op, std::vector<std::string> inputs,
                        OpAttributes attrs) {
  gp::NodeDef n;
  n.name = std::move(name);
  n.op = std::move(op);
  n.inputs = std::move(inputs);
  n.attrs.values = std::move(attrs);
  return n;
}

/// A string vector constant.
inline AnyTensor strings(const std::vector<std::string>& values) {
  Tensor<std::string, 1> t =
      Tensor<std::string, 1>::uninitialized({static_cast<std::int64_t>(values.size())});
  std::copy(values.begin(), values.end(), tapeflow::detail::tensor_access::mutable_data(t));
  return AnyTensor(t);
}

inline void save_impl(ObjectWalk& objects, const std::string& dir, const SaveOptions& options) {
  namespace fs = std::filesystem;
  pr::MetaGraphDef mg;
  mg.meta_info_def.tags = {"serve"};
  // tensorflow_version stays empty: saved_model_cli parses it as a TensorFlow version.
  mg.graph_def.versions = gp::VersionDef{.producer = 2474, .min_consumer = 12};

  // Variables: handles at the top level, nodes in the object graph.
  std::vector<const ExportedVariable*> variables;
  for (const auto& [id, v] : objects.variables) {
    variables.push_back(&v);
  }
  std::sort(variables.begin(), variables.end(),
            [](const auto* a, const auto* b) { return a->node_id < b->node_id; });
  pr::SavedObjectGraph og;
  for (std::size_t i = 0; i < objects.live.nodes.size(); ++i) {
    pr::SavedObject o;
    for (const auto& c : objects.live.graph.nodes[i].children) {
      o.children.push_back({c.node_id, c.local_name});
    }
    const AnyVariable& v = objects.live.nodes[i].variable;
    if (v.has_value()) {
      o.kind = pr::SavedVariable{.dtype = v.dtype(),
                                 .shape = shape_proto(v.shape()),
                                 .trainable = v.trainable(),
                                 .name = v.name()};
    } else {
      o.kind = pr::SavedUserObject{.identifier = "_generic_user_object"};
    }
    og.nodes.push_back(std::move(o));
  }
  for (const ExportedVariable* v : variables) {
    mg.graph_def.node.push_back(node(v->handle, "VarHandleOp", {},
                                     {{"dtype", v->variable.dtype()},
                                      {"shape", v->variable.shape()},
                                      {"shared_name", v->handle}}));
  }

  // Signatures.
  const auto signatures_id = static_cast<std::int32_t>(og.nodes.size());
  og.nodes[0].children.push_back({signatures_id, "signatures"});
  og.nodes.push_back(pr::SavedObject{.kind = pr::SavedUserObject{.identifier = "signature_map"}});
  std::set<std::string> signature_names;
  std::int64_t uid = 1;
  for (std::size_t s = 0; s < options.signatures.size(); ++s) {
    const auto& [sig_name, sig] = options.signatures[s];
    if (sig.function == nullptr) {
      throw invalid_argument("tf::saved_model::save: signature '" + sig_name +
                             "' has no traced function (call the tf::function once first)");
    }
    if (!signature_names.insert(sig_name).second) {
      throw invalid_argument("tf::saved_model::save: signature '" + sig_name + "' given twice");
    }
    std::string base = sig.function->name().empty() ? sig_name : sig.function->name();
    const std::string fn_name = "__inference_" + arg_name(base) + "_" + std::to_string(uid++);
    TranslatedFunction t = translate(fn_name, sig, objects);

    // The top-level call (TF1 loader, saved_model_cli run).
    const std::string call =
        s == 0 ? "StatefulPartitionedCall" : "StatefulPartitionedCall_" + std::to_string(s);
    std::vector<std::string> call_inputs;
    std::vector<DType> tin, tout;
    pr::SignatureDef sd;
    sd.method_name = "tensorflow/serving/predict";
    for (std::size_t i = 0; i < t.input_keys.size(); ++i) {
      const std::string placeholder = sig_name + "_" + arg_name(t.input_keys[i]);
      mg.graph_def.node.push_back(
          node(placeholder, "Placeholder", {},
               {{"dtype", t.inputs[i].first}, {"shape", t.inputs[i].second}}));
      call_inputs.push_back(placeholder);
      tin.push_back(t.inputs[i].first);
      sd.inputs[t.input_keys[i]] =
          pr::TensorInfo{placeholder + ":0", t.inputs[i].first, shape_proto(t.inputs[i].second)};
    }
    std::vector<std::int32_t> bound;
    for (std::int64_t id : t.captures) {
      const ExportedVariable& v = objects.variables.at(id);
      call_inputs.push_back(v.handle);
      tin.push_back(gp::dt_resource);
      bound.push_back(v.node_id);
    }
    for (std::size_t i = 0; i < t.output_keys.size(); ++i) {
      tout.push_back(t.outputs[i].first);
      sd.outputs[t.output_keys[i]] = pr::TensorInfo{
          call + ":" + std::to_string(i), t.outputs[i].first, shape_proto(t.outputs[i].second)};
    }
    mg.graph_def.node.push_back(node(call, "StatefulPartitionedCall", call_inputs,
                                     {{"Tin", tin}, {"Tout", tout}, {"f", FunctionName{fn_name}}}));
    mg.signature_def[sig_name] = std::move(sd);

    // The object graph: signature_map child, concrete function with its Python signature.
    const auto fn_node = static_cast<std::int32_t>(og.nodes.size());
    og.nodes[static_cast<std::size_t>(signatures_id)].children.push_back({fn_node, sig_name});
    og.nodes.push_back(
        pr::SavedObject{.kind = pr::SavedBareConcreteFunction{
                            .concrete_function_name = fn_name,
                            .argument_keywords = t.input_keys,
                            .allowed_positional_arguments = t.input_keys.size() == 1 ? 1 : 0}});
    pr::StringMap<pr::StructuredValue> kwargs;
    for (std::size_t i = 0; i < t.input_keys.size(); ++i) {
      kwargs[t.input_keys[i]] = pr::tensor_spec_value(
          t.input_keys[i], shape_proto(t.inputs[i].second), t.inputs[i].first);
    }
    pr::StringMap<pr::StructuredValue> results;
    for (std::size_t i = 0; i < t.output_keys.size(); ++i) {
      results[t.output_keys[i]] = pr::tensor_spec_value(
          t.output_keys[i], shape_proto(t.outputs[i].second), t.outputs[i].first);
    }
    og.concrete_functions[fn_name] = pr::SavedConcreteFunction{
        .bound_inputs = bound,
        .canonicalized_input_signature = pr::call_signature({}, std::move(kwargs)),
        .output_signature = pr::dict_value(std::move(results))};
    mg.graph_def.library.push_back(std::move(t.def));
  }

  // The saver the TF1 loader runs: RestoreV2 + AssignVariableOp to restore, SaveV2 to save.
  std::vector<std::string> keys, slices;
  std::vector<DType> dtypes;
  for (const ExportedVariable* v : variables) {
    keys.push_back(v->key);
    slices.emplace_back();
    dtypes.push_back(v->variable.dtype());
  }
  mg.graph_def.node.push_back(
      node("saver_filename", "Placeholder", {}, {{"dtype", DType::string}, {"shape", Shape{}}}));
  auto add_const = [&](const std::string& name, const AnyTensor& value) {
    gp::NodeDef c = node(name, "Const", {}, {{"dtype", value.dtype()}});
    c.attrs.tensors.emplace_back("value", value);
    mg.graph_def.node.push_back(std::move(c));
  };
  add_const("saver/tensor_names", strings(keys));
  add_const("saver/shape_and_slices", strings(slices));
  std::vector<std::string> restore_deps;
  if (!variables.empty()) {
    mg.graph_def.node.push_back(node(
        "saver/RestoreV2", "RestoreV2",
        {"saver_filename", "saver/tensor_names", "saver/shape_and_slices"}, {{"dtypes", dtypes}}));
    std::vector<std::string> save_inputs = {"saver_filename", "saver/tensor_names",
                                            "saver/shape_and_slices"};
    for (std::size_t i = 0; i < variables.size(); ++i) {
      const std::string assign = "saver/Assign_" + std::to_string(i);
      mg.graph_def.node.push_back(
          node(assign, "AssignVariableOp",
               {variables[i]->handle, "saver/RestoreV2" + (i == 0 ? "" : ":" + std::to_string(i))},
               {{"dtype", dtypes[i]}}));
      restore_deps.push_back("^" + assign);
      const std::string read = "saver/Read_" + std::to_string(i);
      mg.graph_def.node.push_back(
          node(read, "ReadVariableOp", {variables[i]->handle}, {{"dtype", dtypes[i]}}));
      save_inputs.push_back(read);
    }
    mg.graph_def.node.push_back(node("saver/SaveV2", "SaveV2", save_inputs, {{"dtypes", dtypes}}));
  }
  mg.graph_def.node.push_back(node("saver/restore_all", "NoOp", restore_deps, {}));
  mg.graph_def.node.push_back(
      node("saver/Identity", "Identity",
           variables.empty() ? std::vector<std::string>{"saver_filename"}
                             : std::vector<std::string>{"saver_filename", "^saver/SaveV2"},
           {{"T", DType::string}}));
  mg.saver_def = pr::SaverDef{.filename_tensor_name = "saver_filename:0",
                              .save_tensor_name = "saver/Identity:0",
                              .restore_op_name = "saver/restore_all"};
  mg.object_graph_def = std::move(og);

  pr::SavedModel model;
  model.meta_graphs.push_back(std::move(mg));
  const std::string bytes = pr::serialize(model);

  // Files: the variables first, then saved_model.pb, each written whole before it appears
  // (BundleWriter and the staged rename), so a crash never leaves a loadable half-model.
  fs::create_directories(fs::path(dir) / "variables");
  train::BundleWriter w((fs::path(dir) / "variables" / "variables").string());
  for (const auto& [key, var] : objects.live.values) {
    w.add(key, var.value());
  }
  w.add(train::object_graph_key, AnyTensor(Tensor<std::string, 0>(
                                     tapeflow::detail::object_graph::encode(objects.live.graph))));
  w.finish();
  train::detail_state::atomic_write((fs::path(dir) / "saved_model.pb").string(), bytes);
}

}  // namespace detail

/// Writes `obj` (a Keras model or layer, or any train::Trackable) to `dir` as a SavedModel
/// (TensorFlow: `tf.saved_model.save(obj, dir, signatures=...)`): `saved_model.pb` and
/// `variables/`, loadable by `tf.saved_model.load`, `saved_model_cli` and Keras 3's TFSMLayer
/// (Note [SavedModel export]). Throws unimplemented naming the node when a traced op has no
/// TensorFlow form, failed_precondition when a function reads a variable `obj` does not track.
///
///     auto serve = tf::function(
///         [&](const tf::Tensor<float, 2>& x) { return model(x); },
///         {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::float32, {-1, 784}}}});
///     serve(x_batch);  // traces
///     tf::saved_model::save(model, "mlp", {.signatures = {{"serving_default",
///         tf::saved_model::Signature{.function = serve.concrete_functions().front()}}}});
inline void save(train::Trackable& obj, const std::string& dir, const SaveOptions& options = {}) {
  auto objects = detail::walk(obj);
  detail::save_impl(objects, dir, options);
}

}  // namespace saved_model
TAPEFLOW_END_NAMESPACE
