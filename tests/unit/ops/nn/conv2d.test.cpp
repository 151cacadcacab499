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
#include <tapeflow/ops/nn/conv2d.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_nn_conv2d {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

namespace {

using Dims = std::array<std::int64_t, 4>;

struct Case {
  Dims input;   // N, H, W, C
  Dims filter;  // KH, KW, C, O
  std::int64_t sh, sw, dh, dw;
  tf::nn::Padding padding;
};

// The definition, seven loops deep: y[n, oy, ox, o] = sum over (ky, kx, c) of
// x[n, oy * sh - pad_top + ky * dh, ox * sw - pad_left + kx * dw, c] * w[ky, kx, c, o].
std::vector<double> reference_conv(Case const& k, std::vector<double> const& x,
                                   std::vector<double> const& w, Dims& out_dims) {
  auto [n, h, wd, c] = k.input;
  auto [kh, kw, ci, o] = k.filter;
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
  out_dims = {n, oh, ow, o};
  std::vector<double> y(static_cast<std::size_t>(n * oh * ow * o), 0.0);
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t oy = 0; oy < oh; ++oy) {
      for (std::int64_t ox = 0; ox < ow; ++ox) {
        for (std::int64_t f = 0; f < o; ++f) {
          double s = 0;
          for (std::int64_t ky = 0; ky < kh; ++ky) {
            for (std::int64_t kx = 0; kx < kw; ++kx) {
              for (std::int64_t ch = 0; ch < c; ++ch) {
                std::int64_t const iy = oy * k.sh - pt + ky * k.dh;
                std::int64_t const ix = ox * k.sw - pl + kx * k.dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) {
                  continue;
                }
                s += x[static_cast<std::size_t>(((b * h + iy) * wd + ix) * c + ch)] *
                     w[static_cast<std::size_t>(((ky * kw + kx) * c + ch) * o + f)];
              }
            }
          }
          y[static_cast<std::size_t>(((b * oh + oy) * ow + ox) * o + f)] = s;
        }
      }
    }
  }
  return y;
}

tf::nn::Conv2DOptions options_of(Case const& k) {
  return {.strides = {k.sh, k.sw}, .padding = k.padding, .dilations = {k.dh, k.dw}};
}

std::string describe(Case const& k) {
  return tf::Shape(k.input).to_string() + " * " + tf::Shape(k.filter).to_string() + " strides " +
         std::to_string(k.sh) + "," + std::to_string(k.sw) + " dilations " + std::to_string(k.dh) +
         "," + std::to_string(k.dw) + " " + std::string(tf::nn::padding_name(k.padding));
}

std::vector<Case> const& cases() {
  using P = tf::nn::Padding;
  static std::vector<Case> const all{
      {{2, 7, 7, 3}, {3, 3, 3, 4}, 1, 1, 1, 1, P::same},
      {{2, 7, 7, 3}, {3, 3, 3, 4}, 1, 1, 1, 1, P::valid},
      {{2, 7, 6, 2}, {3, 2, 2, 3}, 2, 2, 1, 1, P::same},
      {{1, 8, 9, 2}, {3, 3, 2, 2}, 2, 2, 1, 1, P::valid},
      {{2, 9, 9, 2}, {3, 3, 2, 3}, 1, 1, 2, 2, P::same},
      {{1, 9, 8, 1}, {3, 2, 1, 2}, 1, 1, 2, 3, P::valid},
      {{1, 6, 7, 2}, {2, 3, 2, 2}, 2, 1, 2, 1, P::same},  // stride and dilation together
      {{3, 5, 5, 4}, {1, 1, 4, 5}, 1, 1, 1, 1, P::same},  // pointwise: no im2col
      {{2, 5, 4, 3}, {1, 1, 3, 2}, 2, 2, 1, 1, P::valid},
      {{1, 4, 4, 1}, {5, 5, 1, 2}, 1, 1, 1, 1, P::same},  // window larger than the input
      {{4, 11, 13, 5}, {5, 4, 5, 7}, 3, 2, 1, 1, P::same},
      {{5, 28, 28, 1}, {5, 5, 1, 32}, 1, 1, 1, 1, P::same},
      // 8+ channels: the forward pass takes the indirect (pointer table) kernel, with partial
      // row tiles and partial column panels.
      {{2, 7, 7, 8}, {3, 3, 8, 5}, 1, 1, 1, 1, P::same},
      {{1, 9, 8, 9}, {3, 2, 9, 33}, 2, 1, 2, 1, P::valid},
      {{3, 6, 5, 16}, {4, 3, 16, 8}, 1, 1, 1, 2, P::same},
  };
  return all;
}

}  // namespace

