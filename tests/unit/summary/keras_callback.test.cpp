// keras::callbacks::TensorBoard writes fit's losses and metrics as Keras does.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/callbacks/tensorboard.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/random/random.hpp>
#include <tapeflow/summary/event_reader.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_summary_keras_callback {

namespace tf = tapeflow;
namespace fs = std::filesystem;
using Catch::Detail::Approx;

namespace {
/// tag -> (step, value) of every scalar in the run's single event file.
std::map<std::string, std::vector<std::pair<std::int64_t, float>>> scalars(const fs::path& run) {
  std::map<std::string, std::vector<std::pair<std::int64_t, float>>> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(run)) {
    files.push_back(e.path());
  }
  REQUIRE(files.size() == 1);
  for (const auto& e : tf::summary::summary_iterator(files[0])) {
    for (const auto& v : e.values) {
      CHECK(v.plugin_name == "scalars");
      float f = 0;
      REQUIRE(v.tensor->tensor_content.size() == 4);
      std::memcpy(&f, v.tensor->tensor_content.data(), 4);
      out[v.tag].emplace_back(e.step, f);
    }
  }
  return out;
}
}  // namespace

TEST_CASE("keras TensorBoard callback logs epoch and batch scalars to train/validation",
          "[summary][keras]") {
  const fs::path dir = fs::current_path() / "logs_keras";
  fs::remove_all(dir);
  tf::random::set_seed(1);
  auto x = tf::random::normal<float>({64, 2}, {.seed = 1});
  std::vector<std::int32_t> labels(64);
  for (std::int64_t i = 0; i < 64; ++i) {
    labels[static_cast<std::size_t>(i)] = x(i, 0) > 0 ? 1 : 0;
  }
  auto y = tf::constant<std::int32_t>(labels);
  auto model = tf::keras::Sequential(tf::keras::layers::Dense(2));
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 1e-2}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                 .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  auto tb = std::make_shared<tf::keras::callbacks::TensorBoard>(
      dir, tf::keras::callbacks::TensorBoardOptions{.update_freq = 2});
  auto history = model.fit(x, y,
                           {.batch_size = 16,
                            .epochs = 3,
                            .verbose = 0,
                            .validation_data = std::pair{tf::AnyTensor(x), tf::AnyTensor(y)},
                            .callbacks = {tb}});
  tb->train_writer().flush();
  tb->validation_writer().flush();
  auto train = scalars(dir / "train");
  auto validation = scalars(dir / "validation");
  REQUIRE(train["epoch_loss"].size() == 3);
  for (int e = 0; e < 3; ++e) {
    CHECK(train["epoch_loss"][static_cast<std::size_t>(e)].first == e);
    CHECK(train["epoch_loss"][static_cast<std::size_t>(e)].second ==
          Approx(history.history["loss"][static_cast<std::size_t>(e)]));
    CHECK(validation["epoch_loss"][static_cast<std::size_t>(e)].second ==
          Approx(history.history["val_loss"][static_cast<std::size_t>(e)]));
  }
  CHECK(train.count("epoch_sparse_categorical_accuracy") == 1);
  CHECK(validation.count("epoch_sparse_categorical_accuracy") == 1);
  CHECK(train.count("epoch_val_loss") == 0);
  // 4 batches per epoch, 12 in all, every 2nd logged: global steps 1, 3, ..., 11.
  REQUIRE(train["batch_loss"].size() == 6);
  CHECK(train["batch_loss"].front().first == 1);
  CHECK(train["batch_loss"].back().first == 11);
  CHECK_THROWS_AS(tf::keras::callbacks::TensorBoard(dir, {.update_freq = "sometimes"}),
                  tf::invalid_argument);
}

}  // namespace test_summary_keras_callback
