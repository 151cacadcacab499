// tf::train::Checkpoint: numbering, the state file, object-graph keys, restore status and
// report, deferred restoration into unbuilt Keras layers, optimizer slots, iterator state,
// typed errors, and crash safety (injected failures and SIGKILL at random moments).
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <tapeflow/core.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/ops.hpp>
#include <tapeflow/train.hpp>

#include "kill_at_random.hpp"

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_train_checkpoint {

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
auto make_model() {
  return tf::keras::Sequential(tf::keras::layers::Dense(4, {.activation = tf::nn::relu}),
                               tf::keras::layers::Dense(2));
}
// A function, not a global: a static Tensor would outlive the buffer cache at exit.
tf::Tensor<float, 2> x_in() {
  return tf::constant<float>({{0.5f, -1.0f, 2.0f}, {1.0f, 0.25f, -0.5f}});
}

template <class M, class O>
void train_steps(M& model, O& opt, int n) {
  for (int i = 0; i < n; ++i) {
    tf::GradientTape tape;
    auto loss = tf::reduce_mean(tf::square(model(x_in())));
    tape.stop();
    auto vars = model.trainable_variables();
    opt.apply_gradients(tape.gradient(loss, vars), vars);
  }
}
float max_diff(const tf::Tensor<float, 2>& a, const tf::Tensor<float, 2>& b) {
  float m = 0;
  for (std::int64_t i = 0; i < a.num_elements(); ++i) {
    m = std::max(m, std::abs(a.data()[i] - b.data()[i]));
  }
  return m;
}
}  // namespace

TEST_CASE("save numbers from 1 and writes the state file", "[train][checkpoint]") {
  fs::remove_all("save_num");
  // [snippet:save]
  tf::Variable<float, 1> v(tf::constant<float>({1, 2, 3}), {.name = "v"});
  tf::train::Checkpoint ckpt({{"v", v}});
  REQUIRE(ckpt.save("save_num/model.ckpt") == "save_num/model.ckpt-1");
  REQUIRE(fs::exists("save_num/model.ckpt-1.index"));
  REQUIRE(fs::exists("save_num/model.ckpt-1.data-00000-of-00001"));
  REQUIRE(slurp("save_num/checkpoint") ==
          "model_checkpoint_path: \"model.ckpt-1\"\n"
          "all_model_checkpoint_paths: \"model.ckpt-1\"\n");
  REQUIRE(ckpt.save("save_num/model.ckpt") == "save_num/model.ckpt-2");
  REQUIRE(ckpt.save_counter().value().item() == 2);
  REQUIRE(tf::train::latest_checkpoint("save_num") == "save_num/model.ckpt-2");
  // [snippet:save]
  REQUIRE(tf::train::latest_checkpoint("./save_num") == "./save_num/model.ckpt-2");
  auto reader = tf::train::load_checkpoint("save_num");
  REQUIRE(reader.keys() == std::vector<std::string>{"_CHECKPOINTABLE_OBJECT_GRAPH",
                                                    "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
                                                    "v/.ATTRIBUTES/VARIABLE_VALUE"});
  REQUIRE(
      reader.get_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE").as<std::int64_t, 0>().item() ==
      2);
  // write() neither numbers nor touches the state file
  REQUIRE(ckpt.write("save_num/plain") == "save_num/plain");
  REQUIRE(fs::exists("save_num/plain.index"));
  REQUIRE(tf::train::latest_checkpoint("save_num") == "save_num/model.ckpt-2");
  REQUIRE(tf::train::latest_checkpoint("no_such_dir").empty());
}

