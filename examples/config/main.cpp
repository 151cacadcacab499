// The seeds' tf.config section: list the machine's GPUs and CPUs, restrict the program to the
// first two GPUs, then either let GPU memory grow on demand (--memory_growth) or split one
// device into logical devices (two virtual GPUs of 2 GiB each on GPU:0, as the seed does; on a
// machine without GPUs, two logical CPUs, which is how multi-device code is tested there).
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <vector>

#include <tapeflow/config.hpp>

#include "common/argparse.hpp"

namespace tf = tapeflow;

int main(int argc, char** argv) {
  examples::ArgumentParser parser(
      "config",
      "Runs the tf.config section: lists physical devices, makes at most two GPUs visible,\n"
      "then enables memory growth or creates logical devices, and prints the logical devices.\n"
      "GPUs appear when the program is built with tapeflow::cuda and a driver is present.");
  auto& memory_growth = parser.add_argument("--memory_growth", false,
                                            "allocate GPU memory on demand instead of splitting");
  auto& logical = parser.add_argument("--logical_devices", 2, "logical devices to create");
  auto& memory_limit =
      parser.add_argument("--memory_limit", std::int64_t{2048}, "MiB for each logical GPU");
  parser.parse_args(argc, argv);
  return examples::run(parser, [&] {
    // [seed:config begin]
    // [snippet:list_devices]
    auto gpus = tf::config::list_physical_devices("GPU");
    auto cpus = tf::config::list_physical_devices("CPU");
    std::cout << gpus << " " << cpus << "\n";
    // [snippet:list_devices]

    // Use only the first two GPUs (CUDA_VISIBLE_DEVICES=0,1 does the same from outside).
    tf::config::set_visible_devices(
        {gpus.begin(), gpus.begin() + std::min<std::ptrdiff_t>(2, std::ssize(gpus))}, "GPU");
    if (memory_growth) {
      for (const auto& gpu : gpus) {
        tf::config::experimental::set_memory_growth(gpu, true);
      }
    } else if (!gpus.empty()) {
      // Two "virtual GPUs" of 2 GiB each on GPU:0.
      tf::config::set_logical_device_configuration(
          gpus[0], std::vector<tf::config::LogicalDeviceConfiguration>(
                       static_cast<std::size_t>(logical), {.memory_limit = memory_limit}));
    } else {
      // No GPU: logical CPUs take no memory limit.
      tf::config::set_logical_device_configuration(
          cpus[0],
          std::vector<tf::config::LogicalDeviceConfiguration>(static_cast<std::size_t>(logical)));
    }
    auto devices = tf::config::list_logical_devices(gpus.empty() ? "CPU" : "GPU");
    std::cout << devices << "\n";
    std::cout << "Number of devices: " << devices.size() << "\n";
    // [seed:config end]
    return 0;
  });
}
