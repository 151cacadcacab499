// tf::saved_model::save: the files it writes, determinism, and typed errors before any file is
// written (an op without a TensorFlow form, an untracked variable, a missing or ill-named
// signature). TensorFlow serving the files: tests/interop/check_saved_model_export.py.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/keras.hpp>
#include <tapeflow/saved_model.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_saved_model_save {

namespace tf = tapeflow;
namespace fs = std::filesystem;
namespace sm = tf::saved_model;

namespace {
std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Mlp : tf::keras::Model<Mlp> {
  tf::keras::layers::Dense dense1{4, {.activation = tf::nn::relu}};
  tf::keras::layers::Dense dense2{2};
  Mlp() { TAPEFLOW_TRACK(dense1, dense2); }
  tf::Tensor<float, 2> operator()(const tf::Tensor<float, 2>& x) {
    return tf::nn::softmax(dense2(dense1(x)));
  }
};

tf::Tensor<float, 2> x_in() {
  return tf::constant<float>({{0.5f, -1.0f, 2.0f}, {1.0f, 0.25f, -0.5f}});
}

template <class F>
auto serving(F f) {
  return tf::function(
      std::move(f),
      {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::float32, tf::Shape{-1, 3}}},
       .name = "serve"});
}

sm::SaveOptions one_signature(const tf::ConcreteFunction* fn) {
  return {.signatures = {{"serving_default", sm::Signature{.function = fn}}}};
}
}  // namespace

TEST_CASE("writes saved_model.pb and the variables bundle, the same bytes every time") {
  Mlp model;
  const fs::path a = fs::current_path() / "export_a", b = fs::current_path() / "export_b";
  fs::remove_all(a);
  fs::remove_all(b);
  // [snippet:export]
  auto serve = tf::function(
      [&](const tf::Tensor<float, 2>& x) { return model(x); },
      {.input_signature =
           std::vector<tf::TensorSpec>{{tf::DType::float32, tf::Shape{-1, 3}}},  // any batch
       .name = "serve"});
  serve(x_in());  // traces
  tf::saved_model::save(
      model, a.string(),
      {.signatures = {{"serving_default", tf::saved_model::Signature{
                                              .function = serve.concrete_functions().front()}}}});
  // [snippet:export]
  sm::save(model, b.string(), one_signature(serve.concrete_functions().front()));
  REQUIRE(fs::exists(a / "saved_model.pb"));
  REQUIRE(fs::exists(a / "variables" / "variables.index"));
  REQUIRE(fs::exists(a / "variables" / "variables.data-00000-of-00001"));
  const std::string pb = slurp(a / "saved_model.pb");
  CHECK(pb == slurp(b / "saved_model.pb"));
  CHECK(slurp(a / "variables" / "variables.index") == slurp(b / "variables" / "variables.index"));
  // What the file must name: TensorFlow's op names, the signature, the serving placeholders, the
  // Keras 3 object-graph edges and the bundle keys.
  for (const char* text :
       {"serving_default", "serving_default_inputs", "StatefulPartitionedCall", "VarHandleOp",
        "BatchMatMulV2", "AddV2", "Relu", "Softmax", "ReadVariableOp", "signature_map",
        "_generic_user_object", "_kernel", "dense1/_kernel/.ATTRIBUTES/VARIABLE_VALUE",
        "__inference_serve_1", "tensorflow/serving/predict", "saver_filename:0"}) {
    INFO(text);
    CHECK(pb.find(text) != std::string::npos);
  }
  // The bundle holds the four weights and the object graph.
  const auto shapes = tf::train::CheckpointReader((a / "variables" / "variables").string())
                          .get_variable_to_shape_map();
  CHECK(shapes.at("dense1/_kernel/.ATTRIBUTES/VARIABLE_VALUE") == tf::Shape{3, 4});
  CHECK(shapes.at("dense2/bias/.ATTRIBUTES/VARIABLE_VALUE") == tf::Shape{2});
  CHECK(shapes.count(tf::train::object_graph_key) == 1);
  CHECK(shapes.size() == 5);
}

TEST_CASE("an op TensorFlow cannot express fails the export naming node and op, writing nothing") {
  Mlp model;
  auto serve = serving([&](const tf::Tensor<float, 2>& x) { return tf::nn::softmax(model(x), 0); });
  serve(x_in());
  const fs::path dir = fs::current_path() / "export_unimplemented";
  fs::remove_all(dir);
  try {
    sm::save(model, dir.string(), one_signature(serve.concrete_functions().front()));
    FAIL("no error");
  } catch (const tf::unimplemented& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("function 'serve'"));
    CHECK_THAT(what, Catch::Contains("(Softmax)"));
  }
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("a function reading a variable the object does not track is failed_precondition") {
  Mlp model;
  tf::Variable<float, 1> stray(tf::ones<float>({2}), {.name = "stray"});
  auto serve = serving([&](const tf::Tensor<float, 2>& x) { return model(x) * stray; });
  serve(x_in());
  const fs::path dir = fs::current_path() / "export_untracked";
  fs::remove_all(dir);
  CHECK_THROWS_AS(sm::save(model, dir.string(), one_signature(serve.concrete_functions().front())),
                  tf::failed_precondition);
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("signatures without a traced function or with wrong input names are invalid_argument") {
  Mlp model;
  model(x_in());
  const fs::path dir = fs::current_path() / "export_invalid";
  CHECK_THROWS_AS(sm::save(model, dir.string(), one_signature(nullptr)), tf::invalid_argument);
  auto serve = serving([&](const tf::Tensor<float, 2>& x) { return model(x); });
  serve(x_in());
  sm::SaveOptions two_names = one_signature(serve.concrete_functions().front());
  two_names.signatures[0].second.input_names = {"a", "b"};
  CHECK_THROWS_AS(sm::save(model, dir.string(), two_names), tf::invalid_argument);
  CHECK_FALSE(fs::exists(dir));
}

}  // namespace test_saved_model_save
