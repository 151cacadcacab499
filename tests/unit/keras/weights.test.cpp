// model.save_weights / load_weights: TensorFlow checkpoint prefixes (tf_keras's layout), Keras 3
// `.weights.h5` and `.keras` files (tests/data/keras_weights/make_keras_weights.py wrote the
// Keras ones), and the errors of each (Note [Keras 3 weights files]).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/keras/detail/hdf5_weights.hpp>
#include <tapeflow/keras/layers/batch_normalization.hpp>
#include <tapeflow/keras/layers/conv2d.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/layers/pooling.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/keras/weights.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/softmax.hpp>
#include <tapeflow/train/tensor_bundle.hpp>

namespace test_keras_weights {
namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {

const std::string data = std::string(TAPEFLOW_TEST_DATA_DIR) + "/keras_weights/";

// make_keras_weights.py's model.
auto make_cnn() {
  return tf::keras::Sequential(layers::Conv2D(2, 3, {.activation = tf::nn::relu}),
                               layers::BatchNormalization(), layers::MaxPooling2D(2),
                               layers::Flatten(),
                               layers::Dense(3, {.activation = tf::nn::softmax}));
}

tf::Tensor<float, 4> cnn_input() {
  std::vector<float> v;
  for (int i = 0; i < 36; ++i) {
    v.push_back(float(std::cos(double(i)) / 2));
  }
  return tf::reshape(tf::constant<float>(v), {1, 6, 6, 1});
}

auto make_mlp() {
  return tf::keras::Sequential(layers::Dense(4, {.activation = tf::nn::relu}), layers::Dense(2));
}

tf::Tensor<float, 2> mlp_input() {
  return tf::constant<float>({{0.5f, -1.0f, 2.0f}, {1.5f, 0.25f, -0.75f}});
}

std::vector<float> values(const tf::AnyTensor& t) {
  const auto* p = static_cast<const float*>(t.raw_data());
  return {p, p + t.num_elements()};
}

std::vector<float> values(const tf::Tensor<float, 2>& t) { return values(tf::AnyTensor(t)); }

std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("tapeflow_weights_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// One training step, so the optimizer has slots and the weights moved.
template <class M>
void train_once(M& model) {
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 0.01}),
                 .loss = tf::keras::losses::MeanSquaredError()});
  const auto y = tf::constant<float>({{1.0f, 0.0f}, {0.0f, 1.0f}});
  (void)model.train_step(tf::AnyTensor(mlp_input()), tf::AnyTensor(y));
}

}  // namespace

TEST_CASE("Keras snake_case names of classes") {
  using tf::detail::keras_weights::to_snake_case;
  CHECK(to_snake_case("Dense") == "dense");
  CHECK(to_snake_case("Conv2D") == "conv2d");
  CHECK(to_snake_case("BatchNormalization") == "batch_normalization");
  CHECK(to_snake_case("DepthwiseConv2D") == "depthwise_conv2d");
  CHECK(to_snake_case("GlobalAveragePooling2D") == "global_average_pooling2d");
  CHECK(to_snake_case("MaxPooling2D") == "max_pooling2d");
  CHECK(to_snake_case("ZeroPadding2D") == "zero_padding2d");
  CHECK(to_snake_case("ReLU") == "re_lu");
  CHECK(to_snake_case("LSTM") == "lstm");
  CHECK(to_snake_case("InputLayer") == "input_layer");
  CHECK(to_snake_case("HTTPServer") == "http_server");
  CHECK(to_snake_case("Conv2DTranspose") == "conv2d_transpose");
}

TEST_CASE("Keras 3 weights-file groups of a Sequential model and its optimizer") {
  auto model = make_mlp();
  (void)model(mlp_input());
  train_once(model);
  const auto groups = tf::detail::keras_weights::groups_of(model);
  REQUIRE(groups.size() == 4);
  CHECK(groups[0].path.empty());
  CHECK(groups[0].name == model.name());
  CHECK(groups[1].path == "layers/dense");
  CHECK(groups[1].variables.size() == 2);
  CHECK(groups[1].variables[0].shape() == tf::Shape({3, 4}));
  CHECK(groups[2].path == "layers/dense_1");
  CHECK(groups[3].path == "optimizer");
  CHECK(groups[3].name == "adam");
  // iterations, learning rate, then m and v of each of the four weights.
  REQUIRE(groups[3].variables.size() == 10);
  CHECK(groups[3].variables[0].dtype() == tf::DType::int64);
}

