#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/nn/batch_norm.hpp>
#include <tapeflow/ops/nn/batch_norm_grad.hpp>
#include <tapeflow/ops/nn/detail/batch_norm_kernels.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_nn_batch_norm {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

namespace {

// The definition, per channel: y = scale * (x - m) / sqrt(v + eps) + offset, with (m, v) the
// batch's mean and biased variance when training.
std::vector<double> reference(std::vector<double> const& x, std::int64_t c,
                              std::vector<double> const& scale, std::vector<double> const& offset,
                              std::vector<double> mean, std::vector<double> var, double eps,
                              bool training) {
  auto const rows = static_cast<std::int64_t>(x.size()) / c;
  if (training) {
    for (std::int64_t k = 0; k < c; ++k) {
      double s = 0, ss = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        s += x[static_cast<std::size_t>(r * c + k)];
      }
      double const m = s / double(rows);
      for (std::int64_t r = 0; r < rows; ++r) {
        double const d = x[static_cast<std::size_t>(r * c + k)] - m;
        ss += d * d;
      }
      mean[static_cast<std::size_t>(k)] = m;
      var[static_cast<std::size_t>(k)] = ss / double(rows);
    }
  }
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    auto const k = i % static_cast<std::size_t>(c);
    y[i] = scale[k] * (x[i] - mean[k]) / std::sqrt(var[k] + eps) + offset[k];
  }
  return y;
}

// The inputs of tests/data/keras_layers/reference_values.py: data(shape)[i] =
// float32(((i * 37 + 11) % 97) / 24.0 - 2.0), and its per-channel parameters.
template <std::size_t R>
tf::Tensor<float, R> keras_data(std::array<std::int64_t, R> dims) {
  std::int64_t n = 1;
  for (auto d : dims) {
    n *= d;
  }
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] = static_cast<float>(double((i * 37 + 11) % 97) / 24.0 - 2.0);
  }
  return tf::constant<float, R>(v, dims);
}
std::array<tf::Tensor<float, 1>, 4> keras_params(std::int64_t c) {
  std::vector<float> g, b, m, v;
  for (std::int64_t k = 0; k < c; ++k) {
    auto const d = static_cast<double>(k);
    g.push_back(static_cast<float>(1.0 + 0.25 * d));
    b.push_back(static_cast<float>(0.5 - 0.2 * d));
    m.push_back(static_cast<float>(0.1 * d - 0.1));
    v.push_back(static_cast<float>(0.5 + 0.3 * d));
  }
  return {tf::constant<float, 1>(g, {c}), tf::constant<float, 1>(b, {c}),
          tf::constant<float, 1>(m, {c}), tf::constant<float, 1>(v, {c})};
}

double max_diff(std::vector<float> const& got, std::vector<float> const& want) {
  REQUIRE(got.size() == want.size());
  double d = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    d = std::max(d, std::abs(double(got[i]) - double(want[i])));
  }
  return d;
}

// Channel k's mean and biased variance of data [rows, c], two passes in double.
template <typename T>
std::pair<double, double> channel_moments(std::vector<T> const& x, std::int64_t c, std::int64_t k) {
  auto const rows = static_cast<std::int64_t>(x.size()) / c;
  double m = 0, v = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    m += double(x[static_cast<std::size_t>(r * c + k)]);
  }
  m /= double(rows);
  for (std::int64_t r = 0; r < rows; ++r) {
    double const d = double(x[static_cast<std::size_t>(r * c + k)]) - m;
    v += d * d;
  }
  return {m, v / double(rows)};
}

