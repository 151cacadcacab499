// The messages of `saved_model.pb` as plain structs, and their exact protobuf encoding
// (docs/formats.md 12).
//
// tf::saved_model::save fills these from traced functions and the object graph; this header
// only says how they go on the wire, so the exporter never deals with tags and the encoding
// is tested on its own. What is modelled is what a C++ writer needs for a SavedModel that
// TensorFlow loads and serves (docs/formats.md 12.7) plus the optional parts TensorFlow itself
// writes; everything else is left out rather than half-modelled. Output follows TensorFlow's
// serializer: fields in number order, proto3 defaults left out except where presence carries
// meaning, map entries in TensorFlow's order (the maps' comparators keep them so).
// IWYU pragma: private
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/graph_def.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace saved_model::detail {

namespace wire = tapeflow::detail::wire;
namespace graph_proto = tapeflow::detail::graph_proto;
using graph_proto::ArgDef;
using graph_proto::Attributes;
using graph_proto::dt_resource;
using graph_proto::FunctionDef;
using graph_proto::GraphDef;
using graph_proto::NodeDef;
using graph_proto::OpDef;
using graph_proto::StringMap;
using graph_proto::TensorShapeProto;
using graph_proto::VersionDef;
using graph_proto::write_string_map;
using graph_proto::write_string_string_map;

// ---------------------------------------------------------------------------------------------
// StructuredValue (docs/formats.md 12.4): Python values in the object graph (signatures,
// argument specs), recursive.

struct StructuredValue;

/// NoneValue: Python's `None`.
struct NoneValue {};
/// TensorSpecProto: a `tf.TensorSpec` (name, shape, dtype).
struct TensorSpecProto {
  std::string name{};            ///< the argument or output name; may be empty
  TensorShapeProto shape{};      ///< always written (a scalar's is empty)
  DType dtype = DType::invalid;  ///< element type (DT_RESOURCE allowed)
};
/// ListValue: a Python list.
struct ListValue {
  std::vector<StructuredValue> values;  ///< the elements
};
/// TupleValue: a Python tuple.
struct TupleValue {
  std::vector<StructuredValue> values;  ///< the elements
};
/// DictValue: a Python dict with string keys.
struct DictValue {
  StringMap<StructuredValue> fields;  ///< key -> value
};
struct PairValue;
/// NamedTupleValue: a `collections.namedtuple` instance (e.g. FullArgSpec), fields in order.
struct NamedTupleValue {
  std::string name{};             ///< the type's name
  std::vector<PairValue> values;  ///< (field name, value), in declaration order
};

/// StructuredValue: one of the kinds below. A default one is None: an empty StructuredValue
/// is not valid where TensorFlow decodes one (docs/formats.md 12.4), so every value has a
/// kind. int64 values are written ZigZag (the field is sint64).
struct StructuredValue {
  /// The kinds, in the order of StructuredValue's oneof fields 1, 11, 12, 13, 14, 31, 32, 33,
  /// 51, 52, 53, 54.
  using Kind =
      std::variant<NoneValue, double, std::int64_t, std::string, bool, TensorShapeProto, DType,
                   TensorSpecProto, ListValue, TupleValue, DictValue, NamedTupleValue>;
  Kind kind;  ///< the value (default: None)
};

/// PairValue: one field of a NamedTupleValue.
struct PairValue {
  std::string key{};        ///< field name
  StructuredValue value{};  ///< field value
};

/// `None`.
[[nodiscard]] inline StructuredValue none_value() { return {NoneValue{}}; }
/// A Python float.
[[nodiscard]] inline StructuredValue float64_value(double v) { return {v}; }
/// A Python int.
[[nodiscard]] inline StructuredValue int64_value(std::int64_t v) { return {v}; }
/// A Python str.
[[nodiscard]] inline StructuredValue string_value(std::string v) { return {std::move(v)}; }
/// A Python bool.
[[nodiscard]] inline StructuredValue bool_value(bool v) { return {v}; }
/// A `tf.TensorShape`.
[[nodiscard]] inline StructuredValue tensor_shape_value(TensorShapeProto v) {
  return {std::move(v)};
}
/// A `tf.DType`.
[[nodiscard]] inline StructuredValue tensor_dtype_value(DType v) { return {v}; }
/// A `tf.TensorSpec(shape, dtype, name)`.
[[nodiscard]] inline StructuredValue tensor_spec_value(std::string name, TensorShapeProto shape,
                                                       DType dtype) {
  return {TensorSpecProto{std::move(name), std::move(shape), dtype}};
}
/// A list.
[[nodiscard]] inline StructuredValue list_value(std::vector<StructuredValue> values) {
  return {ListValue{std::move(values)}};
}
/// A tuple.
[[nodiscard]] inline StructuredValue tuple_value(std::vector<StructuredValue> values) {
  return {TupleValue{std::move(values)}};
}
/// A dict.
[[nodiscard]] inline StructuredValue dict_value(StringMap<StructuredValue> fields) {
  return {DictValue{std::move(fields)}};
}
/// A named tuple.
[[nodiscard]] inline StructuredValue named_tuple_value(std::string name,
                                                       std::vector<PairValue> values) {
  return {NamedTupleValue{std::move(name), std::move(values)}};
}

/// Python's `inspect.FullArgSpec` of a function taking `args` positionally and `kwonlyargs` by
/// keyword only, with no *args, **kwargs, defaults or annotations (docs/formats.md 12.4):
/// FunctionSpec.fullargspec. A signature's wrapper takes its inputs as `kwonlyargs`; a
/// tf.function as `args`.
[[nodiscard]] inline StructuredValue full_arg_spec(
    const std::vector<std::string>& args, const std::vector<std::string>& kwonlyargs = {}) {
  auto strings = [](const std::vector<std::string>& names) {
    std::vector<StructuredValue> out;
    out.reserve(names.size());
    for (const auto& n : names) {
      out.push_back(string_value(n));
    }
    return list_value(std::move(out));
  };
  return named_tuple_value("FullArgSpec", {{"args", strings(args)},
                                           {"varargs", none_value()},
                                           {"varkw", none_value()},
                                           {"defaults", none_value()},
                                           {"kwonlyargs", strings(kwonlyargs)},
                                           {"kwonlydefaults", none_value()},
                                           {"annotations", dict_value({})}});
}

/// A call's canonical arguments `(args, kwargs)`: the tuple of positional values and the dict
/// of keyword values (SavedConcreteFunction.canonicalized_input_signature, docs/formats.md
/// 12.3). A signature wrapper has `((), {key: TensorSpec(name=key)})`, a traced function
/// `((TensorSpec(name=arg), ...), {})`.
[[nodiscard]] inline StructuredValue call_signature(std::vector<StructuredValue> args,
                                                    StringMap<StructuredValue> kwargs = {}) {
  return tuple_value({tuple_value(std::move(args)), dict_value(std::move(kwargs))});
}

// ---------------------------------------------------------------------------------------------
// Functions and graphs (docs/formats.md 8.1, 12.2).

// ---------------------------------------------------------------------------------------------
// MetaGraphDef parts (docs/formats.md 12.1, 12.2).

/// MetaGraphDef.MetaInfoDef.
struct MetaInfoDef {
  std::vector<std::string> tags{};       ///< tag set, `{"serve"}` for serving
  std::string tensorflow_version{};      ///< e.g. "2.21.0"
  std::string tensorflow_git_version{};  ///< e.g. "v2.21.0-rc1-5-ga481b10260d"
  bool stripped_default_attrs = false;   ///< attrs equal to the op's default were left out
};

/// TensorInfo: a tensor of the top-level graph by name (the `name` encoding), with its dtype and
/// shape.
struct TensorInfo {
  std::string name{};                              ///< `node:k` (or `node` for output 0)
  DType dtype = DType::invalid;                    ///< element type
  std::optional<TensorShapeProto> tensor_shape{};  ///< static shape, when known
};

/// SignatureDef: a serving signature.
struct SignatureDef {
  StringMap<TensorInfo> inputs{};   ///< input key -> placeholder tensor
  StringMap<TensorInfo> outputs{};  ///< output key -> result tensor
  std::string method_name{};        ///< e.g. "tensorflow/serving/predict"
};

/// SaverDef.version.
enum class SaverVersion : std::int32_t {
  legacy = 0,  ///< TF1's first format
  v1 = 1,      ///< TF1 checkpoint format
  v2 = 2,      ///< tensor bundles (what tapeflow writes)
};

/// SaverDef: how the TF1 loader restores variables from `variables/variables`.
struct SaverDef {
  std::string filename_tensor_name{};          ///< string placeholder fed the checkpoint prefix
  std::string save_tensor_name{};              ///< tensor whose evaluation saves (must be set)
  std::string restore_op_name{};               ///< op that restores every variable
  std::int32_t max_to_keep = 0;                ///< checkpoints kept (0: left out)
  bool sharded = false;                        ///< sharded save
  float keep_checkpoint_every_n_hours = 0.0F;  ///< also keep one per this many hours
  SaverVersion version = SaverVersion::v2;     ///< checkpoint format
};

/// CollectionDef with a `node_list` (the one kind TF2 writes: `saved_model_main_op`).
struct CollectionDef {
  std::vector<std::string> node_list{};  ///< node names
};

// ---------------------------------------------------------------------------------------------
// SavedObjectGraph (docs/formats.md 12.3).

/// ObjectReference: an edge of the object graph.
struct ObjectReference {
  std::int32_t node_id = 0;  ///< index into SavedObjectGraph.nodes
  std::string local_name{};  ///< the attribute name on the parent
};

/// SavedUserObject: a plain Python object (`_generic_user_object`) or a wrapper the loader
/// revives by identifier (`signature_map`, `trackable_list_wrapper`, ...).
struct SavedUserObject {
  std::string identifier{};                              ///< e.g. "_generic_user_object"
  VersionDef version{.producer = 1, .min_consumer = 1};  ///< always written: the loader needs it
  std::string metadata{};                                ///< empty for the objects tapeflow writes
};

/// SavedVariable.synchronization (tf.VariableSynchronization).
enum class VariableSynchronization : std::int32_t {
  auto_ = 0,
  none = 1,
  on_write = 2,
  on_read = 3
};
/// SavedVariable.aggregation (tf.VariableAggregation).
enum class VariableAggregation : std::int32_t {
  none = 0,
  sum = 1,
  mean = 2,
  only_first_replica = 3
};

/// SavedVariable: a tf.Variable.
struct SavedVariable {
  DType dtype = DType::invalid;  ///< element type
  TensorShapeProto shape{};      ///< always written: restore checks it
  bool trainable = false;        ///< in trainable_variables
  VariableSynchronization synchronization = VariableSynchronization::auto_;  ///< left 0 by TF
  VariableAggregation aggregation = VariableAggregation::none;               ///< left 0 by TF
  std::string name{};    ///< e.g. "dense/kernel" (not unique)
  std::string device{};  ///< usually empty
};

/// FunctionSpec.jit_compile.
enum class JitCompile : std::int32_t { default_ = 0, on = 1, off = 2 };

/// FunctionSpec: how Python calls a function (both StructuredValues are always written).
struct FunctionSpec {
  StructuredValue fullargspec{};                  ///< full_arg_spec(...)
  bool is_method = false;                         ///< bound method (self is implicit)
  StructuredValue input_signature{};              ///< None, or a tuple of TensorSpecs
  JitCompile jit_compile = JitCompile::default_;  ///< XLA compilation
};

/// SavedFunction: a tf.function and its traced concrete functions.
struct SavedFunction {
  std::vector<std::string> concrete_functions{};  ///< keys of concrete_functions
  FunctionSpec function_spec{};                   ///< its Python signature
};

/// SavedBareConcreteFunction: one concrete function (a signature, a `trace_0` child).
struct SavedBareConcreteFunction {
  std::string concrete_function_name{};           ///< key of concrete_functions
  std::vector<std::string> argument_keywords{};   ///< keyword names of its arguments
  std::int64_t allowed_positional_arguments = 0;  ///< how many may be passed by position
  std::optional<FunctionSpec> function_spec{};    ///< as TensorFlow writes it; not needed to load
};

/// SavedConstant: a captured eager tensor, the top-level Const node that holds it.
struct SavedConstant {
  std::string operation{};  ///< the Const node's name
};

/// SavedAsset: a file under `assets/`, by its index in MetaGraphDef.asset_file_def.
struct SavedAsset {
  std::int32_t asset_file_def_index = 0;  ///< index into asset_file_def
};

/// SavedResource: a resource other than a variable (e.g. a lookup table).
struct SavedResource {
  std::string device{};  ///< where it lives; usually empty
};

/// CapturedTensor: a tensor captured by a function (docs/formats.md 12.3).
struct CapturedTensor {
  std::string name{};               ///< the captured tensor's name
  std::string concrete_function{};  ///< the function that creates it
};

/// SavedObject: one node of the object graph (its kind, edges and dependencies).
struct SavedObject {
  /// SavedObject's `kind` oneof (fields 4, 6, 7, 8, 9, then 5, 10, 12, which only readers meet).
  using Kind =
      std::variant<SavedUserObject, SavedFunction, SavedVariable, SavedBareConcreteFunction,
                   SavedConstant, SavedAsset, SavedResource, CapturedTensor>;
  std::vector<ObjectReference> children{};      ///< named edges, in order
  Kind kind{};                                  ///< what the node is
  std::string registered_name{};                ///< a registered class, e.g. "tf.TrackableConstant"
  std::vector<ObjectReference> dependencies{};  ///< objects to restore first
};

/// SavedConcreteFunction: what the loader needs to call a library function.
struct SavedConcreteFunction {
  std::vector<std::int32_t> bound_inputs{};         ///< node ids of the captures, in arg order
  StructuredValue canonicalized_input_signature{};  ///< call_signature(args, kwargs)
  StructuredValue output_signature{};               ///< a TensorSpec, or a dict of them
};

/// SavedObjectGraph: node 0 is the root.
struct SavedObjectGraph {
  std::vector<SavedObject> nodes{};                       ///< by node id
  StringMap<SavedConcreteFunction> concrete_functions{};  ///< by FunctionDef name
};

// ---------------------------------------------------------------------------------------------
// The file.

/// MetaGraphDef: one tagged graph with its signatures and object graph.
struct MetaGraphDef {
  MetaInfoDef meta_info_def{};                         ///< tags, versions
  GraphDef graph_def{};                                ///< nodes and library
  std::optional<SaverDef> saver_def{};                 ///< for the TF1 loader
  StringMap<CollectionDef> collection_def{};           ///< e.g. saved_model_main_op
  StringMap<SignatureDef> signature_def{};             ///< e.g. serving_default
  std::optional<SavedObjectGraph> object_graph_def{};  ///< present: the TF2 loader is used
};

/// SavedModel: the content of `saved_model.pb`.
struct SavedModel {
  std::int64_t saved_model_schema_version = 1;  ///< always 1
  std::vector<MetaGraphDef> meta_graphs{};      ///< one, tagged "serve"
};

// ---------------------------------------------------------------------------------------------
// Encoding. Field numbers: docs/formats.md 12.2-12.4.

namespace field {
inline constexpr std::uint32_t map_key = 1, map_value = 2;
}  // namespace field

/// Writes a TensorSpecProto's fields (the shape always).
inline void write(wire::Writer& w, const TensorSpecProto& spec) {
  w.bytes_field_if_nonempty(1, spec.name);
  w.message_field(2, [&](wire::Writer& s) { graph_proto::write(s, spec.shape); });
  w.int32_field_if_nonzero(3, static_cast<std::int32_t>(spec.dtype));
}

/// Writes a StructuredValue's fields: its one kind, always (a oneof member).
inline void write(wire::Writer& w, const StructuredValue& v) {
  auto values = [](wire::Writer& m, const std::vector<StructuredValue>& items) {
    for (const auto& item : items) {
      m.message_field(1, [&](wire::Writer& e) { write(e, item); });
    }
  };
  std::visit(
      [&](const auto& k) {
        using K = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<K, NoneValue>) {
          w.message_field(1, [](wire::Writer&) {});
        } else if constexpr (std::is_same_v<K, double>) {
          w.double_field(11, k);
        } else if constexpr (std::is_same_v<K, std::int64_t>) {
          // sint64: ZigZag, so small negative numbers stay short.
          const auto u = static_cast<std::uint64_t>(k);
          w.uint64_field(12, (u << 1) ^ (k < 0 ? ~std::uint64_t{0} : 0));
        } else if constexpr (std::is_same_v<K, std::string>) {
          w.bytes_field(13, k);
        } else if constexpr (std::is_same_v<K, bool>) {
          w.bool_field(14, k);
        } else if constexpr (std::is_same_v<K, TensorShapeProto>) {
          w.message_field(31, [&](wire::Writer& s) { graph_proto::write(s, k); });
        } else if constexpr (std::is_same_v<K, DType>) {
          w.int32_field(32, static_cast<std::int32_t>(k));
        } else if constexpr (std::is_same_v<K, TensorSpecProto>) {
          w.message_field(33, [&](wire::Writer& s) { write(s, k); });
        } else if constexpr (std::is_same_v<K, ListValue>) {
          w.message_field(51, [&](wire::Writer& m) { values(m, k.values); });
        } else if constexpr (std::is_same_v<K, TupleValue>) {
          w.message_field(52, [&](wire::Writer& m) { values(m, k.values); });
        } else if constexpr (std::is_same_v<K, DictValue>) {
          w.message_field(53, [&](wire::Writer& m) {
            for (const auto& entry : k.fields) {
              m.message_field(1, [&](wire::Writer& e) {
                e.string_field(field::map_key, entry.first);
                e.message_field(field::map_value, [&](wire::Writer& x) { write(x, entry.second); });
              });
            }
          });
        } else {
          static_assert(std::is_same_v<K, NamedTupleValue>);
          w.message_field(54, [&](wire::Writer& m) {
            m.bytes_field_if_nonempty(1, k.name);
            for (const auto& pair : k.values) {
              m.message_field(2, [&](wire::Writer& p) {
                p.bytes_field_if_nonempty(1, pair.key);
                p.message_field(2, [&](wire::Writer& x) { write(x, pair.value); });
              });
            }
          });
        }
      },
      v.kind);
}

