#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <zlib.h>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/datasets.hpp>
#include <tapeflow/keras/layers/batch_normalization.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/layers/dropout.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/random/random.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_model {

namespace tf = tapeflow;
namespace layers = tf::keras::layers;
using Catch::Detail::Approx;

namespace {
// Two Gaussian blobs: class = x0 + x1 > 0.
std::pair<tf::Tensor<float, 2>, tf::Tensor<std::int32_t, 1>> blobs(std::int64_t n,
                                                                   std::int64_t seed) {
  auto x = tf::random::normal<float>({n, 2}, {.seed = seed});
  std::vector<std::int32_t> y(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    y[std::size_t(i)] = x(i, 0) + x(i, 1) > 0 ? 1 : 0;
  }
  return {x, tf::constant<std::int32_t>(y)};
}

struct CaptureCout {
  std::ostringstream out;
  std::streambuf* old = std::cout.rdbuf(out.rdbuf());
  ~CaptureCout() { std::cout.rdbuf(old); }
};
}  // namespace

TEST_CASE("compile + fit + evaluate + predict learn a separable problem") {
  tf::random::set_seed(1);
  auto [x, y] = blobs(512, 1);
  auto [xv, yv] = blobs(256, 2);
  auto model = tf::keras::Sequential(layers::Dense(16, {.activation = tf::nn::relu}),
                                     layers::Dropout(0.1), layers::Dense(2));
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 1e-2}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                 .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  int epochs_seen = 0;
  auto counter = std::make_shared<tf::keras::LambdaCallback>([&](int, const tf::keras::Logs& logs) {
    ++epochs_seen;
    CHECK(logs.count("val_loss") == 1);
  });
  CaptureCout capture;
  auto history = model.fit(x, y,
                           {.batch_size = 32,
                            .epochs = 5,
                            .verbose = 2,
                            .validation_data = std::pair{tf::AnyTensor(xv), tf::AnyTensor(yv)},
                            .callbacks = {counter},
                            .seed = 3});
  const std::string out = capture.out.str();
  CHECK(epochs_seen == 5);
  CHECK(history.epochs == 5);
  REQUIRE(history.history["loss"].size() == 5);
  CHECK(history.history["loss"].back() < history.history["loss"].front());
  CHECK(history.history["val_sparse_categorical_accuracy"].back() > 0.9);
  // Keras' per-epoch lines
  CHECK(out.find("Epoch 1/5\n16/16 [==============================] - ") != std::string::npos);
  CHECK(out.find("step - loss: ") != std::string::npos);
  CHECK(out.find(" - sparse_categorical_accuracy: ") != std::string::npos);
  CHECK(out.find(" - val_loss: ") != std::string::npos);
  CHECK(model.optimizer().iterations() == 5 * 16);

  auto logs = model.evaluate(xv, yv, {.verbose = 0});
  CHECK(logs.at("sparse_categorical_accuracy") > 0.9);
  CHECK(logs.at("loss") == Approx(history.history["val_loss"].back()).epsilon(1e-3));

  auto pred = model.predict(xv, {.batch_size = 100});
  CHECK(pred.shape() == tf::Shape({256, 2}));

  // The optimizer is a child of the compiled model.
  auto children = model.trackable_children(tf::train::Layout::tf_keras);
  CHECK(children.back().name == "optimizer");
}

namespace {
// A model whose weights depend only on `seed`: the same seed builds the same weights.
auto seeded_model(std::int64_t seed, const tf::Tensor<float, 2>& x) {
  tf::random::set_seed(seed);
  auto model = tf::keras::Sequential(layers::Dense(8, {.activation = tf::nn::relu}),
                                     layers::BatchNormalization(), layers::Dense(2));
  (void)model(x, false);
  return model;
}

bool same_bytes(const tf::AnyTensor& a, const tf::AnyTensor& b) {
  const auto bytes = std::size_t(a.num_elements()) * tf::dtype_size(a.dtype());
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), bytes) == 0;
}
}  // namespace

