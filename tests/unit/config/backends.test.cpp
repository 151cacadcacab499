// The Backend concept and a second backend: the CPU backend's instances (one per logical CPU,
// with their own memory accounting and thread share), a counting test backend whose kernels the
// executor picks from the op's device, and get_memory_info over both.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <counting_backend.hpp>
#include <gradient_check.hpp>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/backend/cpu/cpu_backend.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/config.hpp>
#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/tapeflow.hpp>

namespace test_config_backends {
namespace tf = tapeflow;
namespace config = tf::config;

const std::string counting0 = "/job:localhost/replica:0/task:0/device:COUNTING:0";
const std::string cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const std::string cpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";

TEST_CASE("the CPU backend models the Backend concept with its own accounting", "[config]") {
  STATIC_REQUIRE(tf::backend::Backend<tf::backend::Cpu>);
  tf::backend::Cpu device;
  CHECK(device.memory_info() == tf::backend::MemoryInfo{0, 0});
  void* a = device.allocate(1000);
  void* b = device.allocate(24);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 64 == 0);
  CHECK(device.memory_info() == tf::backend::MemoryInfo{1024, 1024});
  std::vector<unsigned char> host(24, 7);
  device.copy_host_to_device(b, host.data(), 24, device.default_stream());
  device.copy_device_to_device(a, b, 24, device.default_stream());
  std::vector<unsigned char> back(24, 0);
  device.copy_device_to_host(back.data(), a, 24, device.default_stream());
  tf::backend::Cpu::Event done;
  device.record(done, device.default_stream());
  device.wait(device.default_stream(), done);
  device.synchronize(device.default_stream());
  CHECK(back == host);
  device.deallocate(a, 1000);
  CHECK(device.memory_info() == tf::backend::MemoryInfo{24, 1024});
  device.reset_peak();
  CHECK(device.memory_info() == tf::backend::MemoryInfo{24, 24});
  device.deallocate(b, 24);
  CHECK(device.memory_info().current == 0);
}

TEST_CASE("a process with CPU:0 alone reports zeros as TensorFlow's CPU does", "[config]") {
  auto kept = tf::zeros<float>({1000});
  CHECK(config::experimental::get_memory_info("CPU:0") == config::MemoryInfo{0, 0});
  CHECK(config::experimental::get_memory_info("/device:CPU:0") == config::MemoryInfo{0, 0});
  config::experimental::reset_memory_stats("CPU:0");
}

TEST_CASE("each logical CPU accounts its own tensors (get_memory_info)", "[config]") {
  config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0), {{}, {}});
  auto const before0 = config::experimental::get_memory_info("CPU:0");
  auto const before1 = config::experimental::get_memory_info("/device:CPU:1");
  {
    auto scope = tf::device("/cpu:1");
    auto big = tf::zeros<float>({1000});  // 64-byte header + 4000 bytes of elements
    CHECK(big.device() == cpu1);
    auto const during = config::experimental::get_memory_info("CPU:1");
    CHECK(during.current == before1.current + 4064);
    CHECK(during.peak >= during.current);
    CHECK(config::experimental::get_memory_info("CPU:0").current == before0.current);
  }
  auto const after = config::experimental::get_memory_info("CPU:1");
  CHECK(after.current == before1.current);
  CHECK(after.peak >= before1.current + 4064);
  config::experimental::reset_memory_stats("CPU:1");
  CHECK(config::experimental::get_memory_info("CPU:1").peak == after.current);
  // TensorFlow's errors for a name without type and index, and for a missing device.
  CHECK_THROWS_MATCHES(config::experimental::get_memory_info("bogus"), tf::invalid_argument,
                       Catch::Message("Failed parsing device name: 'bogus'. Note a valid device "
                                      "string should at least contain a device type and a device "
                                      "index, like \"GPU:0\"."));
  CHECK_THROWS_MATCHES(config::experimental::reset_memory_stats("GPU:0"), tf::invalid_argument,
                       Catch::Message("No matching devices found for 'GPU:0'"));
  CHECK_THROWS_MATCHES(config::experimental::get_memory_info("CPU:5"), tf::invalid_argument,
                       Catch::Message("No matching devices found for 'CPU:5'"));
}