TEST_CASE("plain variables of every dtype restore, with a report", "[train][checkpoint]") {
  fs::remove_all("save_vars");
  tf::Variable<double, 2> d(tf::constant<double>({{1.5, 2.5}}));
  tf::Variable<std::int32_t, 0> i(std::int32_t{7});
  tf::Variable<std::string, 1> s(tf::constant({"a", "bcd"}));
  tf::Variable<bool, 1> b(tf::constant<bool>({true, false}));
  tf::Variable<std::uint8_t, 1> u(tf::constant<std::uint8_t>({9, 250}));
  tf::train::Checkpoint ckpt({{"d", d}, {"i", i}, {"s", s}, {"b", b}, {"u", u}});
  const auto path = ckpt.save("save_vars/c");

  tf::Variable<double, 2> d2(tf::zeros<double>({1, 2}));
  tf::Variable<std::int32_t, 0> i2(std::int32_t{0});
  tf::Variable<std::string, 1> s2(tf::constant({"", ""}));
  tf::Variable<bool, 1> b2(tf::constant<bool>({false, true}));
  tf::Variable<std::uint8_t, 1> u2(tf::constant<std::uint8_t>({0, 0}));
  tf::train::Checkpoint back({{"d", d2}, {"i", i2}, {"s", s2}, {"b", b2}, {"u", u2}});
  auto status = back.restore(path);
  status.assert_consumed();
  REQUIRE(d2.value().data()[1] == 2.5);
  REQUIRE(i2.value().item() == 7);
  REQUIRE(s2.value().data()[1] == "bcd");
  REQUIRE(b2.value().data()[0]);
  REQUIRE(u2.value().data()[1] == 250);
  REQUIRE(back.save_counter().value().item() == 1);
  auto r = status.report();
  REQUIRE(r.matched.size() == 6);
  REQUIRE(r.missing.empty());
  REQUIRE(r.unexpected.empty());

  SECTION("a partial structure: unexpected and missing keys are reported") {
    tf::Variable<double, 2> only_d(tf::zeros<double>({1, 2}));
    tf::Variable<float, 0> extra(1.0f);
    tf::train::Checkpoint partial({{"d", only_d}, {"extra", extra}});
    auto st = partial.restore(path);
    auto rep = st.report();
    REQUIRE(rep.unexpected.size() == 4);
    REQUIRE(rep.missing.size() == 1);
    REQUIRE(rep.missing[0].find("extra/.ATTRIBUTES/VARIABLE_VALUE") == 0);
    REQUIRE_THROWS_AS(st.assert_consumed(), tf::failed_precondition);
    REQUIRE_THROWS_WITH(st.assert_existing_objects_matched(), Catch::Contains("extra"));
    st.expect_partial();
    REQUIRE(only_d.value().data()[0] == 1.5);
  }
  SECTION("dtype and shape mismatches are typed errors naming key and file") {
    tf::Variable<float, 2> wrong_dtype(tf::zeros<float>({1, 2}));
    tf::train::Checkpoint c1({{"d", wrong_dtype}});
    REQUIRE_THROWS_AS(c1.restore(path), tf::invalid_argument);
    REQUIRE_THROWS_WITH(c1.restore(path), Catch::Contains("d/.ATTRIBUTES/VARIABLE_VALUE") &&
                                              Catch::Contains("save_vars/c-1.index"));
    tf::Variable<double, 2> wrong_shape(tf::zeros<double>({2, 2}));
    tf::train::Checkpoint c2({{"d", wrong_shape}});
    REQUIRE_THROWS_AS(c2.restore(path), tf::invalid_argument);
    auto st = c2.restore(path, {.skip_mismatch = true});
    REQUIRE(st.report().mismatched.size() == 1);
    REQUIRE(st.report().mismatched[0].find("2, 2") != std::string::npos);
  }
  SECTION("missing checkpoint files") {
    REQUIRE_THROWS_AS(back.restore("save_vars/c-99"), tf::not_found);
    auto none = back.restore(tf::train::latest_checkpoint("empty_dir"));
    REQUIRE_THROWS_AS(none.assert_consumed(), tf::failed_precondition);
  }
}

TEST_CASE("Keras model + optimizer: TF key names, slots, iterations, deferred restore",
          "[train][checkpoint][keras]") {
  fs::remove_all("save_keras");
  auto model = make_model();
  tf::keras::optimizers::Adam opt({.learning_rate = 0.01});
  train_steps(model, opt, 3);
  const auto want = model(x_in());
  // tf_keras' legacy optimizer layout (Keras 3's is tested with TensorFlow-written files in
  // keras_layouts.test.cpp)
  tf::train::Checkpoint ckpt({{"myAwesomeModel", model}, {"myAwesomeOptimizer", opt}},
                             {.layout = tf::train::Layout::tf_keras_legacy});
  const auto path = ckpt.save("save_keras/model.ckpt");
  auto reader = tf::train::load_checkpoint(path);
  for (const char* key :
       {"myAwesomeModel/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
        "myAwesomeModel/layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE",
        "myAwesomeModel/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/myAwesomeOptimizer/m/"
        ".ATTRIBUTES/"
        "VARIABLE_VALUE",
        "myAwesomeModel/layer_with_weights-1/bias/.OPTIMIZER_SLOT/myAwesomeOptimizer/v/.ATTRIBUTES/"
        "VARIABLE_VALUE",
        "myAwesomeOptimizer/iter/.ATTRIBUTES/VARIABLE_VALUE",
        "myAwesomeOptimizer/learning_rate/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE"}) {
    INFO(key);
    REQUIRE(reader.has_tensor(key));
  }
  REQUIRE(reader.get_tensor("myAwesomeOptimizer/iter/.ATTRIBUTES/VARIABLE_VALUE")
              .as<std::int64_t, 0>()
              .item() == 3);

  SECTION("restore into a fresh, unbuilt model: values arrive when layers are built") {
    auto fresh = make_model();
    tf::keras::optimizers::Adam fresh_opt({.learning_rate = 0.01});
    tf::train::Checkpoint back({{"myAwesomeModel", fresh}, {"myAwesomeOptimizer", fresh_opt}});
    auto status = back.restore(tf::train::latest_checkpoint("save_keras"));
    REQUIRE(status.layout() == tf::train::Layout::tf_keras_legacy);
    status.assert_existing_objects_matched();
    REQUIRE(!status.report().pending.empty());
    REQUIRE_THROWS_AS(status.assert_consumed(), tf::failed_precondition);
    REQUIRE(fresh_opt.iterations() == 3);
    const auto got = fresh(x_in());  // builds: deferred kernels and biases restored now
    REQUIRE(max_diff(got, want) == 0.0f);
    // slots are created by the next step and restored then: the step matches the original's
    train_steps(model, opt, 1);
    train_steps(fresh, fresh_opt, 1);
    status.assert_consumed();
    REQUIRE(max_diff(fresh(x_in()), model(x_in())) == 0.0f);
  }
  SECTION("restore into a built model with existing slots") {
    auto built = make_model();
    tf::keras::optimizers::Adam built_opt({.learning_rate = 0.01});
    train_steps(built, built_opt, 1);
    tf::train::Checkpoint back({{"myAwesomeModel", built}, {"myAwesomeOptimizer", built_opt}});
    back.restore(path).assert_consumed();
    REQUIRE(max_diff(built(x_in()), want) == 0.0f);
    train_steps(model, opt, 2);
    train_steps(built, built_opt, 2);
    REQUIRE(max_diff(built(x_in()), model(x_in())) == 0.0f);
  }
}

