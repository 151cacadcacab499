// The SavedModel messages' encoding (saved_model/detail/proto.hpp, io/detail/graph_proto.hpp).
// Expected bytes are derived by hand from the wire rules (docs/formats.md 1, 5, 8.1, 12); the
// last case writes a whole sample SavedModel that tests/interop/saved_model_proto_check.py
// parses with TensorFlow's own descriptors.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>
#include <tapeflow/saved_model/detail/proto.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_saved_model_proto {

namespace tf = tapeflow;
namespace wire = tf::detail::wire;
namespace gp = tf::detail::graph_proto;
namespace sm = tf::saved_model::detail;

namespace {

std::string hex(std::string_view s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) {
      out += ' ';
    }
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

/// Joins hex groups with spaces: cat("0a 01", ascii("x")) == "0a 01 78".
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  ((out += (out.empty() || std::string_view(parts).empty() ? "" : " "), out += parts), ...);
  return out;
}
std::string ascii(std::string_view s) { return hex(s); }

/// An AttrValue's bytes.
std::string attr(const tf::AttrValue& v) { return hex(gp::serialize(v)); }

constexpr auto f32 = tf::DType::float32;

/// docs/formats.md 12.7's smallest SavedModel, y = BiasAdd(MatMul(x, w), b), x [?, 3], w [3, 1],
/// b [1]: the function, the top-level graph with save/restore, the signature and the object
/// graph, filled by hand (no variables bundle).
sm::SavedModel sample_model() {
  const auto res = sm::dt_resource;
  sm::FunctionDef fn;
  fn.signature = {.name = "serve_fn",
                  .input_arg = {{"x", f32}, {"w", res}, {"b", res}},
                  .output_arg = {{"y", f32}}};
  fn.node_def = {
      {.name = "rw",
       .op = "ReadVariableOp",
       .inputs = {"w"},
       .attrs = {.values = {{"dtype", f32}}}},
      {.name = "rb",
       .op = "ReadVariableOp",
       .inputs = {"b"},
       .attrs = {.values = {{"dtype", f32}}}},
      {.name = "mm",
       .op = "MatMul",
       .inputs = {"x", "rw:value:0"},
       .attrs = {.values = {{"T", f32}}}},
      {.name = "add",
       .op = "BiasAdd",
       .inputs = {"mm:product:0", "rb:value:0"},
       .attrs = {.values = {{"T", f32}}}},
  };
  fn.ret = {{"y", "add:output:0"}};
  fn.attr.values = {{"_construction_context", "kEagerRuntime"}};
  fn.attr.shape_lists = {{"_input_shapes", {{-1, 3}, {}, {}}}};
  fn.arg_attr[0].values = {{"_user_specified_name", "x"}};

  const tf::AnyTensor keys =
      tf::constant({"w/.ATTRIBUTES/VARIABLE_VALUE", "b/.ATTRIBUTES/VARIABLE_VALUE"});
  const tf::AnyTensor slices = tf::constant({"", ""});
  auto dtype = [](tf::DType d) { return gp::Attributes{.values = {{"dtype", d}}}; };
  auto var = [](const char* name, tf::Shape shape) {
    return gp::NodeDef{
        .name = name,
        .op = "VarHandleOp",
        .attrs = {.values = {{"dtype", f32}, {"shape", shape}, {"shared_name", name}}}};
  };
  sm::GraphDef graph;
  graph.node = {
      var("w", tf::Shape{3, 1}),
      var("b", tf::Shape{1}),
      {.name = "serving_default_x",
       .op = "Placeholder",
       .attrs = {.values = {{"dtype", f32}, {"shape", tf::Shape{-1, 3}}}}},
      {.name = "StatefulPartitionedCall",
       .op = "StatefulPartitionedCall",
       .inputs = {"serving_default_x", "w", "b"},
       .attrs = {.values = {{"Tin", std::vector<tf::DType>{f32, res, res}},
                            {"Tout", std::vector<tf::DType>{f32}},
                            {"f", tf::FunctionName{"serve_fn"}}}}},
      {.name = "NoOp", .op = "NoOp"},
      {.name = "saver_filename",
       .op = "Placeholder",
       .attrs = {.values = {{"dtype", tf::DType::string}, {"shape", tf::Shape{}}}}},
      {.name = "restore/tensor_names",
       .op = "Const",
       .attrs = {.values = {{"dtype", tf::DType::string}}, .tensors = {{"value", keys}}}},
      {.name = "restore/shape_and_slices",
       .op = "Const",
       .attrs = {.values = {{"dtype", tf::DType::string}}, .tensors = {{"value", slices}}}},
      {.name = "RestoreV2",
       .op = "RestoreV2",
       .inputs = {"saver_filename", "restore/tensor_names", "restore/shape_and_slices"},
       .attrs = {.values = {{"dtypes", std::vector<tf::DType>{f32, f32}}}}},
      {.name = "assign_w",
       .op = "AssignVariableOp",
       .inputs = {"w", "RestoreV2"},
       .attrs = dtype(f32)},
      {.name = "assign_b",
       .op = "AssignVariableOp",
       .inputs = {"b", "RestoreV2:1"},
       .attrs = dtype(f32)},
      {.name = "restore_all", .op = "NoOp", .inputs = {"^assign_w", "^assign_b"}},
      {.name = "read_w", .op = "ReadVariableOp", .inputs = {"w"}, .attrs = dtype(f32)},
      {.name = "read_b", .op = "ReadVariableOp", .inputs = {"b"}, .attrs = dtype(f32)},
      {.name = "SaveV2",
       .op = "SaveV2",
       .inputs = {"saver_filename", "restore/tensor_names", "restore/shape_and_slices", "read_w",
                  "read_b"},
       .attrs = {.values = {{"dtypes", std::vector<tf::DType>{f32, f32}}}}},
      {.name = "save/Identity",
       .op = "Identity",
       .inputs = {"saver_filename", "^SaveV2"},
       .attrs = {.values = {{"T", tf::DType::string}}}},
  };
  graph.library = {fn};
  graph.versions = gp::VersionDef{.producer = 2474, .min_consumer = 12};

  sm::SavedObjectGraph objects;
  objects.nodes.resize(5);
  objects.nodes[0] = {.children = {{1, "w"}, {2, "b"}, {3, "signatures"}},
                      .kind = sm::SavedUserObject{.identifier = "_generic_user_object"}};
  objects.nodes[1].kind =
      sm::SavedVariable{.dtype = f32, .shape = {3, 1}, .trainable = true, .name = "w"};
  objects.nodes[2].kind =
      sm::SavedVariable{.dtype = f32, .shape = {1}, .trainable = true, .name = "b"};
  objects.nodes[3] = {.children = {{4, "serving_default"}},
                      .kind = sm::SavedUserObject{.identifier = "signature_map"}};
  objects.nodes[4].kind = sm::SavedBareConcreteFunction{
      .concrete_function_name = "serve_fn",
      .argument_keywords = {"x"},
      .allowed_positional_arguments = 1,
      .function_spec = sm::FunctionSpec{.fullargspec = sm::full_arg_spec({}, {"x"}),
                                        .input_signature = sm::none_value()}};
  objects.concrete_functions["serve_fn"] = {
      .bound_inputs = {1, 2},
      .canonicalized_input_signature =
          sm::call_signature({}, {{"x", sm::tensor_spec_value("x", {-1, 3}, f32)}}),
      .output_signature =
          sm::dict_value({{"output_0", sm::tensor_spec_value("output_0", {-1, 1}, f32)}})};

  sm::MetaGraphDef meta;
  meta.meta_info_def = {.tags = {"serve"},
                        .tensorflow_version = "2.21.0",
                        .tensorflow_git_version = "tapeflow",
                        .stripped_default_attrs = true};
  meta.graph_def = std::move(graph);
  meta.saver_def = sm::SaverDef{.filename_tensor_name = "saver_filename:0",
                                .save_tensor_name = "save/Identity:0",
                                .restore_op_name = "restore_all"};
  meta.collection_def["saved_model_main_op"] = {.node_list = {"NoOp"}};
  meta.signature_def["serving_default"] = {
      .inputs = {{"x", {"serving_default_x:0", f32, gp::TensorShapeProto{-1, 3}}}},
      .outputs = {{"output_0", {"StatefulPartitionedCall:0", f32, gp::TensorShapeProto{-1, 1}}}},
      .method_name = "tensorflow/serving/predict"};
  meta.object_graph_def = std::move(objects);
  return {.saved_model_schema_version = 1, .meta_graphs = {std::move(meta)}};
}

