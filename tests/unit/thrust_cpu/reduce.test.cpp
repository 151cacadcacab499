// The CUDA backend's reduction (backends/cuda/reduce_outputs.hpp) run by Thrust's C++ system
// (and its OpenMP system where the build has OpenMP) against tf::reduce_* on the CPU: the
// same functor and index arithmetic the GPU runs, so every CI run tests them without a GPU.
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include <thrust/system/cpp/execution_policy.h>
#if TAPEFLOW_TEST_THRUST_OMP
#include <thrust/system/omp/execution_policy.h>
#endif

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "../../../backends/cuda/reduce_outputs.hpp"

namespace test_thrust_cpu_reduce {
namespace tf = tapeflow;
namespace cuda = tapeflow::backend::cuda;

template <class T, std::size_t R = 4>
tf::Tensor<T, R> random_input(unsigned seed,
                              const std::array<std::int64_t, R>& dims = {3, 4, 5, 6}) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> dist(-50, 50);
  auto t = tf::Tensor<T, R>::uninitialized(dims);
  for (T& v : t.mutable_values()) {
    v = static_cast<T>(dist(engine)) / static_cast<T>(std::is_integral_v<T> ? 1 : 8);
  }
  return t;
}

// Partials of chunked levels, kept until the reduction is done.
template <class T>
struct HostScratch {
  std::vector<std::vector<T>> taken;
  T* operator()(std::int64_t count) {
    taken.emplace_back(static_cast<std::size_t>(count));
    return taken.back().data();
  }
};

// Runs the Thrust reduction over `axes` of x with `policy`.
template <cuda::ReduceOp Op, class T, std::size_t R, class Policy>
std::vector<T> thrust_reduce(Policy&& policy, const tf::Tensor<T, R>& x,
                             std::initializer_list<int> axes) {
  std::array<bool, R> reduced{};
  for (int a : axes) {
    reduced[static_cast<std::size_t>(a)] = true;
  }
  auto const dims = x.dims();
  cuda::ReduceIndex const index = cuda::make_reduce_index(dims, reduced);
  std::vector<T> out(static_cast<std::size_t>(index.outputs));
  HostScratch<T> scratch;
  cuda::reduce_outputs<Op>(policy, x.data(), out.data(), index, scratch);
  return out;
}

template <class T, class Policy>
void check_all_kinds(Policy&& policy) {
  auto const x = random_input<T>(7);
  // Leading, trailing, middle, split (0 and 2), all but one, and all axes.
  auto check = [&](std::initializer_list<int> axes, auto&& sum, auto&& mean, auto&& max,
                   auto&& min) {
    INFO("axes of size " << axes.size() << " starting at " << *axes.begin());
    // Sums of multiples of 1/8 are exact in any order; a mean divides once on either side.
    CHECK(thrust_reduce<cuda::ReduceOp::sum>(policy, x, axes) == sum.numpy());
    CHECK(thrust_reduce<cuda::ReduceOp::mean>(policy, x, axes) == mean.numpy());
    CHECK(thrust_reduce<cuda::ReduceOp::max>(policy, x, axes) == max.numpy());
    CHECK(thrust_reduce<cuda::ReduceOp::min>(policy, x, axes) == min.numpy());
  };
  check({0}, tf::reduce_sum(x, 0), tf::reduce_mean(x, 0), tf::reduce_max(x, 0),
        tf::reduce_min(x, 0));
  check({3}, tf::reduce_sum(x, 3), tf::reduce_mean(x, 3), tf::reduce_max(x, 3),
        tf::reduce_min(x, 3));
  check({1, 2}, tf::reduce_sum(x, {1, 2}), tf::reduce_mean(x, {1, 2}), tf::reduce_max(x, {1, 2}),
        tf::reduce_min(x, {1, 2}));
  check({0, 2}, tf::reduce_sum(x, {0, 2}), tf::reduce_mean(x, {0, 2}), tf::reduce_max(x, {0, 2}),
        tf::reduce_min(x, {0, 2}));
  check({0, 1, 3}, tf::reduce_sum(x, {0, 1, 3}), tf::reduce_mean(x, {0, 1, 3}),
        tf::reduce_max(x, {0, 1, 3}), tf::reduce_min(x, {0, 1, 3}));
  check({0, 1, 2, 3}, tf::reduce_sum(x, {0, 1, 2, 3}), tf::reduce_mean(x, {0, 1, 2, 3}),
        tf::reduce_max(x, {0, 1, 2, 3}), tf::reduce_min(x, {0, 1, 2, 3}));
}

