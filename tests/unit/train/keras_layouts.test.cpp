// Keras 3 and tf_keras checkpoints written by TensorFlow 2.21 (tests/data/train/keras/, made by
// its generate.py) restore into the same C++ models, predict as Python did, take the same next
// optimizer step, and save again with exactly TensorFlow's keys and object graph.
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_train_keras_layouts {

namespace tf = tapeflow;
namespace fs = std::filesystem;
namespace layers = tf::keras::layers;
namespace opt = tf::keras::optimizers;
using tf::train::Layout;

namespace {

const std::string golden = std::string(TAPEFLOW_TEST_DATA_DIR) + "/train/keras/";

// The generator's MLP: Flatten, Dense(4, relu), Dense(3), softmax.
struct MLP : tf::keras::Model<MLP> {
  layers::Flatten flatten;
  layers::Dense dense1{4, {.activation = tf::nn::relu}};
  layers::Dense dense2{3};
  MLP() { TAPEFLOW_TRACK(flatten, dense1, dense2); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 3>& x) {
    return tf::nn::softmax(dense2(dense1(flatten(x))));
  }
};

// The same layers in a Sequential (the softmax as the last Dense's activation).
auto make_sequential() {
  return tf::keras::Sequential(layers::Flatten(), layers::Dense(4, {.activation = tf::nn::relu}),
                               layers::Dense(3, {.activation = tf::nn::softmax}));
}

// The generator's text model: one-hot characters through three LSTMCell(4) steps, Dense(5).
struct RNN : tf::keras::Model<RNN> {
  layers::LSTMCell cell{4};
  layers::Dense dense{5};
  RNN() { TAPEFLOW_TRACK(cell, dense); }
  tf::Tensor<float, 2> call(const tf::Tensor<std::int32_t, 2>& tokens) {
    auto steps = tf::unstack(tf::one_hot<float>(tokens, 5), 1);
    auto state = cell.get_initial_state({.batch_size = 2});
    tf::Tensor<float, 2> out;
    for (const auto& x_t : steps) {
      std::tie(out, state) = cell(x_t, state);
    }
    return tf::nn::softmax(dense(out));
  }
};

// The generator's CNN: Conv2D(2, 3x3, same, relu), MaxPool2D(2, 2), Flatten, Dense(3), softmax.
struct CNN : tf::keras::Model<CNN> {
  layers::Conv2D conv1{2, 3, {.padding = "same", .activation = tf::nn::relu}};
  layers::MaxPooling2D pool1{2};
  layers::Flatten flatten;
  layers::Dense dense{3};
  CNN() { TAPEFLOW_TRACK(conv1, pool1, flatten, dense); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& x) {
    return tf::nn::softmax(dense(flatten(pool1(conv1(x)))));
  }
};

// The generator's Embedding(8, 3), LSTM(4), Dense(5), softmax (ids never repeat in its batch:
// see generate.py).
struct Embed : tf::keras::Model<Embed> {
  layers::Embedding emb{8, 3};
  layers::LSTM lstm{4};
  layers::Dense dense{5};
  Embed() { TAPEFLOW_TRACK(emb, lstm, dense); }
  tf::Tensor<float, 2> call(const tf::Tensor<std::int32_t, 2>& tokens) {
    return tf::nn::softmax(dense(lstm(emb(tokens))));
  }
};

tf::Tensor<float, 4> images() {
  std::vector<float> v;
  for (int i = 0; i < 32; ++i) {
    v.push_back(float(i % 7) * 0.2f - 0.6f);
  }
  return tf::reshape(tf::constant<float>(v), {2, 4, 4, 1});
}

tf::Tensor<float, 3> x_batch() {
  std::vector<float> v;
  for (int i = 0; i < 12; ++i) {
    v.push_back(float(i % 5) * 0.25f - 0.5f);
  }
  return tf::reshape(tf::constant<float>(v), {2, 2, 3});
}
tf::Tensor<std::int32_t, 2> tokens() { return tf::constant<std::int32_t>({{1, 3, 0}, {2, 2, 4}}); }
tf::Tensor<std::int32_t, 2> distinct_tokens() {
  return tf::constant<std::int32_t>({{1, 3, 0}, {2, 5, 6}});
}

std::map<std::string, std::vector<float>> expected(const std::string& dir) {
  std::ifstream in(dir + "/expected.txt");
  REQUIRE(in.good());
  std::map<std::string, std::vector<float>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name;
    ls >> name;
    float v = 0;
    while (ls >> v) {
      out[name].push_back(v);
    }
  }
  return out;
}

float max_diff(const tf::Tensor<float, 2>& got, const std::vector<float>& want) {
  REQUIRE(std::size_t(got.num_elements()) == want.size());
  float d = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    d = std::max(d, std::abs(got.data()[i] - want[i]));
  }
  return d;
}