TEST_CASE("conv2d matches the definition", "[ops][nn][conv2d]") {
  std::uint32_t seed = 1;
  for (auto const& k : cases()) {
    INFO(describe(k));
    auto x = test_data<4>(k.input, seed++);
    auto w = test_data<4>(k.filter, seed++);
    Dims dims{};
    auto expected = reference_conv(k, x.numpy(), w.numpy(), dims);
    auto y = tf::nn::conv2d(x, w, options_of(k));
    REQUIRE(y.dims() == dims);
    auto got = y.numpy();
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i] == Approx(expected[i]).margin(1e-12));
    }
    // float32 agrees too, within float rounding.
    auto yf = tf::nn::conv2d(tf::cast<float>(x), tf::cast<float>(w), options_of(k));
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(yf.values()[i] == Approx(expected[i]).margin(1e-4));
    }
  }
}

TEST_CASE("conv2d argument spellings", "[ops][nn][conv2d]") {
  auto x = test_data<4>({1, 5, 5, 2}, 3);
  auto w = test_data<4>({3, 3, 2, 1}, 4);
  auto a = tf::nn::conv2d(x, w, {.strides = 2, .padding = "SAME"});
  auto b = tf::nn::conv2d(x, w, 2, "SAME");
  auto c = tf::nn::conv2d(x, w, {2, 2}, tf::nn::Padding::same, 1);
  CHECK(a.dims() == Dims{1, 3, 3, 1});
  CHECK(a.numpy() == b.numpy());
  CHECK(a.numpy() == c.numpy());
  CHECK(tf::nn::conv2d(x, w).dims() == Dims{1, 3, 3, 1});  // VALID by default
  tf::Variable<double, 4> wv(w);
  CHECK(tf::nn::conv2d(x, wv, {.padding = "VALID"}).numpy() == tf::nn::conv2d(x, w).numpy());
}

TEST_CASE("conv2d gradients", "[ops][nn][conv2d]") {
  using P = tf::nn::Padding;
  std::vector<Case> const small{
      {{2, 5, 5, 2}, {3, 3, 2, 2}, 1, 1, 1, 1, P::same},
      {{1, 6, 5, 2}, {3, 2, 2, 3}, 2, 2, 1, 1, P::same},
      {{1, 7, 7, 1}, {2, 2, 1, 2}, 2, 1, 1, 1, P::valid},
      {{1, 7, 7, 2}, {2, 2, 2, 2}, 1, 1, 2, 2, P::same},
      {{2, 3, 3, 3}, {1, 1, 3, 2}, 1, 1, 1, 1, P::valid},
      // 8+ input and output channels: the indirect kernel forward, and for 12+ input channels
      // at stride 1 the input gradient as a convolution of dy with the rotated filter.
      {{1, 5, 4, 8}, {3, 3, 8, 9}, 1, 1, 1, 1, P::same},
      {{1, 6, 6, 8}, {2, 3, 8, 8}, 1, 1, 2, 1, P::valid},
      {{1, 7, 6, 8}, {3, 3, 8, 8}, 2, 2, 1, 1, P::same},
      // 16 channels (a double vector panel): the filter gradient reads B in place.
      {{1, 4, 4, 16}, {2, 2, 16, 4}, 1, 1, 1, 1, P::same},
      {{1, 5, 4, 12}, {3, 3, 12, 9}, 1, 1, 1, 1, P::same},
  };
  std::uint32_t seed = 40;
  for (auto const& k : small) {
    INFO(describe(k));
    auto opts = options_of(k);
    check_gradients([&](auto const& x, auto const& w) { return tf::nn::conv2d(x, w, opts); },
                    test_data<4>(k.input, seed), test_data<4>(k.filter, seed + 1));
    seed += 2;
  }
}