/// Writes a MetaInfoDef's fields (4 tags, 5 tensorflow_version, 6 tensorflow_git_version,
/// 7 stripped_default_attrs).
inline void write(wire::Writer& w, const MetaInfoDef& info) {
  for (const auto& tag : info.tags) {
    w.string_field(4, tag);
  }
  w.bytes_field_if_nonempty(5, info.tensorflow_version);
  w.bytes_field_if_nonempty(6, info.tensorflow_git_version);
  w.bool_field_if_true(7, info.stripped_default_attrs);
}

/// Writes a TensorInfo's fields (1 name, always: the oneof member in use; 2 dtype;
/// 3 tensor_shape).
inline void write(wire::Writer& w, const TensorInfo& info) {
  w.string_field(1, info.name);
  w.int32_field_if_nonzero(2, static_cast<std::int32_t>(info.dtype));
  if (info.tensor_shape) {
    w.message_field(3, [&](wire::Writer& s) { graph_proto::write(s, *info.tensor_shape); });
  }
}

/// Writes a SignatureDef's fields (1 inputs, 2 outputs, 3 method_name).
inline void write(wire::Writer& w, const SignatureDef& sig) {
  auto info = [](wire::Writer& v, const TensorInfo& t) { write(v, t); };
  write_string_map(w, 1, sig.inputs, info);
  write_string_map(w, 2, sig.outputs, info);
  w.bytes_field_if_nonempty(3, sig.method_name);
}

