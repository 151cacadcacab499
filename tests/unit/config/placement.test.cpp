// Placement on logical devices: tensors know their device, ops follow their inputs or the
// tf::device scope, copies go to the op's device, variables stay where they were created,
// gradients and checkpoints cross devices, tf::function traces per device, and a platform
// without kernels falls back to the CPU under soft placement (a second platform slotting in
// without touching any op). Two logical CPUs unless the case says otherwise.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/backend/platform.hpp>
#include <tapeflow/config.hpp>
#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/tapeflow.hpp>
#include <tapeflow/train/checkpoint.hpp>

namespace test_config_placement {
namespace tf = tapeflow;
namespace config = tf::config;

const std::string cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const std::string cpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";

void two_logical_cpus() {
  config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0), {{}, {}});
  REQUIRE(config::list_logical_devices().size() == 2);
}

TEST_CASE("tensors know their device and ops follow inputs or the scope", "[config]") {
  two_logical_cpus();
  auto a = tf::constant<float>({1, 2, 3});
  CHECK(a.device() == cpu0);
  tf::Tensor<float, 1> b;
  {
    auto scope = tf::device("/cpu:1");
    b = tf::constant<float>({10, 20, 30});
    CHECK(b.device() == cpu1);
    auto c = a + b;  // under the scope: on CPU:1 whatever the inputs' devices
    CHECK(c.device() == cpu1);
    CHECK(c.numpy() == std::vector<float>{11, 22, 33});
  }
  auto d = b * 2.0f;  // no scope: the first input's device
  CHECK(d.device() == cpu1);
  auto e = a * b;
  CHECK(e.device() == cpu0);
  {
    auto scope = tf::device("/device:CPU:0");
    auto f = tf::reduce_sum(b);
    CHECK(f.device() == cpu0);
    CHECK(f.item() == 60.0f);
  }
  CHECK(tf::Tensor<float, 1>().device().empty());
  // Core's table holds what tf::config initialized: ids 0 and 1 are the two logical CPUs.
  CHECK(tf::detail::devices::name(0) == cpu0);
  CHECK(tf::detail::devices::name(1) == cpu1);
  CHECK(tf::detail::devices::name(2).empty());
  CHECK(tf::detail::devices::name(tf::detail::devices::none).empty());
}

TEST_CASE("identity under a scope copies and sharing ops keep the device", "[config]") {
  two_logical_cpus();
  tf::Tensor<float, 2> x;
  {
    auto scope = tf::device("/cpu:1");
    x = tf::constant<float>({{1, 2}, {3, 4}});
  }
  auto reshaped = tf::reshape(x, {4});  // shares the buffer: stays on CPU:1
  CHECK(reshaped.device() == cpu1);
  {
    auto scope = tf::device("/cpu:0");
    auto copied = tf::identity(x);
    CHECK(copied.device() == cpu0);
    CHECK(copied.numpy() == x.numpy());
    CHECK(x.device() == cpu1);  // the source is untouched
  }
}

TEST_CASE("variables stay on the device they were created on", "[config]") {
  two_logical_cpus();
  auto init = tf::constant<float>({1, 2});  // on CPU:0
  auto make = [&] {
    auto scope = tf::device("/cpu:1");
    return tf::Variable<float, 1>(init);  // created under the scope: copied to CPU:1
  };
  auto v = make();
  CHECK(v.device() == cpu1);
  CHECK(init.device() == cpu0);
  v.assign(tf::constant<float>({5, 6}));  // a CPU:0 value
  CHECK(v.device() == cpu1);
  v.assign_add(tf::constant<float>({1, 1}));
  CHECK(v.device() == cpu1);
  CHECK(v.value().device() == cpu1);
  CHECK(v.value().numpy() == std::vector<float>{6, 7});
  {
    auto scope = tf::device("/cpu:0");
    v.assign(tf::constant<float>({0, 1}));
    CHECK(v.device() == cpu1);
    auto doubled = v * 2.0f;
    CHECK(doubled.device() == cpu0);
    CHECK(doubled.numpy() == std::vector<float>{0, 2});
  }
}