TEST_CASE("save_weights to a checkpoint prefix writes tf_keras's keys and restores") {
  const auto dir = fresh_dir("prefix");
  auto model = make_mlp();
  const auto want = values(model(mlp_input()));
  // [snippet:save_weights]
  model.save_weights(dir + "/weights");  // a TensorFlow checkpoint prefix (tf_keras)
  // [snippet:save_weights]
  CHECK(std::filesystem::exists(dir + "/checkpoint"));
  const tf::train::CheckpointReader reader(dir + "/weights");
  CHECK(reader.has_tensor("layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
  CHECK(reader.has_tensor("layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE"));
  CHECK_FALSE(reader.has_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE"));

  // Loading before the model is built waits for the layers' weights.
  auto other = make_mlp();
  auto status = other.load_weights(dir + "/weights");
  REQUIRE(status.checkpoint().has_value());
  CHECK(values(other(mlp_input())) == want);
  status.assert_consumed();
}

TEST_CASE("a compiled model's checkpoint prefix carries the optimizer") {
  const auto dir = fresh_dir("prefix_opt");
  auto model = make_mlp();
  (void)model(mlp_input());
  train_once(model);
  model.save_weights(dir + "/w");
  const tf::train::CheckpointReader reader(dir + "/w");
  CHECK(reader.has_tensor("optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"));
}

TEST_CASE("file names pick the format as Keras 3 picks it") {
  auto model = make_mlp();
  (void)model(mlp_input());
  CHECK_THROWS_AS(model.save_weights("/tmp/x.keras"), tf::invalid_argument);
  CHECK_THROWS_AS(model.save_weights("/tmp/x.h5"), tf::unimplemented);
  CHECK_THROWS_AS(model.load_weights("/tmp/x.hdf5"), tf::unimplemented);
  CHECK_THROWS_AS(model.load_weights("/nonexistent/dir/w"), tf::not_found);
}

#if TAPEFLOW_HAS_HDF5

TEST_CASE("weights.h5 round trip with the optimizer state") {
  const auto dir = fresh_dir("h5");
  auto model = make_mlp();
  (void)model(mlp_input());
  train_once(model);
  const auto want = values(model(mlp_input()));
  model.save_weights(dir + "/m.weights.h5");
  CHECK_FALSE(std::filesystem::exists(dir + "/m.weights.h5.tmp-tapeflow"));

  const tf::detail::keras_hdf5::WeightsFile file(dir + "/m.weights.h5");
  const auto dense = file.variables("layers/dense");
  REQUIRE(dense.has_value());
  REQUIRE(dense->size() == 2);
  CHECK((*dense)[0].shape == tf::Shape({3, 4}));
  CHECK(file.variables("")->empty());
  CHECK(file.variables("optimizer")->size() == 10);
  CHECK_FALSE(file.variables("layers/dense_2").has_value());

  auto other = make_mlp();
  (void)other(mlp_input());
  other.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 0.01}),
                 .loss = tf::keras::losses::MeanSquaredError()});
  other.load_weights(dir + "/m.weights.h5").assert_consumed();
  CHECK(values(other(mlp_input())) == want);
  CHECK(other.optimizer().iterations() == 1);
  const auto a = model.optimizer().slot_variables();
  const auto b = other.optimizer().slot_variables();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(values(a[i].slot.value()) == values(b[i].slot.value()));
  }
}

TEST_CASE("the same weights give the same weights.h5 bytes") {
  const auto dir = fresh_dir("h5_bytes");
  auto model = make_mlp();
  (void)model(mlp_input());
  model.save_weights(dir + "/a.weights.h5");
  model.save_weights(dir + "/b.weights.h5");
  auto read = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto a = read(dir + "/a.weights.h5");
  CHECK(a.substr(0, 8) == std::string("\x89HDF\r\n\x1a\n", 8));
  CHECK(a == read(dir + "/b.weights.h5"));
}

TEST_CASE("weights.h5 and .keras files written by Keras 3 load with Keras's predictions") {
  std::ifstream in(data + "cnn_prediction.txt");
  std::vector<float> want;
  for (float v = 0; in >> v;) {
    want.push_back(v);
  }
  REQUIRE(want.size() == 3);
  for (const char* file : {"cnn.weights.h5", "cnn.keras"}) {
    INFO(file);
    auto model = make_cnn();
    (void)model(cnn_input());
    model.load_weights(data + file).assert_consumed();
    const auto got = values(model(cnn_input()));
    REQUIRE(got.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(got[i] == Approx(want[i]).margin(1e-6));
    }
    // The formula make_keras_weights.py filled the conv kernel with.
    const auto kernel = values(model.variables()[0].value());
    CHECK(kernel[5] == Approx(std::sin(5.0)).margin(1e-7));
  }
}