/// Writes a SaverDef's fields (1-3 names, 4 max_to_keep, 5 sharded,
/// 6 keep_checkpoint_every_n_hours, 7 version).
inline void write(wire::Writer& w, const SaverDef& s) {
  w.bytes_field_if_nonempty(1, s.filename_tensor_name);
  w.bytes_field_if_nonempty(2, s.save_tensor_name);
  w.bytes_field_if_nonempty(3, s.restore_op_name);
  w.int32_field_if_nonzero(4, s.max_to_keep);
  w.bool_field_if_true(5, s.sharded);
  w.float_field_if_nonzero(6, s.keep_checkpoint_every_n_hours);
  w.int32_field_if_nonzero(7, static_cast<std::int32_t>(s.version));
}

/// Writes a CollectionDef's fields: node_list {1 value...} (a oneof member: always).
inline void write(wire::Writer& w, const CollectionDef& c) {
  w.message_field(1, [&](wire::Writer& list) {
    for (const auto& v : c.node_list) {
      list.string_field(1, v);
    }
  });
}

/// Writes an ObjectReference's fields.
inline void write(wire::Writer& w, const ObjectReference& r) {
  w.int32_field_if_nonzero(1, r.node_id);
  w.bytes_field_if_nonempty(2, r.local_name);
}

