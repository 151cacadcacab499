// tf.keras.applications: MobileNetV2, ResNet50 and VGG16 against the layer lists Keras 3
// gives (tests/data/keras_applications/reference.py writes the golden files: TensorFlow 2.21,
// Keras 3.15), their parameter counts, forward shapes and argument errors.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/keras/applications/mobilenet_v2.hpp>
#include <tapeflow/keras/applications/resnet50.hpp>
#include <tapeflow/keras/applications/vgg16.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/random/random.hpp>
#include <tapeflow/train/trackable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_applications {

namespace tf = tapeflow;
namespace apps = tf::keras::applications;

namespace {

// reference.py's lines for `model`: "<name> <class> <shapes>" per layer, then "params <n>"
// (default names without their per-process suffix).
std::vector<std::string> lines_of(apps::Application& model) {
  std::vector<std::string> out;
  for (const auto& l : model.layers()) {
    std::string name = l.name;
    for (const char* base : {"input_layer", "global_average_pooling2d", "global_max_pooling2d"}) {
      const std::string b = base;
      if (name.rfind(b + "_", 0) == 0 &&
          name.find_first_not_of("0123456789", b.size() + 1) == std::string::npos) {
        name = b;
      }
    }
    std::string shapes;
    for (const auto& s : l.weight_shapes) {
      shapes += shapes.empty() ? "[" : ";[";
      for (std::size_t i = 0; i < s.rank(); ++i) {
        shapes += (i ? "," : "") + std::to_string(s[i]);
      }
      shapes += "]";
    }
    out.push_back(name + " " + l.class_name + " " + (shapes.empty() ? "-" : shapes));
  }
  out.push_back("params " + std::to_string(model.count_params()));
  return out;
}

std::vector<std::string> golden(const std::string& key) {
  std::ifstream in(std::string(TAPEFLOW_TEST_DATA_DIR) + "/keras_applications/" + key + ".txt");
  REQUIRE(in.good());
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      out.push_back(line);
    }
  }
  return out;
}

void check_golden(apps::Application& model, const std::string& key) {
  const auto got = lines_of(model);
  const auto want = golden(key);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(key << " layer " << i);
    CHECK(got[i] == want[i]);
  }
}

std::int64_t trainable_count(apps::Application& model) {
  std::int64_t n = 0;
  for (const auto& v : model.trainable_variables()) {
    n += v.num_elements();
  }
  return n;
}

}  // namespace

TEST_CASE("keras/applications: MobileNetV2 has Keras's layers weights and parameter count") {
  apps::MobileNetV2 model;
  check_golden(model, "mobilenet_v2");
  CHECK(model.count_params() == 3538984);
  CHECK(trainable_count(model) == 3504872);
  CHECK(model.name() == "mobilenetv2_1.00_224");
  CHECK(model.class_name() == "Functional");
  CHECK(model.layers().size() == 156);
  CHECK(model.output_shape() == tf::Shape{-1, 1000});
  std::ostringstream summary;
  model.summary(summary);
  CHECK(summary.str().find("Total params: 3,538,984") != std::string::npos);
  CHECK(summary.str().find("block_1_pad (ZeroPadding2D)") != std::string::npos);
}

TEST_CASE("keras/applications: MobileNetV2 alpha rounds filters as Keras does") {
  apps::MobileNetV2 small({.input_shape = {{96, 96, 3}}, .alpha = 0.35});
  check_golden(small, "mobilenet_v2_alpha035_96");
  CHECK(small.name() == "mobilenetv2_0.35_96");
  CHECK(apps::MobileNetV2({.include_top = false}).count_params() == 2257984);
  apps::MobileNetV2 wide({.alpha = 1.3, .include_top = false, .pooling = "avg"});
  CHECK(wide.count_params() == 3766048);
  CHECK(wide.output_shape() == tf::Shape{-1, 1664});
  CHECK(apps::MobileNetV2::make_divisible(32 * 0.35) == 16);
  CHECK(apps::MobileNetV2::make_divisible(1280 * 1.3) == 1664);
}