TEST_CASE("reduction index merges adjacent axes of one kind and drops axes of size 1") {
  std::array<std::int64_t, 5> const dims{2, 3, 1, 4, 5};
  std::array<bool, 5> const reduced{false, false, true, true, false};
  cuda::ReduceIndex const index = cuda::make_reduce_index(dims, reduced);
  CHECK(index.outputs == 30);
  CHECK(index.reduced_count == 4);
  REQUIRE(index.kept_rank == 2);  // [2, 3] merged, then 5
  CHECK(index.kept_dims[0] == 6);
  CHECK(index.kept_strides[0] == 20);
  CHECK(index.kept_dims[1] == 5);
  CHECK(index.kept_strides[1] == 1);
  REQUIRE(index.reduced_rank == 1);  // the size-1 axis dropped
  CHECK(index.reduced_dims[0] == 4);
  CHECK(index.reduced_strides[0] == 5);
  // Nothing reduced: every output is one input element.
  std::array<bool, 5> const none{};
  cuda::ReduceIndex const copy = cuda::make_reduce_index(dims, none);
  CHECK(copy.outputs == 120);
  CHECK(copy.reduced_count == 1);
  CHECK(copy.reduced_rank == 0);
}

TEST_CASE("the CUDA reduction under Thrust's C++ system equals the CPU kernels") {
  check_all_kinds<float>(thrust::cpp::par);
  check_all_kinds<double>(thrust::cpp::par);
  check_all_kinds<std::int32_t>(thrust::cpp::par);
  check_all_kinds<std::int64_t>(thrust::cpp::par);
}

TEST_CASE("long reductions go in chunked levels and still equal the CPU kernels") {
  // 39,200 and 100,000 elements per output: two and three levels of partials.
  auto const bias = random_input<float, 4>(8, {50, 28, 28, 4});
  CHECK(thrust_reduce<cuda::ReduceOp::sum>(thrust::cpp::par, bias, {0, 1, 2}) ==
        tf::reduce_sum(bias, {0, 1, 2}).numpy());
  CHECK(thrust_reduce<cuda::ReduceOp::mean>(thrust::cpp::par, bias, {0, 1, 2}) ==
        tf::reduce_mean(bias, {0, 1, 2}).numpy());
  CHECK(thrust_reduce<cuda::ReduceOp::max>(thrust::cpp::par, bias, {0, 1, 2}) ==
        tf::reduce_max(bias, {0, 1, 2}).numpy());
  auto const flat = random_input<std::int64_t, 2>(9, {100000, 3});
  CHECK(thrust_reduce<cuda::ReduceOp::sum>(thrust::cpp::par, flat, {0}) ==
        tf::reduce_sum(flat, 0).numpy());
  CHECK(thrust_reduce<cuda::ReduceOp::min>(thrust::cpp::par, flat, {0, 1}) ==
        tf::reduce_min(flat, {0, 1}).numpy());
  auto const middle = random_input<double, 3>(10, {3, 1000, 7});  // a strided reduced axis
  CHECK(thrust_reduce<cuda::ReduceOp::mean>(thrust::cpp::par, middle, {1}) ==
        tf::reduce_mean(middle, 1).numpy());
}

TEST_CASE("the CUDA reduction's mean over an empty axis is NaN, as on the CPU") {
  auto const x = tf::Tensor<float, 2>::uninitialized({3, 0});
  std::array<bool, 2> const reduced{false, true};
  auto const dims = x.dims();
  cuda::ReduceIndex const index = cuda::make_reduce_index(dims, reduced);
  std::vector<float> out(3);
  HostScratch<float> scratch;
  cuda::reduce_outputs<cuda::ReduceOp::mean>(thrust::cpp::par, x.data(), out.data(), index,
                                             scratch);
  auto const cpu = tf::reduce_mean(x, 1).numpy();
  REQUIRE(cpu.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(std::isnan(out[i]));
    CHECK(std::isnan(cpu[i]));
  }
}

#if TAPEFLOW_TEST_THRUST_OMP
TEST_CASE("the CUDA reduction under Thrust's OpenMP system equals the CPU kernels") {
  check_all_kinds<float>(thrust::omp::par);
  check_all_kinds<std::int64_t>(thrust::omp::par);
}
#else
TEST_CASE("the CUDA reduction under Thrust's OpenMP system equals the CPU kernels") {
  WARN("Thrust OpenMP system not tested: this build has no OpenMP (or is a TSan build)");
}
#endif

}  // namespace test_thrust_cpu_reduce
