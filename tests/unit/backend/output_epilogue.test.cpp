// The output-epilogue contract (Note [Output epilogues]): a kernel that takes an offered
// epilogue calls it once on every element of its output, after the element is final, in ranges
// that start at multiples of the epilogue's unit; kernels that cannot leave it offered.
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/backend/cpu/output_epilogue.hpp>
#include <tapeflow/ops/nn/conv2d.hpp>
#include <tapeflow/ops/nn/depthwise_conv2d.hpp>
#include <tapeflow/ops/nn/relu6.hpp>
#include <tapeflow/ops/random/random.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_backend_output_epilogue {

namespace tf = tapeflow;
namespace cpu = tf::backend::cpu;

namespace {
// What the kernel showed the epilogue: each range, and the output's values in it at that time.
struct Recorder {
  std::mutex mutex;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  std::vector<float> seen;
  std::vector<int> calls;  // per element

  explicit Recorder(std::int64_t elements)
      : seen(static_cast<std::size_t>(elements)), calls(static_cast<std::size_t>(elements)) {}

  static void run(const void* context, void* output, std::int64_t start, std::int64_t n) {
    auto& self = *const_cast<Recorder*>(static_cast<const Recorder*>(context));
    const std::lock_guard lock(self.mutex);
    self.ranges.emplace_back(start, n);
    for (std::int64_t e = start; e < start + n; ++e) {
      self.seen[static_cast<std::size_t>(e)] = static_cast<const float*>(output)[e];
      ++self.calls[static_cast<std::size_t>(e)];
    }
  }
};

// Runs `op` with an epilogue offered for `elements` outputs; returns whether it was taken.
template <class Op>
bool offer(std::int64_t elements, std::int64_t unit, Op op) {
  Recorder recorder(elements);
  const cpu::OutputEpilogue epilogue{&Recorder::run, &recorder, elements, unit};
  bool taken = false;
  tf::Tensor<float, 4> y;
  {
    const cpu::OfferedEpilogue offered(epilogue);
    y = op();
    taken = offered.taken();
  }
  if (taken) {
    REQUIRE(y.num_elements() == elements);
    for (const auto& [start, n] : recorder.ranges) {
      CHECK(start % unit == 0);
      CHECK(n > 0);
    }
    CHECK(recorder.calls == std::vector<int>(static_cast<std::size_t>(elements), 1));
    const auto values = y.values();
    CHECK(recorder.seen == std::vector<float>(values.begin(), values.end()));
  }
  return taken;
}
}  // namespace

TEST_CASE("convolution kernels take an offered epilogue and honour its contract",
          "[backend][epilogue]") {
  const auto x = tf::random::uniform<float>({4, 30, 30, 24}, {.seed = 1});
  const auto w3 = tf::random::uniform<float>({3, 3, 24, 40}, {.seed = 2});
  const auto w1 = tf::random::uniform<float>({1, 1, 24, 144}, {.seed = 3});
  const auto dw = tf::random::uniform<float>({3, 3, 24, 1}, {.seed = 4});
  for (std::int64_t unit : {1, 16, 48, 720}) {
    INFO("unit " << unit);
    CHECK(offer(4 * 30 * 30 * 40, unit, [&] { return tf::nn::conv2d(x, w3, 1, "SAME"); }));
    CHECK(offer(4 * 30 * 30 * 144, unit, [&] { return tf::nn::conv2d(x, w1, 1, "VALID"); }));
    CHECK(offer(4 * 15 * 15 * 24, unit, [&] {
      return tf::nn::depthwise_conv2d(x, dw, {.strides = 2, .padding = "SAME"});
    }));
  }
}

TEST_CASE("kernels that cannot take an epilogue leave it offered", "[backend][epilogue]") {
  const auto x = tf::random::uniform<float>({2, 8, 8, 1024}, {.seed = 5});
  // A pointwise convolution whose packed filter outgrows the L2 block runs the GEMM.
  const auto wide = tf::random::uniform<float>({1, 1, 1024, 256}, {.seed = 6});
  CHECK_FALSE(offer(2 * 8 * 8 * 256, 16, [&] { return tf::nn::conv2d(x, wide, 1, "VALID"); }));
  // An epilogue offered for another output size.
  const auto w = tf::random::uniform<float>({3, 3, 1024, 8}, {.seed = 7});
  CHECK_FALSE(offer(12345, 16, [&] { return tf::nn::conv2d(x, w, 1, "SAME"); }));
  // Ops whose kernels do not say they take one.
  CHECK_FALSE(offer(x.num_elements(), 16, [&] { return tf::nn::relu6(x); }));
}

}  // namespace test_backend_output_epilogue
