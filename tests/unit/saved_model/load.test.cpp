// tf::saved_model::load: our exporter's files and TensorFlow's (tests/data/saved_model) load and
// compute what the saved model computes; the loaded graph is differentiable and reads ordinary
// Variables; bad input raises the typed errors of Note [SavedModel loading].
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/keras.hpp>
#include <tapeflow/ops/array/pad.hpp>
#include <tapeflow/ops/nn/conv2d.hpp>
#include <tapeflow/ops/random/random.hpp>
#include <tapeflow/saved_model.hpp>
#include <tapeflow/saved_model/detail/loader.hpp>  // detail::Interpreter, even when precompiled
#include <tapeflow/saved_model/detail/op_table.hpp>
#include <tapeflow/saved_model/load.hpp>
#include <tapeflow/saved_model/loaded_model.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_saved_model_load {

namespace tf = tapeflow;
namespace fs = std::filesystem;
namespace sm = tf::saved_model;

namespace {
fs::path data_dir(const char* name) {
  return fs::path(TAPEFLOW_TEST_DATA_DIR) / "saved_model" / name;
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
  return tf::constant<float>({{0.5f, -1.0f, 2.0f}, {1.0f, 0.25f, -0.5f}, {0.0f, 3.0f, 1.0f}});
}

// Exports `model` with a serving_default of input [-1, 3] to `dir`.
void export_mlp(Mlp& model, const fs::path& dir) {
  fs::remove_all(dir);
  auto serve = tf::function(
      [&](const tf::Tensor<float, 2>& x) { return model(x); },
      {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::float32, tf::Shape{-1, 3}}},
       .name = "serve"});
  serve(x_in());
  sm::save(model, dir.string(),
           {.signatures = {{"serving_default",
                            sm::Signature{.function = serve.concrete_functions().front()}}}});
}

void check_close(const tf::Tensor<float, 2>& got, const std::vector<std::vector<float>>& want) {
  REQUIRE(got.dims()[0] == static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    REQUIRE(got.dims()[1] == static_cast<std::int64_t>(want[i].size()));
    for (std::size_t j = 0; j < want[i].size(); ++j) {
      CHECK(got.data()[i * want[i].size() + j] == Approx(want[i][j]).margin(1e-6));
    }
  }
}
// The largest |got - want| over the first want.size() rows of `got` (TensorFlow printed those).
double max_diff_rows(const tf::Tensor<float, 2>& got, const std::vector<std::vector<float>>& want) {
  REQUIRE(got.dims()[0] >= static_cast<std::int64_t>(want.size()));
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    REQUIRE(got.dims()[1] == static_cast<std::int64_t>(want[i].size()));
    for (std::size_t j = 0; j < want[i].size(); ++j) {
      const double d = std::abs(double{got.data()[i * want[i].size() + j]} - double{want[i][j]});
      worst = std::max(worst, d);
    }
  }
  return worst;
}

// The ops of a loaded signature's graph, by TensorFlow name.
std::map<std::string, int> op_counts(const sm::LoadedSignature& sig) {
  std::map<std::string, int> out;
  for (const auto& node : sig.concrete_function().graph().nodes) {
    ++out[node.op];
  }
  return out;
}

// ids[i] = (3 i + i / 5) % num_chars over the flat [batch, steps] buffer: make_saved_models.py's
// text_ids.
tf::Tensor<std::int32_t, 2> text_ids(std::int64_t batch, std::int64_t steps, int num_chars) {
  auto t = tf::Tensor<std::int32_t, 2>::uninitialized({batch, steps});
  std::int32_t* d = t.mutable_data();
  for (std::int32_t i = 0; i < batch * steps; ++i) {
    d[i] = (3 * i + i / 5) % num_chars;
  }
  return t;
}