TEST_CASE("keras/applications: MobileNetV2 runs at 96x96") {
  // [snippet:mobilenet_v2]
  apps::MobileNetV2 model({.input_shape = {{96, 96, 3}}, .alpha = 0.35, .classes = 10});
  auto y = model(tf::zeros<float>({1, 96, 96, 3}) + 0.5f).as<float, 2>();  // [1, 10]
  CHECK(y.shape() == tf::Shape{1, 10});
  // [snippet:mobilenet_v2]
  float sum = 0;
  for (float v : y.to_vector()) {
    sum += v;
  }
  CHECK(sum == Approx(1.0f).margin(1e-5));
  apps::MobileNetV2 features({.alpha = 0.35, .include_top = false});
  CHECK(features.input_shape() == tf::Shape{-1, -1, -1, 3});
  auto f = features(tf::zeros<float>({2, 64, 64, 3})).as<float, 4>();
  CHECK(f.shape() == tf::Shape{2, 2, 2, 1280});
}

TEST_CASE("keras/applications: traced inference equals the eager call bitwise") {
  // In a tf::function each batch normalization joins the chain after it, which the convolution
  // before runs on its output (Note [Output epilogues]); ResNet50's widest pointwise
  // convolutions run the GEMM and leave their chains to run after them. Paddings fold into
  // convolutions (Note [Padding folding]).
  const auto x = tf::random::uniform<float>({2, 96, 96, 3}, {.minval = -1, .maxval = 1, .seed = 3});
  apps::MobileNetV2 mobilenet({.input_shape = {{96, 96, 3}}, .alpha = 0.35, .classes = 10});
  auto traced_mobilenet =
      tf::function([&](const tf::Tensor<float, 4>& in) { return mobilenet(in).as<float, 2>(); });
  CHECK(traced_mobilenet(x).to_vector() == mobilenet(x).as<float, 2>().to_vector());
  CHECK(traced_mobilenet.concrete_functions()[0]->output_epilogues() >= 50);
  // Its four ZeroPadding2D layers fold into the stride-2 depthwise convolutions after them.
  CHECK(traced_mobilenet.concrete_functions()[0]->optimization_report().paddings_folded == 4);
  apps::ResNet50 resnet({.input_shape = {{32, 32, 3}}, .include_top = false, .pooling = "avg"});
  const auto small = tf::random::uniform<float>({1, 32, 32, 3}, {.seed = 4});
  auto traced_resnet =
      tf::function([&](const tf::Tensor<float, 4>& in) { return resnet(in).as<float, 2>(); });
  CHECK(traced_resnet(small).to_vector() == resnet(small).as<float, 2>().to_vector());
  CHECK(traced_resnet.concrete_functions()[0]->output_epilogues() >= 40);
  // The padding before conv1 folds; the one before the max pooling stays.
  CHECK(traced_resnet.concrete_functions()[0]->optimization_report().paddings_folded == 1);
}