// The gradient ops' inputs (dy, x, scale, mean, variance) from seeds seed..seed + 4, and x and dy
// as doubles for the references.
struct GradInputs {
  tf::Tensor<double, 4> x, dy;
  tf::Tensor<double, 1> scale, mean, var;
  std::int64_t c;
  std::vector<double> xs, gs;
};
GradInputs grad_inputs(std::array<std::int64_t, 4> dims, std::uint32_t seed) {
  auto const c = dims[3];
  GradInputs in{test_data<4>(dims, seed),
                test_data<4>(dims, seed + 1),
                test_data<1>({c}, seed + 2),
                test_data<1>({c}, seed + 3),
                tf::abs(test_data<1>({c}, seed + 4)) + 0.5,
                c,
                {},
                {}};
  in.xs = in.x.numpy();
  in.gs = in.dy.numpy();
  return in;
}
// x's batch mean and biased variance by channel, in ops (what the gradient ops take in training
// mode), or `mean` and `var` in inference mode.
template <class T>
std::pair<tf::Tensor<T, 1>, tf::Tensor<T, 1>> moments_for(bool training, tf::Tensor<T, 4> const& x,
                                                          tf::Tensor<T, 1> const& mean,
                                                          tf::Tensor<T, 1> const& var) {
  if (!training) {
    return {mean, var};
  }
  int const axes[3] = {0, 1, 2};
  auto m = tf::reduce_mean(x, axes);
  return {m, tf::reduce_mean(tf::math::squared_difference(x, m), axes)};
}

// 33 channels take the vector path and the scalar tail.
constexpr std::array<std::int64_t, 4> kGradDims{4, 7, 9, 33};

}  // namespace

TEST_CASE("fused_batch_norm matches the definition", "[ops][nn][batch_norm]") {
  std::uint32_t seed = 1;
  for (auto dims :
       {std::array<std::int64_t, 4>{2, 3, 4, 5}, std::array<std::int64_t, 4>{1, 1, 1, 3},
        std::array<std::int64_t, 4>{4, 7, 9, 33}}) {
    INFO(tf::Shape(dims).to_string());
    auto const c = dims[3];
    auto x = test_data<4>(dims, seed++);
    auto scale = test_data<1>({c}, seed++);
    auto offset = test_data<1>({c}, seed++);
    auto mean = test_data<1>({c}, seed++);
    auto var = tf::abs(test_data<1>({c}, seed++)) + 0.5;
    for (bool training : {true, false}) {
      auto y = tf::nn::fused_batch_norm(x, scale, offset, mean, var,
                                        {.epsilon = 1e-3f, .is_training = training});
      auto want = reference(x.numpy(), c, scale.numpy(), offset.numpy(), mean.numpy(), var.numpy(),
                            double(1e-3f), training);
      REQUIRE(y.dims() == dims);
      for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(y.values()[i] == Approx(want[i]).margin(1e-12));
      }
    }
  }
}

TEST_CASE("fused_batch_norm on [N, C] and [N, T, C]", "[ops][nn][batch_norm]") {
  auto x2 = test_data<2>({6, 3}, 7);
  auto x3 = tf::reshape(x2, std::array<std::int64_t, 3>{2, 3, 3});
  auto p = test_data<1>({3}, 8);
  auto v = tf::abs(p) + 1.0;
  for (bool training : {true, false}) {
    auto y2 = tf::nn::fused_batch_norm(x2, p, p, p, v, {.is_training = training});
    auto y3 = tf::nn::fused_batch_norm(x3, p, p, p, v, {.is_training = training});
    CHECK(y2.dims() == std::array<std::int64_t, 2>{6, 3});
    CHECK(y3.dims() == std::array<std::int64_t, 3>{2, 3, 3});
    auto want = reference(x2.numpy(), 3, p.numpy(), p.numpy(), p.numpy(), v.numpy(), double(1e-3f),
                          training);
    for (std::size_t i = 0; i < want.size(); ++i) {
      CHECK(y2.values()[i] == Approx(want[i]).margin(1e-12));
      CHECK(y3.values()[i] == Approx(want[i]).margin(1e-12));
    }
  }
}

