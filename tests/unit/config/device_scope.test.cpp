// tf::DeviceSpec parsing and tf::device placement, checked against TensorFlow 2.21 on a CPU-only
// machine (two logical CPUs where the case says so).
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/config.hpp>

namespace test_config_device_scope {
namespace tf = tapeflow;
namespace config = tf::config;

std::string canonical(const char* spec) { return tf::DeviceSpec::from_string(spec).to_string(); }

void two_logical_cpus() {
  config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0), {{}, {}});
}

TEST_CASE("device strings parse as TensorFlow parses them", "[config]") {
  CHECK(canonical("/gpu:1") == "/device:GPU:1");
  CHECK(canonical("/device:CPU:0") == "/device:CPU:0");
  CHECK(canonical("/job:localhost/replica:0/task:0/cpu:0") ==
        "/job:localhost/replica:0/task:0/device:CPU:0");
  CHECK(canonical("GPU:0") == "/device:GPU:0");
  CHECK(canonical("/device:GPU:*") == "/device:GPU:*");
  CHECK(canonical("/job:worker/task:3") == "/job:worker/task:3");
  CHECK(canonical("") == "");
  auto spec = tf::DeviceSpec::from_string("/CPU");
  CHECK(spec.device_type == "CPU");
  CHECK_FALSE(spec.device_index.has_value());
}

TEST_CASE("malformed device strings name the part", "[config]") {
  CHECK_THROWS_MATCHES(tf::DeviceSpec::from_string("/foo:0"), tf::invalid_argument,
                       Catch::Message("Unknown attribute 'foo' is encountered while parsing the "
                                      "device spec: '/foo:0'."));
  CHECK_THROWS_MATCHES(tf::DeviceSpec::from_string("gpu0"), tf::invalid_argument,
                       Catch::Message("Unknown attribute 'gpu0' is encountered while parsing the "
                                      "device spec: 'gpu0'."));
  CHECK_THROWS_MATCHES(tf::DeviceSpec::from_string("/cpu:x"), tf::invalid_argument,
                       Catch::Message("Invalid device index 'x' while parsing the device spec: "
                                      "'/cpu:x'."));
  CHECK_THROWS_MATCHES(tf::DeviceSpec::from_string("/cpu:0/gpu:0"), tf::invalid_argument,
                       Catch::Message("Multiple device types are not allowed while parsing the "
                                      "device spec: /cpu:0/gpu:0."));
  CHECK_THROWS_AS(tf::DeviceSpec::from_string("/task:-1"), tf::invalid_argument);
  CHECK_THROWS_AS(tf::device("/cpu:99999999999"), tf::invalid_argument);
}

TEST_CASE("scopes nest and merge field by field", "[config]") {
  two_logical_cpus();
  CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:CPU:0");
  {
    auto outer = tf::device("/cpu:1");
    CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:CPU:1");
    {
      auto inner = tf::device("/job:localhost");
      CHECK(config::current_device_spec()->to_string() == "/job:localhost/device:CPU:1");
      CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:CPU:1");
      {
        auto cleared = tf::device(nullptr);
        CHECK_FALSE(config::current_device_spec().has_value());
        CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:CPU:0");
      }
    }
    {
      auto full = tf::device("/job:localhost/replica:0/task:0/device:CPU:0");
      CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:CPU:0");
    }
  }
  CHECK_FALSE(config::current_device_spec().has_value());
}

TEST_CASE("soft placement falls back as TensorFlow does", "[config]") {
  two_logical_cpus();
  CHECK(config::get_soft_device_placement());
  {
    auto scope = tf::device("/GPU:0");  // no GPU: the CPU
    CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:CPU:0");
  }
  {
    auto scope = tf::device("/CPU:5");  // no such CPU: the first one
    CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:CPU:0");
  }
}

TEST_CASE("without soft placement a missing device is invalid_argument", "[config]") {
  two_logical_cpus();
  config::set_soft_device_placement(false);
  {
    auto scope = tf::device("/GPU:0");
    CHECK_THROWS_MATCHES(
        config::current_device(), tf::invalid_argument,
        Catch::Message("Could not satisfy device specification "
                       "'/job:localhost/replica:0/task:0/device:GPU:0'. enable_soft_placement=0. "
                       "Supported device types [CPU]. All available devices "
                       "[/job:localhost/replica:0/task:0/device:CPU:0, "
                       "/job:localhost/replica:0/task:0/device:CPU:1]."));
  }
  {
    auto scope = tf::device("/CPU:1");
    CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:CPU:1");
  }
}

TEST_CASE("entering a scope initializes the runtime", "[config]") {
  { auto scope = tf::device("/cpu:0"); }
  CHECK_THROWS_AS(two_logical_cpus(), tf::failed_precondition);
}

}  // namespace test_config_device_scope
