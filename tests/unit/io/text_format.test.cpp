#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/io/detail/graph_def.hpp>
#include <tapeflow/io/detail/graph_proto.hpp>
#include <tapeflow/io/detail/text_format.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_io_text_format {

namespace tf = tapeflow;
namespace gp = tf::detail::graph_proto;
namespace text = gp::text;

std::string golden(const std::string& name) {
  std::ifstream in(std::string(TAPEFLOW_TEST_DATA_DIR) + "/io/" + name, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("text_format floats read like Python protobuf's", "[io][text_format]") {
  CHECK(text::float_text(1.0F) == "1.0");
  CHECK(text::float_text(0.1F) == "0.1");
  CHECK(text::float_text(0.9F) == "0.9");
  CHECK(text::float_text(3.4028235e38F) == "3.4028235e+38");
  CHECK(text::float_text(123456789.0F) == "123456790.0");
  CHECK(text::float_text(1e-7F) == "1e-07");
  CHECK(text::float_text(0.0001F) == "0.0001");
  CHECK(text::float_text(1e16F) == "1e+16");
  CHECK(text::float_text(-0.0F) == "-0.0");
  CHECK(text::float_text(-std::numeric_limits<float>::infinity()) == "-inf");
  CHECK(text::python_float(0.1) == "0.1");
  CHECK(text::python_float(1e22) == "1e+22");
  CHECK(text::python_float(-2.5e-5) == "-2.5e-05");
}

TEST_CASE("text_format escapes bytes and keeps UTF-8 in strings", "[io][text_format]") {
  CHECK(text::quoted("a\"b\\c\n\x01\xc3\xa9", true) == "\"a\\\"b\\\\c\\n\\001\xc3\xa9\"");
  CHECK(text::quoted(std::string("\0\xff\x7f'\t\xc3\xa9", 7), false) ==
        "\"\\000\\377\\177\\'\\t\\303\\251\"");
  CHECK(text::quoted("\xc3(", true) == "\"\\303(\"");  // invalid UTF-8: escaped byte
  CHECK(text::dtype_enum(gp::dt_resource) == "DT_RESOURCE");
  CHECK(text::dtype_enum(static_cast<tf::DType>(101)) == "DT_FLOAT_REF");
  CHECK(text::dtype_enum(static_cast<tf::DType>(99)) == "99");
}

TEST_CASE("a GraphDef prints as tf.io.write_graph writes it", "[io][text_format]") {
  // tests/data/io/make_text_format_golden.py builds the same message in Python.
  gp::NodeDef n;
  n.name = "a\"b\\c\n\x01\xc3\xa9";
  n.op = "Const";
  n.inputs = {"x:1", "^y"};
  n.attrs.values = {{"zz", tf::AttrValue(0.1F)},
                    {"T", tf::DType::float32},
                    {"Tshape", tf::DType::int32},
                    {"e", tf::AttrValue(tf::Shape{})},
                    {"f", tf::AttrValue(std::int64_t{-5})},
                    {"k", tf::FunctionName{"fn"}}};
  n.attrs.values.pop_back();  // `k` has attributes: an AttrValueProto below
  gp::AttrValueProto a;
  a.kind = gp::AttrValueProto::Kind::list;
  a.list.f = {1.0F,
              0.5F,
              1e20F,
              3.4028235e38F,
              std::numeric_limits<float>::infinity(),
              std::numeric_limits<float>::quiet_NaN(),
              -0.0F,
              1e-7F,
              123456789.0F};
  gp::AttrValueProto b;
  b.kind = gp::AttrValueProto::Kind::list;
  gp::AttrValueProto c;
  c.kind = gp::AttrValueProto::Kind::s;
  c.s = std::string("\0\xff\x7f'\t\xc3\xa9", 7);
  gp::AttrValueProto e;
  e.kind = gp::AttrValueProto::Kind::shape;
  e.shape = gp::TensorShapeProto::unknown();
  gp::AttrValueProto g;
  g.kind = gp::AttrValueProto::Kind::list;
  g.list.type = {tf::DType::float32, gp::dt_resource, static_cast<tf::DType>(99)};
  gp::AttrValueProto h;
  h.kind = gp::AttrValueProto::Kind::type;
  h.type = gp::dt_resource;
  gp::AttrValueProto one;
  one.kind = gp::AttrValueProto::Kind::i;
  one.i = 1;
  gp::AttrValueProto k;
  k.kind = gp::AttrValueProto::Kind::func;
  k.func.name = "fn";
  k.func.attr = {{"x", one}};
  gp::AttrValueProto l;
  l.kind = gp::AttrValueProto::Kind::placeholder;
  l.s = "p";
  n.attrs.values.erase(n.attrs.values.begin() + 3);  // `e` is the unknown-rank shape below
  n.attrs.others = {{"a", a}, {"b", b}, {"c", c}, {"e", e}, {"g", g}, {"h", h}, {"k", k}, {"l", l}};
  n.attrs.tensors = {{"v", tf::AnyTensor(tf::constant({1.0F, -0.5F}))},
                     {"w", tf::AnyTensor(tf::constant(0.1))}};
  gp::GraphDef graph;
  graph.node = {n};
  graph.versions = gp::VersionDef{.producer = 1, .min_consumer = 12};
  CHECK(text::to_text(graph) == golden("text_format_graph_def.pbtxt"));
}

}  // namespace test_io_text_format