/// A decoded NodeDef: enough to check a round trip.
struct DecodedNode {
  std::string name, op;
  std::vector<std::string> inputs;
  std::vector<std::string> attr_keys;
  std::map<std::string, std::string> attr_bytes;  // key -> serialized AttrValue
};
DecodedNode decode_node(wire::Reader r) {
  DecodedNode n;
  while (auto t = r.next()) {
    if (t->field == 1) {
      n.name = std::string(r.bytes());
    } else if (t->field == 2) {
      n.op = std::string(r.bytes());
    } else if (t->field == 3) {
      n.inputs.emplace_back(r.bytes());
    } else if (t->field == 5) {
      auto entry = r.message("attr entry");
      std::string key, value;
      while (auto e = entry.next()) {
        if (e->field == 1) {
          key = std::string(entry.bytes());
        } else if (e->field == 2) {
          value = std::string(entry.bytes());
        } else {
          entry.skip(*e);
        }
      }
      n.attr_keys.push_back(key);
      n.attr_bytes[key] = value;
    } else {
      r.skip(*t);
    }
  }
  return n;
}

}  // namespace

TEST_CASE("TensorShapeProto: known, unknown and scalar", "[saved_model][proto]") {
  CHECK(hex(gp::serialize(gp::TensorShapeProto{})).empty());
  CHECK(hex(gp::serialize(gp::TensorShapeProto(tf::Shape{2, 0}))) == "12 02 08 02 12 00");
  CHECK(hex(gp::serialize(gp::TensorShapeProto{-1, 3})) ==
        "12 0b 08 ff ff ff ff ff ff ff ff ff 01 12 02 08 03");
  CHECK(hex(gp::serialize(gp::TensorShapeProto::unknown())) == "18 01");
  gp::TensorShapeProto bad = gp::TensorShapeProto::unknown();
  bad.dims = {1};
  CHECK_THROWS_AS(gp::serialize(bad), tf::invalid_argument);
}