TEST_CASE("fused_batch_norm matches TensorFlow (Keras 3 BatchNormalization)",
          "[ops][nn][batch_norm]") {
  // Printed by tests/data/keras_layers/reference_values.py batch_norm (TensorFlow 2.21, Keras
  // 3.15): BatchNormalization()(x, training) with the weights set to keras_params(4).
  auto x = keras_data<4>({2, 3, 3, 4});
  auto [gamma, beta, mean, var] = keras_params(4);
  std::vector<float> const training{
      -0.712635577f, 0.442118585f,   1.95673871f,   -1.57640433f,  1.06848359f,   -1.73703313f,
      -0.460524857f, 1.56823421f,    -0.53801614f,  0.678982913f,  2.21948481f,   -1.26810646f,
      1.24310315f,   -1.50016904f,   -0.197778821f, 1.8765322f,    -0.363396585f, 0.915847242f,
      2.4822309f,    -0.959808588f,  1.4177227f,    -1.26330471f,  0.06496723f,   2.18482995f,
      -0.18877703f,  1.15271163f,    -2.35229635f,  -0.651510715f, 1.59234214f,   -1.02644038f,
      0.327713281f,  2.49312782f,    -0.014157474f, 1.38957596f,   -2.08955026f,  -0.343212783f,
      1.76696157f,   -0.789575994f,  0.590459347f,  2.8014257f,    0.160462022f,  1.62644029f,
      -1.82680428f,  -0.0349148661f, 1.94158125f,   -0.552711666f, 0.853205383f,  -2.87125564f,
      0.335081577f,  1.86330462f,    -1.56405818f,  0.273383021f,  2.11620069f,   -0.315847337f,
      1.11595142f,   -2.56295776f,   0.509701073f,  2.10016894f,   -1.30131209f,  0.581680894f,
      -1.09679866f,  -0.0789829493f, 1.37869751f,   -2.25465965f,  0.684320629f,  2.33703327f,
      -1.03856611f,  0.889978766f,   -0.922179043f, 0.157881379f,  1.64144349f,   -1.9463619f};
  std::vector<float> const inference{
      -1.5367887f,   0.300000012f,  2.1609261f,    -1.81258655f,   1.46541429f,    -2.3769505f,
      -0.579033494f, 1.32920885f,   -1.24245524f,  0.5909729f,     2.45874786f,    -1.5045675f,
      1.7597481f,    -2.08597779f,  -0.281211793f, 1.63722813f,    -0.948121548f,  0.881945789f,
      2.75656962f,   -1.19654822f,  2.05408168f,   -1.79500484f,   0.0166099221f,  1.94524729f,
      -0.653787851f, 1.17291868f,   -2.72334981f,  -0.888529062f,  2.34841537f,    -1.5040319f,
      0.314431638f,  2.25326657f,   -0.359454155f, 1.46389151f,    -2.42552805f,   -0.580509901f,
      2.64274883f,   -1.21305895f,  0.612253308f,  2.56128573f,    -0.0651205778f, 1.75486445f,
      -2.12770653f,  -0.27249074f,  2.93708253f,   -0.922086179f,  0.910075068f,   -3.10626698f,
      0.229213089f,  2.0458374f,    -1.82988477f,  0.0355284214f,  3.23141623f,    -0.631113231f,
      1.20789671f,   -2.79824781f,  0.523546696f,  2.33681011f,    -1.53206289f,   0.343547612f,
      -2.18432283f,  -0.340140343f, 1.50571847f,   -2.49022865f,   0.817880392f,   2.62778306f,
      -1.23424125f,  0.651566744f,  -1.88998914f,  -0.0491674542f, 1.80354011f,    -2.18220973f};
  auto y_train = tf::nn::fused_batch_norm(x, gamma, beta, mean, var, {.is_training = true});
  auto y_infer = tf::nn::fused_batch_norm(x, gamma, beta, mean, var, {.is_training = false});
  CHECK(max_diff(y_train.numpy(), training) <= 1e-5);
  CHECK(max_diff(y_infer.numpy(), inference) <= 1e-5);
}

