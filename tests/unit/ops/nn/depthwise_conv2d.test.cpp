#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/nn/conv_window.hpp>
#include <tapeflow/ops/nn/depthwise_conv2d.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_nn_depthwise_conv2d {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

namespace {

using Dims = std::array<std::int64_t, 4>;

struct Case {
  Dims input;   // N, H, W, C
  Dims filter;  // KH, KW, C, M
  std::int64_t sh, sw, dh, dw;
  tf::nn::Padding padding;
};

// The definition: y[n, oy, ox, c * M + m] = sum over (ky, kx) of
// x[n, oy * sh - pad_top + ky * dh, ox * sw - pad_left + kx * dw, c] * w[ky, kx, c, m].
std::vector<double> reference(Case const& k, std::vector<double> const& x,
                              std::vector<double> const& w, Dims& out_dims) {
  auto [n, h, wd, c] = k.input;
  auto [kh, kw, ci, mult] = k.filter;
  (void)ci;
  std::int64_t const eh = (kh - 1) * k.dh + 1;
  std::int64_t const ew = (kw - 1) * k.dw + 1;
  std::int64_t oh = 0, ow = 0, pt = 0, pl = 0;
  if (k.padding == tf::nn::Padding::valid) {
    oh = (h - eh) / k.sh + 1;
    ow = (wd - ew) / k.sw + 1;
  } else {
    oh = (h + k.sh - 1) / k.sh;
    ow = (wd + k.sw - 1) / k.sw;
    pt = std::max<std::int64_t>((oh - 1) * k.sh + eh - h, 0) / 2;
    pl = std::max<std::int64_t>((ow - 1) * k.sw + ew - wd, 0) / 2;
  }
  out_dims = {n, oh, ow, c * mult};
  std::vector<double> y;
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t oy = 0; oy < oh; ++oy) {
      for (std::int64_t ox = 0; ox < ow; ++ox) {
        for (std::int64_t ch = 0; ch < c; ++ch) {
          for (std::int64_t m = 0; m < mult; ++m) {
            double acc = 0;
            for (std::int64_t ky = 0; ky < kh; ++ky) {
              for (std::int64_t kx = 0; kx < kw; ++kx) {
                std::int64_t const iy = oy * k.sh - pt + ky * k.dh;
                std::int64_t const ix = ox * k.sw - pl + kx * k.dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) {
                  continue;
                }
                acc += x[static_cast<std::size_t>(((b * h + iy) * wd + ix) * c + ch)] *
                       w[static_cast<std::size_t>(((ky * kw + kx) * c + ch) * mult + m)];
              }
            }
            y.push_back(acc);
          }
        }
      }
    }
  }
  return y;
}

std::string describe(Case const& k) {
  return tf::Shape(k.input).to_string() + " * " + tf::Shape(k.filter).to_string() + " strides " +
         std::to_string(k.sh) + "," + std::to_string(k.sw) + " dilations " + std::to_string(k.dh) +
         "," + std::to_string(k.dw) + " " + std::string(tf::nn::padding_name(k.padding));
}

tf::nn::DepthwiseConv2DOptions options_of(Case const& k) {
  return {.strides = {k.sh, k.sw}, .padding = k.padding, .dilations = {k.dh, k.dw}};
}

}  // namespace