TEST_CASE("AttrValue of each kind", "[saved_model][proto]") {
  CHECK(attr("SAME") == "12 04 53 41 4d 45");
  CHECK(attr("") == "12 00");  // a oneof member is written even when empty
  CHECK(attr(3) == "18 03");
  CHECK(attr(std::int64_t{-1}) == "18 ff ff ff ff ff ff ff ff ff 01");
  CHECK(attr(0.5F) == "25 00 00 00 3f");
  CHECK(attr(true) == "28 01");
  CHECK(attr(false) == "28 00");
  CHECK(attr(f32) == "30 01");
  CHECK(attr(tf::DType::string) == "30 07");
  CHECK(attr(tf::Shape{-1, 3}) == "3a 11 12 0b 08 ff ff ff ff ff ff ff ff ff 01 12 02 08 03");
  CHECK(attr(tf::Shape{}) == "3a 00");
  CHECK(attr(std::vector<std::int64_t>{1, 2, 2, 1}) == "0a 06 1a 04 01 02 02 01");
  CHECK(attr(std::vector<std::int64_t>{}) == "0a 00");
  CHECK(attr(std::vector<tf::DType>{f32, sm::dt_resource}) == "0a 04 32 02 01 14");
  CHECK(attr(tf::FunctionName{"f"}) == "52 03 0a 01 66");
}