TEST_CASE("fused_batch_norm gradients", "[ops][nn][batch_norm]") {
  std::uint32_t seed = 30;
  for (auto dims :
       {std::array<std::int64_t, 4>{2, 2, 3, 3}, std::array<std::int64_t, 4>{3, 1, 1, 2}}) {
    INFO(tf::Shape(dims).to_string());
    auto const c = dims[3];
    auto x = test_data<4>(dims, seed++);
    auto scale = test_data<1>({c}, seed++) + 1.5;
    auto offset = test_data<1>({c}, seed++);
    auto mean = test_data<1>({c}, seed++);
    auto var = tf::abs(test_data<1>({c}, seed++)) + 0.5;
    for (bool training : {true, false}) {
      INFO("training " << training);
      check_gradients(
          [&](auto const& xv, auto const& s, auto const& o) {
            return tf::nn::fused_batch_norm(xv, s, o, mean, var, {.is_training = training});
          },
          x, scale, offset);
    }
  }
  // [N, C] (reshaped to [N, 1, 1, C] around the op).
  auto x = test_data<2>({5, 3}, 40);
  auto s = test_data<1>({3}, 41);
  auto offset = test_data<1>({3}, 42);
  auto mean = test_data<1>({3}, 43);
  auto var = tf::abs(s) + 0.25;
  for (bool training : {true, false}) {
    INFO("[5, 3] training " << training);
    check_gradients(
        [&](auto const& xv, auto const& sv, auto const& o) {
          return tf::nn::fused_batch_norm(xv, sv, o, mean, var, {.is_training = training});
        },
        x, s, offset);
  }
}

TEST_CASE("fused_batch_norm: second order in training mode", "[ops][nn][batch_norm]") {
  // The gradient is written in ops, so it is differentiable again: check d/dx of
  // sum(w * dL/dx) numerically through the first gradient.
  auto x = test_data<4>({2, 2, 2, 2}, 50);
  auto scale = test_data<1>({2}, 51) + 1.5;
  auto zero = tf::zeros<double>({2});
  auto one = tf::ones<double>({2});
  check_gradients(
      [&](auto const& xv) {
        tf::GradientTape inner;
        inner.watch(xv);
        auto y = tf::nn::fused_batch_norm(xv, scale, zero, zero, one);
        auto g = inner.gradient(tf::reduce_sum(y * y * y), xv);
        return *g;
      },
      x);
}

TEST_CASE("FusedBatchNormGradV3 matches the definition", "[ops][nn][batch_norm]") {
  // dx = s * r * (g - mean(g) - (x - m) * r^2 * mean(g * (x - m))) per channel in training,
  // g * s * r in inference.
  auto const in = grad_inputs(kGradDims, 70);
  auto const& xs = in.xs;
  auto const& gs = in.gs;
  auto const c = in.c;
  double const eps = double(1e-3f);
  auto const rows = static_cast<std::int64_t>(xs.size()) / c;
  for (bool training : {true, false}) {
    INFO("training " << training);
    auto const mv = moments_for(training, in.x, in.mean, in.var);
    auto dx = tf::detail::execute(tf::ops::FusedBatchNormGradV3{1e-3f, training}, in.dy, in.x,
                                  in.scale, mv.first, mv.second);
    for (std::int64_t k = 0; k < c; ++k) {
      auto at = [&](std::vector<double> const& v, std::int64_t r) {
        return v[static_cast<std::size_t>(r * c + k)];
      };
      auto const [m, v] = channel_moments(xs, c, k);
      double const gm = channel_moments(gs, c, k).first;
      double gc = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        gc += at(gs, r) * (at(xs, r) - m) / double(rows);
      }
      double const s = in.scale.values()[static_cast<std::size_t>(k)];
      double const rs = training
                            ? 1 / std::sqrt(v + eps)
                            : 1 / std::sqrt(in.var.values()[static_cast<std::size_t>(k)] + eps);
      for (std::int64_t r = 0; r < rows; ++r) {
        double const want = training ? s * rs * (at(gs, r) - gm - (at(xs, r) - m) * rs * rs * gc)
                                     : at(gs, r) * s * rs;
        CHECK(dx.values()[static_cast<std::size_t>(r * c + k)] == Approx(want).margin(1e-12));
      }
    }
  }
  auto other = test_data<4>({4, 7, 9, 32}, 75);
  CHECK_THROWS_WITH(
      tf::detail::execute(tf::ops::FusedBatchNormGradV3{}, other, in.x, in.scale, in.mean, in.var),
      Catch::Contains("FusedBatchNormGradV3: y_backprop of shape"));
}

