// Writes one TensorBoard run with every summary kind, a traced graph and a profile, for
// tests/interop/check_summary.py (TensorBoard's own readers and a real `tensorboard` server).
#include <cmath>
#include <cstdint>
#include <iostream>
#include <numbers>
#include <string>
#include <vector>

#include <tapeflow/function/function.hpp>
#include <tapeflow/summary.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: summary_write <logdir>\n";
    return 2;
  }
  const std::string run = std::string(argv[1]) + "/train";
  auto writer = tf::summary::create_file_writer(run);
  auto f = tf::function([](const tf::Tensor<float, 2>& x, const tf::Tensor<float, 2>& w) {
    return tf::nn::relu(tf::matmul(x, w) + 1.0f);
  });
  tf::summary::trace_on({.graph = true, .profiler = true});
  for (int i = 0; i < 3; ++i) {
    (void)f(tf::ones<float>({4, 3}), tf::ones<float>({3, 5}));
  }
  {
    auto scope = writer.as_default();
    for (int step = 0; step < 10; ++step) {
      tf::summary::scalar("loss", 1.0 / (step + 1), step);
    }
    std::vector<std::uint8_t> pixels(2 * 4 * 5 * 3);
    for (std::size_t i = 0; i < pixels.size(); ++i) {
      pixels[i] = static_cast<std::uint8_t>(i * 3);
    }
    tf::summary::image("sample",
                       tf::constant<std::uint8_t>(std::span<const std::uint8_t>(pixels),
                                                  std::array<std::int64_t, 4>{2, 4, 5, 3}),
                       1);
    std::vector<float> values(100);
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = static_cast<float>(i);
    }
    tf::summary::histogram("weights", tf::constant<float>(values), 1);
    tf::summary::text("note", "hello **tensorboard**", 1);
    std::vector<float> wave(100);
    for (std::size_t i = 0; i < wave.size(); ++i) {
      wave[i] = static_cast<float>(0.5 * std::sin(2 * std::numbers::pi * 440.0 * i / 8000.0));
    }
    tf::summary::audio(
        "tone",
        tf::constant<float>(std::span<const float>(wave), std::array<std::int64_t, 3>{1, 100, 1}),
        8000, 1);
    tf::summary::graph(*f.concrete_functions().at(0));
    tf::summary::trace_export("model_trace", 0, {.profiler_outdir = run});
  }
  writer.close();
  std::cout << "wrote " << writer.path().string() << "\n";
  return 0;
}