// The handbook's text model (tests/interop/handbook_models.hpp) with small sizes: one-hot
// characters, unstacked into steps, through an LSTMCell from zero states, Dense, softmax.
struct TextRnn : tf::keras::Model<TextRnn> {
  static constexpr std::int64_t num_chars = 10;
  tf::keras::layers::LSTMCell cell{8};
  tf::keras::layers::Dense dense{num_chars};
  TextRnn() { TAPEFLOW_TRACK(cell, dense); }
  tf::Tensor<float, 2> operator()(const tf::Tensor<std::int32_t, 2>& inputs) {
    auto steps = tf::unstack(tf::one_hot<float>(inputs, num_chars), 1);
    auto state = cell.get_initial_state({.batch_size = inputs.dim(0)});
    tf::Tensor<float, 2> output;
    for (const auto& x_t : steps) {
      std::tie(output, state) = cell(x_t, state);
    }
    return tf::nn::softmax(dense(output));
  }
};

// A FunctionDef node: `op` named `name` on `inputs`.
tf::detail::graph_proto::NodeDef node_def(std::string name, std::string op,
                                          std::vector<std::string> inputs) {
  tf::detail::graph_proto::NodeDef n;
  n.name = std::move(name);
  n.op = std::move(op);
  n.inputs = std::move(inputs);
  return n;
}
// A Const node holding `value`.
tf::detail::graph_proto::NodeDef const_def(std::string name, tf::AnyTensor value) {
  auto n = node_def(std::move(name), "Const", {});
  n.attrs.tensors.emplace_back("value", std::move(value));
  return n;
}
// Interprets the one-function library `f` on a float32 [-1, 3] argument; returns the error's
// text, or "" when it ran.
std::string unimplemented_text(const sm::detail::FunctionDef& f) {
  std::vector<sm::detail::FunctionDef> lib{f};
  sm::detail::Interpreter interp(lib);
  tf::detail::trace::Graph g;
  auto x = g.add_argument<float, 2>({-1, 3});
  tf::detail::trace::Scope scope(&g);
  try {
    (void)interp.call(lib[0], {sm::detail::Value{x, {}}});
  } catch (const tf::unimplemented& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("the op table's Conv2D takes TensorFlow's explicit padding") {
  // `tf.nn.conv2d(x, w, strides=1, padding=[[0, 0], [1, 2], [0, 1], [0, 0]])` in a graph:
  // padding "EXPLICIT" and a pair per NHWC axis in explicit_paddings.
  const auto& entry = sm::detail::op_table().at("Conv2D");
  tf::detail::graph_proto::Attributes attrs;
  attrs.values = {{"strides", std::vector<std::int64_t>{1, 1, 1, 1}},
                  {"padding", "EXPLICIT"},
                  {"explicit_paddings", std::vector<std::int64_t>{0, 0, 1, 2, 0, 1, 0, 0}}};
  const auto x = tf::random::uniform<float>({1, 4, 5, 2}, {.seed = 1});
  const auto w = tf::random::uniform<float>({3, 2, 2, 3}, {.seed = 2});
  const std::vector<tf::AnyTensor> in{tf::AnyTensor(x), tf::AnyTensor(w)};
  const auto out = entry.run(in, sm::detail::NodeAttrs(attrs, entry.defaults));
  REQUIRE(out.size() == 1);
  const auto expected = tf::nn::conv2d(tf::pad(x, {{0, 0}, {1, 2}, {0, 1}, {0, 0}}), w);
  CHECK(out[0].as<float, 4>().to_vector() == expected.to_vector());
  // Padding the batch axis is TensorFlow's error too.
  attrs.values[2].second = std::vector<std::int64_t>{1, 0, 1, 2, 0, 1, 0, 0};
  CHECK_THROWS_WITH(entry.run(in, sm::detail::NodeAttrs(attrs, entry.defaults)),
                    Catch::Contains("batch or channel"));
  attrs.values[2].second = std::vector<std::int64_t>{0, 0, 1, 2};
  CHECK_THROWS_WITH(entry.run(in, sm::detail::NodeAttrs(attrs, entry.defaults)),
                    Catch::Contains("8 values"));
}

TEST_CASE("our exporter's files load and give the model's outputs") {
  Mlp model;
  const fs::path dir = fs::current_path() / "load_roundtrip";
  export_mlp(model, dir);
  // [snippet:load]
  auto m = tf::saved_model::load(dir.string());
  auto out = m.signatures["serving_default"]({{"inputs", x_in()}});  // output key -> tensor
  auto y = m.signatures["serving_default"].call<float, 2>(x_in());   // one input, one output
  // [snippet:load]
  REQUIRE(out.count("output_0") == 1);
  const auto want = model(x_in());
  const auto got = out.at("output_0").as<float, 2>();
  REQUIRE(got.shape() == want.shape());
  for (std::int64_t i = 0; i < want.num_elements(); ++i) {
    CHECK(got.data()[i] == Approx(want.data()[i]).margin(1e-6));
    CHECK(y.data()[i] == Approx(want.data()[i]).margin(1e-6));
  }
  CHECK(m.variables.size() == 4);  // two kernels, two biases
  // Any batch size: the input spec keeps the -1 dim.
  auto one = m.signatures["serving_default"].call<float, 2>(tf::constant<float>({{1, 2, 3}}));
  CHECK(one.dims()[0] == 1);
  fs::remove_all(dir);
}

TEST_CASE("the loaded variables are ordinary Variables: assign and differentiate") {
  Mlp model;
  const fs::path dir = fs::current_path() / "load_finetune";
  export_mlp(model, dir);
  auto m = sm::load(dir.string());
  auto& sig = m.signatures["serving_default"];
  auto kernel = m.variables.at("dense1/_kernel/.ATTRIBUTES/VARIABLE_VALUE").as<float, 2>();
  CHECK(kernel.trainable());
  {
    tf::GradientTape tape;
    auto y = sig.call<float, 2>(x_in());
    auto loss = tf::reduce_sum(tf::square(y));
    auto grads = tape.gradient(loss, std::vector{&kernel});
    REQUIRE(grads.size() == 1);
    REQUIRE(grads[0].has_value());
    CHECK(grads[0]->shape() == kernel.shape());
  }
  // A changed variable changes what the signature computes (it reads the variable at run time):
  // a bias of (1, -1) on the logits moves every row's softmax towards class 0.
  const auto before = sig.call<float, 2>(x_in());
  auto bias = m.variables.at("dense2/bias/.ATTRIBUTES/VARIABLE_VALUE").as<float, 1>();
  bias.assign(tf::constant<float>({1.0f, -1.0f}));
  const auto after = sig.call<float, 2>(x_in());
  for (std::int64_t row = 0; row < 3; ++row) {
    CHECK(after.data()[2 * row] > before.data()[2 * row]);
  }
  fs::remove_all(dir);
}

TEST_CASE("a loaded model saves again under the keys it was loaded with") {
  Mlp model;
  const fs::path first = fs::current_path() / "load_resave_a";
  const fs::path second = fs::current_path() / "load_resave_b";
  export_mlp(model, first);
  auto m = sm::load(first.string());
  auto& sig = m.signatures["serving_default"];
  // Fine-tune stand-in: change a variable, then save the loaded object with its signature.
  m.variables.at("dense2/bias/.ATTRIBUTES/VARIABLE_VALUE")
      .assign(tf::AnyTensor(tf::constant<float>({0.5f, -0.5f})));
  const auto want = sig.call<float, 2>(x_in());
  fs::remove_all(second);
  sm::save(*m.root, second.string(),
           {.signatures = {{"serving_default", sm::Signature{.function = &sig.concrete_function(),
                                                             .input_names = sig.input_keys(),
                                                             .output_names = sig.output_keys()}}}});
  auto again = sm::load(second.string());
  CHECK(again.variables.count("dense1/_kernel/.ATTRIBUTES/VARIABLE_VALUE") == 1);
  const auto got = again.signatures["serving_default"].call<float, 2>(x_in());
  for (std::int64_t i = 0; i < want.num_elements(); ++i) {
    CHECK(got.data()[i] == Approx(want.data()[i]).margin(1e-6));
  }
  fs::remove_all(first);
  fs::remove_all(second);
}

TEST_CASE("a tf.Module saved by TensorFlow loads and gives TensorFlow's values") {
  auto m = sm::load(data_dir("tf_module").string());
  REQUIRE(m.signatures.count("serving_default") == 1);
  const auto& sig = m.signatures["serving_default"];
  CHECK(sig.input_keys() == std::vector<std::string>{"x"});
  CHECK(sig.output_keys() == std::vector<std::string>{"output_0"});
  // Expected values: TensorFlow 2.21.0 (the build's venv), tf.saved_model.load(dir)
  //   .signatures["serving_default"](x=x)["output_0"] with x below.
  auto x = tf::constant<float>({{-0.5f, -0.25f, 0.0f}, {0.25f, 0.5f, 0.75f}});
  check_close(sig.call<float, 2>(x), {{-1.0f}, {3.5f}});
}

TEST_CASE("a Keras 3 Sequential saved by tf.saved_model.save gives TensorFlow's values") {
  auto m = sm::load(data_dir("keras_mlp").string());
  const auto& sig = m.signatures["serving_default"];
  CHECK(sig.input_keys() == std::vector<std::string>{"inputs"});
  CHECK(m.variables.size() == 4);
  // Expected values: TensorFlow 2.21.0 + Keras 3 (the build's venv),
  //   tf.saved_model.load(dir).signatures["serving_default"](inputs=x)["output_0"].
  auto x = tf::constant<float>({{-0.5f, -0.25f, 0.0f, 0.25f}, {0.5f, 0.75f, 1.0f, 1.25f}});
  auto out = sig({{"inputs", x}});
  check_close(out.at("output_0").as<float, 2>(), {{-0.08672276139259338f, -0.3203364908695221f},
                                                  {-1.0081427097320557f, 0.07449724525213242f}});
}

TEST_CASE("Keras 3 model.export and tf_keras files give TensorFlow's values") {
  auto x = tf::constant<float>({{-0.5f, -0.25f, 0.0f, 0.25f}, {0.5f, 0.75f, 1.0f, 1.25f}});
  // Expected values: TensorFlow 2.21.0 with Keras 3 and tf_keras (the build's venv),
  //   tf.saved_model.load(dir).signatures[name](<input key>=x), x = arange(8).reshape(2, 4) / 4 -
  //   0.5.
  // keras_export has the same weights as keras_mlp (same seed and layers), hence the same values.
  auto exported = sm::load(data_dir("keras_export").string());
  for (const char* name : {"serve", "serving_default"}) {
    INFO(name);
    REQUIRE(exported.signatures.count(name) == 1);
    const auto& sig = exported.signatures[name];
    CHECK(sig.input_keys() == std::vector<std::string>{"features"});
    check_close(sig.call<float, 2>(x), {{-0.08672276139259338f, -0.3203364908695221f},
                                        {-1.0081427097320557f, 0.07449724525213242f}});
  }
  auto legacy = sm::load(data_dir("tf_keras_mlp").string());
  const auto& sig = legacy.signatures["serving_default"];
  CHECK(sig.input_keys() == std::vector<std::string>{"dense_input"});
  CHECK(sig.output_keys() == std::vector<std::string>{"dense_1"});
  check_close(
      sig({{"dense_input", x}}).at("dense_1").as<float, 2>(),
      {{0.5581392645835876f, 0.44186073541641235f}, {0.2530067563056946f, 0.7469931840896606f}});
}

TEST_CASE(
    "a Keras 3 CNN (conv, pooling, flatten under a dynamic batch) gives TensorFlow's values") {
  auto m = sm::load(data_dir("keras_cnn").string());
  const auto& sig = m.signatures["serving_default"];
  CHECK(sig.input_specs().at(0).shape == tf::Shape{-1, 6, 6, 1});
  // x = (arange(72).reshape(2, 6, 6, 1) % 7) / 3 - 1, as the Python below builds it.
  auto x = tf::Tensor<float, 4>::uninitialized({2, 6, 6, 1});
  float* px = x.mutable_data();
  for (int i = 0; i < 72; ++i) {
    px[i] = static_cast<float>(i % 7) / 3.0f - 1.0f;
  }
  // Expected values: TensorFlow 2.21.0 + Keras 3 (the build's venv),
  //   tf.saved_model.load(dir).signatures["serving_default"](inputs=x)["output_0"].
  check_close(sig.call<float, 2>(x),
              {{0.819993257522583f, 0.08405440300703049f, 0.09595239162445068f},
               {0.7221083641052246f, 0.11352882534265518f, 0.1643628031015396f}});
  // Every node is one of our ops: the folded Shape/StridedSlice/Pack left no node behind.
  std::vector<std::string> ops;
  for (const auto& node : sig.concrete_function().graph().nodes) {
    ops.push_back(node.op);
  }
  CHECK(std::count(ops.begin(), ops.end(), "Conv2D") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "MaxPool") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "StridedSlice") == 0);
  CHECK(std::count(ops.begin(), ops.end(), "Pack") == 0);
  // The dynamic batch survived: Flatten became a Reshape to [-1, 8].
  auto one = sig.call<float, 2>(tf::zeros<float>({1, 6, 6, 1}));
  CHECK(one.dims()[0] == 1);
}