TEST_CASE("batch_moments sums across chunk and block boundaries", "[ops][nn][batch_norm]") {
  // 3 channels: blocks of 5461 rows, chunks of 64; 2 blocks and a partial one, partial chunks,
  // and channels past the last full vector.
  for (std::int64_t c : {3, 19}) {
    INFO("channels " << c);
    std::int64_t const rows = tf::detail::nn_impl::batch_norm_block_rows(c) * 2 + 70;
    std::vector<float> x(static_cast<std::size_t>(rows * c));
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(double((i * 37 + 11) % 97) / 24.0 - 2.0 + 100.0 * double(i % 2));
    }
    auto const mv = tf::detail::nn_impl::batch_moments(x.data(), rows, c);
    for (std::int64_t k = 0; k < c; ++k) {
      auto const [m, v] = channel_moments(x, c, k);
      CHECK(mv[0][static_cast<std::size_t>(k)] == Approx(m).epsilon(1e-6));
      CHECK(mv[1][static_cast<std::size_t>(k)] == Approx(v).epsilon(1e-5));
    }
  }
}

TEST_CASE("batch_moments: a large mean and a small spread lose nothing", "[ops][nn][batch_norm]") {
  // x = 10000 + noise of spread ~0.1 (variance ~1e-2), with one outlying row first: one-pass
  // sums of squares would cancel to noise; chunked two-pass sums merged in double do not.
  for (std::int64_t c : {1, 16, 40}) {
    INFO("channels " << c);
    std::int64_t const rows = tf::detail::nn_impl::batch_norm_block_rows(c) * 3 + 17;
    std::vector<float> x(static_cast<std::size_t>(rows * c));
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(10000.0 + double((i * 37 + 11) % 97) / 400.0);
    }
    for (std::int64_t k = 0; k < c; ++k) {
      x[static_cast<std::size_t>(k)] = 10100.0f;
    }
    auto const mv = tf::detail::nn_impl::batch_moments(x.data(), rows, c);
    for (std::int64_t k = 0; k < c; ++k) {
      auto const [m, v] = channel_moments(x, c, k);
      CHECK(mv[0][static_cast<std::size_t>(k)] == Approx(m).epsilon(1e-7));  // float chunk sums
      CHECK(mv[1][static_cast<std::size_t>(k)] == Approx(v).epsilon(1e-4));
    }
  }
}

TEST_CASE("FusedBatchNormGradV3 gradients (second order of batch norm)", "[ops][nn][batch_norm]") {
  auto const in = grad_inputs({2, 2, 3, 3}, 80);
  auto const& x = in.x;
  auto const& dy = in.dy;
  auto const& mean = in.mean;
  auto const& var = in.var;
  auto const scale = in.scale + 1.5;
  for (bool training : {true, false}) {
    INFO("training " << training);
    check_gradients(
        [&](auto const& g, auto const& xv, auto const& s) {
          // In training the moments follow x, as they do where FusedBatchNormV3 passes them.
          auto const mv = moments_for(training, xv, mean, var);
          return tf::detail::execute(tf::ops::FusedBatchNormGradV3{1e-3f, training}, g, xv, s,
                                     mv.first, mv.second);
        },
        dy, x, scale);
  }
}

