#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/nn/pooling.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_nn_pooling {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

namespace {

using Dims = std::array<std::int64_t, 4>;

struct Case {
  Dims input;
  std::int64_t kh, kw, sh, sw;
  tf::nn::Padding padding;
};

// Naive pooling: max or mean over the window's in-bounds elements.
std::vector<double> reference_pool(Case const& k, std::vector<double> const& x, bool max,
                                   Dims& out_dims) {
  auto [n, h, w, c] = k.input;
  std::int64_t oh = 0, ow = 0, pt = 0, pl = 0;
  if (k.padding == tf::nn::Padding::valid) {
    oh = (h - k.kh) / k.sh + 1;
    ow = (w - k.kw) / k.sw + 1;
  } else {
    oh = (h + k.sh - 1) / k.sh;
    ow = (w + k.sw - 1) / k.sw;
    pt = std::max<std::int64_t>((oh - 1) * k.sh + k.kh - h, 0) / 2;
    pl = std::max<std::int64_t>((ow - 1) * k.sw + k.kw - w, 0) / 2;
  }
  out_dims = {n, oh, ow, c};
  std::vector<double> y;
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t oy = 0; oy < oh; ++oy) {
      for (std::int64_t ox = 0; ox < ow; ++ox) {
        for (std::int64_t ch = 0; ch < c; ++ch) {
          double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
          int count = 0;
          for (std::int64_t ky = 0; ky < k.kh; ++ky) {
            for (std::int64_t kx = 0; kx < k.kw; ++kx) {
              std::int64_t const iy = oy * k.sh - pt + ky;
              std::int64_t const ix = ox * k.sw - pl + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) {
                continue;
              }
              double const v = x[static_cast<std::size_t>(((b * h + iy) * w + ix) * c + ch)];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          }
          y.push_back(max ? acc : acc / count);
        }
      }
    }
  }
  return y;
}

std::vector<Case> const& cases() {
  using P = tf::nn::Padding;
  static std::vector<Case> const all{
      {{2, 6, 6, 3}, 2, 2, 2, 2, P::valid}, {{2, 7, 7, 3}, 2, 2, 2, 2, P::same},
      {{1, 7, 8, 2}, 3, 3, 2, 2, P::same},  {{1, 7, 8, 2}, 3, 3, 2, 2, P::valid},
      {{2, 5, 6, 1}, 3, 2, 1, 1, P::same},  {{1, 9, 9, 4}, 4, 3, 3, 2, P::same},
      {{1, 3, 3, 2}, 5, 5, 1, 1, P::same},  {{3, 28, 28, 8}, 2, 2, 2, 2, P::same},
  };
  return all;
}

std::string describe(Case const& k) {
  return tf::Shape(k.input).to_string() + " ksize " + std::to_string(k.kh) + "x" +
         std::to_string(k.kw) + " strides " + std::to_string(k.sh) + "," + std::to_string(k.sw) +
         " " + std::string(tf::nn::padding_name(k.padding));
}

}  // namespace

TEST_CASE("max_pool2d and avg_pool2d match the definition", "[ops][nn][pooling]") {
  std::uint32_t seed = 1;
  for (auto const& k : cases()) {
    INFO(describe(k));
    auto x = test_data<4>(k.input, seed++);
    for (bool max : {true, false}) {
      Dims dims{};
      auto expected = reference_pool(k, x.numpy(), max, dims);
      auto y = max ? tf::nn::max_pool2d(x, {k.kh, k.kw}, {k.sh, k.sw}, k.padding)
                   : tf::nn::avg_pool2d(x, {k.kh, k.kw}, {k.sh, k.sw}, k.padding);
      REQUIRE(y.dims() == dims);
      for (std::size_t i = 0; i < expected.size(); ++i) {
        CHECK(y.values()[i] == Approx(expected[i]).margin(1e-12));
      }
    }
  }
}