TEST_CASE("the seed's LSTM text model under Keras 3 gives TensorFlow's values") {
  auto m = sm::load(data_dir("keras_rnn").string());
  const auto& sig = m.signatures["serving_default"];
  CHECK(sig.input_keys() == std::vector<std::string>{"inputs"});
  CHECK(sig.input_specs().at(0).shape == tf::Shape{32, 5});
  CHECK(m.variables.size() == 5);  // the cell's kernel, recurrent kernel, bias; Dense's two
  const auto y = sig.call<float, 2>(text_ids(32, 5, 10));
  REQUIRE(y.shape() == tf::Shape{32, 10});
  // Expected values: TensorFlow 2.21.0 + Keras 3 (the build's venv), printed by
  //   make_saved_models.py sequence: tf.saved_model.load(dir).signatures["serving_default"](
  //   inputs=text_ids(32, 5, 10))["output_0"], rows 0-3.
  CHECK(max_diff_rows(y, {{0.09883217f, 0.10056769f, 0.104683384f, 0.10682332f, 0.10333783f,
                           0.09502525f, 0.10369699f, 0.09651918f, 0.0962323f, 0.09428187f},
                          {0.106710814f, 0.10101766f, 0.105189025f, 0.1022997f, 0.09598864f,
                           0.10379647f, 0.09977248f, 0.094061464f, 0.0969165f, 0.094247304f},
                          {0.104819715f, 0.10229473f, 0.10503904f, 0.09773204f, 0.09442575f,
                           0.095683046f, 0.09978569f, 0.09047946f, 0.10165696f, 0.10808358f},
                          {0.094485536f, 0.098819f, 0.10435072f, 0.096264f, 0.094294205f,
                           0.098278135f, 0.1003787f, 0.09573383f, 0.10846296f, 0.108932935f}}) <=
        1e-6);
  // Our ops only: Split became four Slices per step, the zero states (Fill) were folded.
  auto ops = op_counts(sig);
  CHECK(ops["OneHot"] == 1);
  CHECK(ops["StridedSlice"] == 5);
  CHECK(ops["Slice"] == 20);
  CHECK(ops["Split"] == 0);
  CHECK(ops["Fill"] == 0);
  CHECK(ops["Softmax"] == 1);
}

