// summary::graph_def / graph_def_text / write_graph: a traced function's GraphDef, serialized
// and as protobuf text. The goldens (tests/data/summary/graph_*.pb, .pbtxt) pin both: the .pb
// files are graph_def's bytes, and the .pbtxt files what TensorFlow's tf.io.write_graph(...,
// as_text=True) writes for them (tests/data/summary/make_graph_text_golden.py).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/function/control_flow.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/summary/graph.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_summary_graph {

namespace tf = tapeflow;
namespace fs = std::filesystem;
using i32 = std::int32_t;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string golden(const std::string& name) {
  return read(std::string(TAPEFLOW_TEST_DATA_DIR) + "/summary/" + name);
}

auto square_if_positive() {
  return tf::function(
      [](const tf::Tensor<i32, 0>& x) {
        return tf::cond(
            x > 0, [&] { return x * x; }, [&] { return tf::constant(0); });
      },
      {.name = "square_if_positive"});
}

auto dense_relu() {
  return tf::function([](const tf::Tensor<float, 2>& x, const tf::Tensor<float, 2>& w) {
    return tf::nn::relu(tf::matmul(x, w) + 1.0f);
  });
}

// A constant over 16 elements keeps only its dtype and shape.
auto large_constant() {
  return tf::function([](const tf::Tensor<float, 1>& x) { return x + tf::ones<float>({20}); });
}

}  // namespace

TEST_CASE("graph_def_text of square_if_positive is what tf.io.write_graph prints",
          "[summary][graph]") {
  auto f = square_if_positive();
  (void)f(tf::constant(3));
  const auto& fn = *f.concrete_functions().at(0);
  CHECK(tf::summary::graph_def(fn) == golden("graph_square_if_positive.pb"));
  CHECK(tf::summary::graph_def_text(fn) == golden("graph_square_if_positive.pbtxt"));
}

TEST_CASE("graph_def_text of matmul and relu shows the scalar constant's bytes",
          "[summary][graph]") {
  auto f = dense_relu();
  (void)f(tf::ones<float>({2, 3}), tf::ones<float>({3, 4}));
  const auto& fn = *f.concrete_functions().at(0);
  CHECK(tf::summary::graph_def(fn) == golden("graph_dense_relu.pb"));
  const std::string text = tf::summary::graph_def_text(fn);
  CHECK(text == golden("graph_dense_relu.pbtxt"));
  CHECK(text.find("tensor_content: \"\\000\\000\\200?\"") != std::string::npos);  // 1.0f
}

TEST_CASE("graph_def_text of a large constant gives its dtype and shape only", "[summary][graph]") {
  auto f = large_constant();
  (void)f(tf::ones<float>({20}));
  const auto& fn = *f.concrete_functions().at(0);
  CHECK(tf::summary::graph_def(fn) == golden("graph_large_constant.pb"));
  CHECK(tf::summary::graph_def_text(fn) == golden("graph_large_constant.pbtxt"));
}

TEST_CASE("the optimized graph can be written beside the graph as traced", "[summary][graph]") {
  auto f = tf::function([](const tf::Tensor<float, 1>& x) {
    auto unused = tf::exp(x);
    return tf::identity(x * 1.0f) + tf::constant(2.0f) * tf::constant(3.0f);
  });
  (void)f(tf::ones<float>({2}));
  const auto& fn = *f.concrete_functions().at(0);
  const std::string traced = tf::summary::graph_def_text(fn);
  const std::string optimized = tf::summary::graph_def_text(fn, {.optimized = true});
  for (const char* op : {"op: \"Exp\"", "op: \"Identity\"", "op: \"Mul\""}) {
    CHECK(traced.find(op) != std::string::npos);
    CHECK(optimized.find(op) == std::string::npos);
  }
  CHECK(optimized.find("op: \"AddV2\"") != std::string::npos);
  CHECK(tf::summary::graph_def(fn, {.optimized = true}) != tf::summary::graph_def(fn));
}

TEST_CASE("write_graph writes text or binary and creates the directory", "[summary][graph]") {
  auto f = square_if_positive();
  (void)f(tf::constant(3));
  const auto& fn = *f.concrete_functions().at(0);
  const fs::path dir = fs::temp_directory_path() / "tapeflow_summary_graph_test" / "nested";
  fs::remove_all(dir.parent_path());
  const std::string text_path = tf::summary::write_graph(fn, dir.string(), "graph.pbtxt");
  CHECK(text_path == (dir / "graph.pbtxt").string());
  CHECK(read(text_path) == tf::summary::graph_def_text(fn));
  const std::string pb_path =
      tf::summary::write_graph(fn, dir.string(), "graph.pb", /*as_text=*/false);
  CHECK(read(pb_path) == tf::summary::graph_def(fn));
  fs::remove_all(dir.parent_path());
}

}  // namespace test_summary_graph