TEST_CASE("TensorProto content as make_tensor_proto writes it", "[saved_model][proto]") {
  // More than one number: tensor_content; strings: string_val; bools: bool_val; one number:
  // its typed field.
  CHECK(hex(gp::serialize(tf::AnyTensor(tf::constant<float>({1, 2})))) ==
        "08 01 12 04 12 02 08 02 22 08 00 00 80 3f 00 00 00 40");
  CHECK(hex(gp::serialize(tf::AnyTensor(tf::constant({"a", "bc"})))) ==
        "08 07 12 04 12 02 08 02 42 01 61 42 02 62 63");
  CHECK(hex(gp::serialize(tf::AnyTensor(tf::constant<bool>({true, false})))) ==
        "08 0a 12 04 12 02 08 02 5a 02 01 00");
  CHECK(hex(gp::serialize(tf::AnyTensor(tf::constant(1.5F)))) == "08 01 12 00 2a 04 00 00 c0 3f");
  CHECK(hex(gp::serialize(tf::AnyTensor(tf::constant(std::int32_t{-1})))) ==
        "08 03 12 00 3a 0a ff ff ff ff ff ff ff ff ff 01");
  CHECK(hex(gp::serialize(tf::AnyTensor(tf::constant<std::int64_t>({7})))) ==
        "08 09 12 04 12 02 08 01 52 01 07");
  CHECK(hex(gp::serialize(tf::AnyTensor(tf::constant<std::uint8_t>({{1, 2}, {3, 4}})))) ==
        "08 04 12 08 12 02 08 02 12 02 08 02 22 04 01 02 03 04");
  CHECK_THROWS_AS(gp::serialize(tf::AnyTensor{}), tf::invalid_argument);
}

TEST_CASE("NodeDef writes its attrs sorted by key", "[saved_model][proto]") {
  gp::NodeDef node{.name = "mm",
                   .op = "MatMul",
                   .inputs = {"x", "rw:value:0"},
                   .attrs = {.values = {{"transpose_b", true}, {"T", f32}},
                             .shape_lists = {{"_output_shapes", {gp::TensorShapeProto{}}}}}};
  const std::string expected = cat("0a 02", ascii("mm"), "12 06", ascii("MatMul"), "1a 01",
                                   ascii("x"), "1a 0a", ascii("rw:value:0"),
                                   // "T" < "_output_shapes" < "transpose_b" (bytewise)
                                   "2a 07 0a 01", ascii("T"), "12 02 30 01",                     //
                                   "2a 16 0a 0e", ascii("_output_shapes"), "12 04 0a 02 3a 00",  //
                                   "2a 11 0a 0b", ascii("transpose_b"), "12 02 28 01");
  CHECK(hex(gp::serialize(node)) == expected);

  // The same attributes in another order give the same bytes.
  gp::NodeDef reordered = node;
  reordered.attrs.values = {{"T", f32}, {"transpose_b", true}};
  CHECK(gp::serialize(reordered) == gp::serialize(node));

  // TensorFlow's key order: a key that is a prefix of another comes after it.
  gp::NodeDef sum{
      .name = "s",
      .op = "Sum",
      .attrs = {.values = {{"keep_dims", true}, {"T", f32}, {"Tidx", tf::DType::int64}}}};
  CHECK(hex(gp::serialize(sum)) == cat("0a 01", ascii("s"), "12 03", ascii("Sum"),   //
                                       "2a 0a 0a 04", ascii("Tidx"), "12 02 30 09",  //
                                       "2a 07 0a 01", ascii("T"), "12 02 30 01",     //
                                       "2a 0f 0a 09", ascii("keep_dims"), "12 02 28 01"));

  // A Const's value is a tensor attribute; a key may not be set twice.
  gp::NodeDef c{.name = "c",
                .op = "Const",
                .attrs = {.values = {{"dtype", f32}}, .tensors = {{"value", tf::constant(1.5F)}}}};
  CHECK(hex(gp::serialize(c)) == cat("0a 01", ascii("c"), "12 05", ascii("Const"),  //
                                     "2a 0b 0a 05", ascii("dtype"), "12 02 30 01",  //
                                     "2a 15 0a 05", ascii("value"),
                                     "12 0c 42 0a 08 01 12 00 2a 04 00 00 c0 3f"));
  c.attrs.values.emplace_back("value", 1);
  CHECK_THROWS_AS(gp::serialize(c), tf::invalid_argument);
}