/// Writes a FunctionSpec's fields (1 fullargspec, 2 is_method, 5 input_signature,
/// 6 jit_compile).
inline void write(wire::Writer& w, const FunctionSpec& spec) {
  w.message_field(1, [&](wire::Writer& m) { write(m, spec.fullargspec); });
  w.bool_field_if_true(2, spec.is_method);
  w.message_field(5, [&](wire::Writer& m) { write(m, spec.input_signature); });
  w.int32_field_if_nonzero(6, static_cast<std::int32_t>(spec.jit_compile));
}

/// Writes the fields of one kind of SavedObject (the message body, not its field tag).
inline void write(wire::Writer& w, const SavedUserObject& o) {
  w.bytes_field_if_nonempty(1, o.identifier);
  w.message_field(2, [&](wire::Writer& m) { graph_proto::write(m, o.version); });
  w.bytes_field_if_nonempty(3, o.metadata);
}
/// SavedVariable's fields (1 dtype, 2 shape always, 3 trainable, 4 synchronization,
/// 5 aggregation, 6 name, 7 device).
inline void write(wire::Writer& w, const SavedVariable& v) {
  w.int32_field_if_nonzero(1, static_cast<std::int32_t>(v.dtype));
  w.message_field(2, [&](wire::Writer& m) { graph_proto::write(m, v.shape); });
  w.bool_field_if_true(3, v.trainable);
  w.int32_field_if_nonzero(4, static_cast<std::int32_t>(v.synchronization));
  w.int32_field_if_nonzero(5, static_cast<std::int32_t>(v.aggregation));
  w.bytes_field_if_nonempty(6, v.name);
  w.bytes_field_if_nonempty(7, v.device);
}
/// SavedFunction's fields (1 concrete_functions, 2 function_spec always).
inline void write(wire::Writer& w, const SavedFunction& f) {
  for (const auto& name : f.concrete_functions) {
    w.string_field(1, name);
  }
  w.message_field(2, [&](wire::Writer& m) { write(m, f.function_spec); });
}
/// SavedBareConcreteFunction's fields (1 name, 2 argument_keywords,
/// 3 allowed_positional_arguments, 4 function_spec).
inline void write(wire::Writer& w, const SavedBareConcreteFunction& f) {
  w.bytes_field_if_nonempty(1, f.concrete_function_name);
  for (const auto& k : f.argument_keywords) {
    w.string_field(2, k);
  }
  w.int64_field_if_nonzero(3, f.allowed_positional_arguments);
  if (f.function_spec) {
    w.message_field(4, [&](wire::Writer& m) { write(m, *f.function_spec); });
  }
}
/// SavedConstant's fields (1 operation).
inline void write(wire::Writer& w, const SavedConstant& c) {
  w.bytes_field_if_nonempty(1, c.operation);
}