TEST_CASE("FusedBatchNormScaleGradV3 matches the definition", "[ops][nn][batch_norm]") {
  // dscale = sum over rows of dy * (x - m) / sqrt(v + eps) per channel, (m, v) the batch's
  // moments in training, the inputs in inference.
  auto const in = grad_inputs(kGradDims, 90);
  auto const& xs = in.xs;
  auto const& gs = in.gs;
  auto const c = in.c;
  double const eps = double(1e-3f);
  auto const rows = static_cast<std::int64_t>(xs.size()) / c;
  for (bool training : {true, false}) {
    INFO("training " << training);
    auto const mv = moments_for(training, in.x, in.mean, in.var);
    auto const dscale = tf::detail::execute(tf::ops::FusedBatchNormScaleGradV3{1e-3f, training},
                                            in.dy, in.x, in.scale, mv.first, mv.second);
    REQUIRE(dscale.dims() == std::array<std::int64_t, 1>{c});
    for (std::int64_t k = 0; k < c; ++k) {
      auto at = [&](std::vector<double> const& v, std::int64_t r) {
        return v[static_cast<std::size_t>(r * c + k)];
      };
      auto const [m, v] = training
                              ? channel_moments(xs, c, k)
                              : std::pair{double(in.mean.values()[static_cast<std::size_t>(k)]),
                                          double(in.var.values()[static_cast<std::size_t>(k)])};
      double want = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        want += at(gs, r) * (at(xs, r) - m) / std::sqrt(v + eps);
      }
      CHECK(dscale.values()[static_cast<std::size_t>(k)] == Approx(want).margin(1e-12));
    }
  }
  // The scale gradient of fused_batch_norm is this op: equal to sum(dy * xhat) in ops.
  auto const xhat =
      tf::nn::fused_batch_norm(in.x, tf::ones_like(in.scale), tf::zeros_like(in.scale), in.mean,
                               in.var, {.is_training = true});
  int const axes[3] = {0, 1, 2};
  auto const in_ops = tf::reduce_sum(in.dy * xhat, axes);
  tf::GradientTape tape;
  tape.watch(in.scale);
  auto const y =
      tf::nn::fused_batch_norm(in.x, in.scale, in.mean, in.mean, in.var, {.is_training = true});
  auto const g = tape.gradient(tf::reduce_sum(y * in.dy), in.scale);
  REQUIRE(g.has_value());
  for (std::int64_t k = 0; k < c; ++k) {
    CHECK(g->values()[static_cast<std::size_t>(k)] ==
          Approx(in_ops.values()[static_cast<std::size_t>(k)]).margin(1e-12));
  }
  auto other = test_data<4>({4, 7, 9, 32}, 95);
  CHECK_THROWS_WITH(tf::detail::execute(tf::ops::FusedBatchNormScaleGradV3{}, other, in.x, in.scale,
                                        in.mean, in.var),
                    Catch::Contains("FusedBatchNormGradV3: y_backprop of shape"));
}

TEST_CASE("FusedBatchNormScaleGradV3 gradients (second order of batch norm's scale)",
          "[ops][nn][batch_norm]") {
  auto const in = grad_inputs({2, 2, 3, 3}, 96);
  auto const& x = in.x;
  auto const& dy = in.dy;
  auto const& mean = in.mean;
  auto const& var = in.var;
  auto scale = in.scale + 1.5;
  for (bool training : {true, false}) {
    INFO("training " << training);
    check_gradients(
        [&](auto const& g, auto const& xv) {
          auto const mv = moments_for(training, xv, mean, var);
          return tf::detail::execute(tf::ops::FusedBatchNormScaleGradV3{1e-3f, training}, g, xv,
                                     scale, mv.first, mv.second);
        },
        dy, x);
  }
  // Through the first gradient: d/dx of sum(w * dL/dscale), the tape's second order.
  auto w = test_data<1>({3}, 101);
  check_gradients(
      [&](auto const& xv) {
        tf::GradientTape inner;
        inner.watch(scale);
        auto y = tf::nn::fused_batch_norm(xv, scale, mean, mean, var);
        auto g = inner.gradient(tf::reduce_sum(y * y * y), scale);
        return *g * w;
      },
      x);
}

TEST_CASE("fused_batch_norm: no gradient for mean and variance and errors",
          "[ops][nn][batch_norm]") {
  auto x = test_data<4>({2, 2, 2, 3}, 60);
  auto p = test_data<1>({3}, 61);
  auto v = tf::abs(p) + 1.0;
  tf::GradientTape tape({.persistent = true});
  tape.watch(p);
  tape.watch(v);
  auto y = tf::nn::fused_batch_norm(x, v, v, p, v, {.is_training = false});
  CHECK_FALSE(tape.gradient(tf::reduce_sum(y), p).has_value());
  // Mean and variance may be empty in training mode, as TensorFlow allows.
  auto empty = tf::zeros<double>({0});
  CHECK(tf::nn::fused_batch_norm(x, v, v, empty, empty).dims() == x.dims());
  CHECK_THROWS_AS(tf::nn::fused_batch_norm(x, v, v, empty, empty, {.is_training = false}),
                  tf::invalid_argument);
  auto wrong = test_data<1>({4}, 62);
  CHECK_THROWS_WITH(
      tf::nn::fused_batch_norm(x, wrong, v, p, v),
      Catch::Contains("FusedBatchNormV3: scale has 4 elements") && Catch::Contains("3 channels"));
}