TEST_CASE("weights.h5 loads fail clearly and change nothing") {
  const auto dir = fresh_dir("h5_errors");
  auto model = make_cnn();
  CHECK_THROWS_AS(model.load_weights(data + "cnn.weights.h5"), tf::failed_precondition);
  (void)model(cnn_input());
  CHECK_THROWS_AS(model.load_weights(dir + "/missing.weights.h5"), tf::not_found);
  CHECK_THROWS_AS(model.load_weights(dir + "/missing.keras"), tf::not_found);
  std::ofstream(dir + "/junk.weights.h5") << "not an HDF5 file";
  CHECK_THROWS_AS(model.load_weights(dir + "/junk.weights.h5"), tf::data_loss);
  std::ofstream(dir + "/junk.keras") << "not a zip file";
  CHECK_THROWS_AS(model.load_weights(dir + "/junk.keras"), tf::data_loss);

  // A truncated file: data_loss, never a crash.
  {
    std::ifstream in(data + "cnn.weights.h5", std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(in), {});
    std::ofstream(dir + "/cut.weights.h5", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  CHECK_THROWS_AS(model.load_weights(dir + "/cut.weights.h5"), tf::data_loss);

  // Another structure: the MLP's file into the CNN names the group it misses.
  auto mlp = make_mlp();
  (void)mlp(mlp_input());
  mlp.save_weights(dir + "/mlp.weights.h5");
  const auto before = values(model.variables()[0].value());
  try {
    model.load_weights(dir + "/mlp.weights.h5");
    FAIL("no error");
  } catch (const tf::not_found& e) {
    CHECK_THAT(e.what(), Catch::Contains("layers/conv2d/vars"));
  }
  CHECK(values(model.variables()[0].value()) == before);

  // Same classes, other shapes: invalid_argument naming the dataset, or skipped on request.
  auto wide =
      tf::keras::Sequential(layers::Dense(5, {.activation = tf::nn::relu}), layers::Dense(2));
  (void)wide(mlp_input());
  try {
    wide.load_weights(dir + "/mlp.weights.h5");
    FAIL("no error");
  } catch (const tf::invalid_argument& e) {
    CHECK_THAT(e.what(), Catch::Contains("layers/dense/vars/0"));
  }
  const auto status = wide.load_weights(dir + "/mlp.weights.h5", {.skip_mismatch = true});
  CHECK(status.skipped().size() == 2);
  CHECK_THROWS_AS(status.assert_consumed(), tf::failed_precondition);
}

TEST_CASE("weights.h5 datasets stored outside the file are refused") {
  auto model = make_mlp();
  (void)model(mlp_input());
  const auto before = values(model.variables()[0].value());
  try {
    model.load_weights(data + "external.weights.h5");
    FAIL("no error");
  } catch (const tf::data_loss& e) {
    CHECK_THAT(e.what(), Catch::Contains("layers/dense/vars/0") &&
                             Catch::Contains("storage layout Keras does not write"));
  }
  CHECK(values(model.variables()[0].value()) == before);
}

TEST_CASE("a .keras archive held in memory gives the members its file gives") {
  namespace io = tf::detail::keras_hdf5;
  std::ifstream in(data + "cnn.keras", std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  const std::string member = io::read_archive_member(data + "cnn.keras", "model.weights.h5");
  CHECK(member.substr(0, 8) == std::string("\x89HDF\r\n\x1a\n", 8));
  CHECK(io::read_archive_member(bytes, "cnn.keras", "model.weights.h5") == member);
  CHECK_THAT(io::read_archive_member(bytes, "cnn.keras", "config.json"),
             Catch::Contains("Sequential"));
  const io::WeightsFile file(member, "cnn.keras (model.weights.h5)");
  CHECK(file.variables("layers/dense")->size() == 2);
  CHECK_THROWS_AS(io::read_archive_member(bytes, "cnn.keras", "missing.h5"), tf::not_found);
  CHECK_THROWS_AS(io::read_archive_member(std::string_view("not a zip"), "junk", "x"),
                  tf::data_loss);
  // A cut archive (its central directory gone): data_loss, never a crash.
  CHECK_THROWS_AS(io::read_archive_member(std::string_view(bytes).substr(0, bytes.size() / 2),
                                          "cut.keras", "model.weights.h5"),
                  tf::data_loss);
}

#else

TEST_CASE("without HDF5 the weights.h5 paths name the missing package") {
  WARN("tapeflow::keras_io (libhdf5-dev) is not linked: the HDF5 weights tests are SKIPPED");
  auto model = make_mlp();
  (void)model(mlp_input());
  try {
    model.save_weights("/tmp/x.weights.h5");
    FAIL("no error");
  } catch (const tf::unimplemented& e) {
    CHECK_THAT(e.what(), Catch::Contains("libhdf5-dev"));
  }
  CHECK_THROWS_AS(model.load_weights("/tmp/x.keras"), tf::unimplemented);
}

#endif

}  // namespace test_keras_weights
