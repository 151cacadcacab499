// The CUDA backend's pooling functors and filter layout rewrites (backends/cuda/pool.hpp,
// filter_layout.hpp) run by Thrust's C++ system against the CPU kernels: MaxPool, AvgPool
// and their gradients with overlapping, strided and padded windows must equal the CPU's
// (exactly, the same sums in the same order; average pooling's gradient within rounding, as
// either side's multiply-add may be fused), so every CI run tests the GPU's index logic.
#include "../../../backends/cuda/pool.hpp"

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>
#include <thrust/system/cpp/execution_policy.h>

#include <tapeflow/tapeflow.hpp>

#include "../../../backends/cuda/filter_layout.hpp"

namespace test_thrust_cpu_pool {
namespace tf = tapeflow;
namespace cuda = tapeflow::backend::cuda;
using D4 = std::array<std::int64_t, 4>;

tf::Tensor<float, 4> random_input(const D4& dims, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> dist(-20, 20);  // ties included
  auto t = tf::Tensor<float, 4>::uninitialized(dims);
  for (float& v : t.mutable_values()) {
    v = static_cast<float>(dist(engine)) / 4.0f;
  }
  return t;
}

cuda::PoolGeometry geometry(const D4& dims, tf::nn::Size2D k, tf::nn::Size2D s,
                            tf::nn::Padding padding) {
  tf::ops::PoolWindow window;
  window.ksize = k;
  window.strides = s;
  window.padding = padding;
  auto const w = tf::detail::nn_impl::pool_geometry("test", window, dims);
  return {w.n, w.h, w.w, w.c, w.kh, w.kw, w.sh, w.sw, w.oh, w.ow, w.pad_top, w.pad_left};
}

TEST_CASE("the CUDA pooling functors under Thrust's C++ system equal the CPU kernels") {
  struct Case {
    D4 dims;
    tf::nn::Size2D k, s;
    tf::nn::Padding padding;
  };
  using tf::nn::Padding;
  for (const Case& c : {Case{{2, 8, 8, 3}, 2, 2, Padding::valid},
                        Case{{2, 9, 11, 4}, 3, 1, Padding::same},  // overlapping
                        Case{{1, 9, 11, 2}, {3, 2}, {2, 1}, Padding::valid},
                        Case{{3, 7, 5, 2}, 3, 2, Padding::same},     // padding both sides
                        Case{{1, 4, 4, 1}, 5, 3, Padding::same}}) {  // window beyond input
    INFO("input " << tf::Shape(c.dims).to_string() << " window " << c.k.to_string() << " strides "
                  << c.s.to_string());
    auto const x = random_input(c.dims, 3);
    auto const g = geometry(c.dims, c.k, c.s, c.padding);
    std::int64_t const pooled = g.n * g.oh * g.ow * g.c;
    std::int64_t const input = x.num_elements();
    std::vector<float> out(static_cast<std::size_t>(pooled));
    std::vector<float> grad(static_cast<std::size_t>(input));

    tf::Variable<float, 4> v(x);
    {
      tf::GradientTape tape;
      auto y = tf::nn::max_pool2d(v.value(), c.k, c.s, c.padding);
      auto dy = random_input(y.dims(), 4);
      auto dx = tape.gradient(tf::reduce_sum(y * dy), v);
      cuda::transform_indices(thrust::cpp::par, pooled, out.data(),
                              cuda::MaxPoolOutput<float>{x.data(), g});
      CHECK(out == y.numpy());
      cuda::transform_indices(thrust::cpp::par, input, grad.data(),
                              cuda::MaxPoolGradInput<float>{x.data(), dy.data(), g});
      CHECK(grad == dx->numpy());
    }
    {
      tf::GradientTape tape;
      auto y = tf::nn::avg_pool2d(v.value(), c.k, c.s, c.padding);
      auto dy = random_input(y.dims(), 5);
      auto dx = tape.gradient(tf::reduce_sum(y * dy), v);
      cuda::transform_indices(thrust::cpp::par, pooled, out.data(),
                              cuda::AvgPoolOutput<float>{x.data(), g});
      CHECK(out == y.numpy());
      cuda::transform_indices(thrust::cpp::par, input, grad.data(),
                              cuda::AvgPoolGradInput<float>{dy.data(), g});
      // dy * (1 / count) summed: the compiler may fuse either side's multiply-add
      auto const cpu = dx->numpy();
      REQUIRE(grad.size() == cpu.size());
      for (std::size_t i = 0; i < cpu.size(); ++i) {
        CHECK(grad[i] == Approx(cpu[i]).epsilon(1e-6).margin(1e-6));
      }
    }
  }
}

TEST_CASE("filters round-trip between HWIO and cuDNN's KRSC layout") {
  auto const hwio = random_input({3, 2, 4, 5}, 6);  // [kh, kw, in, out]
  cuda::FilterDims const d{3, 2, 4, 5};
  std::vector<float> krsc(static_cast<std::size_t>(hwio.num_elements()));
  cuda::transform_filter(thrust::cpp::par, hwio.num_elements(), krsc.data(),
                         cuda::HwioToKrsc<float>{hwio.data(), d});
  // KRSC is HWIO with the output axis moved first.
  CHECK(krsc == tf::transpose(hwio, {3, 0, 1, 2}).numpy());
  std::vector<float> back(krsc.size());
  cuda::transform_filter(thrust::cpp::par, hwio.num_elements(), back.data(),
                         cuda::KrscToHwio<float>{krsc.data(), d});
  CHECK(back == hwio.numpy());
}

}  // namespace test_thrust_cpu_pool