TEST_CASE("StructuredValue kinds, int64 ZigZag", "[saved_model][proto]") {
  auto sv = [](const sm::StructuredValue& v) { return hex(sm::serialize(v)); };
  CHECK(sv(sm::none_value()) == "0a 00");
  CHECK(sv(sm::StructuredValue{}) == "0a 00");  // the default is None, never an empty value
  CHECK(sv(sm::int64_value(1)) == "60 02");
  CHECK(sv(sm::int64_value(-1)) == "60 01");
  CHECK(sv(sm::int64_value(-3)) == "60 05");
  CHECK(sv(sm::int64_value(0)) == "60 00");
  CHECK(sv(sm::int64_value(std::numeric_limits<std::int64_t>::max())) ==
        "60 fe ff ff ff ff ff ff ff ff 01");
  CHECK(sv(sm::int64_value(std::numeric_limits<std::int64_t>::min())) ==
        "60 ff ff ff ff ff ff ff ff ff 01");
  CHECK(sv(sm::float64_value(0.0)) == "59 00 00 00 00 00 00 00 00");
  CHECK(sv(sm::float64_value(1.0)) == "59 00 00 00 00 00 00 f0 3f");
  CHECK(sv(sm::string_value("x")) == "6a 01 78");
  CHECK(sv(sm::bool_value(false)) == "70 00");
  CHECK(sv(sm::tensor_shape_value({})) == "fa 01 00");
  CHECK(sv(sm::tensor_dtype_value(f32)) == "80 02 01");
  CHECK(sv(sm::list_value({sm::int64_value(-1), sm::none_value()})) ==
        "9a 03 08 0a 02 60 01 0a 02 0a 00");
  CHECK(sv(sm::tuple_value({})) == "a2 03 00");
  CHECK(sv(sm::dict_value({{"b", sm::bool_value(true)}, {"a", sm::none_value()}})) ==
        cat("aa 03 12", "0a 07 0a 01", ascii("a"), "12 02 0a 00",  //
            "0a 07 0a 01", ascii("b"), "12 02 70 01"));
  CHECK(sv(sm::dict_value({{"a", sm::none_value()}, {"ab", sm::none_value()}})) ==
        cat("aa 03 13", "0a 08 0a 02", ascii("ab"), "12 02 0a 00",  //
            "0a 07 0a 01", ascii("a"), "12 02 0a 00"));
  CHECK(sv(sm::named_tuple_value("P", {{"k", sm::int64_value(2)}})) ==
        cat("b2 03 0c 0a 01", ascii("P"), "12 07 0a 01", ascii("k"), "12 02 60 04"));
}

TEST_CASE("TensorSpec", "[saved_model][proto]") {
  CHECK(hex(sm::serialize(sm::tensor_spec_value("x", {-1, 3}, f32))) ==
        cat("8a 02 18 0a 01", ascii("x"),
            "12 11 12 0b 08 ff ff ff ff ff ff ff ff ff 01 12 02 08 03", "18 01"));
  // A scalar spec without a name still carries its (empty) shape.
  CHECK(hex(sm::serialize(sm::tensor_spec_value("", {}, f32))) == "8a 02 04 12 00 18 01");
}

TEST_CASE("FullArgSpec named tuple", "[saved_model][proto]") {
  const auto spec = sm::full_arg_spec({}, {"x"});
  const auto& tuple = std::get<sm::NamedTupleValue>(spec.kind);
  CHECK(tuple.name == "FullArgSpec");
  std::vector<std::string> keys;
  for (const auto& p : tuple.values) {
    keys.push_back(p.key);
  }
  CHECK(keys == std::vector<std::string>{"args", "varargs", "varkw", "defaults", "kwonlyargs",
                                         "kwonlydefaults", "annotations"});
  CHECK(hex(sm::serialize(tuple.values[0].value)) == "9a 03 00");  // args []
  CHECK(hex(sm::serialize(tuple.values[4].value)) == cat("9a 03 05 0a 03 6a 01", ascii("x")));
  CHECK(hex(sm::serialize(tuple.values[6].value)) == "aa 03 00");  // annotations {}
}