TEST_CASE("gradients across two logical CPUs equal the one-device gradients", "[config]") {
  two_logical_cpus();
  auto w_init = tf::constant<float>({0.5f, -0.75f, 0.25f});
  auto x_init = tf::constant<float>({1.0f, 2.0f, -3.0f});
  auto gradients = [&](bool split) {
    tf::Variable<float, 1> w(w_init);
    tf::Variable<float, 1> x(x_init);
    tf::GradientTape tape;
    tf::Tensor<float, 1> y;
    {
      auto scope = tf::device(split ? "/cpu:1" : "/cpu:0");
      y = tf::tanh(x.value() * w.value());
    }
    tf::Tensor<float, 0> loss;
    {
      auto scope = tf::device("/cpu:0");
      loss = tf::reduce_sum(y * y);
    }
    CHECK(y.device() == (split ? cpu1 : cpu0));
    auto grads = tape.gradient(loss, std::vector{&w, &x});
    return std::vector<std::vector<float>>{grads[0]->numpy(), grads[1]->numpy()};
  };
  auto one = gradients(false);
  auto two = gradients(true);
  CHECK(one == two);
  // d/dw sum(tanh(xw)^2) = 2 tanh(xw) (1 - tanh(xw)^2) x
  for (std::size_t i = 0; i < 3; ++i) {
    float const xw = x_init.numpy()[i] * w_init.numpy()[i];
    float const t = std::tanh(xw);
    CHECK(two[0][i] == Approx(2 * t * (1 - t * t) * x_init.numpy()[i]).epsilon(1e-4));
  }
}

TEST_CASE("a checkpoint of a variable on one device restores onto another", "[config]") {
  two_logical_cpus();
  namespace fs = std::filesystem;
  fs::remove_all("placed_ckpt");
  std::string path;
  {
    auto scope = tf::device("/cpu:1");
    tf::Variable<float, 2> saved(tf::constant<float>({{1.5f, -2.0f}, {3.0f, 4.25f}}));
    CHECK(saved.device() == cpu1);
    tf::train::Checkpoint ckpt({{"v", saved}});
    path = ckpt.save("placed_ckpt/c");
  }
  tf::Variable<float, 2> restored(tf::zeros<float>({2, 2}));  // on CPU:0
  tf::train::Checkpoint back({{"v", restored}});
  {
    auto scope = tf::device("/cpu:1");  // the restore itself runs elsewhere
    back.restore(path).assert_consumed();
  }
  CHECK(restored.device() == cpu0);
  CHECK(restored.value().numpy() == std::vector<float>{1.5f, -2.0f, 3.0f, 4.25f});
}

TEST_CASE("tf::function traces once per device and explains the retrace", "[config]") {
  two_logical_cpus();
  auto f = tf::function([](const tf::Tensor<float, 1>& x) { return x * 2.0f; });
  auto x = tf::constant<float>({1, 2});
  CHECK(f(x).device() == cpu0);
  {
    auto scope = tf::device("/cpu:1");
    auto y = f(x);
    CHECK(y.device() == cpu1);
    CHECK(y.numpy() == std::vector<float>{2, 4});
    f(x);
  }
  f(x);
  CHECK(f.trace_count() == 2);
  REQUIRE(f.retrace_reasons().size() == 1);
  CHECK(f.retrace_reasons()[0] == "device none -> " + cpu1);
}

// A platform with devices but no kernels (as a GPU platform is until its kernels exist): it
// registers without any op knowing of it, and placement falls back to the CPU.
void register_kernelless_gpu() {
  tf::backend::register_platform(
      {"GPU", [] {
         return std::vector<tf::backend::PlatformDevice>{{"fake", 1 << 30}};
       }});
}

TEST_CASE("soft placement runs ops without a kernel on the device on the CPU", "[config]") {
  register_kernelless_gpu();
  REQUIRE(config::list_physical_devices("GPU").size() == 1);
  auto a = tf::constant<float>({1, 2});
  auto scope = tf::device("/GPU:0");
  CHECK(config::current_device() == "/job:localhost/replica:0/task:0/device:GPU:0");
  auto b = a + 1.0f;
  CHECK(b.device() == cpu0);
  CHECK(b.numpy() == std::vector<float>{2, 3});
}

TEST_CASE("without soft placement such an op is invalid_argument naming op and device",
          "[config]") {
  register_kernelless_gpu();
  config::set_soft_device_placement(false);
  auto a = tf::constant<float>({1, 2});
  {
    auto scope = tf::device("/GPU:0");
    CHECK_THROWS_MATCHES(a + a, tf::invalid_argument,
                         Catch::Message("Cannot assign a device for operation AddV2: Could not "
                                        "satisfy explicit device specification "
                                        "'/job:localhost/replica:0/task:0/device:GPU:0' because "
                                        "no supported kernel for GPU devices is available."));
  }
  {
    auto scope = tf::device("/CPU:7");  // no such device: fails at the op, as TensorFlow does
    CHECK_THROWS_WITH(a * a, Catch::StartsWith("Could not satisfy device specification "
                                               "'/job:localhost/replica:0/task:0/device:CPU:7'"));
  }
  CHECK((a + a).device() == cpu0);  // outside the scopes all is well
}

}  // namespace test_config_placement