/// SavedAsset's fields (1 asset_file_def_index).
inline void write(wire::Writer& w, const SavedAsset& a) {
  w.int32_field_if_nonzero(1, a.asset_file_def_index);
}
/// SavedResource's fields (1 device).
inline void write(wire::Writer& w, const SavedResource& r) {
  w.bytes_field_if_nonempty(1, r.device);
}
/// CapturedTensor's fields (1 name, 2 concrete_function).
inline void write(wire::Writer& w, const CapturedTensor& c) {
  w.bytes_field_if_nonempty(1, c.name);
  w.bytes_field_if_nonempty(2, c.concrete_function);
}

/// Writes a SavedObject's fields (1 children, the kind at 4/5/6/7/8/9/10/12, 13 registered_name,
/// 15 dependencies).
inline void write(wire::Writer& w, const SavedObject& o) {
  for (const auto& c : o.children) {
    w.message_field(1, [&](wire::Writer& m) { write(m, c); });
  }
  const std::uint32_t kind_field = std::visit(
      [](const auto& k) -> std::uint32_t {
        using K = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<K, SavedUserObject>) {
          return 4;
        } else if constexpr (std::is_same_v<K, SavedFunction>) {
          return 6;
        } else if constexpr (std::is_same_v<K, SavedVariable>) {
          return 7;
        } else if constexpr (std::is_same_v<K, SavedBareConcreteFunction>) {
          return 8;
        } else if constexpr (std::is_same_v<K, SavedConstant>) {
          return 9;
        } else if constexpr (std::is_same_v<K, SavedAsset>) {
          return 5;
        } else if constexpr (std::is_same_v<K, SavedResource>) {
          return 10;
        } else {
          static_assert(std::is_same_v<K, CapturedTensor>);
          return 12;
        }
      },
      o.kind);
  w.message_field(kind_field, [&](wire::Writer& m) {
    std::visit([&](const auto& k) { write(m, k); }, o.kind);
  });
  w.bytes_field_if_nonempty(13, o.registered_name);
  for (const auto& d : o.dependencies) {
    w.message_field(15, [&](wire::Writer& m) { write(m, d); });
  }
}

