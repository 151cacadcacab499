// Keras under a tf::device scope: a model built, compiled and fitted on a logical CPU, or on a
// device with its own memory, keeps its weights and its optimizer's slots there, and learns
// what it learns on CPU:0.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <scrambled_device.hpp>

#include <tapeflow/config.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/random/random.hpp>

namespace test_keras_placement {
namespace tf = tapeflow;
namespace layers = tf::keras::layers;

const std::string cpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";

auto trained_on(const char* device, const tf::Tensor<float, 2>& x,
                const tf::Tensor<std::int32_t, 1>& y) {
  auto scope = tf::device(device);
  tf::random::set_seed(7);
  auto model =
      tf::keras::Sequential(layers::Dense(8, {.activation = tf::nn::relu}), layers::Dense(2));
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 1e-2}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true})});
  model.fit(x, y, {.batch_size = 16, .epochs = 2, .verbose = 0, .seed = 3});
  return model;
}

// 64 points on CPU:0, labelled by the side of a plane they fall on.
std::pair<tf::Tensor<float, 2>, tf::Tensor<std::int32_t, 1>> separable_points() {
  auto x = tf::random::normal<float>({64, 3}, {.seed = 1});
  std::vector<std::int32_t> labels(64);
  for (std::int64_t i = 0; i < 64; ++i) {
    labels[static_cast<std::size_t>(i)] = x(i, 0) + x(i, 2) > 0 ? 1 : 0;
  }
  return {x, tf::constant<std::int32_t>(labels)};
}

std::vector<float> values(const tf::AnyTensor& t) {
  return t.rank() == 2 ? t.as<float, 2>().numpy() : t.as<float, 1>().numpy();
}

TEST_CASE("a model fitted under a device scope keeps weights and slots there") {
  tf::config::set_logical_device_configuration(tf::config::list_physical_devices("CPU").at(0),
                                               {{}, {}});
  auto [x, y] = separable_points();

  auto placed = trained_on("/cpu:1", x, y);
  auto reference = trained_on("/cpu:0", x, y);
  auto placed_vars = placed.variables();
  auto reference_vars = reference.variables();
  REQUIRE(placed_vars.size() == 4);
  REQUIRE(placed_vars.size() == reference_vars.size());
  for (std::size_t i = 0; i < placed_vars.size(); ++i) {
    CHECK(placed_vars[i].device() == cpu1);
    // Placement changes where, not what: the same steps give the same weights.
    CHECK(values(placed_vars[i].value()) == values(reference_vars[i].value()));
  }
  auto slots = placed.optimizer().slot_variables();
  REQUIRE(slots.size() == 8);  // Adam: m and v per variable
  for (const auto& slot : slots) {
    CHECK(slot.slot.device() == cpu1);
  }
  CHECK(placed.optimizer().iterations() == 8);
}

TEST_CASE("a model fitted on a device with its own memory learns what it learns on the CPU") {
  scrambled::install();  // XPU: memory the host cannot read directly; ops fall back to the CPU
  auto [x, y] = separable_points();

  auto placed = trained_on("/device:XPU:0", x, y);
  auto reference = trained_on("/cpu:0", x, y);
  auto placed_vars = placed.variables();
  auto reference_vars = reference.variables();
  REQUIRE(placed_vars.size() == reference_vars.size());
  for (std::size_t i = 0; i < placed_vars.size(); ++i) {
    CHECK(placed_vars[i].device() == "/job:localhost/replica:0/task:0/device:XPU:0");
    auto const got = values(placed_vars[i].value());
    auto const want = values(reference_vars[i].value());
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) {
      CHECK(got[k] == Approx(want[k]).margin(1e-6));
    }
  }
  for (const auto& slot : placed.optimizer().slot_variables()) {
    CHECK(slot.slot.device() == "/job:localhost/replica:0/task:0/device:XPU:0");
  }
  CHECK(scrambled::traffic.to_host > 0);  // the CPU kernels read the weights' host copies
  CHECK(scrambled::traffic.from_host > 0);
}

}  // namespace test_keras_placement