TEST_CASE("SavedObject kinds", "[saved_model][proto]") {
  sm::SavedObject bare{.kind = sm::SavedBareConcreteFunction{.concrete_function_name = "serve_fn",
                                                             .argument_keywords = {"x"},
                                                             .allowed_positional_arguments = 1}};
  CHECK(hex(sm::serialize(bare)) ==
        cat("42 0f 0a 08", ascii("serve_fn"), "12 01", ascii("x"), "18 01"));

  sm::SavedObject signatures{.children = {{1, "w"}},
                             .kind = sm::SavedUserObject{.identifier = "signature_map"}};
  CHECK(hex(sm::serialize(signatures)) == cat("0a 05 08 01 12 01", ascii("w"),  //
                                              "22 15 0a 0d", ascii("signature_map"),
                                              "12 04 08 01 10 01"));

  sm::SavedObject variable{.kind = sm::SavedVariable{.dtype = f32, .trainable = true}};
  CHECK(hex(sm::serialize(variable)) == "3a 06 08 01 12 00 18 01");  // scalar shape kept

  sm::SavedObject function{.kind = sm::SavedFunction{.concrete_functions = {"f"}}};
  CHECK(hex(sm::serialize(function)) ==
        cat("32 0d 0a 01", ascii("f"), "12 08 0a 02 0a 00 2a 02 0a 00"));

  sm::SavedObject constant{.kind = sm::SavedConstant{"c"},
                           .registered_name = "tf.TrackableConstant",
                           .dependencies = {{2, "d"}}};
  CHECK(hex(sm::serialize(constant)) == cat("4a 03 0a 01", ascii("c"), "6a 14",
                                            ascii("tf.TrackableConstant"), "7a 05 08 02 12 01",
                                            ascii("d")));
}

TEST_CASE("SavedConcreteFunction, SaverDef, SignatureDef", "[saved_model][proto]") {
  sm::SavedConcreteFunction f{.bound_inputs = {1, 2}};
  CHECK(hex(sm::serialize(f)) == "12 02 01 02 1a 02 0a 00 22 02 0a 00");

  CHECK(hex(sm::serialize(sm::SaverDef{
            .filename_tensor_name = "f:0", .save_tensor_name = "s:0", .restore_op_name = "r"})) ==
        cat("0a 03", ascii("f:0"), "12 03", ascii("s:0"), "1a 01", ascii("r"), "38 02"));
  CHECK(hex(sm::serialize(sm::SaverDef{.max_to_keep = 5,
                                       .sharded = true,
                                       .keep_checkpoint_every_n_hours = 1.0F,
                                       .version = sm::SaverVersion::legacy})) ==
        "20 05 28 01 35 00 00 80 3f");

  // __saved_model_init_op's output: no dtype, unknown rank.
  sm::SignatureDef init{
      .outputs = {{"o", {.name = "NoOp", .tensor_shape = gp::TensorShapeProto::unknown()}}}};
  CHECK(hex(sm::serialize(init)) ==
        cat("12 0f 0a 01", ascii("o"), "12 0a 0a 04", ascii("NoOp"), "1a 02 18 01"));
}

