// tf::config's rules and messages, checked against what TensorFlow 2.21 does on a CPU-only
// machine. CTest runs each case in its own process, so each starts uninitialized.
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/backend/linked_platforms.hpp>
#include <tapeflow/config.hpp>

namespace test_config_config {
namespace tf = tapeflow;
namespace config = tf::config;

template <class T>
std::string printed(const T& value) {
  std::ostringstream os;
  os << value;
  return os.str();
}

config::PhysicalDevice cpu0() { return config::list_physical_devices("CPU").at(0); }

TEST_CASE("physical devices print as TensorFlow prints them", "[config]") {
  auto gpus = config::list_physical_devices("GPU");
  auto cpus = config::list_physical_devices("CPU");
  CHECK(gpus.empty());  // no GPU backend is linked into the unit tests
  CHECK(tf::backend::registered_platforms().size() == 1);  // the built-in CPU one
  CHECK(printed(gpus) + " " + printed(cpus) ==
        "[] [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]");
  CHECK(config::list_physical_devices() == cpus);
  CHECK(config::list_physical_devices("FOO").empty());
  CHECK(config::get_visible_devices() == cpus);
  CHECK(printed(config::LogicalDeviceConfiguration{.memory_limit = 5}) ==
        "LogicalDeviceConfiguration(memory_limit=5, experimental_priority=None, "
        "experimental_device_ordinal=None)");
}

TEST_CASE("two logical CPUs on one physical CPU", "[config]") {
  config::set_logical_device_configuration(cpu0(), {{}, {}});
  CHECK(config::get_logical_device_configuration(cpu0()).size() == 2);
  auto logical = config::list_logical_devices("CPU");
  CHECK(printed(logical) ==
        "[LogicalDevice(name='/device:CPU:0', device_type='CPU'), "
        "LogicalDevice(name='/device:CPU:1', device_type='CPU')]");
  CHECK(config::list_logical_devices() == logical);
  CHECK(config::list_logical_devices("GPU").empty());
}

TEST_CASE("without configuration there is one logical CPU", "[config]") {
  CHECK(config::get_logical_device_configuration(cpu0()).empty());
  CHECK(printed(config::list_logical_devices()) ==
        "[LogicalDevice(name='/device:CPU:0', device_type='CPU')]");
}

TEST_CASE("bad configurations are invalid_argument in TensorFlow's words", "[config]") {
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const tf::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no invalid_argument");
  };
  CHECK(message([] {
          config::set_logical_device_configuration(cpu0(), {{.memory_limit = 1024}});
        }) == "Setting memory limit on CPU virtual devices is currently not supported");
  CHECK(message([] {
          config::set_logical_device_configuration({"/physical_device:XPU:0", "XPU"}, {{}});
        }) ==
        "Unrecognized device: PhysicalDevice(name='/physical_device:XPU:0', "
        "device_type='XPU')");
  CHECK(message([] {
          config::set_logical_device_configuration({"/physical_device:CPU:7", "CPU"}, {{}});
        }) ==
        "Unrecognized device: PhysicalDevice(name='/physical_device:CPU:7', "
        "device_type='CPU')");
  CHECK(message([] {
          config::set_visible_devices({{"/physical_device:CPU:3", "CPU"}}, "CPU");
        }) ==
        "Unrecognized device: PhysicalDevice(name='/physical_device:CPU:3', "
        "device_type='CPU')");
  CHECK(message([] { config::set_visible_devices({cpu0()}, "GPU"); }) ==
        "Unrecognized device: PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')");
  CHECK(message([] { config::experimental::set_memory_growth(cpu0(), true); }) ==
        "Cannot set memory growth on non-GPU and non-Pluggable devices");
  CHECK(message([] {
          config::set_logical_device_configuration(cpu0(), {});
        }).find("needs at least one LogicalDeviceConfiguration") != std::string::npos);
  CHECK(message([] { config::threading::set_intra_op_parallelism_threads(-1); }) ==
        "intra_op_parallelism_threads must be >= 0, got -1");
  // Nothing was changed by the failed calls.
  CHECK(config::get_logical_device_configuration(cpu0()).empty());
  CHECK_THROWS_AS(config::experimental::get_memory_growth(cpu0()), tf::not_found);
}