TEST_CASE("Keras 3 and tf_keras Embedding models (Cast, Dropout at inference) give TF's values") {
  // Expected values: TensorFlow 2.21.0 + Keras 3 and tf_keras (the build's venv), printed by
  //   make_saved_models.py sequence: tf.saved_model.load(dir).signatures["serving_default"](
  //   <input key>=x) with x below.
  SECTION("Keras 3: GatherV2 of a read variable after Cast, negative ids wrapped") {
    auto m = sm::load(data_dir("keras_embedding").string());
    const auto& sig = m.signatures["serving_default"];
    CHECK(sig.input_keys() == std::vector<std::string>{"inputs"});
    CHECK(sig.input_specs().at(0).shape == tf::Shape{-1, 6});
    // Float ids: the Cast truncates 1.5, 2.7 and 8.2; Keras 3 wraps -1 and -3 to 9 and 7.
    auto x = tf::constant<float>({{0, 1.5f, 2.7f, 9, -1, 4}, {3, 3, 8.2f, -3, 5, 6}});
    const auto y = sig.call<float, 2>(x);
    const std::vector<std::vector<float>> want = {{0.33647066f, 0.33161378f, 0.3319156f},
                                                  {0.34144825f, 0.33293885f, 0.32561293f}};
    CHECK(max_diff_rows(y, want) <= 1e-6);
    // The batch stays dynamic: Flatten's Shape -> StridedSlice -> Pack folded to [-1, 24].
    const auto one = sig.call<float, 2>(tf::constant<float>({{3, 3, 8.2f, -3, 5, 6}}));
    CHECK(max_diff_rows(one, {want[1]}) <= 1e-6);
    auto ops = op_counts(sig);
    CHECK(ops["Cast"] == 1);
    CHECK(ops["GatherV2"] == 1);
    CHECK(ops["SelectV2"] == 1);
    CHECK(ops["Shape"] + ops["Pack"] + ops["StridedSlice"] == 0);
  }
  SECTION("tf_keras: ResourceGather is a read then GatherV2; Dropout is an Identity") {
    auto m = sm::load(data_dir("tf_keras_embedding").string());
    const auto& sig = m.signatures["serving_default"];
    CHECK(sig.input_keys() == std::vector<std::string>{"embedding_input"});
    CHECK(sig.output_keys() == std::vector<std::string>{"dense"});
    auto x = tf::constant<float>({{0, 1.5f, 2.7f, 9, 1, 4}, {3, 3, 8.2f, 7, 5, 6}});
    const auto y = sig({{"embedding_input", x}}).at("dense").as<float, 2>();
    CHECK(max_diff_rows(y, {{0.33781746f, 0.3270914f, 0.3350912f},
                            {0.33663464f, 0.3163048f, 0.3470605f}}) <= 1e-6);
    auto ops = op_counts(sig);
    CHECK(ops["GatherV2"] == 1);
    CHECK(ops["ResourceGather"] == 0);
  }
}