TEST_CASE("FusedBatchNormV3 given the batch moments equals it computing them",
          "[ops][nn][batch_norm]") {
  // Keras' BatchNormalization hands the op the moments it computed for its moving averages: the
  // output and every gradient must be what the op computes without them.
  auto const in = grad_inputs(kGradDims, 110);
  auto const offset = test_data<1>({in.c}, 115);
  auto const mv = moments_for(true, in.x, in.mean, in.var);
  tf::GradientTape tape({.persistent = true});
  tape.watch(in.x);
  tape.watch(in.scale);
  tape.watch(offset);
  auto const y = tf::detail::execute(tf::ops::FusedBatchNormV3{1e-3f, true}, in.x, in.scale, offset,
                                     in.mean, in.var);
  auto const y_given = tf::detail::execute(tf::ops::FusedBatchNormV3{1e-3f, true, true}, in.x,
                                           in.scale, offset, mv.first, mv.second);
  for (std::size_t i = 0; i < in.xs.size(); ++i) {
    CHECK(y_given.values()[i] == Approx(y.values()[i]).margin(1e-12));
  }
  auto const loss = tf::reduce_sum(y * in.dy);
  auto const loss_given = tf::reduce_sum(y_given * in.dy);
  auto const dx = tape.gradient(loss, in.x);
  auto const dx_given = tape.gradient(loss_given, in.x);
  REQUIRE((dx.has_value() && dx_given.has_value()));
  for (std::size_t i = 0; i < in.xs.size(); ++i) {
    CHECK(dx_given->values()[i] == Approx(dx->values()[i]).margin(1e-12));
  }
  for (auto const& wrt : {in.scale, offset}) {
    auto const g = tape.gradient(loss, wrt);
    auto const g_given = tape.gradient(loss_given, wrt);
    REQUIRE((g.has_value() && g_given.has_value()));
    for (std::int64_t k = 0; k < in.c; ++k) {
      CHECK(g_given->values()[static_cast<std::size_t>(k)] ==
            Approx(g->values()[static_cast<std::size_t>(k)]).margin(1e-12));
    }
  }
  // Numerically, with the moments following x as the caller computes them.
  auto const small = grad_inputs({2, 2, 3, 3}, 120);
  check_gradients(
      [&](auto const& xv, auto const& s) {
        auto const m = moments_for(true, xv, small.mean, small.var);
        return tf::detail::execute(tf::ops::FusedBatchNormV3{1e-3f, true, true}, xv, s, small.mean,
                                   m.first, m.second);
      },
      small.x, small.scale);
  // Given moments must be there; the gradient ops always read theirs.
  auto const empty = tf::zeros<double>({0});
  CHECK_THROWS_WITH(tf::detail::execute(tf::ops::FusedBatchNormV3{1e-3f, true, true}, in.x,
                                        in.scale, offset, empty, empty),
                    Catch::Contains("FusedBatchNormV3: mean has 0 elements"));
  CHECK_THROWS_WITH(tf::detail::execute(tf::ops::FusedBatchNormGradV3{1e-3f, true}, in.dy, in.x,
                                        in.scale, empty, empty),
                    Catch::Contains("FusedBatchNormGradV3: mean has 0 elements"));
}