TEST_CASE("virtual devices and memory growth conflict", "[config]") {
  config::set_logical_device_configuration(cpu0(), {{}, {}});
  CHECK_THROWS_WITH(config::experimental::set_memory_growth(cpu0(), true),
                    "Cannot set memory growth on device when virtual devices configured");
}

TEST_CASE("settings freeze when the runtime initializes but identical ones pass", "[config]") {
  config::set_logical_device_configuration(cpu0(), {{}, {}});
  config::set_visible_devices(config::list_physical_devices("GPU"), "GPU");  // [] while free
  CHECK(config::list_logical_devices().size() == 2);                         // initializes
  // The identical settings again: accepted silently, as TensorFlow does.
  config::set_logical_device_configuration(cpu0(), {{}, {}});
  config::set_visible_devices({cpu0()}, "CPU");
  config::set_visible_devices({}, "GPU");
  CHECK_THROWS_MATCHES(config::set_logical_device_configuration(cpu0(), {{}}),
                       tf::failed_precondition,
                       Catch::Message("Virtual devices cannot be modified after being "
                                      "initialized"));
  CHECK_THROWS_MATCHES(config::set_visible_devices({}, "CPU"), tf::failed_precondition,
                       Catch::Message("Visible devices cannot be modified after being "
                                      "initialized"));
  CHECK_THROWS_MATCHES(config::threading::set_intra_op_parallelism_threads(2),
                       tf::failed_precondition,
                       Catch::Message("Intra op parallelism cannot be modified after "
                                      "initialization."));
  CHECK_THROWS_MATCHES(config::threading::set_inter_op_parallelism_threads(2),
                       tf::failed_precondition,
                       Catch::Message("Inter op parallelism cannot be modified after "
                                      "initialization."));
  // Soft placement may change at any time.
  config::set_soft_device_placement(false);
  CHECK_FALSE(config::get_soft_device_placement());
  CHECK(config::list_logical_devices().size() == 2);
}

TEST_CASE("hiding every CPU fails at initialization", "[config]") {
  config::set_visible_devices({}, "CPU");
  CHECK(config::get_visible_devices().empty());
  CHECK_THROWS_MATCHES(config::list_logical_devices(), tf::not_found,
                       Catch::Message("No CPU devices are available in this process"));
}

TEST_CASE("intra-op threads size the CPU kernels' pool", "[config]") {
  CHECK(config::threading::get_intra_op_parallelism_threads() == 0);
  CHECK(config::threading::get_inter_op_parallelism_threads() == 0);
  config::threading::set_intra_op_parallelism_threads(1);
  config::threading::set_inter_op_parallelism_threads(3);
  CHECK(config::threading::get_intra_op_parallelism_threads() == 1);
  CHECK(config::threading::get_inter_op_parallelism_threads() == 3);
  CHECK(tf::backend::cpu::ThreadPool::global().num_threads() == 1);
  // The pool starting initializes the runtime.
  CHECK_THROWS_AS(config::threading::set_intra_op_parallelism_threads(1), tf::failed_precondition);
  CHECK_THROWS_AS(config::set_logical_device_configuration(cpu0(), {{}, {}}),
                  tf::failed_precondition);
}

TEST_CASE("TensorFlow 2.0's experimental names", "[config]") {
  auto cpus = config::experimental::list_physical_devices("CPU");
  config::experimental::set_virtual_device_configuration(
      cpus.at(0), {config::experimental::VirtualDeviceConfiguration{}, {}});
  CHECK(config::list_logical_devices().size() == 2);
}

}  // namespace test_config_config