TEST_CASE("conv2d backprop ops and their gradients", "[ops][nn][conv2d]") {
  // Each backprop op is the adjoint of the convolution in one argument:
  // <conv(x, w), dy> == <x, backprop_input(w, dy)> == <w, backprop_filter(x, dy)>.
  tf::ops::ConvWindow window{{2, 1}, tf::nn::Padding::same, {1, 1}};
  Dims const input{2, 5, 4, 2};
  Dims const filter{3, 2, 2, 3};
  auto x = test_data<4>(input, 60);
  auto w = test_data<4>(filter, 61);
  auto y = tf::detail::execute(tf::ops::Conv2D{window}, x, w);
  auto dy = test_data<4>(y.dims(), 62);
  auto dx = tf::detail::execute(tf::ops::Conv2DBackpropInput{window, input}, w, dy);
  auto dw = tf::detail::execute(tf::ops::Conv2DBackpropFilter{window, filter}, x, dy);
  double const lhs = tf::reduce_sum(y * dy).item();
  CHECK(tf::reduce_sum(x * dx).item() == Approx(lhs));
  CHECK(tf::reduce_sum(w * dw).item() == Approx(lhs));

  // The same with 12+ channels on both sides and stride 1 (the rotated-filter input gradient,
  // used from 3/4 of a double panel of channels on), dilated and padded.
  tf::ops::ConvWindow wide{{1, 1}, tf::nn::Padding::same, {2, 1}};
  Dims const wide_input{2, 6, 5, 12};
  auto xw = test_data<4>(wide_input, 63);
  auto ww = test_data<4>({3, 2, 12, 10}, 64);
  auto yw = tf::detail::execute(tf::ops::Conv2D{wide}, xw, ww);
  auto dyw = test_data<4>(yw.dims(), 65);
  auto dxw = tf::detail::execute(tf::ops::Conv2DBackpropInput{wide, wide_input}, ww, dyw);
  auto dww = tf::detail::execute(tf::ops::Conv2DBackpropFilter{wide, ww.dims()}, xw, dyw);
  double const wide_lhs = tf::reduce_sum(yw * dyw).item();
  CHECK(tf::reduce_sum(xw * dxw).item() == Approx(wide_lhs));
  CHECK(tf::reduce_sum(ww * dww).item() == Approx(wide_lhs));

  check_gradients(
      [&](auto const& f, auto const& g) {
        return tf::detail::execute(tf::ops::Conv2DBackpropInput{window, input}, f, g);
      },
      w, dy);
  check_gradients(
      [&](auto const& a, auto const& g) {
        return tf::detail::execute(tf::ops::Conv2DBackpropFilter{window, filter}, a, g);
      },
      x, dy);
}

TEST_CASE("conv2d second-order gradient", "[ops][nn][conv2d]") {
  auto opts = tf::nn::Conv2DOptions{.strides = 1, .padding = "SAME"};
  check_gradients(
      [&](auto const& x, auto const& w) {
        tf::GradientTape inner;
        inner.watch(x);
        inner.watch(w);
        auto y = tf::reduce_sum(tf::square(tf::nn::conv2d(x, w, opts)));
        auto [gx, gw] = inner.gradient(y, x, w);
        return tf::reduce_sum(*gx * *gx) + tf::reduce_sum(*gw);
      },
      test_data<4>({1, 4, 4, 2}, 70), test_data<4>({3, 3, 2, 2}, 71));
}

TEST_CASE("conv2d on the thread pool agrees with one image at a time", "[ops][nn][conv2d]") {
  // Batches large enough to split over threads (including the filter-gradient partial sums,
  // which need ~11M multiply-adds for two runs: the second shape).
  auto check = [](Dims const& in, Dims const& filter, std::uint32_t seed) {
    std::int64_t const n = in[0];
    std::int64_t const image = in[1] * in[2] * in[3];
    auto x = tf::cast<float>(test_data<4>(in, seed));
    auto w = tf::cast<float>(test_data<4>(filter, seed + 1));
    tf::GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    auto y = tf::nn::conv2d(x, w, {.padding = "SAME"});
    auto [gx, gw] = tape.gradient(tf::reduce_sum(y * y), x, w);
    auto gw_sum = tf::zeros<float>(filter);
    for (std::int64_t i = 0; i < n; ++i) {
      auto xi = tf::constant<float, 4>(std::span<float const>(x.data() + i * image, image),
                                       {1, in[1], in[2], in[3]});
      tf::GradientTape t1;
      t1.watch(xi);
      t1.watch(w);
      auto yi = tf::nn::conv2d(xi, w, {.padding = "SAME"});
      for (std::int64_t j = 0; j < yi.num_elements(); ++j) {
        CHECK(yi.values()[j] == Approx(y.values()[i * yi.num_elements() + j]).margin(1e-4));
      }
      auto [gxi, gwi] = t1.gradient(tf::reduce_sum(yi * yi), xi, w);
      for (std::int64_t j = 0; j < gxi->num_elements(); ++j) {
        CHECK(gxi->values()[j] == Approx(gx->values()[i * gxi->num_elements() + j]).margin(1e-3));
      }
      gw_sum = gw_sum + *gwi;
    }
    for (std::int64_t j = 0; j < gw_sum.num_elements(); ++j) {
      CHECK(gw_sum.values()[j] == Approx(gw->values()[j]).epsilon(1e-4).margin(1e-2));
    }
  };
  check({9, 14, 14, 8}, {5, 5, 8, 16}, 80);
  check({12, 16, 16, 16}, {3, 3, 16, 32}, 82);
  // 32 channels: the filter gradient reads B's rows straight from the image.
  check({4, 8, 8, 32}, {3, 3, 32, 40}, 84);
}