TEST_CASE("keras/applications: MobileNetV2's traced training step equals the eager one bitwise") {
  // The traced step folds the four ZeroPadding2D layers into the depthwise convolutions, their
  // filter gradients and input gradients (Note [Padding folding]); batch normalization trains.
  apps::MobileNetV2 eager({.input_shape = {{32, 32, 3}}, .alpha = 0.35, .classes = 10});
  apps::MobileNetV2 traced({.input_shape = {{32, 32, 3}}, .alpha = 0.35, .classes = 10});
  auto compile = [](auto& model, bool run_eagerly) {
    model.compile({.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.05}),
                   .loss = tf::keras::losses::SparseCategoricalCrossentropy(),
                   .run_eagerly = run_eagerly});
  };
  compile(eager, true);
  compile(traced, false);
  const tf::AnyTensor x(
      tf::random::uniform<float>({4, 32, 32, 3}, {.minval = -1, .maxval = 1, .seed = 5}));
  const tf::AnyTensor y(tf::constant<std::int32_t>({1, 7, 3, 3}));
  (void)eager.train_step(x, y);  // builds the weights
  (void)traced.train_step(x, y);
  auto eager_vars = eager.variables();
  auto traced_vars = traced.variables();
  REQUIRE(eager_vars.size() == traced_vars.size());
  for (std::size_t i = 0; i < eager_vars.size(); ++i) {
    traced_vars[i].assign(eager_vars[i].value());
  }
  for (int step = 0; step < 2; ++step) {
    CHECK(eager.train_step(x, y) == traced.train_step(x, y));
  }
  REQUIRE(traced.train_function() != nullptr);
  const auto& report = traced.train_function()->concrete_functions()[0]->optimization_report();
  CHECK(report.paddings_folded == 4);
  CHECK(report.crops_folded == 4);
  for (std::size_t i = 0; i < eager_vars.size(); ++i) {
    INFO(eager_vars[i].name());
    const auto a = eager_vars[i].value();
    const auto b = traced_vars[i].value();
    REQUIRE(a.shape() == b.shape());
    CHECK(std::memcmp(a.raw_data(), b.raw_data(),
                      static_cast<std::size_t>(a.num_elements()) * sizeof(float)) == 0);
  }
}

TEST_CASE("keras/applications: ResNet50 has Keras's layers weights and parameter count") {
  apps::ResNet50 model;
  check_golden(model, "resnet50");
  CHECK(model.count_params() == 25636712);
  CHECK(model.name() == "resnet50");
}

TEST_CASE("keras/applications: ResNet50 runs at 32x32") {
  apps::ResNet50 model({.input_shape = {{32, 32, 3}}, .include_top = false, .pooling = "max"});
  CHECK(model.layer_names().back() == "max_pool");
  CHECK(model.count_params() == 23587712);  // as ResNet50(include_top=False)
  auto y = model(tf::zeros<float>({1, 32, 32, 3}) + 1.0f).as<float, 2>();
  CHECK(y.shape() == tf::Shape{1, 2048});
}

TEST_CASE("keras/applications: VGG16 has Keras's layers and runs at 32x32") {
  apps::VGG16 model({.input_shape = {{32, 32, 3}}, .include_top = false, .pooling = "max"});
  check_golden(model, "vgg16_notop_32_max");
  CHECK(model.count_params() == 14714688);
  auto y = model(tf::zeros<float>({2, 32, 32, 3}) + 1.0f).as<float, 2>();
  CHECK(y.shape() == tf::Shape{2, 512});
}

// fc1 and fc2 are 16M parameters at any input size (slow at -O0): run with `[.vgg16_top]`.
TEST_CASE("keras/applications: VGG16 with the top runs at 32x32", "[.vgg16_top]") {
  // With the top at 32x32 the flattened features are 512 wide (25088 at 224x224).
  apps::VGG16 top({.input_shape = {{32, 32, 3}}, .classes = 7});
  CHECK(top.count_params() ==
        14714688 + (512 * 4096 + 4096) + (4096 * 4096 + 4096) + (4096 * 7 + 7));
  CHECK(top.layer_names().at(19) == "flatten");
  CHECK(top.layer_names().at(20) == "fc1");
  auto p = top(tf::zeros<float>({1, 32, 32, 3})).as<float, 2>();
  CHECK(p.shape() == tf::Shape{1, 7});
}

// 138M parameters (550 MB): run with `[.vgg16_top]`.
TEST_CASE("keras/applications: VGG16 at 224x224 has 138357544 parameters", "[.vgg16_top]") {
  apps::VGG16 model;
  CHECK(model.count_params() == 138357544);
}

