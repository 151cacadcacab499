#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/array/pad.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/nn/conv_window.hpp>
#include <tapeflow/ops/nn/depthwise_conv2d.hpp>
#include <tapeflow/ops/nn/detail/depthwise_kernels.hpp>
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

// The output's dims and the padding before the first row and column.
struct Window {
  Dims out;
  std::int64_t pt, pl;
};
Window window_of(Case const& k) {
  auto [n, h, wd, c] = k.input;
  auto [kh, kw, ci, mult] = k.filter;
  (void)ci;
  std::int64_t const eh = (kh - 1) * k.dh + 1;
  std::int64_t const ew = (kw - 1) * k.dw + 1;
  if (k.padding == tf::nn::Padding::valid) {
    return {{n, (h - eh) / k.sh + 1, (wd - ew) / k.sw + 1, c * mult}, 0, 0};
  }
  std::int64_t const oh = (h + k.sh - 1) / k.sh;
  std::int64_t const ow = (wd + k.sw - 1) / k.sw;
  return {{n, oh, ow, c * mult},
          std::max<std::int64_t>((oh - 1) * k.sh + eh - h, 0) / 2,
          std::max<std::int64_t>((ow - 1) * k.sw + ew - wd, 0) / 2};
}

// Calls visit(x_pixel, y_pixel, tap) for every (output pixel, tap) pair whose input pixel lies
// inside the image, each an index into [N * H * W], [N * OH * OW] and [KH * KW].
template <class Visit>
void for_each_window_tap(Case const& k, Visit&& visit) {
  auto [n, h, wd, c] = k.input;
  auto const kh = k.filter[0];
  auto const kw = k.filter[1];
  Window const win = window_of(k);
  std::int64_t const oh = win.out[1];
  std::int64_t const ow = win.out[2];
  std::int64_t const pt = win.pt;
  std::int64_t const pl = win.pl;
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t oy = 0; oy < oh; ++oy) {
      for (std::int64_t ox = 0; ox < ow; ++ox) {
        for (std::int64_t ky = 0; ky < kh; ++ky) {
          for (std::int64_t kx = 0; kx < kw; ++kx) {
            std::int64_t const iy = oy * k.sh - pt + ky * k.dh;
            std::int64_t const ix = ox * k.sw - pl + kx * k.dw;
            if (iy >= 0 && iy < h && ix >= 0 && ix < wd) {
              visit((b * h + iy) * wd + ix, (b * oh + oy) * ow + ox, ky * kw + kx);
            }
          }
        }
      }
    }
  }
}

// The definition: y[n, oy, ox, c * M + m] = sum over (ky, kx) of
// x[n, oy * sh - pad_top + ky * dh, ox * sw - pad_left + kx * dw, c] * w[ky, kx, c, m].
std::vector<double> reference(Case const& k, std::vector<double> const& x,
                              std::vector<double> const& w, Dims& out_dims) {
  std::int64_t const c = k.input[3];
  std::int64_t const mult = k.filter[3];
  out_dims = window_of(k).out;
  std::vector<double> y(
      static_cast<std::size_t>(out_dims[0] * out_dims[1] * out_dims[2] * out_dims[3]), 0.0);
  for_each_window_tap(k, [&](std::int64_t xp, std::int64_t yp, std::int64_t tap) {
    for (std::int64_t ch = 0; ch < c; ++ch) {
      for (std::int64_t m = 0; m < mult; ++m) {
        y[static_cast<std::size_t>(yp * c * mult + ch * mult + m)] +=
            x[static_cast<std::size_t>(xp * c + ch)] *
            w[static_cast<std::size_t>((tap * c + ch) * mult + m)];
      }
    }
  });
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
                         std::vector<double> const& g, std::vector<double>& dx,
                         std::vector<double>& dw) {
  std::int64_t const c = k.input[3];
  dx.assign(x.size(), 0.0);
  dw.assign(w.size(), 0.0);
  for_each_window_tap(k, [&](std::int64_t xp, std::int64_t yp, std::int64_t tap) {
    for (std::int64_t ch = 0; ch < c; ++ch) {
      auto const xi = static_cast<std::size_t>(xp * c + ch);
      auto const wi = static_cast<std::size_t>(tap * c + ch);
      double const gv = g[static_cast<std::size_t>(yp * c + ch)];
      dx[xi] += gv * w[wi];
      dw[wi] += gv * x[xi];
    }
  });
}