TEST_CASE("conv2d with explicit padding is conv2d of the padded input", "[ops][nn][conv2d]") {
  // TensorFlow's list form of `padding`. Windows that reach past the padding's rows, pads wider
  // than the window (the input gradient then leaves the rotated-filter path), a 1x1 window
  // padded below and right, many channels at stride 1 (that rotated path).
  struct Explicit {
    Dims input, filter;
    std::int64_t stride, dilation;
    std::int64_t top, bottom, left, right;
  };
  std::vector<Explicit> const cases{
      {{2, 6, 7, 3}, {3, 3, 3, 4}, 1, 1, 1, 2, 0, 1},
      {{1, 7, 6, 2}, {3, 2, 2, 3}, 2, 1, 0, 1, 2, 0},
      {{1, 5, 5, 2}, {3, 3, 2, 2}, 1, 1, 4, 0, 3, 3},
      {{1, 4, 5, 3}, {1, 1, 3, 2}, 1, 1, 0, 1, 0, 2},
      {{1, 5, 4, 12}, {3, 3, 12, 9}, 1, 2, 2, 1, 1, 2},
      {{1, 5, 4, 12}, {2, 2, 12, 5}, 1, 1, 3, 0, 0, 3},
  };
  std::uint32_t seed = 90;
  for (auto const& k : cases) {
    INFO(tf::Shape(k.input).to_string()
         << " * " << tf::Shape(k.filter).to_string() << " pads " << k.top << " " << k.bottom << " "
         << k.left << " " << k.right);
    auto x = test_data<4>(k.input, seed++);
    auto w = test_data<4>(k.filter, seed++);
    const tf::nn::Conv2DOptions options{
        .strides = k.stride,
        .padding = {{0, 0}, {k.top, k.bottom}, {k.left, k.right}, {0, 0}},
        .dilations = k.dilation};
    auto padded = tf::pad(x, {{0, 0}, {k.top, k.bottom}, {k.left, k.right}, {0, 0}});
    auto y = tf::nn::conv2d(x, w, options);
    auto expected = tf::nn::conv2d(padded, w, {.strides = k.stride, .dilations = k.dilation});
    REQUIRE(y.dims() == expected.dims());
    CHECK(y.numpy() == expected.numpy());
    // Numerical gradients in both arguments (the input gradient skips the padding).
    check_gradients([&](auto const& a, auto const& b) { return tf::nn::conv2d(a, b, options); }, x,
                    w);
  }
  CHECK(tf::nn::conv2d(test_data<4>({1, 3, 3, 1}, 1), test_data<4>({1, 1, 1, 1}, 2), 1,
                       {{0, 0}, {1, 1}, {1, 1}, {0, 0}})
            .dims() == Dims{1, 5, 5, 1});
  // The batch and channel axes take none; amounts are non-negative; other ops take none.
  auto x = tf::zeros<float>({1, 5, 5, 2});
  auto w = tf::zeros<float>({3, 3, 2, 2});
  CHECK_THROWS_WITH(tf::nn::conv2d(x, w, {.padding = {{1, 0}, {1, 1}, {1, 1}, {0, 0}}}),
                    Catch::Contains("batch or channel") && Catch::Contains("[[1, 0], [1, 1]"));
  CHECK_THROWS_WITH(tf::nn::conv2d(x, w, {.padding = {{0, 0}, {1, -1}, {1, 1}, {0, 0}}}),
                    Catch::Contains("non-negative"));
  const tf::nn::PaddingArg explicit_padding{{0, 0}, {1, 1}, {1, 1}, {0, 0}};
  CHECK_THROWS_WITH(tf::nn::conv2d_transpose(tf::zeros<float>({1, 5, 5, 2}), w, {1, 5, 5, 2}, 1,
                                             explicit_padding),
                    Catch::Contains("explicit padding is taken by tf::nn::conv2d"));
  // The op's TensorFlow attributes.
  tf::ops::Conv2D op;
  op.set_padding(explicit_padding);
  const auto attrs = op.attributes();
  CHECK(attrs[1].second == tf::AttrValue("EXPLICIT"));
  REQUIRE(attrs.size() == 5);
  CHECK(attrs[4].first == "explicit_paddings");
  CHECK(attrs[4].second == tf::AttrValue(std::vector<std::int64_t>{0, 0, 1, 1, 1, 1, 0, 0}));
}