TEST_CASE("keras/applications: checkpoint children follow Keras's Functional layouts") {
  apps::MobileNetV2 model({.alpha = 0.35, .include_top = false});
  auto k3 = model.trackable_children(tf::train::Layout::keras3);
  REQUIRE(k3.back().name == "_operations");
  auto ops = k3.back().target()->trackable_children(tf::train::Layout::keras3);
  CHECK(ops.size() == 154);  // the InputLayer and 153 layers
  CHECK(ops[1].object == model.sublayers()[0]);
  auto tfk = model.trackable_children(tf::train::Layout::tf_keras);
  CHECK(tfk[0].name == "layer-0");
  CHECK(tfk[1].name == "layer_with_weights-0");
  CHECK(tfk[2].name == "layer-1");
  CHECK(tfk[1].object == tfk[2].object);
  CHECK(tfk[1].object->trackable_children(tf::train::Layout::tf_keras)[0].name == "kernel");
  // bn_Conv1 has weights: layer_with_weights-1 then layer-2.
  CHECK(tfk[3].name == "layer_with_weights-1");
  CHECK(tfk[4].name == "layer-2");
}

TEST_CASE("keras/applications: arguments are checked as Keras checks them") {
  CHECK_THROWS_AS(apps::MobileNetV2({.input_shape = {{16, 16, 3}}}), tf::invalid_argument);
  CHECK_THROWS_AS(apps::MobileNetV2({.input_shape = {{-1, -1, 3}}}), tf::invalid_argument);
  CHECK_THROWS_AS(apps::ResNet50({.weights = "imagenet", .classes = 10}), tf::invalid_argument);
  CHECK_THROWS_AS(apps::VGG16({.input_shape = {{64, 64, 3}}, .weights = "imagenet"}),
                  tf::invalid_argument);
  CHECK_THROWS_AS(apps::MobileNetV2({.alpha = 0.6, .weights = "imagenet"}), tf::invalid_argument);
  CHECK_THROWS_AS(apps::VGG16({.weights = "/no/such/file.weights.h5"}), tf::invalid_argument);
  CHECK_THROWS_AS(apps::VGG16({.include_top = false, .pooling = "mean"}), tf::invalid_argument);
  CHECK_THROWS_AS(
      apps::VGG16({.include_top = false, .weights = "imagenet", .classifier_activation = "relu"}),
      tf::unimplemented);
  // Any alpha builds without pretrained weights.
  CHECK(apps::MobileNetV2({.input_shape = {{32, 32, 3}}, .alpha = 0.6, .include_top = false})
            .output_shape() == tf::Shape{-1, 1, 1, 1280});
  // A file that is not a checkpoint: the loader's error, naming it.
  const std::string path = std::string(TAPEFLOW_TEST_DATA_DIR) + "/keras_applications/resnet50.txt";
  CHECK_THROWS_AS(
      apps::VGG16({.input_shape = {{32, 32, 3}}, .include_top = false, .weights = path}),
      tf::error);
}

TEST_CASE("keras/applications: weights= loads a file saved from another instance") {
  const auto dir = std::filesystem::temp_directory_path() / "tapeflow_applications_weights";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const apps::MobileNetV2Options options{
      .input_shape = {{32, 32, 3}}, .alpha = 0.35, .include_top = false, .pooling = "avg"};
  apps::MobileNetV2 first(options);
  auto x = tf::zeros<float>({1, 32, 32, 3}) + 0.25f;
  const auto want = first(x).as<float, 2>();
  std::vector<std::string> files = {(dir / "ckpt").string()};
#if TAPEFLOW_HAS_HDF5
  files.push_back((dir / "m.weights.h5").string());
#endif
  for (const auto& file : files) {
    INFO(file);
    first.save_weights(file);
    auto with_file = options;
    with_file.weights = file;
    apps::MobileNetV2 second(with_file);
    const auto got = second(x).as<float, 2>();
    REQUIRE(got.num_elements() == want.num_elements());
    for (std::int64_t i = 0; i < got.num_elements(); ++i) {
      CHECK(got.data()[i] == want.data()[i]);
    }
  }
}

}  // namespace test_keras_applications