TEST_CASE("object graph has TF's structure", "[train][checkpoint]") {
  fs::remove_all("save_graph");
  auto model = make_model();
  (void)model(x_in());
  tf::train::Checkpoint ckpt({{"model", model}});
  const auto path = ckpt.write("save_graph/g", {.layout = tf::train::Layout::tf_keras});
  auto reader = tf::train::CheckpointReader(path);
  auto t = reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH");
  auto g = tf::detail::object_graph::decode(*static_cast<const std::string*>(t.raw_data()), path);
  // root: model, save_counter; model: layer_with_weights-0, layer-0, layer_with_weights-1, layer-1
  // (Keras 2 order, verified with tf_keras 2.21)
  REQUIRE(g.nodes[0].children.size() == 2);
  REQUIRE(g.nodes[0].children[0].local_name == "model");
  const auto& m = g.nodes[static_cast<std::size_t>(g.nodes[0].children[0].node_id)];
  REQUIRE(m.children.size() >= 4);
  REQUIRE(m.children[0].local_name == "layer_with_weights-0");
  REQUIRE(m.children[1].local_name == "layer-0");
  REQUIRE(m.children[0].node_id == m.children[1].node_id);  // same node, two edges
  REQUIRE(g.nodes[0].has_checkpoint_values.value_or(false));
  REQUIRE(reader.has_tensor("model/layer-1/kernel/.ATTRIBUTES/VARIABLE_VALUE") == false);
  REQUIRE(reader.has_tensor("model/layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
}

TEST_CASE("a dataset iterator is trackable: the restored run continues the same order",
          "[train][checkpoint][data]") {
  fs::remove_all("save_iter");
  auto ds = tf::data::range(100) | tf::data::shuffle(10, {.seed = 7});
  auto it = ds.iter();
  for (int i = 0; i < 13; ++i) {
    (void)it.get_next();
  }
  tf::train::Checkpoint ckpt({{"iterator", it}});
  const auto path = ckpt.save("save_iter/it");
  std::vector<std::int64_t> rest;
  while (auto e = it.next()) {
    rest.push_back(e->item());
  }
  auto it2 = ds.iter();
  tf::train::Checkpoint back({{"iterator", it2}});
  back.restore(path).assert_consumed();
  std::vector<std::int64_t> rest2;
  while (auto e = it2.next()) {
    rest2.push_back(e->item());
  }
  REQUIRE(rest.size() == 87);
  REQUIRE(rest2 == rest);
}

TEST_CASE("escaped names and the TensorFlow-written golden checkpoint restore",
          "[train][checkpoint][golden]") {
  const std::string dir = std::string(TAPEFLOW_TEST_DATA_DIR) + "/train/golden";
  // A C++ structure with the same local names as the Python tf.Module.
  struct Inner : tf::train::Trackable {
    tf::Variable<float, 2> w{tf::zeros<float>({1, 1})};
    std::vector<tf::train::TrackableReference> trackable_children(tf::train::Layout) override {
      return {{.name = "w", .variable = w}};
    }
  };
  struct Model : tf::train::Trackable {
    Inner inner;
    tf::Variable<float, 2> f32{tf::zeros<float>({2, 3})};
    tf::Variable<std::string, 1> s{tf::constant({"", "", ""})};
    tf::Variable<float, 0> dotted{0.0f};
    std::vector<tf::train::TrackableReference> trackable_children(tf::train::Layout) override {
      return {{.name = "inner", .object = &inner},
              {.name = "f32", .variable = f32},
              {.name = "s", .variable = s},
              {.name = "a.b/c", .variable = dotted}};
    }
  } m;
  tf::train::Checkpoint ckpt({{"model", m}});
  auto status = ckpt.restore(tf::train::latest_checkpoint(dir));
  status.assert_existing_objects_matched();
  REQUIRE(status.report().unexpected.size() == 5);  // f64, i32, i64, u8, b
  status.expect_partial();
  REQUIRE(m.inner.w.value().item() == 0.5f);
  REQUIRE(m.f32.value().data()[5] == 1.5f);
  REQUIRE(m.s.value().data()[2] == "gamma delta");
  REQUIRE(m.dotted.value().item() == 3.0f);
  REQUIRE(ckpt.save_counter().value().item() == 1);
}

TEST_CASE("a failure at any stage of a save leaves the previous checkpoint intact",
          "[train][checkpoint][crash]") {
  fs::remove_all("save_fault");
  tf::Variable<float, 1> v(tf::constant<float>({1, 1}));
  tf::train::Checkpoint ckpt({{"v", v}});
  ckpt.save("save_fault/c");
  for (const char* stage : {"data", "index", "rename_data", "rename_index", "state"}) {
    INFO(stage);
    v.assign(tf::constant<float>({2, 2}));
    tf::train::detail_bundle::fault_hook() = [&](const std::string& s) {
      if (s == stage) {
        throw tf::internal(std::string("injected failure at ") + stage);
      }
    };
    REQUIRE_THROWS_AS(ckpt.save("save_fault/c"), tf::internal);
    tf::train::detail_bundle::fault_hook() = nullptr;
    const auto latest = tf::train::latest_checkpoint("save_fault");
    REQUIRE(latest == "save_fault/c-1");
    tf::Variable<float, 1> w(tf::zeros<float>({2}));
    tf::train::Checkpoint back({{"v", w}});
    back.restore(latest).assert_consumed();
    REQUIRE(w.value().data()[0] == 1.0f);
    for (const auto& e : fs::directory_iterator("save_fault")) {
      REQUIRE(e.path().string().find(".tempstate") == std::string::npos);
    }
  }
}

TEST_CASE("SIGKILL at random moments: the latest checkpoint always restores and verifies",
          "[train][checkpoint][crash]") {
  fs::remove_all("save_kill");
  fs::create_directories("save_kill");
  std::mt19937 rng(12345);
  int verified = 0;
  for (int round = 0; round < 200; ++round) {
    tapeflow_test::kill_at_random(rng, [] {
      // save forever; every variable holds the value of save_counter
      tf::Variable<float, 2> a(tf::zeros<float>({64, 64}));
      tf::Variable<std::int64_t, 1> b(tf::zeros<std::int64_t>({100}));
      tf::train::Checkpoint ckpt({{"a", a}, {"b", b}});
      if (auto latest = tf::train::latest_checkpoint("save_kill"); !latest.empty()) {
        ckpt.restore(latest);
      }
      for (;;) {
        const auto next = ckpt.save_counter().value().item() + 1;
        a.assign(tf::fill<float>({64, 64}, float(next)));
        b.assign(tf::fill<std::int64_t>({100}, next));
        ckpt.save("save_kill/c");
      }
    });
    const auto latest = tf::train::latest_checkpoint("save_kill");
    if (latest.empty()) {
      continue;  // killed before the first save finished
    }
    tf::Variable<float, 2> a(tf::zeros<float>({64, 64}));
    tf::Variable<std::int64_t, 1> b(tf::zeros<std::int64_t>({100}));
    tf::train::Checkpoint back({{"a", a}, {"b", b}});
    back.restore(latest).assert_consumed();
    const auto n = back.save_counter().value().item();
    REQUIRE(latest == "save_kill/c-" + std::to_string(n));
    REQUIRE(a.value().data()[4095] == float(n));
    REQUIRE(b.value().data()[99] == n);
    ++verified;
    // keep the directory small: drop all but the latest
    for (const auto& e : fs::directory_iterator("save_kill")) {
      const auto name = e.path().filename().string();
      if (name != "checkpoint" &&
          name.rfind(tf::train::detail_state::basename(latest) + ".", 0) != 0) {
        fs::remove(e.path());
      }
    }
  }
  REQUIRE(verified > 150);
}

}  // namespace test_train_checkpoint