template <class T>
void check_many_channels(Case const& k, std::uint32_t seed, double margin) {
  auto const x = test_data<4>(k.input, seed);
  auto const w = test_data<4>(k.filter, seed + 1);
  Dims dims{};
  auto const want = reference(k, x.numpy(), w.numpy(), dims);
  auto const g = test_data<4>(dims, seed + 2);
  std::vector<double> want_dx, want_dw;
  reference_backprops(k, x.numpy(), w.numpy(), g.numpy(), want_dx, want_dw);
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

TEST_CASE("the depthwise kernels' channel blocks cover every channel once",
          "[ops][nn][depthwise_conv2d]") {
  // ops/nn/detail/depthwise_kernels.hpp: blocks of four vectors, then single vectors, then
  // single lanes, in channel order, with no gap or overlap.
  using Vec = tf::backend::cpu::VecFor<float>::type;
  for (std::int64_t c : {std::int64_t{0}, std::int64_t{1}, std::int64_t{Vec::kLanes},
                         std::int64_t{4 * Vec::kLanes + Vec::kLanes + 3}}) {
    INFO("channels " << c);
    std::vector<int> visits(static_cast<std::size_t>(c), 0);
    std::int64_t next = 0;
    int wide = 0;
    tf::detail::nn_impl::for_each_channel_block<float>(c, [&]<class Block>(std::int64_t i) {
      CHECK(i == next);
      std::int64_t const width =
          Block::lanes * static_cast<std::int64_t>(sizeof(Block::v) / sizeof(Block::v[0]));
      wide += width == 4 * Vec::kLanes ? 1 : 0;
      for (std::int64_t j = i; j < i + width; ++j) {
        ++visits[static_cast<std::size_t>(j)];
      }
      next = i + width;
    });
    CHECK(next == c);
    CHECK(std::count(visits.begin(), visits.end(), 1) == c);
    CHECK(wide == (c >= 4 * Vec::kLanes ? 1 : 0));
  }
}

TEST_CASE("depthwise_conv2d with explicit padding is depthwise_conv2d of the padded input",
          "[ops][nn][depthwise_conv2d]") {
  // TensorFlow's list form of `padding`; pads wider than the window leave outputs that see only
  // zeros. Values equal the padded form exactly (a skipped tap adds a zero product there).
  struct Explicit {
    Dims input, filter;
    std::int64_t stride;
    std::int64_t top, bottom, left, right;
  };
  std::vector<Explicit> const cases{
      {{2, 7, 7, 3}, {3, 3, 3, 1}, 2, 0, 1, 0, 1},
      {{1, 6, 5, 20}, {3, 3, 20, 1}, 1, 1, 2, 2, 0},
      {{1, 5, 6, 2}, {3, 2, 2, 2}, 1, 4, 0, 1, 3},
  };
  std::uint32_t seed = 70;
  for (auto const& k : cases) {
    INFO(tf::Shape(k.input).to_string()
         << " * " << tf::Shape(k.filter).to_string() << " pads " << k.top << " " << k.bottom << " "
         << k.left << " " << k.right);
    auto x = test_data<4>(k.input, seed++);
    auto w = test_data<4>(k.filter, seed++);
    const tf::nn::DepthwiseConv2DOptions options{
        .strides = k.stride, .padding = {{0, 0}, {k.top, k.bottom}, {k.left, k.right}, {0, 0}}};
    auto padded = tf::pad(x, {{0, 0}, {k.top, k.bottom}, {k.left, k.right}, {0, 0}});
    auto y = tf::nn::depthwise_conv2d(x, w, options);
    auto expected = tf::nn::depthwise_conv2d(padded, w, {.strides = k.stride});
    REQUIRE(y.dims() == expected.dims());
    CHECK(y.numpy() == expected.numpy());
    check_gradients(
        [&](auto const& a, auto const& b) { return tf::nn::depthwise_conv2d(a, b, options); }, x,
        w);
  }
  CHECK_THROWS_WITH(
      tf::nn::depthwise_conv2d(tf::zeros<float>({1, 4, 4, 2}), tf::zeros<float>({3, 3, 2, 1}),
                               {.padding = {{0, 0}, {1, 1}, {1, 1}, {1, 0}}}),
      Catch::Contains("batch or channel"));
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
