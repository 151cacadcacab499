// tf::config with tapeflow::cuda linked: the GPUs the driver reports, their logical devices and
// their memory settings. The first case also runs without a GPU (an empty list, no error).
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/config.hpp>
#include <tapeflow/tapeflow.hpp>

#include "gpu_available.hpp"

namespace test_cuda_platform {
namespace tf = tapeflow;
namespace config = tf::config;

TEST_CASE("GPUs are listed as the driver reports them", "[gpu]") {
  auto gpus = config::list_physical_devices("GPU");
  REQUIRE(static_cast<int>(gpus.size()) == tf::backend::cuda::device_count());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    CHECK(gpus[i].name == "/physical_device:GPU:" + std::to_string(i));
    CHECK(gpus[i].device_type == "GPU");
    CHECK_FALSE(config::experimental::get_memory_growth(gpus[i]));
  }
  CHECK(config::list_physical_devices("CPU").size() == 1);
  CHECK(config::list_logical_devices("GPU").size() == gpus.size());
  std::cout << "GPUs: " << gpus << " (CUDA runtime " << tf::backend::cuda::runtime_version()
            << ")\n";
}

TEST_CASE("two logical GPUs on one card", "[gpu]") {
  if (!tapeflow_test::gpu_available("two logical GPUs on one card")) {
    return;
  }
  auto gpu = config::list_physical_devices("GPU").at(0);
  CHECK_THROWS_MATCHES(config::set_logical_device_configuration(gpu, {{}}), tf::invalid_argument,
                       Catch::Message("Setting memory limit is required for GPU virtual devices"));
  config::set_logical_device_configuration(gpu, {{.memory_limit = 1024}, {.memory_limit = 1024}});
  auto logical = config::list_logical_devices("GPU");
  REQUIRE(logical.size() == 2);
  CHECK(logical[1].name == "/device:GPU:1");
  // The default device is the first GPU; scopes place on either.
  CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:GPU:0");
  {
    auto scope = tf::device("/gpu:1");
    CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:GPU:1");
  }
  {
    auto scope = tf::device("/cpu:0");
    CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:CPU:0");
  }
  auto infos = config::detail_context::logical_device_infos();
  CHECK(infos.back().memory_limit == 1024);
  CHECK(infos.back().physical_index == 0);
}

TEST_CASE("memory growth and logical devices exclude each other", "[gpu]") {
  if (!tapeflow_test::gpu_available("memory growth and logical devices exclude each other")) {
    return;
  }
  auto gpu = config::list_physical_devices("GPU").at(0);
  config::experimental::set_memory_growth(gpu, true);
  CHECK(config::experimental::get_memory_growth(gpu));
  CHECK_THROWS_AS(config::set_logical_device_configuration(gpu, {{.memory_limit = 512}}),
                  tf::invalid_argument);
  CHECK(config::list_logical_devices("GPU").size() == 1);
  CHECK_THROWS_MATCHES(config::experimental::set_memory_growth(gpu, false), tf::failed_precondition,
                       Catch::Message("Physical devices cannot be modified after being "
                                      "initialized"));
  config::experimental::set_memory_growth(gpu, true);  // identical: accepted
}

TEST_CASE("logical GPUs must fit on their card", "[gpu]") {
  if (!tapeflow_test::gpu_available("logical GPUs must fit on their card")) {
    return;
  }
  auto gpu = config::list_physical_devices("GPU").at(0);
  config::set_logical_device_configuration(gpu, {{.memory_limit = 1 << 30}});  // 1 PiB
  CHECK_THROWS_AS(config::list_logical_devices(), tf::resource_exhausted);
}

TEST_CASE("ops without a GPU kernel fall back to the CPU or fail without soft placement", "[gpu]") {
  if (!tapeflow_test::gpu_available("ops without a GPU kernel fall back to the CPU")) {
    return;
  }
  auto a = tf::constant<float>({1, 2});
  {
    auto scope = tf::device("/GPU:0");
    auto b = a * 3.0f;  // Mul has a GPU kernel
    CHECK(b.device() == "/job:localhost/replica:0/task:0/device:GPU:0");
    auto c =
        tf::reverse(b, {0});  // ReverseV2 has none: soft placement (the default) runs it on CPU:0
    CHECK(c.device() == "/job:localhost/replica:0/task:0/device:CPU:0");
    CHECK(c.numpy() == std::vector<float>{6.0f, 3.0f});
  }
  config::set_soft_device_placement(false);
  auto scope = tf::device("/GPU:0");
  CHECK_THROWS_MATCHES(tf::reverse(a, {0}), tf::invalid_argument,
                       Catch::Message("Cannot assign a device for operation ReverseV2: Could not "
                                      "satisfy explicit device specification "
                                      "'/job:localhost/replica:0/task:0/device:GPU:0' because no "
                                      "supported kernel for GPU devices is available."));
}

}  // namespace test_cuda_platform
