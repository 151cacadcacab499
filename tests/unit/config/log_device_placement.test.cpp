// tf::debugging::set_log_device_placement prints TensorFlow's line for each op on stderr,
// and nothing once off.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <unistd.h>

#include <tapeflow/config.hpp>
#include <tapeflow/tapeflow.hpp>

namespace test_config_log_device_placement {
namespace tf = tapeflow;

// What `run` writes to stderr.
template <class Run>
std::string stderr_of(Run&& run) {
  std::fflush(stderr);
  std::string const path = "log_device_placement.txt";
  int const saved = dup(fileno(stderr));
  REQUIRE(std::freopen(path.c_str(), "w", stderr) != nullptr);
  run();
  std::fflush(stderr);
  dup2(saved, fileno(stderr));
  close(saved);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("set_log_device_placement prints each op's device as TensorFlow does") {
  auto a = tf::constant<float>({1.0f, 2.0f});
  CHECK_FALSE(tf::debugging::get_log_device_placement());
  std::string const logged = stderr_of([&] {
    tf::debugging::set_log_device_placement(true);
    auto b = tf::exp(a * a);
    tf::debugging::set_log_device_placement(false);
    CHECK(b.numpy().size() == 2);
  });
  CHECK(logged ==
        "Executing op Mul in device /job:localhost/replica:0/task:0/device:CPU:0\n"
        "Executing op Exp in device /job:localhost/replica:0/task:0/device:CPU:0\n");
  CHECK(stderr_of([&] { (void)tf::exp(a); }).empty());
}

}  // namespace test_config_log_device_placement