opt::OptimizerHandle make_optimizer(const std::string& name) {
  if (name == "adam") {
    return opt::Adam({.learning_rate = 0.01});
  }
  if (name == "sgd") {
    return opt::SGD({.learning_rate = 0.1, .momentum = 0.9});
  }
  return opt::RMSprop({.learning_rate = 0.01});
}

template <class M, class X, class Y>
void step(M& model, opt::Optimizer& o, const X& x, const Y& y) {
  tf::GradientTape tape;
  auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, model(x)));
  tape.stop();
  auto vars = model.trainable_variables();
  o.apply_gradients(tape.gradient(loss, vars), vars);
}

// The object graph as a tree of local names (node ids may differ; structure may not).
std::string structure(const std::string& prefix) {
  auto reader = tf::train::CheckpointReader(prefix);
  auto t = reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH");
  auto g = tf::detail::object_graph::decode(*static_cast<const std::string*>(t.raw_data()), prefix);
  std::ostringstream os;
  std::set<std::int32_t> seen;
  std::function<void(std::int32_t, int)> walk = [&](std::int32_t id, int depth) {
    const auto& n = g.nodes[static_cast<std::size_t>(id)];
    if (!seen.insert(id).second) {
      os << " (seen)\n";
      return;
    }
    for (const auto& a : n.attributes) {
      os << " [" << a.name << " " << a.checkpoint_key << "]";
    }
    os << (n.has_checkpoint_values.value_or(false) ? " hcv" : "") << "\n";
    for (const auto& c : n.children) {
      os << std::string(std::size_t(depth) * 2, ' ') << c.local_name;
      walk(c.node_id, depth + 1);
    }
  };
  walk(0, 1);
  return os.str();
}

std::set<std::string> keys(const std::string& prefix) {
  auto names = tf::train::CheckpointReader(prefix).keys();
  return {names.begin(), names.end()};
}

// Restores `case_dir` into a fresh model, checks predictions before and after one more step,
// then saves in the same layout and compares keys and object graph with TensorFlow's file.
template <class M, class X, class Y>
void check_case(const std::string& name, tf::train::Trackable& tracked, M& model, const X& x,
                const Y& y, Layout layout) {
  INFO(name);
  const std::string dir = golden + name;
  const std::string opt_name = name.substr(name.rfind('_') + 1);
  auto handle = make_optimizer(opt_name);
  auto& o = handle.get();
  tf::train::Checkpoint ckpt({{"myAwesomeModel", tracked}, {"myAwesomeOptimizer", o}},
                             {.layout = layout});
  auto status = ckpt.restore(tf::train::latest_checkpoint(dir));
  CHECK(status.layout() == layout);
  CHECK(status.report().unexpected.empty());
  CHECK(o.iterations() == 1);
  const auto want = expected(dir);
  CHECK(max_diff(model(x), want.at("pred")) <= 1e-6f);  // builds: the kernels arrive now
  step(model, o, x, y);                                 // builds the optimizer: slots arrive
  status.assert_consumed();
  CHECK(max_diff(model(x), want.at("pred_step")) <= 1e-5f);
  CHECK(o.iterations() == 2);

  const std::string ours = "keras_layouts_out/" + name + "/ckpt";
  fs::remove_all("keras_layouts_out/" + name);
  const std::string prefix = tf::train::latest_checkpoint(dir);
  ckpt.write(ours);
  CHECK(keys(ours) == keys(prefix));
  CHECK(structure(ours) == structure(prefix));
}

}  // namespace