TEST_CASE("depthwise_conv2d matches the definition", "[ops][nn][depthwise_conv2d]") {
  using P = tf::nn::Padding;
  std::vector<Case> const cases{
      {{2, 5, 6, 3}, {3, 3, 3, 1}, 1, 1, 1, 1, P::same},
      {{2, 7, 7, 4}, {3, 3, 4, 1}, 2, 2, 1, 1, P::same},  // MobileNet's strided block
      {{1, 6, 5, 2}, {2, 3, 2, 3}, 1, 2, 1, 1, P::valid},
      {{1, 8, 8, 3}, {3, 3, 3, 2}, 1, 1, 2, 2, P::same},
      {{2, 9, 7, 5}, {3, 2, 5, 1}, 2, 1, 2, 1, P::valid},
      {{3, 4, 4, 17}, {1, 1, 17, 1}, 1, 1, 1, 1, P::valid},
      {{1, 3, 3, 2}, {5, 5, 2, 2}, 1, 1, 1, 1, P::same},  // window larger than the image
  };
  std::uint32_t seed = 1;
  for (auto const& k : cases) {
    INFO(describe(k));
    auto x = test_data<4>(k.input, seed++);
    auto w = test_data<4>(k.filter, seed++);
    Dims dims{};
    auto want = reference(k, x.numpy(), w.numpy(), dims);
    auto y = tf::nn::depthwise_conv2d(x, w, options_of(k));
    REQUIRE(y.dims() == dims);
    for (std::size_t i = 0; i < want.size(); ++i) {
      CHECK(y.values()[i] == Approx(want[i]).margin(1e-12));
    }
    auto yf = tf::nn::depthwise_conv2d(tf::cast<float>(x), tf::cast<float>(w), options_of(k));
    for (std::size_t i = 0; i < want.size(); ++i) {
      CHECK(yf.values()[i] == Approx(want[i]).margin(1e-5));
    }
  }
}

namespace {

// The backprops by definition, for multiplier 1: dx[.., iy, ix, c] and dw[ky, kx, c] sum
// g[.., oy, ox, c] times w or x over every (output pixel, tap) pair that reads (iy, ix).
void reference_backprops(Case const& k, std::vector<double> const& x, std::vector<double> const& w,
                         std::vector<double> const& g, Dims const& out, std::vector<double>& dx,
                         std::vector<double>& dw) {
  auto [n, h, wd, c] = k.input;
  auto [kh, kw, ci, mult] = k.filter;
  (void)ci;
  (void)mult;
  std::int64_t const pt =
      k.padding == tf::nn::Padding::valid
          ? 0
          : std::max<std::int64_t>((out[1] - 1) * k.sh + (kh - 1) * k.dh + 1 - h, 0) / 2;
  std::int64_t const pl =
      k.padding == tf::nn::Padding::valid
          ? 0
          : std::max<std::int64_t>((out[2] - 1) * k.sw + (kw - 1) * k.dw + 1 - wd, 0) / 2;
  dx.assign(x.size(), 0.0);
  dw.assign(w.size(), 0.0);
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t oy = 0; oy < out[1]; ++oy) {
      for (std::int64_t ox = 0; ox < out[2]; ++ox) {
        for (std::int64_t ky = 0; ky < kh; ++ky) {
          for (std::int64_t kx = 0; kx < kw; ++kx) {
            std::int64_t const iy = oy * k.sh - pt + ky * k.dh;
            std::int64_t const ix = ox * k.sw - pl + kx * k.dw;
            if (iy < 0 || iy >= h || ix < 0 || ix >= wd) {
              continue;
            }
            for (std::int64_t ch = 0; ch < c; ++ch) {
              auto const xi = static_cast<std::size_t>(((b * h + iy) * wd + ix) * c + ch);
              auto const wi = static_cast<std::size_t>((ky * kw + kx) * c + ch);
              double const gv =
                  g[static_cast<std::size_t>(((b * out[1] + oy) * out[2] + ox) * c + ch)];
              dx[xi] += gv * w[wi];
              dw[wi] += gv * x[xi];
            }
          }
        }
      }
    }
  }
}

template <class T>
void check_many_channels(Case const& k, std::uint32_t seed, double margin) {
  auto const x = test_data<4>(k.input, seed);
  auto const w = test_data<4>(k.filter, seed + 1);
  Dims dims{};
  auto const want = reference(k, x.numpy(), w.numpy(), dims);
  auto const g = test_data<4>(dims, seed + 2);
  std::vector<double> want_dx, want_dw;
  reference_backprops(k, x.numpy(), w.numpy(), g.numpy(), dims, want_dx, want_dw);
  auto const xt = tf::cast<T>(x);
  auto const wt = tf::cast<T>(w);
  tf::GradientTape tape({.persistent = true});
  tape.watch(xt);
  tape.watch(wt);
  auto const y = tf::nn::depthwise_conv2d(xt, wt, options_of(k));
  auto const loss = tf::reduce_sum(y * tf::cast<T>(g));
  auto const dx = *tape.gradient(loss, xt);
  auto const dw = *tape.gradient(loss, wt);
  auto const close = [margin](auto const& got, std::vector<double> const& expected) {
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      INFO("element " << i);
      CHECK(static_cast<double>(got[i]) == Approx(expected[i]).margin(margin));
    }
  };
  close(y.values(), want);
  close(dx.values(), want_dx);
  close(dw.values(), want_dw);
}

}  // namespace