TEST_CASE("each logical CPU's ops get its share of the intra-op threads", "[config]") {
  config::threading::set_intra_op_parallelism_threads(4);
  config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0), {{}, {}});
  REQUIRE(config::list_logical_devices("CPU").size() == 2);
  namespace devices = tf::detail::devices;
  CHECK(devices::host(0).thread_budget() == 2);
  CHECK(devices::host(1).thread_budget() == 2);
  auto& pool = tf::backend::cpu::ThreadPool::global();
  REQUIRE(pool.pool_threads() == 4);
  // CPU:0 ops keep the whole pool (the thread's default); an op on CPU:1 gets its share, and
  // a parallel_for there runs on at most that many threads.
  CHECK(pool.num_threads() == 4);
  {
    devices::AllocationScope const op_on_cpu1(1);
    CHECK(pool.num_threads() == 2);
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::int64_t chunks = 0;
    pool.parallel_for(1 << 16, 1, [&](std::int64_t, std::int64_t) {
      std::lock_guard lock(mutex);
      threads.insert(std::this_thread::get_id());
      ++chunks;
    });
    CHECK(chunks == 2);
    CHECK(threads.size() <= 2);
  }
  CHECK(pool.num_threads() == 4);
  // Results do not depend on the share: a parallel matmul on CPU:1 equals CPU:0's.
  auto a = tf::random::uniform<float>({64, 256}, {.seed = 1});
  auto b = tf::random::uniform<float>({256, 64}, {.seed = 2});
  auto on0 = tf::matmul(a, b);
  auto scope = tf::device("/cpu:1");
  auto on1 = tf::matmul(a, b);
  CHECK(on1.device() == cpu1);
  CHECK(on1.numpy() == on0.numpy());
}

TEST_CASE("a registered backend's kernels run the ops placed on its devices", "[config]") {
  counting::install();
  REQUIRE(config::list_physical_devices("COUNTING").size() == 1);
  auto const logical = config::list_logical_devices("COUNTING");
  REQUIRE(logical.size() == 1);
  CHECK(logical[0].name == "/device:COUNTING:0");
  auto a = tf::constant<float>({1, 2, 3});
  auto b = tf::constant<float>({4, 5, 6});
  int const muls = counting::calls<tf::ops::Mul>;
  int const adds = counting::calls<tf::ops::Add>;
  auto scope = tf::device("/device:COUNTING:0");
  auto c = a * b + a;
  CHECK(c.device() == counting0);
  CHECK(c.numpy() == std::vector<float>{5, 12, 21});
  CHECK(counting::calls<tf::ops::Mul> == muls + 1);
  CHECK(counting::calls<tf::ops::Add> == adds + 1);
  // Ops that only relabel buffers run anywhere: identity copies onto the device.
  auto d = tf::identity(a);
  CHECK(d.device() == counting0);
  // Memory accounting comes with the device.
  CHECK(config::experimental::get_memory_info("/device:COUNTING:0").current > 0);
}

TEST_CASE("an op the backend has no kernel for falls back or fails without soft placement",
          "[config]") {
  counting::install();
  auto a = tf::constant<float>({1, 2, 3});
  {
    auto scope = tf::device("/device:COUNTING:0");
    auto d = a - a;  // Sub: no counting kernel
    CHECK(d.device() == cpu0);
    CHECK(d.numpy() == std::vector<float>{0, 0, 0});
  }
  config::set_soft_device_placement(false);
  auto scope = tf::device("/device:COUNTING:0");
  CHECK_THROWS_MATCHES(a - a, tf::invalid_argument,
                       Catch::Message("Cannot assign a device for operation Sub: Could not "
                                      "satisfy explicit device specification '" +
                                      counting0 +
                                      "' because no supported kernel for COUNTING devices is "
                                      "available."));
  CHECK((a * a).device() == counting0);
}