TEST_CASE("Keras 3 and tf_keras subclassed MLP checkpoints: restore, next step, same graph",
          "[train][checkpoint][keras3][golden]") {
  for (const char* flavor : {"keras3", "tf_keras"}) {
    for (const char* o : {"adam", "sgd", "rmsprop"}) {
      MLP model;
      const Layout layout = std::string(flavor) == "keras3" ? Layout::keras3 : Layout::tf_keras;
      check_case(std::string(flavor) + "_mlp_" + o, model, model, x_batch(),
                 tf::constant<std::int32_t>({0, 2}), layout);
    }
  }
}

TEST_CASE("Keras 3 and tf_keras Sequential checkpoints (optimizer-keyed weights in Keras 3)",
          "[train][checkpoint][keras3][golden]") {
  for (const char* flavor : {"keras3", "tf_keras"}) {
    auto seq = make_sequential();
    const Layout layout = std::string(flavor) == "keras3" ? Layout::keras3 : Layout::tf_keras;
    check_case(std::string(flavor) + "_sequential_adam", seq, seq, x_batch(),
               tf::constant<std::int32_t>({0, 2}), layout);
  }
}

TEST_CASE("Conv2D and Embedding + LSTM checkpoints under both layouts",
          "[train][checkpoint][keras3][golden]") {
  for (const char* flavor : {"keras3", "tf_keras"}) {
    const bool keras3 = std::string(flavor) == "keras3";
    const Layout layout = keras3 ? Layout::keras3 : Layout::tf_keras;
    CNN cnn;
    check_case(std::string(flavor) + "_cnn_adam", cnn, cnn, images(),
               tf::constant<std::int32_t>({0, 2}), layout);
    Embed embed;
    // tf_keras's LSTM also tracks the empty lists `state_spec` and (its cell) `state_size`.
    check_case(std::string(flavor) + "_embedding_adam", embed, embed, distinct_tokens(),
               tf::constant<std::int32_t>({3, 1}), layout);
  }
}

// tf_keras's LSTMCell also tracks the empty list `state_size`.
TEST_CASE("Keras 3 and tf_keras LSTMCell text model checkpoints",
          "[train][checkpoint][keras3][golden]") {
  for (const char* flavor : {"keras3", "tf_keras"}) {
    RNN model;
    check_case(std::string(flavor) + "_rnn_adam", model, model, tokens(),
               tf::constant<std::int32_t>({3, 1}),
               std::string(flavor) == "keras3" ? Layout::keras3 : Layout::tf_keras);
  }
}

TEST_CASE("the default layout is Keras 3, and the report names the detected layout",
          "[train][checkpoint][keras3]") {
  fs::remove_all("keras_layouts_default");
  MLP model;
  opt::Adam adam({.learning_rate = 0.01});
  step(model, adam, x_batch(), tf::constant<std::int32_t>({0, 2}));
  tf::train::Checkpoint ckpt({{"myAwesomeModel", model}, {"myAwesomeOptimizer", adam}});
  const auto path = ckpt.save("keras_layouts_default/ckpt");
  CHECK(keys(path) == keys(tf::train::latest_checkpoint(golden + "keras3_mlp_adam")));
  MLP back;
  opt::Adam back_opt({.learning_rate = 0.01});
  tf::train::Checkpoint restore({{"myAwesomeModel", back}, {"myAwesomeOptimizer", back_opt}});
  auto status = restore.restore(path);
  std::ostringstream os;
  os << status.report();
  CHECK(os.str().rfind("layout: keras3\n", 0) == 0);
  CHECK(status.report().pending.size() == 12);  // 4 weights + 8 Adam slots wait for builds
  CHECK(status.report().unexpected.empty());
}

}  // namespace test_train_keras_layouts