/// Writes a SavedConcreteFunction's fields (2 bound_inputs packed, 3 and 4 always).
inline void write(wire::Writer& w, const SavedConcreteFunction& f) {
  w.packed_varint<std::int32_t>(2, f.bound_inputs);
  w.message_field(3, [&](wire::Writer& m) { write(m, f.canonicalized_input_signature); });
  w.message_field(4, [&](wire::Writer& m) { write(m, f.output_signature); });
}

/// Writes a SavedObjectGraph's fields (1 nodes, 2 concrete_functions).
inline void write(wire::Writer& w, const SavedObjectGraph& g) {
  for (const auto& node : g.nodes) {
    w.message_field(1, [&](wire::Writer& m) { write(m, node); });
  }
  write_string_map(w, 2, g.concrete_functions,
                   [](wire::Writer& v, const SavedConcreteFunction& f) { write(v, f); });
}

/// Writes a MetaGraphDef's fields (1 meta_info_def, 2 graph_def, 3 saver_def, 4 collection_def,
/// 5 signature_def, 7 object_graph_def).
inline void write(wire::Writer& w, const MetaGraphDef& mg) {
  w.message_field(1, [&](wire::Writer& m) { write(m, mg.meta_info_def); });
  w.message_field(2, [&](wire::Writer& m) { write(m, mg.graph_def); });
  if (mg.saver_def) {
    w.message_field(3, [&](wire::Writer& m) { write(m, *mg.saver_def); });
  }
  write_string_map(w, 4, mg.collection_def,
                   [](wire::Writer& v, const CollectionDef& c) { write(v, c); });
  write_string_map(w, 5, mg.signature_def,
                   [](wire::Writer& v, const SignatureDef& s) { write(v, s); });
  if (mg.object_graph_def) {
    w.message_field(7, [&](wire::Writer& m) { write(m, *mg.object_graph_def); });
  }
}

/// Writes a SavedModel's fields (1 saved_model_schema_version, 2 meta_graphs).
inline void write(wire::Writer& w, const SavedModel& sm) {
  w.int64_field_if_nonzero(1, sm.saved_model_schema_version);
  for (const auto& mg : sm.meta_graphs) {
    w.message_field(2, [&](wire::Writer& m) { write(m, mg); });
  }
}

/// The serialized message, e.g. `serialize(saved_model)` is the content of `saved_model.pb`.
template <class Message>
  requires requires(wire::Writer& w, const Message& m) { write(w, m); }
[[nodiscard]] std::string serialize(const Message& message) {
  std::string out{};
  wire::Writer w(out);
  write(w, message);
  return out;
}

}  // namespace saved_model::detail
TAPEFLOW_END_NAMESPACE
