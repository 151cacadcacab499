// The Eigen kernel bodies (ops/detail/*_kernels.hpp) called directly, against scalar loops:
// what tapeflow::instantiations compiles for programs built with TAPEFLOW_PRECOMPILED.
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/ops/detail/elementwise_kernels.hpp>
#include <tapeflow/ops/detail/reduce_kernels.hpp>
#include <tapeflow/ops/detail/resource_apply_kernels.hpp>
#include <tapeflow/ops/detail/softmax_kernels.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/softmax.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_eigen_kernels {

namespace tf = tapeflow;
namespace td = tapeflow::detail;

TEST_CASE("unary and binary runs, including a broadcast value") {
  const std::vector<float> x = {-1.5f, 0.0f, 2.0f};
  std::vector<float> y(3);
  td::unary_run<float, float, tf::ops::Exp::ElementRule>(y.data(), x.data(), 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(y[i] == Approx(std::exp(x[i])));
  }
  const std::vector<float> b = {10.0f};
  td::binary_run<float, float, tf::ops::Sub::ElementRule>(y.data(), x.data(), true, b.data(), false,
                                                          3);
  CHECK(y == std::vector<float>{-11.5f, -10.0f, -8.0f});
  bool out[3];
  td::binary_run<bool, float, tf::ops::Less::ElementRule>(out, b.data(), false, x.data(), true, 3);
  CHECK_FALSE(out[0]);
  CHECK_FALSE(out[2]);
}

// Runs of every length around the packet widths (whole packets, then one more packet over the
// last inputs), apart and in place.
TEST_CASE("unary runs of every length up to 70 apart and in place") {
  for (std::int64_t n = 1; n <= 70; ++n) {
    std::vector<float> x(static_cast<std::size_t>(n));
    std::vector<double> xd(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = -3.0f + 0.37f * static_cast<float>(i);
      xd[i] = x[i];
    }
    std::vector<float> y(x.size() + 1, -7.0f);  // one past the end must stay untouched
    td::unary_run<float, float, tf::ops::Tanh::ElementRule>(y.data(), x.data(), n);
    std::vector<float> in_place = x;
    td::unary_run<float, float, tf::ops::Tanh::ElementRule>(in_place.data(), in_place.data(), n);
    td::unary_run<double, double, tf::ops::Exp::ElementRule>(xd.data(), xd.data(), n);
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("n = " << n << " element " << i);
      CHECK(y[i] == Approx(std::tanh(x[i])).margin(1e-6));
      CHECK(in_place[i] == y[i]);
      CHECK(xd[i] == Approx(std::exp(static_cast<double>(x[i]))).epsilon(1e-12));
    }
    CHECK(y.back() == -7.0f);
  }
  // A single value takes Eigen's scalar path, as in TensorFlow: exp(1) is std::exp(1).
  double one = 1.0;
  td::unary_run<double, double, tf::ops::Exp::ElementRule>(&one, &one, 1);
  CHECK(one == std::exp(1.0));
  // Runs of at least a packet put every element through packets (exp's differ from std::exp in
  // the last bits), so where such runs split a tensor changes nothing: 1030 values whole, and
  // in runs of 9 (Eigen's scalar loop would take each run's last value alone).
  std::vector<double> v(1030);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = std::sin(static_cast<double>(i)) * 5.0;
  }
  std::vector<double> whole(v.size());
  std::vector<double> split(v.size());
  td::unary_run<double, double, tf::ops::Exp::ElementRule>(whole.data(), v.data(), 1030);
  for (std::int64_t start = 0; start < 1030; start += 9) {
    const std::int64_t len = start + 18 > 1030 ? 1030 - start : 9;  // the last run 13 long
    td::unary_run<double, double, tf::ops::Exp::ElementRule>(split.data() + start, v.data() + start,
                                                             len);
    start += len - 9;
  }
  CHECK(whole == split);
}

TEST_CASE("middle-axis reductions over [rows, red, inner]") {
  const std::vector<double> in = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};  // [2, 3, 2]
  std::vector<double> out(4);
  td::reduce_middle_run<tf::ops::ReduceKind::sum>(in.data(), out.data(), 2, 3, 2);
  CHECK(out == std::vector<double>{9, 12, 27, 30});
  td::reduce_middle_run<tf::ops::ReduceKind::max>(in.data(), out.data(), 2, 3, 2);
  CHECK(out == std::vector<double>{5, 6, 11, 12});
  td::reduce_middle_run<tf::ops::ReduceKind::min>(in.data(), out.data(), 2, 3, 2);
  CHECK(out == std::vector<double>{1, 2, 7, 8});
}

TEST_CASE("softmax and log_softmax along a contiguous and a strided axis") {
  const std::vector<float> x = {1, 2, 3, 0, 0, 0};
  std::vector<float> y(6);
  td::nn_impl::softmax_kernel<false>(x.data(), y.data(), 2, 3, 1);  // rows of 3
  const float e = std::exp(1.0f) + std::exp(2.0f) + std::exp(3.0f);
  CHECK(y[0] == Approx(std::exp(1.0f) / e));
  CHECK(y[3] == Approx(1.0f / 3));
  td::nn_impl::softmax_kernel<true>(x.data(), y.data(), 1, 2, 3);  // axis of 2, stride 3
  CHECK(y[0] == Approx(1.0f - std::log(std::exp(1.0f) + 1.0f)));
  CHECK(y[3] == Approx(-std::log(std::exp(1.0f) + 1.0f)));
}

TEST_CASE("optimizer blocks follow their formulas") {
  const std::vector<float> old = {1.0f, -2.0f}, g = {0.5f, -1.0f};
  std::vector<float> v(2), m = {0.1f, 0.2f}, s = {0.3f, 0.4f}, accum = {0.0f, 1.0f};
  td::gradient_descent_block(2, old.data(), v.data(), g.data(), 0.1f);
  CHECK(v[0] == Approx(0.95f));
  td::keras_momentum_block(2, old.data(), v.data(), accum.data(), g.data(), 0.1f, 0.9f, false);
  CHECK(accum[1] == Approx(0.9f * 1.0f + 0.1f));
  CHECK(v[1] == Approx(-2.0f + accum[1]));
  td::adam_block(2, old.data(), v.data(), m.data(), s.data(), g.data(), 0.9f, 0.999f, 0.01f, 1e-7f);
  const float m0 = 0.9f * 0.1f + 0.1f * 0.5f, s0 = 0.999f * 0.3f + 0.001f * 0.25f;
  CHECK(m[0] == Approx(m0));
  CHECK(v[0] == Approx(1.0f - 0.01f * m0 / (std::sqrt(s0) + 1e-7f)));
  std::vector<float> ms = {0.5f, 0.5f};
  td::rmsprop_block(2, old.data(), v.data(), ms.data(), g.data(), 0.01f, 0.9f, 1e-7f);
  CHECK(ms[0] == Approx(0.9f * 0.5f + 0.1f * 0.25f));
  CHECK(v[0] == Approx(1.0f - 0.01f * 0.5f / std::sqrt(ms[0] + 1e-7f)));
}

}  // namespace test_ops_eigen_kernels
