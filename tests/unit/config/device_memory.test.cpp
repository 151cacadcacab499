// Tensors in device memory, without a GPU: the scrambled test device keeps its bytes XOR-ed,
// so every correct value below proves the data went through the device memory interface
// (copies onto the device for its kernels, host copies for host readers and CPU fallbacks).
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <scrambled_device.hpp>

#include <tapeflow/config.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/tapeflow.hpp>

namespace test_config_device_memory {
namespace tf = tapeflow;
namespace config = tf::config;

const std::string xpu0 = "/job:localhost/replica:0/task:0/device:XPU:0";
const std::string xpu1 = "/job:localhost/replica:0/task:0/device:XPU:1";
const std::string cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";

void reset_traffic() {
  scrambled::traffic.to_host = 0;
  scrambled::traffic.from_host = 0;
  scrambled::traffic.on_device = 0;
}

TEST_CASE("a constant made under a device scope lives in that device's memory", "[config]") {
  scrambled::install();
  auto scope = tf::device("/device:XPU:0");
  auto x = tf::constant<float>({1.5f, -2.0f, 3.25f});
  CHECK(x.device() == xpu0);
  CHECK(config::experimental::get_memory_info("/device:XPU:0").current == 12);
  reset_traffic();
  CHECK(x.numpy() == std::vector<float>{1.5f, -2.0f, 3.25f});
  CHECK(x(2) == 3.25f);
  CHECK(scrambled::traffic.to_host == 0);  // the host copy written when it was filled serves
  {
    auto scratch = tf::zeros<float>({100});
    CHECK(config::experimental::get_memory_info("/device:XPU:0").current == 412);
  }
  CHECK(config::experimental::get_memory_info("/device:XPU:0").current == 12);
  CHECK(config::experimental::get_memory_info("/device:XPU:0").peak == 412);
  config::experimental::reset_memory_stats("/device:XPU:0");
  CHECK(config::experimental::get_memory_info("/device:XPU:0").peak == 12);
}

TEST_CASE("the device's kernels get their inputs copied onto it", "[config]") {
  scrambled::install();
  auto a = tf::constant<float>({1.0f, 2.0f, 3.0f});  // on CPU:0
  auto b = tf::constant<float>({4.0f, 5.0f, 6.0f});
  auto scope = tf::device("/device:XPU:0");
  reset_traffic();
  int const before = scrambled::calls<tf::ops::Mul>;
  auto c = a * b;
  CHECK(scrambled::calls<tf::ops::Mul> == before + 1);
  CHECK(c.device() == xpu0);
  CHECK(scrambled::traffic.from_host == 2);
  CHECK(scrambled::traffic.to_host == 0);
  auto d = c + c;  // device to device: no traffic
  CHECK(scrambled::traffic.from_host == 2);
  CHECK(d.numpy() == std::vector<float>{8.0f, 20.0f, 36.0f});
  CHECK(scrambled::traffic.to_host == 1);
  CHECK(d.numpy() == std::vector<float>{8.0f, 20.0f, 36.0f});
  CHECK(scrambled::traffic.to_host == 1);  // the host copy is kept
}

TEST_CASE("an op without a device kernel reads device tensors through host copies", "[config]") {
  scrambled::install();
  auto scope = tf::device("/device:XPU:0");
  auto a = tf::constant<float>({1.0f, 2.0f});
  auto b = a * a;  // on the device, no host copy yet
  reset_traffic();
  auto c = b - a;  // Sub has no XPU kernel: CPU:0 under soft placement
  CHECK(c.device() == cpu0);
  CHECK(scrambled::traffic.to_host == 1);
  CHECK(c.numpy() == std::vector<float>{0.0f, 2.0f});
  auto m = tf::reduce_sum(b);
  CHECK(m.item() == 5.0f);
}

TEST_CASE("forward-style ops share device buffers without copies", "[config]") {
  scrambled::install();
  auto scope = tf::device("/device:XPU:0");
  auto a = tf::constant<float>({1.0f, 2.0f, 3.0f, 4.0f});
  auto b = a * a;
  reset_traffic();
  auto r = tf::reshape(b, std::array<std::int64_t, 2>{2, 2});
  CHECK(r.device() == xpu0);
  CHECK(scrambled::traffic.to_host + scrambled::traffic.from_host + scrambled::traffic.on_device ==
        0);
  CHECK(r(1, 1) == 16.0f);
}

TEST_CASE("host writes to a device tensor reach the device before its kernels read it",
          "[config]") {
  scrambled::install();
  auto scope = tf::device("/device:XPU:0");
  auto a = tf::zeros<float>({3});
  auto b = a + a;
  float* p = b.mutable_data();  // unique: written in place through its host copy
  p[0] = 1.0f;
  p[1] = 2.0f;
  p[2] = 3.0f;
  CHECK(b.device() == xpu0);
  reset_traffic();
  auto c = b * b;
  CHECK(scrambled::traffic.from_host == 1);
  CHECK(c.numpy() == std::vector<float>{1.0f, 4.0f, 9.0f});
}

TEST_CASE("copies between devices go through the right memory", "[config]") {
  scrambled::install();
  tf::Tensor<float, 1> on0;
  {
    auto scope = tf::device("/device:XPU:0");
    on0 = tf::constant<float>({1.0f, -1.0f}) * tf::constant<float>({2.0f, 2.0f});
  }
  reset_traffic();
  {
    auto scope = tf::device("/device:XPU:1");
    auto on1 = on0 + on0;
    CHECK(on1.device() == xpu1);
    CHECK(scrambled::traffic.on_device == 2);  // each operand, XPU:0 to XPU:1 on the devices
    CHECK(scrambled::traffic.from_host == 0);
    CHECK(on1.numpy() == std::vector<float>{4.0f, -4.0f});
  }
  {
    auto scope = tf::device("/cpu:0");
    auto back = tf::identity(on0);
    CHECK(back.device() == cpu0);
    CHECK(back.numpy() == std::vector<float>{2.0f, -2.0f});
  }
}

TEST_CASE("a variable made under a device scope stays there through updates", "[config]") {
  scrambled::install();
  auto scope = tf::device("/device:XPU:0");
  tf::Variable<float, 1> w(tf::constant<float>({1.0f, 2.0f}));
  CHECK(w.value().device() == xpu0);
  auto held = w.value();  // a reader holds the old value: the update copies on the device
  w.assign_add(tf::constant<float>({0.5f, 0.5f}));
  CHECK(w.value().device() == xpu0);
  CHECK(w.value().numpy() == std::vector<float>{1.5f, 2.5f});
  CHECK(held.numpy() == std::vector<float>{1.0f, 2.0f});
  w.assign_sub(tf::constant<float>({1.0f, 1.0f}));  // in place through the host copy
  auto twice = w.value() + w.value();               // the device kernel sees the update
  CHECK(twice.numpy() == std::vector<float>{1.0f, 3.0f});
}

TEST_CASE("gradient descent on the device equals the CPU's", "[config]") {
  scrambled::install();
  auto train = [](const char* device) {
    auto scope = tf::device(device);
    tf::Variable<float, 1> w(tf::constant<float>({0.5f, -1.0f, 2.0f}));
    auto x = tf::constant<float>({1.0f, 2.0f, 3.0f});
    for (int step = 0; step < 5; ++step) {
      tf::GradientTape tape;
      auto loss = tf::reduce_sum(w * x * w + x);
      auto grad = tape.gradient(loss, w);
      w.assign_sub(*grad * tf::constant<float>({0.1f, 0.1f, 0.1f}));
    }
    CHECK(w.value().device() == std::string("/job:localhost/replica:0/task:0/device:") +
                                    (device[1] == 'c' ? "CPU:0" : "XPU:0"));
    return w.value().numpy();
  };
  auto const on_cpu = train("/cpu:0");
  auto const on_xpu = train("/device:XPU:0");
  REQUIRE(on_xpu.size() == on_cpu.size());
  for (std::size_t i = 0; i < on_cpu.size(); ++i) {
    CHECK(on_xpu[i] == Approx(on_cpu[i]).epsilon(1e-6));
  }
}

TEST_CASE("an optimizer update runs where its variable lives, in that device's memory",
          "[config]") {
  scrambled::install();
  tf::Variable<float, 1> w = [] {
    auto scope = tf::device("/device:XPU:0");
    return tf::Variable<float, 1>(tf::constant<float>({0.5f, -1.0f, 2.0f}));
  }();
  auto const g = tf::constant<float>({1.0f, 2.0f, -4.0f});
  auto const lr = tf::Tensor<float, 0>(0.25f);
  auto update = [&] {
    (void)tf::detail::execute(tf::ops::ResourceApplyGradientDescent{tf::AnyVariable(w)}, lr, g);
  };
  int const before = scrambled::calls<tf::ops::ResourceApplyGradientDescent>.load();
  update();  // no scope: placed on the variable's device, updated in place there
  CHECK(scrambled::calls<tf::ops::ResourceApplyGradientDescent>.load() == before + 1);
  CHECK(w.value().device() == xpu0);
  CHECK(w.value().numpy() == std::vector<float>{0.25f, -1.5f, 3.0f});
  auto held = w.value();  // a reader holds the value: the update writes a fresh buffer
  update();
  CHECK(held.numpy() == std::vector<float>{0.25f, -1.5f, 3.0f});
  CHECK(w.value().numpy() == std::vector<float>{0.0f, -2.0f, 4.0f});
  CHECK(w.value().device() == xpu0);
  // A CPU variable's update stays on the CPU even under the device's scope.
  tf::Variable<float, 1> c(tf::constant<float>({1.0f, 1.0f, 1.0f}));
  auto scope = tf::device("/device:XPU:0");
  (void)tf::detail::execute(tf::ops::ResourceApplyGradientDescent{tf::AnyVariable(c)}, lr, g);
  CHECK(scrambled::calls<tf::ops::ResourceApplyGradientDescent>.load() ==
        before + 2);  // both above
  CHECK(c.value().numpy() == std::vector<float>{0.75f, 0.5f, 2.0f});
  CHECK(c.device() == "/job:localhost/replica:0/task:0/device:CPU:0");
}

TEST_CASE("strings asked onto a device stay in host memory", "[config]") {
  scrambled::install();
  auto scope = tf::device("/device:XPU:0");
  auto s = tf::constant<std::string>({"a", "bc"});
  CHECK(s.device() == cpu0);
  CHECK(s(1) == "bc");
}

TEST_CASE("prefetch_to_device copies a pipeline's batches into device memory", "[config]") {
  scrambled::install();
  auto ds = tf::data::range(6) |
            tf::data::map([](const tf::Tensor<std::int64_t, 0>& i) { return tf::cast<float>(i); }) |
            tf::data::batch(2) | tf::data::experimental::prefetch_to_device("/device:XPU:1", 1);
  std::vector<float> seen;
  for (const auto& batch : ds) {
    CHECK(batch.device() == xpu1);
    auto doubled = batch + batch;  // the device's kernel reads the copy
    for (float v : doubled.numpy()) {
      seen.push_back(v / 2);
    }
  }
  CHECK(seen == std::vector<float>{0, 1, 2, 3, 4, 5});
}

}  // namespace test_config_device_memory