TEST_CASE("depthwise_conv2d and its backprops over many channels match the definition",
          "[ops][nn][depthwise_conv2d]") {
  // 85 channels: the SIMD kernels' blocks of four vectors, single vectors and single lanes all
  // run, for float and double, at every border of the image.
  using P = tf::nn::Padding;
  std::vector<Case> const cases{
      {{2, 7, 6, 85}, {3, 3, 85, 1}, 1, 1, 1, 1, P::same},
      {{1, 9, 8, 85}, {3, 3, 85, 1}, 2, 2, 1, 1, P::same},  // MobileNet's strided block
      {{2, 8, 7, 85}, {3, 2, 85, 1}, 1, 2, 2, 1, P::valid},
      {{1, 3, 4, 85}, {5, 5, 85, 1}, 1, 1, 1, 1, P::same},  // window larger than the image
  };
  std::uint32_t seed = 100;
  for (auto const& k : cases) {
    INFO(describe(k));
    check_many_channels<double>(k, seed, 1e-12);
    check_many_channels<float>(k, seed, 1e-4);
    seed += 3;
  }
}

TEST_CASE("depthwise_conv2d gradients, first and second order", "[ops][nn][depthwise_conv2d]") {
  using P = tf::nn::Padding;
  std::vector<Case> const cases{
      {{2, 4, 4, 2}, {3, 3, 2, 1}, 1, 1, 1, 1, P::same},
      {{1, 5, 5, 2}, {3, 3, 2, 2}, 2, 2, 1, 1, P::same},
      {{1, 6, 5, 3}, {2, 2, 3, 1}, 1, 2, 2, 1, P::valid},
  };
  std::uint32_t seed = 40;
  for (auto const& k : cases) {
    INFO(describe(k));
    auto x = test_data<4>(k.input, seed++);
    auto w = test_data<4>(k.filter, seed++);
    auto const o = options_of(k);
    check_gradients([&](auto const& a, auto const& b) { return tf::nn::depthwise_conv2d(a, b, o); },
                    x, w);
    // Through the backprop ops: d/d(x, w) of the gradient of sum(y^2).
    check_gradients(
        [&](auto const& a, auto const& b) {
          tf::GradientTape inner({.persistent = true});
          inner.watch(a);
          inner.watch(b);
          auto y = tf::nn::depthwise_conv2d(a, b, o);
          auto loss = tf::reduce_sum(y * y);
          auto ga = *inner.gradient(loss, a);
          auto gb = *inner.gradient(loss, b);
          return tf::reduce_sum(ga * ga) + tf::reduce_sum(gb * gb);
        },
        x, w);
  }
}

TEST_CASE("depthwise_conv2d errors", "[ops][nn][depthwise_conv2d]") {
  auto x = test_data<4>({1, 4, 4, 3}, 70);
  CHECK_THROWS_WITH(tf::nn::depthwise_conv2d(x, test_data<4>({3, 3, 2, 1}, 71)),
                    Catch::Contains("DepthwiseConv2dNative: the input depth 3") &&
                        Catch::Contains("filter's input depth 2"));
  CHECK_THROWS_AS(tf::nn::depthwise_conv2d(x, test_data<4>({5, 5, 3, 1}, 72)),
                  tf::invalid_argument);  // VALID window larger than the image
  CHECK_THROWS_AS(tf::nn::depthwise_conv2d(x, test_data<4>({3, 3, 3, 1}, 73), {.strides = 0}),
                  tf::invalid_argument);
}

}  // namespace test_ops_nn_depthwise_conv2d