TEST_CASE(
    "fit and evaluate and predict trace their steps after the first and match eager bitwise") {
  auto [x, y] = blobs(100, 4);  // batches of 32, 32, 32 and 4
  auto eager = seeded_model(5, x);
  auto traced = seeded_model(5, x);
  auto compile = [](auto& model, bool run_eagerly) {
    model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 1e-2}),
                   .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                   .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()},
                   .run_eagerly = run_eagerly});
  };
  compile(eager, true);
  compile(traced, false);
  CHECK(traced.train_function() == nullptr);
  const tf::keras::FitOptions options{.batch_size = 32, .epochs = 3, .verbose = 0, .seed = 6};
  auto eager_history = eager.fit(x, y, options);
  auto traced_history = traced.fit(x, y, options);
  CHECK(eager.train_function() == nullptr);
  REQUIRE(traced.train_function() != nullptr);
  // Full batches trace once, the short last batch once more.
  CHECK(traced.train_function()->trace_count() == 2);
  CHECK(traced.train_function()->retrace_reasons() ==
        std::vector<std::string>{
            "argument 1: shape (32, 2) -> (4, 2); argument 2: shape (32,) -> (4,)"});
  // Same kernels on the same values: losses, metrics, weights and moving statistics agree
  // to the bit (the graph passes keep results bitwise, Note [Graph passes]).
  CHECK(eager_history.history["loss"] == traced_history.history["loss"]);
  CHECK(eager_history.history["sparse_categorical_accuracy"] ==
        traced_history.history["sparse_categorical_accuracy"]);
  const auto eager_vars = eager.variables();
  const auto traced_vars = traced.variables();
  REQUIRE(eager_vars.size() == traced_vars.size());
  REQUIRE(eager_vars.size() == 8);  // two kernels and biases, gamma, beta, moving mean, variance
  for (std::size_t i = 0; i < eager_vars.size(); ++i) {
    INFO(eager_vars[i].name());
    CHECK(same_bytes(eager_vars[i].value(), traced_vars[i].value()));
  }
  CHECK(eager.optimizer().iterations() == traced.optimizer().iterations());
  // evaluate and predict trace too (batches of 32: three full and one of 4), and agree.
  CHECK(eager.evaluate(x, y, {.verbose = 0}) == traced.evaluate(x, y, {.verbose = 0}));
  CHECK(traced.evaluate(x, y, {.verbose = 0}) == eager.evaluate(x, y, {.verbose = 0}));
  CHECK(same_bytes(eager.predict(x), traced.predict(x)));
  CHECK(same_bytes(traced.predict(x), eager.predict(x)));
  CHECK(eager.test_function() == nullptr);
  CHECK(eager.predict_function() == nullptr);
  REQUIRE(traced.test_function() != nullptr);
  REQUIRE(traced.predict_function() != nullptr);
  CHECK(traced.test_function()->trace_count() == 2);
  CHECK(traced.predict_function()->trace_count() == 2);

  SECTION("batches of ever-new shapes stop tracing after eight") {
    for (std::int64_t rows = 1; rows <= 12; ++rows) {
      (void)traced.train_step(tf::slice(x, {0, 0}, {rows, 2}), tf::slice(y, {0}, {rows}));
    }
    CHECK(traced.train_function()->trace_count() == 8);
    CHECK(traced.optimizer().iterations() == eager.optimizer().iterations() + 12);
  }
  SECTION("compile drops the traced step") {
    compile(traced, false);
    CHECK(traced.train_function() == nullptr);
    CHECK(traced.test_function() == nullptr);
    CHECK(traced.predict_function() == nullptr);
    (void)traced.fit(x, y, {.batch_size = 50, .epochs = 1, .verbose = 0});
    REQUIRE(traced.train_function() != nullptr);
    CHECK(traced.train_function()->trace_count() == 1);
  }
}

namespace {
// Reads a value on the host inside call: fine eagerly, impossible while tracing.
struct HostReadingModel : tf::keras::Model<HostReadingModel> {
  layers::Dense dense{2};
  HostReadingModel() { TAPEFLOW_TRACK(dense); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 2>& x) {
    auto y = dense(x);
    return y(0, 0) > 1e30f ? y * 0.0f : y;
  }
};
}  // namespace

TEST_CASE("fit says how to train a model that reads values on the host") {
  auto [x, y] = blobs(64, 7);
  HostReadingModel model;
  tf::keras::CompileOptions options{
      .optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1}),
      .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true})};
  model.compile(options);
  try {
    (void)model.fit(x, y, {.batch_size = 32, .epochs = 1, .verbose = 0});
    FAIL("fit traced a body that reads a symbolic tensor");
  } catch (const tf::failed_precondition& e) {
    CHECK_THAT(e.what(), Catch::Contains("symbolic") && Catch::Contains("run_eagerly = true"));
  }
  CHECK(model.optimizer().iterations() == 1);  // the eager first step ran, the traced one not
  options.run_eagerly = true;
  model.compile(options);
  auto history = model.fit(x, y, {.batch_size = 32, .epochs = 2, .verbose = 0});
  CHECK(history.history["loss"].size() == 2);
  CHECK(model.optimizer().iterations() == 5);
}