TEST_CASE("pooling by hand", "[ops][nn][pooling]") {
  // 1 x 3 x 3 x 1: SAME 2x2 stride 2 gives 2x2 windows of sizes 4, 2, 2, 1 (pad after only).
  auto x = tf::constant<float, 4>(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  auto m = tf::nn::max_pool2d(x, 2, 2, "SAME");
  CHECK(m.numpy() == std::vector<float>{5, 6, 8, 9});
  auto a = tf::nn::avg_pool2d(x, 2, 2, "SAME");
  CHECK(a.numpy() == std::vector<float>{3, 4.5f, 7.5f, 9});  // not 3, 2.25, 3.75, 2.25
  CHECK(tf::nn::max_pool2d(x, 2, 1, "VALID").numpy() == std::vector<float>{5, 6, 8, 9});
  // Integer max pooling works (no gradient).
  auto xi = tf::constant<std::int32_t, 4>(std::vector<std::int32_t>{-5, -2, -7, -1}, {1, 2, 2, 1});
  CHECK(tf::nn::max_pool2d(xi, 2, 2, "VALID").item() == -1);
}

TEST_CASE("max pool gradient goes to the first maximum", "[ops][nn][pooling]") {
  auto x = tf::constant<double, 4>(std::vector<double>{1, 3, 3, 0}, {1, 2, 2, 1});
  tf::GradientTape tape;
  tape.watch(x);
  auto y = tf::nn::max_pool2d(x, 2, 2, "VALID");
  auto g = tape.gradient(y * 5.0, x);
  CHECK(g->numpy() == std::vector<double>{0, 5, 0, 0});
}

TEST_CASE("max pool gradient of non-overlapping windows", "[ops][nn][pooling]") {
  // Windows with stride >= size take a write-once kernel; MaxPoolGradGrad (the general argmax
  // walk) is its adjoint, so <MaxPoolGrad(dy), g> == <dy, MaxPoolGradGrad(g)> for every g checks
  // that both route each window's gradient to the same (first) maximum. Rounded inputs make
  // ties; 20 float / 11 double channels cover the vector and scalar paths.
  using P = tf::nn::Padding;
  struct Disjoint {
    Dims input;
    std::int64_t k, s;
    P padding;
  };
  std::vector<Disjoint> const all{
      {{2, 6, 6, 20}, 2, 2, P::valid}, {{2, 7, 7, 20}, 2, 2, P::same},    // partial windows
      {{1, 7, 9, 11}, 2, 2, P::valid}, {{1, 8, 7, 20}, 3, 3, P::same},    // uncovered rows
      {{1, 8, 8, 11}, 2, 3, P::valid}, {{3, 28, 28, 32}, 2, 2, P::same},  // gaps; the MNIST shape
  };
  std::uint32_t seed = 90;
  for (auto const& d : all) {
    INFO(tf::Shape(d.input).to_string() + " k " + std::to_string(d.k) + " s " +
         std::to_string(d.s));
    tf::ops::PoolWindow window{d.k, d.s, d.padding};
    auto check = [&](auto x) {
      auto y = tf::detail::execute(tf::ops::MaxPool{window}, x);
      auto dy = tf::cast<typename decltype(x)::value_type>(test_data<4>(y.dims(), seed++));
      auto dx = tf::detail::execute(tf::ops::MaxPoolGrad{window}, x, y, dy);
      for (int trial = 0; trial < 2; ++trial) {
        auto g = tf::cast<typename decltype(x)::value_type>(test_data<4>(d.input, seed++));
        auto gg = tf::detail::execute(tf::ops::MaxPoolGradGrad{window}, x, y, g);
        CHECK(tf::reduce_sum(dx * g).item() ==
              Approx(tf::reduce_sum(dy * gg).item()).epsilon(1e-5).margin(1e-3));
      }
      // Every window's gradient arrives exactly once.
      CHECK(tf::reduce_sum(dx).item() ==
            Approx(tf::reduce_sum(dy).item()).epsilon(1e-5).margin(1e-3));
    };
    auto values = test_data<4>(d.input, seed++).numpy();
    for (double& v : values) {
      v = std::round(v * 2.0);
    }
    auto rounded = tf::constant<double, 4>(values, d.input);
    check(rounded);
    check(tf::cast<float>(rounded));
  }
}

TEST_CASE("pooling gradients", "[ops][nn][pooling]") {
  using P = tf::nn::Padding;
  std::vector<Case> const small{
      {{2, 4, 4, 2}, 2, 2, 2, 2, P::valid},
      {{1, 5, 5, 2}, 3, 3, 2, 2, P::same},
      {{1, 5, 4, 1}, 2, 3, 1, 1, P::same},
      {{1, 6, 5, 2}, 3, 2, 3, 2, P::valid},
  };
  std::uint32_t seed = 20;
  for (auto const& k : small) {
    INFO(describe(k));
    auto x = test_data<4>(k.input, seed++);
    check_gradients(
        [&](auto const& v) {
          return tf::nn::max_pool2d(v, {k.kh, k.kw}, {k.sh, k.sw}, k.padding);
        },
        x);
    check_gradients(
        [&](auto const& v) {
          return tf::nn::avg_pool2d(v, {k.kh, k.kw}, {k.sh, k.sw}, k.padding);
        },
        x);
  }
}

TEST_CASE("pooling gradient ops and their gradients", "[ops][nn][pooling]") {
  tf::ops::PoolWindow window{{3, 2}, {2, 1}, tf::nn::Padding::same};
  Dims const input{2, 5, 4, 2};
  auto x = test_data<4>(input, 30);
  auto y = tf::detail::execute(tf::ops::MaxPool{window}, x);
  auto dy = test_data<4>(y.dims(), 31);
  auto dxg = test_data<4>(input, 32);
  // MaxPoolGrad and MaxPoolGradGrad are adjoint in their last argument.
  auto dx = tf::detail::execute(tf::ops::MaxPoolGrad{window}, x, y, dy);
  auto gg = tf::detail::execute(tf::ops::MaxPoolGradGrad{window}, x, y, dxg);
  CHECK(tf::reduce_sum(dx * dxg).item() == Approx(tf::reduce_sum(dy * gg).item()));
  // AvgPool and AvgPoolGrad are adjoint.
  auto a = tf::detail::execute(tf::ops::AvgPool{window}, x);
  auto da = tf::detail::execute(tf::ops::AvgPoolGrad{window, input}, dy);
  CHECK(tf::reduce_sum(a * dy).item() == Approx(tf::reduce_sum(x * da).item()));

  check_gradients(
      [&](auto const& g) { return tf::detail::execute(tf::ops::MaxPoolGrad{window}, x, y, g); },
      dy);
  check_gradients(
      [&](auto const& g) { return tf::detail::execute(tf::ops::MaxPoolGradGrad{window}, x, y, g); },
      dxg);
  check_gradients(
      [&](auto const& g) {
        return tf::detail::execute(tf::ops::AvgPoolGrad{window, input}, g);
      },
      dy);
  // Second order through the public functions.
  check_gradients(
      [&](auto const& v) {
        tf::GradientTape inner;
        inner.watch(v);
        auto s = tf::reduce_sum(tf::square(tf::nn::max_pool2d(v, 2, 2, "SAME"))) +
                 tf::reduce_sum(tf::square(tf::nn::avg_pool2d(v, 2, 1, "SAME")));
        return *inner.gradient(s, v);
      },
      test_data<4>({1, 3, 4, 2}, 33));
}

TEST_CASE("pooling errors", "[ops][nn][pooling]") {
  auto x = tf::zeros<float>({1, 4, 4, 2});
  CHECK_THROWS_AS(tf::nn::max_pool2d(x, 5, 1, "VALID"), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::nn::max_pool2d(x, 5, 1, "VALID"),
                    Catch::Contains("MaxPool") && Catch::Contains("(1, 4, 4, 2)"));
  CHECK_THROWS_WITH(tf::nn::avg_pool2d(x, {2, 0}, 1, "SAME"),
                    Catch::Contains("AvgPool") && Catch::Contains("window size"));
  CHECK_THROWS_WITH(tf::nn::avg_pool2d(x, 2, {1, 0}, "SAME"),
                    Catch::Contains("AvgPool") && Catch::Contains("strides"));
  CHECK_THROWS_AS(tf::nn::avg_pool2d(x, 2, 2, "valid!"), tf::invalid_argument);
  tf::ops::AvgPoolGrad bad{{2, 2, tf::nn::Padding::valid}, {1, 4, 4, 2}};
  CHECK_THROWS_WITH(tf::detail::execute(bad, tf::zeros<float>({1, 3, 2, 2})),
                    Catch::Contains("AvgPoolGrad") && Catch::Contains("(1, 2, 2, 2)"));
}

}  // namespace test_ops_nn_pooling