TEST_CASE("a dtype the backend's kernel does not take falls back like a missing kernel",
          "[config]") {
  counting::install();  // Mul and AddV2 kernels for float32 only
  auto i = tf::constant<std::int32_t>({1, 2, 3});
  auto f = tf::constant<float>({1, 2, 3});
  int const muls = counting::calls<tf::ops::Mul>;
  {
    auto scope = tf::device("/device:COUNTING:0");
    auto ii = i * i;
    CHECK(ii.device() == cpu0);
    CHECK(ii.numpy() == std::vector<std::int32_t>{1, 4, 9});
    CHECK(counting::calls<tf::ops::Mul> == muls);
    CHECK((f * f).device() == counting0);
    CHECK(counting::calls<tf::ops::Mul> == muls + 1);
  }
  config::set_soft_device_placement(false);
  auto scope = tf::device("/device:COUNTING:0");
  CHECK_THROWS_MATCHES(i * i, tf::invalid_argument,
                       Catch::Message("Cannot assign a device for operation Mul: Could not "
                                      "satisfy explicit device specification '" +
                                      counting0 +
                                      "' because no supported kernel for COUNTING devices is "
                                      "available."));
  CHECK((f * f).device() == counting0);
}

TEST_CASE("gradients through the counting backend equal the CPU's", "[config]") {
  counting::install();
  auto x = tf::Variable<float, 1>(tf::constant<float>({0.5f, -1.5f, 2.0f}));
  auto y = tf::constant<float>({3.0f, 1.0f, -2.0f});
  auto loss_of = [&] { return tf::reduce_sum(x * y * x + y); };
  tf::GradientTape cpu_tape;
  auto cpu_loss = loss_of();
  auto cpu_grad = *cpu_tape.gradient(cpu_loss, x);
  int const muls = counting::calls<tf::ops::Mul>;
  auto scope = tf::device("/device:COUNTING:0");
  tf::GradientTape tape;
  auto loss = loss_of();
  auto grad = *tape.gradient(loss, x);
  CHECK(loss.item() == cpu_loss.item());
  CHECK(grad.numpy() == cpu_grad.numpy());
  CHECK(grad.numpy() == std::vector<float>{3.0f, -3.0f, -8.0f});  // 2 x y
  CHECK(counting::calls<tf::ops::Mul> > muls + 2);  // the backward pass's products ran there too
}

TEST_CASE("a tf::function traced for the counting device runs its kernels", "[config]") {
  counting::install();
  auto f = tf::function(
      [](const tf::Tensor<float, 1>& a, const tf::Tensor<float, 1>& b) { return a * b + b; });
  auto a = tf::constant<float>({1, 2});
  auto b = tf::constant<float>({3, 4});
  auto on_cpu = f(a, b);
  auto scope = tf::device("/device:COUNTING:0");
  int const adds = counting::calls<tf::ops::Add>;
  auto there = f(a, b);
  f(a, b);
  CHECK(there.device() == counting0);
  CHECK(there.numpy() == on_cpu.numpy());
  CHECK(counting::calls<tf::ops::Add> >= adds + 2);  // per call, not fused into CPU kernels
}

TEST_CASE("prefetch_to_device delivers elements on the device", "[config]") {
  config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0), {{}, {}});
  auto ds = tf::data::range(6) | tf::data::map([](const tf::Tensor<std::int64_t, 0>& i) {
              return std::pair{tf::cast<float>(i), tf::data::Features{{"id", i}}};
            }) |
            tf::data::batch(2) | tf::data::experimental::prefetch_to_device("/cpu:1", 2);
  std::vector<float> seen;
  for (const auto& [x, features] : ds) {
    CHECK(x.device() == cpu1);
    CHECK(features["id"].device() == cpu1);
    for (float v : x.numpy()) {
      seen.push_back(v);
    }
  }
  CHECK(seen == std::vector<float>{0, 1, 2, 3, 4, 5});
  // Already there: shared, not copied; a device that does not exist is TensorFlow's error.
  auto on0 = tf::data::range(2) | tf::data::experimental::prefetch_to_device("/cpu:0");
  for (const auto& i : on0) {
    CHECK(i.device() == cpu0);
  }
  config::set_soft_device_placement(false);
  CHECK_THROWS_WITH(tf::data::range(2) | tf::data::experimental::prefetch_to_device("/cpu:3"),
                    Catch::StartsWith("Could not satisfy device specification"));
}

}  // namespace test_config_backends