TEST_CASE("FusedBatchNormGradGivenSumsV3 equals FusedBatchNormGradV3 given its sums",
          "[ops][nn][batch_norm]") {
  // FusedBatchNormV3's gradient hands dx's op the scale and offset gradients it computed: the
  // result must be what FusedBatchNormGradV3 computes summing dy and x itself.
  auto const in = grad_inputs(kGradDims, 130);
  int const axes[3] = {0, 1, 2};
  auto const mv = moments_for(true, in.x, in.mean, in.var);
  auto const want = tf::detail::execute(tf::ops::FusedBatchNormGradV3{1e-3f, true}, in.dy, in.x,
                                        in.scale, mv.first, mv.second);
  auto const dscale = tf::detail::execute(tf::ops::FusedBatchNormScaleGradV3{1e-3f, true}, in.dy,
                                          in.x, in.scale, mv.first, mv.second);
  auto const doffset = tf::reduce_sum(in.dy, axes);
  auto const got = tf::detail::execute(tf::ops::FusedBatchNormGradGivenSumsV3{1e-3f}, in.dy, in.x,
                                       in.scale, mv.first, mv.second, dscale, doffset);
  for (std::size_t i = 0; i < in.xs.size(); ++i) {
    CHECK(got.values()[i] == Approx(want.values()[i]).margin(1e-12));
  }
  // float: the sums come rounded to float, dx stays within a few ulps of the op's.
  auto const xf = tf::cast<float>(in.x);
  auto const dyf = tf::cast<float>(in.dy);
  auto const sf = tf::cast<float>(in.scale);
  auto const mf = moments_for(true, xf, tf::cast<float>(in.mean), tf::cast<float>(in.var));
  auto const want_f = tf::detail::execute(tf::ops::FusedBatchNormGradV3{1e-3f, true}, dyf, xf, sf,
                                          mf.first, mf.second);
  auto const got_f = tf::detail::execute(
      tf::ops::FusedBatchNormGradGivenSumsV3{1e-3f}, dyf, xf, sf, mf.first, mf.second,
      tf::detail::execute(tf::ops::FusedBatchNormScaleGradV3{1e-3f, true}, dyf, xf, sf, mf.first,
                          mf.second),
      tf::reduce_sum(dyf, axes));
  CHECK(max_diff(got_f.numpy(), want_f.numpy()) < 1e-5);
  // The sums must have one element per channel.
  auto const wrong = test_data<1>({in.c + 1}, 135);
  CHECK_THROWS_WITH(tf::detail::execute(tf::ops::FusedBatchNormGradGivenSumsV3{1e-3f}, in.dy, in.x,
                                        in.scale, mv.first, mv.second, dscale, wrong),
                    Catch::Contains("FusedBatchNormGradV3: offset_backprop has 34 elements") &&
                        Catch::Contains("33 channels"));
  CHECK_THROWS_WITH(tf::detail::execute(tf::ops::FusedBatchNormGradGivenSumsV3{1e-3f}, in.dy, in.x,
                                        in.scale, mv.first, mv.second, wrong, doffset),
                    Catch::Contains("FusedBatchNormGradV3: scale_backprop has 34 elements"));
}

TEST_CASE("FusedBatchNormGradGivenSumsV3 gradients (second order of batch norm)",
          "[ops][nn][batch_norm]") {
  // Its gradient is FusedBatchNormGradV3's, for the sums as for the moments: numerically right
  // when, as in FusedBatchNormV3's gradient, they are computed from dy and x.
  auto const in = grad_inputs({2, 2, 3, 3}, 140);
  auto const scale = in.scale + 1.5;
  int const axes[3] = {0, 1, 2};
  check_gradients(
      [&](auto const& g, auto const& xv, auto const& s) {
        auto const mv = moments_for(true, xv, in.mean, in.var);
        auto const dscale = tf::detail::execute(tf::ops::FusedBatchNormScaleGradV3{1e-3f, true}, g,
                                                xv, s, mv.first, mv.second);
        return tf::detail::execute(tf::ops::FusedBatchNormGradGivenSumsV3{1e-3f}, g, xv, s,
                                   mv.first, mv.second, dscale, tf::reduce_sum(g, axes));
      },
      in.dy, in.x, scale);
  // Through a whole training-mode normalization, with the moments given (Keras) or not.
  auto const offset = test_data<1>({in.c}, 145);
  for (bool given : {false, true}) {
    INFO("moments given " << given);
    check_gradients(
        [&](auto const& xv) {
          tf::GradientTape inner;
          inner.watch(xv);
          auto const mv = moments_for(true, xv, in.mean, in.var);
          auto const y = tf::detail::execute(tf::ops::FusedBatchNormV3{1e-3f, true, given}, xv,
                                             scale, offset, mv.first, mv.second);
          return *inner.gradient(tf::reduce_sum(y * y * y), xv);
        },
        in.x);
  }
}

}  // namespace test_ops_nn_batch_norm