TEST_CASE("conv2d errors", "[ops][nn][conv2d]") {
  auto x = tf::zeros<float>({1, 5, 5, 3});
  auto w = tf::zeros<float>({3, 3, 2, 4});
  CHECK_THROWS_AS(tf::nn::conv2d(x, w), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::nn::conv2d(x, w), Catch::Contains("Conv2D") &&
                                              Catch::Contains("(1, 5, 5, 3)") &&
                                              Catch::Contains("(3, 3, 2, 4)"));
  auto w6 = tf::zeros<float>({6, 6, 3, 4});
  CHECK_THROWS_WITH(tf::nn::conv2d(x, w6, {.padding = "VALID"}),
                    Catch::Contains("Conv2D") && Catch::Contains("VALID"));
  CHECK(tf::nn::conv2d(x, w6, {.padding = "SAME"}).dims() == Dims{1, 5, 5, 4});
  auto w3 = tf::zeros<float>({3, 3, 3, 4});
  CHECK_THROWS_WITH(tf::nn::conv2d(x, w3, {.strides = 0}),
                    Catch::Contains("Conv2D") && Catch::Contains("strides"));
  CHECK_THROWS_WITH(tf::nn::conv2d(x, w3, {.dilations = {1, -1}}),
                    Catch::Contains("Conv2D") && Catch::Contains("dilations"));
  CHECK_THROWS_WITH(tf::nn::conv2d(x, w3, 1, "FULL"), Catch::Contains("SAME"));
  CHECK_THROWS_AS(tf::nn::conv2d(x, w3, 1, "FULL"), tf::invalid_argument);
  // Backprop ops check out_backprop against the forward shape.
  tf::ops::Conv2DBackpropInput bad{{1, tf::nn::Padding::same, 1}, {1, 5, 5, 3}};
  CHECK_THROWS_WITH(tf::detail::execute(bad, w3, tf::zeros<float>({1, 4, 5, 4})),
                    Catch::Contains("Conv2DBackpropInput") && Catch::Contains("(1, 4, 5, 4)") &&
                        Catch::Contains("(1, 5, 5, 4)"));
  CHECK_THROWS_AS(tf::nn::conv2d_transpose(tf::zeros<float>({1, 5, 5, 3}), w3, {1, 5, 5, 3}, 1),
                  tf::invalid_argument);
}

TEST_CASE("conv2d_transpose", "[ops][nn][conv2d]") {
  // Upsamples 3x3 -> 6x6 with stride 2; it is conv2d's input gradient.
  auto w = test_data<4>({3, 3, 2, 4}, 90);  // [KH, KW, C_out of transpose, C_in of transpose]
  auto y = test_data<4>({1, 3, 3, 4}, 91);
  auto z = tf::nn::conv2d_transpose(y, w, {1, 6, 6, 2}, 2, "SAME");
  CHECK(z.dims() == Dims{1, 6, 6, 2});
  auto x = tf::zeros<double>({1, 6, 6, 2});
  tf::GradientTape tape;
  tape.watch(x);
  auto fwd = tf::nn::conv2d(x, w, 2, "SAME");
  auto g = tape.gradient(tf::reduce_sum(fwd * y), x);
  CHECK(g->numpy() == z.numpy());
  check_gradients(
      [&](auto const& a, auto const& f) {
        return tf::nn::conv2d_transpose(a, f, {1, 6, 6, 3}, 2, "SAME");
      },
      test_data<4>({1, 3, 3, 2}, 92), test_data<4>({2, 2, 3, 2}, 93));
}

}  // namespace test_ops_nn_conv2d