TEST_CASE("fit on a dataset of (x, y) batches, and errors") {
  auto [x, y] = blobs(64, 4);
  std::vector<std::pair<tf::Tensor<float, 2>, tf::Tensor<std::int32_t, 1>>> batches;
  for (int i = 0; i < 4; ++i) {
    batches.emplace_back(tf::slice(x, {i * 16, 0}, {16, 2}), tf::slice(y, {i * 16}, {16}));
  }
  auto model = tf::keras::Sequential(layers::Dense(2));
  CHECK_THROWS_AS(model.fit(batches), tf::failed_precondition);  // not compiled
  model.compile({.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true})});
  auto h = model.fit(batches, {.epochs = 2, .verbose = 0});
  CHECK(h.history["loss"].size() == 2);
  CHECK(model.optimizer().iterations() == 8);
  auto logs = model.evaluate(batches, {.verbose = 0});
  CHECK(logs.count("loss") == 1);
  CHECK_THROWS_AS(model.fit(x, tf::constant<std::int32_t>({1, 2}), {.verbose = 0}),
                  tf::invalid_argument);
}

namespace {
void write_gz(const std::filesystem::path& p, const std::vector<std::uint8_t>& bytes) {
  gzFile f = gzopen(p.string().c_str(), "wb");
  REQUIRE(f != nullptr);
  gzwrite(f, bytes.data(), unsigned(bytes.size()));
  gzclose(f);
}
std::vector<std::uint8_t> header(std::vector<std::uint32_t> words) {
  std::vector<std::uint8_t> b;
  for (auto w : words) {
    b.push_back(std::uint8_t(w >> 24));
    b.push_back(std::uint8_t(w >> 16));
    b.push_back(std::uint8_t(w >> 8));
    b.push_back(std::uint8_t(w));
  }
  return b;
}
}  // namespace

TEST_CASE("datasets::mnist::load_data reads IDX gzip files") {
  namespace fs = std::filesystem;
  const fs::path root = fs::current_path() / "fake_datasets";
  const fs::path dir = root / "mnist";
  fs::create_directories(dir);
  for (auto [name, n] : {std::pair{"train", 3u}, std::pair{"t10k", 2u}}) {
    auto img = header({2051, n, 2, 2});
    for (std::uint32_t i = 0; i < n * 4; ++i) {
      img.push_back(std::uint8_t(i));
    }
    write_gz(dir / (std::string(name) + "-images-idx3-ubyte.gz"), img);
    auto lab = header({2049, n});
    for (std::uint32_t i = 0; i < n; ++i) {
      lab.push_back(std::uint8_t(9 - i));
    }
    write_gz(dir / (std::string(name) + "-labels-idx1-ubyte.gz"), lab);
  }
  auto [x_train, y_train, x_test, y_test] = tf::keras::datasets::mnist::load_data(dir);
  CHECK(x_train.dims() == std::array<std::int64_t, 3>{3, 2, 2});
  CHECK(x_train(2, 1, 1) == 11);
  CHECK(y_train.numpy() == std::vector<std::uint8_t>{9, 8, 7});
  CHECK(x_test.dims() == std::array<std::int64_t, 3>{2, 2, 2});
  CHECK(y_test.numpy() == std::vector<std::uint8_t>{9, 8});
  // the path may also be a datasets folder holding mnist/
  CHECK(tf::keras::datasets::mnist::load_data(root).y_train.numpy() ==
        std::vector<std::uint8_t>{9, 8, 7});

  // A wrong magic number is data_loss naming the file; a missing directory is not_found.
  write_gz(dir / "t10k-labels-idx1-ubyte.gz", header({2051, 2}));
  CHECK_THROWS_AS(tf::keras::datasets::mnist::load_data(dir), tf::data_loss);
  CHECK_THROWS_AS(tf::keras::datasets::mnist::load_data(dir / "nope"), tf::not_found);
}

TEST_CASE("the real MNIST, from the repository's data/") {
  // tapeflow's tests are built with TAPEFLOW_DEFAULT_DATASETS_DIR = <repository>/data
  auto d = tf::keras::datasets::mnist::load_data();
  CHECK(d.x_train.dims() == std::array<std::int64_t, 3>{60000, 28, 28});
  CHECK(d.y_test.dims() == std::array<std::int64_t, 1>{10000});
  std::int64_t ones = 0;
  for (auto v : d.y_test.values()) {
    ones += v == 1 ? 1 : 0;
  }
  CHECK(ones == 1135);
}

}  // namespace test_keras_model