TEST_CASE("our exporter's LSTM text model loads and gives the model's outputs") {
  TextRnn model;
  const fs::path dir = fs::current_path() / "load_rnn_roundtrip";
  fs::remove_all(dir);
  const auto ids = text_ids(4, 5, TextRnn::num_chars);
  auto serve = tf::function(
      [&](const tf::Tensor<std::int32_t, 2>& x) { return model(x); },
      {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::int32, tf::Shape{4, 5}}},
       .name = "serve"});
  const auto want = serve(ids);
  sm::save(model, dir.string(),
           {.signatures = {{"serving_default",
                            sm::Signature{.function = serve.concrete_functions().front()}}}});
  auto m = sm::load(dir.string());
  const auto& sig = m.signatures["serving_default"];
  CHECK(m.variables.size() == 5);
  const auto got = sig.call<float, 2>(ids);
  REQUIRE(got.shape() == want.shape());
  double worst = 0;
  for (std::int64_t i = 0; i < want.num_elements(); ++i) {
    worst = std::max(worst, double{std::abs(got.data()[i] - want.data()[i])});
  }
  CHECK(worst <= 1e-6);
  // What our exporter wrote for it, read back as the same ops.
  auto ops = op_counts(sig);
  CHECK(ops["OneHot"] == 1);
  CHECK(ops["Slice"] == 5 + 5 * 4);  // unstack's steps, then four gates per step
  CHECK(ops["BatchMatMulV2"] == 2 * 5 + 1);
  fs::remove_all(dir);
}