TEST_CASE("FunctionDef maps: ret, control_ret, arg_attr", "[saved_model][proto]") {
  sm::FunctionDef fn;
  fn.signature = {.name = "f",
                  .input_arg = {{"x", f32}},
                  .output_arg = {{"y", f32}},
                  .is_stateful = true,
                  .control_output = {"n"}};
  fn.ret = {{"y", "x"}};
  fn.control_ret = {{"n", "n"}};
  fn.arg_attr[10].values = {{"a", 1}};
  fn.arg_attr[2].values = {{"a", 2}};
  const std::string sig = cat("0a 01", ascii("f"), "12 05 0a 01", ascii("x"), "18 01",  //
                              "1a 05 0a 01", ascii("y"), "18 01", "88 01 01",           //
                              "a2 01 01", ascii("n"));
  CHECK(hex(sm::serialize(fn)) ==
        cat("0a 18", sig,                                    //
            "22 06 0a 01", ascii("y"), "12 01", ascii("x"),  // ret
            "32 06 0a 01", ascii("n"), "12 01", ascii("n"),  // control_ret
            // arg_attr: highest index first, as TensorFlow 2.21 writes it
            "3a 0d 08 0a 12 09 0a 07 0a 01", ascii("a"), "12 02 18 01",  //
            "3a 0d 08 02 12 09 0a 07 0a 01", ascii("a"), "12 02 18 02"));
}

TEST_CASE("round trip of a nested message through wire::Reader", "[saved_model][proto]") {
  const sm::SavedModel model = sample_model();
  const std::string bytes = sm::serialize(model);
  // SavedModel -> meta_graphs[0] -> graph_def -> library -> function[0] -> node_def[2].
  wire::Reader r(bytes, "SavedModel");
  std::int64_t schema = 0;
  std::string meta;
  while (auto t = r.next()) {
    if (t->field == 1) {
      schema = r.int64();
    } else if (t->field == 2) {
      meta = std::string(r.bytes());
    } else {
      r.skip(*t);
    }
  }
  CHECK(schema == 1);
  auto find = [](std::string_view msg, std::uint32_t field) {
    std::vector<std::string> out;
    wire::Reader m(msg);
    while (auto t = m.next()) {
      if (t->field == field && t->type == wire::WireType::len) {
        out.emplace_back(m.bytes());
      } else {
        m.skip(*t);
      }
    }
    return out;
  };
  const auto graph = find(meta, 2);
  REQUIRE(graph.size() == 1);
  const auto nodes = find(graph[0], 1);
  CHECK(nodes.size() == model.meta_graphs[0].graph_def.node.size());
  const auto library = find(graph[0], 2);
  REQUIRE(library.size() == 1);
  const auto functions = find(library[0], 1);
  REQUIRE(functions.size() == 1);
  const auto body = find(functions[0], 3);
  REQUIRE(body.size() == 4);
  const DecodedNode mm = decode_node(wire::Reader(body[2]));
  CHECK(mm.name == "mm");
  CHECK(mm.op == "MatMul");
  CHECK(mm.inputs == std::vector<std::string>{"x", "rw:value:0"});
  CHECK(mm.attr_keys == std::vector<std::string>{"T"});
  CHECK(hex(mm.attr_bytes.at("T")) == "30 01");

  // The top-level call node: attrs sorted (Tin < Tout < f), function by name.
  const DecodedNode call = decode_node(wire::Reader(nodes[3]));
  CHECK(call.op == "StatefulPartitionedCall");
  CHECK(call.attr_keys == std::vector<std::string>{"Tin", "Tout", "f"});
  CHECK(hex(call.attr_bytes.at("Tin")) == "0a 05 32 03 01 14 14");
  CHECK(call.attr_bytes.at("f") == gp::serialize(tf::AttrValue(tf::FunctionName{"serve_fn"})));
}

TEST_CASE("serializing twice gives the same bytes", "[saved_model][proto]") {
  const auto a = sm::serialize(sample_model());
  const auto b = sm::serialize(sample_model());
  CHECK(a == b);
  CHECK(a.size() > 1000);
}

TEST_CASE("writes the sample SavedModel for saved_model_proto_check.py", "[saved_model][proto]") {
  // tests/interop/saved_model_proto_check.py reads this file (run after this case, or on a copy).
  const std::filesystem::path dir = "saved_model_proto_sample";
  std::filesystem::create_directories(dir);
  const std::string bytes = sm::serialize(sample_model());
  {
    std::ofstream out(dir / "saved_model.pb", std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
  }
  CHECK(std::filesystem::file_size(dir / "saved_model.pb") == bytes.size());
}

}  // namespace test_saved_model_proto
