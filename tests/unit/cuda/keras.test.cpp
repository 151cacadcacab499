// The seed CNN (examples/common/mnist.hpp's shape, narrowed) fitted under tf::device("/GPU:0")
// against the same fit on the CPU: its weights and optimizer slots stay on the GPU, and it
// learns what the CPU learns (weights to 1e-3, the same accuracy). Ops without a GPU kernel
// yet (convolutions, pooling, the loss) fall back to the CPU through host copies.
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/config.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/layers/conv2d.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/layers/pooling.hpp>
#include <tapeflow/keras/metrics.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/random/random.hpp>

#include "gpu_available.hpp"

namespace test_cuda_keras {
namespace tf = tapeflow;
namespace layers = tf::keras::layers;

struct Fitted {
  std::vector<std::vector<float>> weights;
  std::vector<std::string> devices;
  std::vector<std::string> slot_devices;
  double accuracy = 0;
};

Fitted fit_on(const char* device, const tf::Tensor<float, 4>& x,
              const tf::Tensor<std::int32_t, 1>& y) {
  auto scope = tf::device(device);
  tf::random::set_seed(5);
  auto model =
      tf::keras::Sequential(layers::Conv2D(8, 5, {.padding = "same", .activation = tf::nn::relu}),
                            layers::MaxPool2D(2, {.strides = 2}),
                            layers::Conv2D(16, 5, {.padding = "same", .activation = tf::nn::relu}),
                            layers::MaxPool2D(2, {.strides = 2}), layers::Flatten(),
                            layers::Dense(32, {.activation = tf::nn::relu}), layers::Dense(10));
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 3e-3}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true}),
                 .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  model.fit(x, y, {.batch_size = 32, .epochs = 3, .verbose = 0, .seed = 2});
  Fitted out;
  for (const auto& v : model.variables()) {
    out.devices.push_back(v.device());
    auto value = v.value();
    out.weights.push_back(value.rank() == 4   ? value.as<float, 4>().numpy()
                          : value.rank() == 2 ? value.as<float, 2>().numpy()
                                              : value.as<float, 1>().numpy());
  }
  for (const auto& slot : model.optimizer().slot_variables()) {
    out.slot_devices.push_back(slot.slot.device());
  }
  out.accuracy = model.evaluate(x, y, {.verbose = 0}).at("sparse_categorical_accuracy");
  return out;
}

TEST_CASE("the seed CNN fitted on a GPU learns what it learns on the CPU", "[gpu]") {
  if (!tapeflow_test::gpu_available("the seed CNN fitted on a GPU")) {
    return;
  }
  // 256 16x16 images whose label is the quadrant (and stripe) holding their brightest blob.
  auto x = tf::random::normal<float>({256, 16, 16, 1}, {.stddev = 0.3f, .seed = 1});
  std::vector<std::int32_t> labels(256);
  float* pixels = x.mutable_data();
  for (std::int64_t i = 0; i < 256; ++i) {
    auto const label = static_cast<std::int32_t>(i % 10);
    labels[static_cast<std::size_t>(i)] = label;
    std::int64_t const row = (label / 5) * 8 + 2;
    std::int64_t const col = (label % 5) * 3;
    for (std::int64_t r = row; r < row + 4; ++r) {
      for (std::int64_t c = col; c < col + 2; ++c) {
        pixels[(i * 16 + r) * 16 + c] += 2.0f;
      }
    }
  }
  auto y = tf::constant<std::int32_t>(labels);
  auto const cpu = fit_on("/cpu:0", x, y);
  auto const gpu = fit_on("/GPU:0", x, y);
  for (const auto& device : gpu.devices) {
    CHECK(device == "/job:localhost/replica:0/task:0/device:GPU:0");
  }
  for (const auto& device : gpu.slot_devices) {
    CHECK(device == "/job:localhost/replica:0/task:0/device:GPU:0");
  }
  REQUIRE(gpu.weights.size() == cpu.weights.size());
  double worst = 0;
  for (std::size_t v = 0; v < cpu.weights.size(); ++v) {
    REQUIRE(gpu.weights[v].size() == cpu.weights[v].size());
    for (std::size_t k = 0; k < cpu.weights[v].size(); ++k) {
      worst = std::max(worst, static_cast<double>(std::abs(gpu.weights[v][k] - cpu.weights[v][k])));
    }
  }
  INFO("largest weight difference " << worst << "; accuracy CPU " << cpu.accuracy << ", GPU "
                                    << gpu.accuracy);
  CHECK(worst < 1e-3);
  CHECK(cpu.accuracy > 0.9);
  CHECK(gpu.accuracy == Approx(cpu.accuracy).margin(2.0 / 256));
  std::cout << "seed CNN: accuracy CPU " << cpu.accuracy << ", GPU " << gpu.accuracy
            << ", largest weight difference " << worst << "\n";
}

// Three updates of one variable by `optimizer` with fixed gradients, on `device`: the value,
// where the variable and its slots live.
template <class Optimizer>
std::tuple<std::vector<float>, std::string, std::vector<std::string>> three_updates(
    const char* device, Optimizer optimizer) {
  auto scope = tf::device(device);
  tf::Variable<float, 2> w(tf::constant<float>({{0.5f, -1.0f, 2.0f}, {0.25f, 3.0f, -0.75f}}));
  tf::Variable<float, 2> v(tf::constant<float>({{1.0f, 1.0f, 1.0f}, {1.0f, 1.0f, 1.0f}}));
  for (int step = 0; step < 3; ++step) {
    auto const g = tf::constant<float>({{0.1f, -0.2f, 0.3f}, {-0.4f, 0.5f, 1e-3f}}) *
                   tf::Tensor<float, 0>(static_cast<float>(step + 1));
    optimizer.apply_gradients(std::vector<std::optional<tf::Tensor<float, 2>>>{g, g},
                              std::vector<tf::Variable<float, 2>*>{&w, &v});
  }
  std::vector<std::string> slots;
  for (const auto& slot : optimizer.slot_variables()) {
    slots.push_back(slot.slot.device());
  }
  return {w.value().numpy(), w.device(), slots};
}

TEST_CASE("optimizer updates run on the GPU and equal the CPU's", "[gpu]") {
  if (!tapeflow_test::gpu_available("optimizer updates on the GPU")) {
    return;
  }
  auto compare = [](auto make) {
    auto const [cpu, cpu_device, cpu_slots] = three_updates("/cpu:0", make());
    auto const [gpu, gpu_device, gpu_slots] = three_updates("/GPU:0", make());
    CHECK(gpu_device == "/job:localhost/replica:0/task:0/device:GPU:0");
    for (const auto& slot : gpu_slots) {
      CHECK(slot == "/job:localhost/replica:0/task:0/device:GPU:0");
    }
    REQUIRE(gpu.size() == cpu.size());
    for (std::size_t i = 0; i < cpu.size(); ++i) {
      CHECK(gpu[i] == Approx(cpu[i]).epsilon(1e-6).margin(1e-7));  // CUDA's sqrt vs Eigen's
    }
  };
  namespace optimizers = tf::keras::optimizers;
  compare([] { return optimizers::SGD({.learning_rate = 0.1}); });
  compare([] { return optimizers::SGD({.learning_rate = 0.1, .momentum = 0.9}); });
  compare(
      [] { return optimizers::SGD({.learning_rate = 0.1, .momentum = 0.9, .nesterov = true}); });
  compare([] { return optimizers::Adam({.learning_rate = 0.01}); });
  compare([] { return optimizers::RMSprop({.learning_rate = 0.01}); });
}

}  // namespace test_cuda_keras