TEST_CASE("bad inputs and bad files raise typed errors") {
  const fs::path dir = fs::current_path() / "load_bad";
  SECTION("wrong input dtype, shape or key") {
    auto m = sm::load(data_dir("tf_module").string());
    auto& sig = m.signatures["serving_default"];
    CHECK_THROWS_AS(sig({{"x", tf::constant<float>({{1, 2}})}}), tf::invalid_argument);
    CHECK_THROWS_AS(sig({{"x", tf::constant<double>({{1, 2, 3}})}}), tf::invalid_argument);
    CHECK_THROWS_AS(sig({{"y", tf::constant<float>({{1, 2, 3}})}}), tf::invalid_argument);
  }
  SECTION("a corrupt saved_model.pb is data_loss with the offset") {
    fs::remove_all(dir);
    fs::copy(data_dir("tf_module"), dir, fs::copy_options::recursive);
    fs::resize_file(dir / "saved_model.pb", fs::file_size(dir / "saved_model.pb") / 2);
    try {
      (void)sm::load(dir.string());
      FAIL("no error");
    } catch (const tf::data_loss& e) {
      CHECK_THAT(e.what(), Catch::Contains("byte offset"));
    }
  }
  SECTION("a variable missing from the bundle is not_found naming its key") {
    fs::remove_all(dir);
    fs::copy(data_dir("tf_module"), dir, fs::copy_options::recursive);
    tf::train::CheckpointReader original(
        (data_dir("tf_module") / "variables" / "variables").string());
    fs::remove_all(dir / "variables");
    tf::train::BundleWriter w((dir / "variables" / "variables").string());
    w.add("_CHECKPOINTABLE_OBJECT_GRAPH", original.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"));
    w.finish();
    try {
      (void)sm::load(dir.string());
      FAIL("no error");
    } catch (const tf::not_found& e) {
      CHECK_THAT(e.what(), Catch::Contains("w/.ATTRIBUTES/VARIABLE_VALUE"));
    }
  }
  SECTION("a reshape target with two dims unknown while tracing is unimplemented") {
    sm::detail::FunctionDef f;
    f.signature.name = "f_two_unknowns";
    f.signature.input_arg = {{"x", tf::DType::float32}};
    f.signature.output_arg = {{"y", tf::DType::float32}};
    tf::detail::graph_proto::NodeDef target;
    target.name = "target";
    target.op = "Const";
    target.attrs.tensors.emplace_back("value", tf::AnyTensor(tf::constant<std::int32_t>({-1, -1})));
    tf::detail::graph_proto::NodeDef reshape;
    reshape.name = "r";
    reshape.op = "Reshape";
    reshape.inputs = {"x", "target:output:0"};
    f.node_def = {reshape, target};  // out of order on purpose: the interpreter sorts them
    f.ret.emplace("y", "r:output:0");
    std::vector<sm::detail::FunctionDef> lib{f};
    sm::detail::Interpreter interp(lib);
    tf::detail::trace::Graph g;
    auto x = g.add_argument<float, 2>({-1, 3});
    tf::detail::trace::Scope scope(&g);
    try {
      (void)interp.call(lib[0], {sm::detail::Value{x, {}}});
      FAIL("no error");
    } catch (const tf::unimplemented& e) {
      CHECK_THAT(e.what(), Catch::Contains("more than one dim unknown") && Catch::Contains("'r'"));
    }
  }
  SECTION("a -1 for a dim unknown while tracing never reaches arithmetic or Fill") {
    // dim0 = Shape(x)[0] is the -1 of x's dynamic batch [-1, 3].
    sm::detail::FunctionDef f;
    f.signature.name = "f_unknown_dim";
    f.signature.input_arg = {{"x", tf::DType::float32}};
    f.signature.output_arg = {{"y", tf::DType::float32}};
    auto slice = node_def("dim0", "StridedSlice",
                          {"shape:output:0", "b:output:0", "e:output:0", "s:output:0"});
    slice.attrs.values.emplace_back("shrink_axis_mask", std::int64_t{1});
    f.node_def = {node_def("shape", "Shape", {"x"}),
                  const_def("b", tf::constant<std::int32_t>({0})),
                  const_def("e", tf::constant<std::int32_t>({1})),
                  const_def("s", tf::constant<std::int32_t>({1})),
                  slice,
                  const_def("three", tf::AnyTensor(tf::Tensor<std::int32_t, 0>(3)))};
    SECTION("Fill of [dim0, 3] is unimplemented, naming Fill") {
      f.node_def.push_back(node_def("dims", "Pack", {"dim0:output:0", "three:output:0"}));
      f.node_def.push_back(const_def("zero", tf::AnyTensor(tf::Tensor<float, 0>(0.0f))));
      f.node_def.push_back(node_def("zeros", "Fill", {"dims:output:0", "zero:output:0"}));
      f.ret.emplace("y", "zeros:output:0");
      CHECK_THAT(unimplemented_text(f), Catch::Contains("'Fill'") && Catch::Contains("'zeros'") &&
                                            Catch::Contains("f_unknown_dim") &&
                                            Catch::Contains("dim unknown while tracing"));
    }
    SECTION("int32 AddV2 with dim0 is unimplemented, naming AddV2") {
      auto cast = node_def("ids", "Cast", {"x"});
      cast.attrs.values.emplace_back("DstT", tf::DType::int32);
      f.node_def.push_back(cast);
      f.node_def.push_back(node_def("sum", "AddV2", {"ids:y:0", "dim0:output:0"}));
      f.ret.emplace("y", "sum:z:0");
      CHECK_THAT(unimplemented_text(f), Catch::Contains("'AddV2'") && Catch::Contains("'sum'") &&
                                            Catch::Contains("dim unknown while tracing"));
    }
    SECTION("Reshape to [dim0, 3] is fine: Reshape infers the -1") {
      f.node_def.push_back(node_def("dims", "Pack", {"dim0:output:0", "three:output:0"}));
      f.node_def.push_back(node_def("r", "Reshape", {"x", "dims:output:0"}));
      f.ret.emplace("y", "r:output:0");
      CHECK(unimplemented_text(f).empty());
    }
  }
  SECTION("an op without a tapeflow definition is unimplemented naming op, node, function") {
    sm::detail::FunctionDef f;
    f.signature.name = "f_with_unknown_op";
    f.signature.input_arg = {{"x", tf::DType::float32}};
    f.signature.output_arg = {{"y", tf::DType::float32}};
    tf::detail::graph_proto::NodeDef node;
    node.name = "weird";
    node.op = "NoSuchOp";
    node.inputs = {"x"};
    f.node_def.push_back(node);
    f.ret.emplace("y", "weird:output:0");
    std::vector<sm::detail::FunctionDef> lib{f};
    sm::detail::Interpreter interp(lib);
    tf::detail::trace::Graph g;
    auto x = g.add_argument<float, 2>({-1, 3});
    tf::detail::trace::Scope scope(&g);
    try {
      (void)interp.call(lib[0], {sm::detail::Value{x, {}}});
      FAIL("no error");
    } catch (const tf::unimplemented& e) {
      CHECK_THAT(e.what(), Catch::Contains("NoSuchOp") && Catch::Contains("weird") &&
                               Catch::Contains("f_with_unknown_op"));
    }
  }
  fs::remove_all(dir);
}

}  // namespace test_saved_model_load
