// The layers tf.keras.applications models are built from (MobileNetV2, ResNet50, VGG16),
// against values Keras 3 printed: tests/data/keras_layers/reference_values.py <section>
// (TensorFlow 2.21, Keras 3.15, CPU) prints each `want` below.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/keras/layers/activation.hpp>
#include <tapeflow/keras/layers/batch_normalization.hpp>
#include <tapeflow/keras/layers/conv2d.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/layers/depthwise_conv2d.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/layers/global_pooling.hpp>
#include <tapeflow/keras/layers/merge.hpp>
#include <tapeflow/keras/layers/pooling.hpp>
#include <tapeflow/keras/layers/relu.hpp>
#include <tapeflow/keras/layers/rescaling.hpp>
#include <tapeflow/keras/layers/zero_padding2d.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_application_layers {

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {

// reference_values.py's inputs: data(shape, shift)[i] = float32(((i * 37 + 11 + shift) % 97) /
// 24.0 - 2.0).
template <std::size_t R>
tf::Tensor<float, R> data(std::array<std::int64_t, R> dims, std::int64_t shift = 0) {
  std::int64_t n = 1;
  for (auto d : dims) {
    n *= d;
  }
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] =
        static_cast<float>(double((i * 37 + 11 + shift) % 97) / 24.0 - 2.0);
  }
  return tf::constant<float, R>(v, dims);
}

// The largest |got - want|; the sizes must agree.
double max_diff(std::vector<float> const& got, std::vector<float> const& want) {
  REQUIRE(got.size() == want.size());
  double d = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    d = std::max(d, std::abs(double(got[i]) - double(want[i])));
  }
  return d;
}

// Sets a [c] weight to `values(k)` for k = 0..c-1 (as reference_values.py's set_weights).
template <class F>
void set_channels(tf::Variable<float, 1> v, F values) {
  std::vector<float> out;
  for (std::int64_t k = 0; k < v.dims()[0]; ++k) {
    out.push_back(static_cast<float>(values(static_cast<double>(k))));
  }
  v.assign(tf::constant<float, 1>(out, v.dims()));
}

void set_keras_params(layers::BatchNormalization const& bn) {
  set_channels(bn.gamma(), [](double k) { return 1.0 + 0.25 * k; });
  set_channels(bn.beta(), [](double k) { return 0.5 - 0.2 * k; });
  set_channels(bn.moving_mean(), [](double k) { return 0.1 * k - 0.1; });
  set_channels(bn.moving_variance(), [](double k) { return 0.5 + 0.3 * k; });
}

}  // namespace

TEST_CASE("BatchNormalization: weights, names, Keras 3 checkpoint attributes") {
  layers::BatchNormalization bn;
  auto y = bn(data<4>({2, 3, 3, 4}));
  CHECK(y.dims() == std::array<std::int64_t, 4>{2, 3, 3, 4});
  auto vars = bn.variables();
  REQUIRE(vars.size() == 4);
  std::string const prefix = bn.name() + "/";
  CHECK(vars[0].name() == prefix + "gamma");
  CHECK(vars[1].name() == prefix + "beta");
  CHECK(vars[2].name() == prefix + "moving_mean");
  CHECK(vars[3].name() == prefix + "moving_variance");
  CHECK(bn.trainable_variables().size() == 2);
  CHECK(bn.non_trainable_variables().size() == 2);
  for (auto layout : {tf::train::Layout::keras3, tf::train::Layout::tf_keras}) {
    auto children = bn.trackable_children(layout);
    REQUIRE(children.size() == 4);
    CHECK(children[0].name == "gamma");
    CHECK(children[1].name == "beta");
    CHECK(children[2].name == "moving_mean");
    CHECK(children[3].name == "moving_variance");
  }
  CHECK(bn.class_name() == "BatchNormalization");
  // Defaults: gamma 1, beta 0, moving mean 0, moving variance 1.
  CHECK(bn.gamma().value().numpy() == std::vector<float>(4, 1.0f));
  CHECK(bn.moving_variance().value().numpy() == std::vector<float>(4, 1.0f));

  layers::BatchNormalization bare({.center = false, .scale = false});
  (void)bare(data<2>({3, 2}));
  REQUIRE(bare.variables().size() == 2);
  CHECK(bare.trainable_variables().empty());
  CHECK_THROWS_AS(layers::BatchNormalization({.momentum = 1.5}), tf::invalid_argument);
  layers::BatchNormalization first_axis({.axis = 1});
  CHECK_THROWS_AS(first_axis(data<4>({1, 2, 2, 3})), tf::invalid_argument);
  CHECK_THROWS_AS(bn(data<4>({1, 2, 2, 5})), tf::invalid_argument);  // built for 4 channels
}

TEST_CASE("BatchNormalization matches Keras 3 (training and inference, NHWC and [N, C])") {
  // reference_values.py batch_norm: a fresh layer per call, weights set as set_keras_params.
  struct Want {
    std::vector<float> training, moving_mean, moving_variance, inference;
  };
  Want const nhwc{
      {-0.712635577f, 0.442118585f,   1.95673871f,   -1.57640433f,  1.06848359f,   -1.73703313f,
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
       -1.03856611f,  0.889978766f,   -0.922179043f, 0.157881379f,  1.64144349f,   -1.9463619f},
      {-0.0999490768f, -0.00124999962f, 0.0996944457f, 0.198393524f},
      {0.509224176f, 0.804077566f, 1.10313582f, 1.3999747f},
      {-1.5367887f,   0.300000012f,  2.1609261f,    -1.81258655f,   1.46541429f,    -2.3769505f,
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
       -1.23424125f,  0.651566744f,  -1.88998914f,  -0.0491674542f, 1.80354011f,    -2.18220973f}};
  Want const nc{{-0.913175821f, -0.0773402154f, 2.71154571f, -0.206587911f, 0.536934614f,
                 -1.65858114f, 0.5f, 1.15120935f, -0.92145133f, 1.20658791f, 1.76548421f,
                 -0.184321463f, 1.91317582f, -1.87628794f, 0.552808344f},
                {-0.102749996f, 0.00358333322f, 0.09375f},
                {0.501805544f, 0.80608058f, 1.10308051f},
                {-1.5367887f, 0.300000012f, 2.1609261f, -0.712654591f, 1.11472416f, -2.78291416f,
                 0.11147964f, 1.92944813f, -1.94901347f, 0.935613811f, 2.74417233f, -1.11511254f,
                 1.7597481f, -2.08597779f, -0.281211793f}};

  auto check = [](auto const& x, Want const& want) {
    layers::BatchNormalization train;
    (void)train(x);  // build
    set_keras_params(train);
    auto y = train(x, {.training = true});
    CHECK(max_diff(y.numpy(), want.training) <= 1e-5);
    CHECK(max_diff(train.moving_mean().value().numpy(), want.moving_mean) <= 1e-6);
    CHECK(max_diff(train.moving_variance().value().numpy(), want.moving_variance) <= 1e-6);
    layers::BatchNormalization infer;
    (void)infer(x);
    set_keras_params(infer);
    CHECK(max_diff(infer(x).numpy(), want.inference) <= 1e-5);
    CHECK(max_diff(infer(x, {.training = false}).numpy(), want.inference) <= 1e-5);
    // A frozen layer normalizes with its moving statistics and leaves them alone.
    infer.set_trainable(false);
    CHECK(max_diff(infer(x, {.training = true}).numpy(), want.inference) <= 1e-5);
    std::vector<float> initial;
    for (std::int64_t k = 0; k < x.dims().back(); ++k) {
      initial.push_back(static_cast<float>(0.1 * double(k) - 0.1));
    }
    CHECK(infer.moving_mean().value().numpy() == initial);
  };
  check(data<4>({2, 3, 3, 4}), nhwc);
  check(data<2>({5, 3}), nc);
}

TEST_CASE("BatchNormalization: gradients flow to x, gamma and beta") {
  // The op's gradients are checked numerically in tests/unit/ops/nn/batch_norm.test.cpp; here
  // the layer hands them to its trainable weights only.
  layers::BatchNormalization bn;
  auto x = data<4>({2, 2, 2, 3});
  (void)bn(x);
  tf::GradientTape tape;
  tape.watch(x);
  auto loss = tf::reduce_sum(tf::square(bn(x, {.training = true})) * x);
  auto ids = tf::ids_of(bn.trainable_variables());
  ids.push_back(x.id());
  auto grads = tape.gradient_by_id(loss, ids);
  REQUIRE(grads.size() == 3);
  CHECK(grads[2].has_value());
  CHECK(grads[0].has_value());
  CHECK(grads[1].has_value());
}

TEST_CASE("GlobalAveragePooling2D and GlobalMaxPooling2D match Keras 3 and keepdims") {
  // reference_values.py pooling.
  std::vector<float> const mean{0.160416663f,  0.0854166672f, -0.191666678f,
                                -0.297916651f, 0.233333319f,  -0.0437499955f};
  std::vector<float> const max{2.0f, 1.83333337f, 1.625f, 1.54166663f, 1.95833337f, 1.75f};
  auto x = data<4>({2, 4, 5, 3});
  layers::GlobalAveragePooling2D gap;
  layers::GlobalMaxPooling2D gmp;
  auto a = gap(x);
  auto m = gmp(x);
  CHECK(a.dims() == std::array<std::int64_t, 2>{2, 3});
  CHECK(m.dims() == std::array<std::int64_t, 2>{2, 3});
  CHECK(max_diff(a.numpy(), mean) <= 1e-6);
  CHECK(max_diff(m.numpy(), max) == 0);
  layers::GlobalAveragePooling2D gap_kept(tf::keepdims);
  layers::GlobalMaxPooling2D gmp_kept(tf::keepdims, {.name = "kept"});
  auto ak = gap_kept(x);
  CHECK(ak.dims() == std::array<std::int64_t, 4>{2, 1, 1, 3});
  CHECK(max_diff(ak.numpy(), mean) <= 1e-6);
  CHECK(gmp_kept(x).dims() == std::array<std::int64_t, 4>{2, 1, 1, 3});
  CHECK(gmp_kept.name() == "kept");
  CHECK(gap.class_name() == "GlobalAveragePooling2D");
  CHECK(gmp_kept.class_name() == "GlobalMaxPooling2D");
  CHECK(gap.variables().empty());
  CHECK(gap.name().rfind("global_average_pooling2d", 0) == 0);
  // Gradients: the mean spreads 1 / (H * W); the max routes to the maximum.
  tf::GradientTape tape({.persistent = true});
  tape.watch(x);
  auto ga = tape.gradient(tf::reduce_sum(gap(x)), x);
  auto gm = tape.gradient(tf::reduce_sum(gmp(x)), x);
  for (float g : ga->values()) {
    CHECK(g == Approx(1.0 / 20.0));
  }
  CHECK(tf::reduce_sum(*gm).item() == Approx(6.0));
  // In a Sequential model, ranks are checked at compile time.
  tf::keras::Sequential model(layers::GlobalAveragePooling2D{});
  CHECK(model(x).dims() == std::array<std::int64_t, 2>{2, 3});
}

TEST_CASE("AveragePooling2D matches Keras 3 (SAME counts only the valid elements)") {
  // reference_values.py pooling.
  std::vector<float> const same{
      -1.02083337f,  0.520833313f,  0.0416666679f, 0.145833328f,  1.01388896f,   -0.8125f,
      1.02083337f,   -0.46875003f,  0.0625000075f, -0.486111045f, -0.291666657f, 0.80092597f,
      -0.666666687f, 0.875f,        -0.277777791f, 0.208333328f,  0.402777791f,  -0.75f,
      0.722222269f,  -1.10416663f,  0.4375f,       -0.805555522f, 0.0625f,       0.930555522f,
      -0.604166627f, 0.9375f,       -0.552083373f, 0.31249997f,   -0.166666672f, -0.645833313f,
      0.805555522f,  -1.02083337f,  0.520833313f,  -0.677083373f, -0.145833328f, 1.39583337f,
      -0.5f,         0.592592597f,  -0.560185194f, 0.666666687f,  -0.486111045f, -0.291666657f,
      0.868055582f,  -0.958333313f, 0.583333313f,  -0.638888836f, 0.229166672f,  -0.249999985f,
      -0.145833328f, 0.722222269f,  -1.10416663f,  0.729166687f,  -0.760416627f, -0.229166672f};
  std::vector<float> const valid{
      -1.02083337f,   0.520833313f,  0.0416666679f, 0.729166687f,  0.249999985f,  -0.229166672f,
      -0.0833333358f, -0.56249994f,  0.979166687f,  -0.354166716f, 0.513888896f,  -0.638888836f,
      0.31249997f,    -0.166666672f, -0.645833313f, 0.0416666679f, -0.4375f,      1.10416663f,
      -0.770833313f,  0.770833313f,  -0.381944418f, 0.979166687f,  -0.847222269f, 0.0208333377f};
  auto x = data<4>({2, 5, 6, 3}, 5);
  layers::AveragePooling2D same_pool(3, {.strides = 2, .padding = "same"});
  auto y = same_pool(x);
  CHECK(y.dims() == std::array<std::int64_t, 4>{2, 3, 3, 3});
  CHECK(max_diff(y.numpy(), same) <= 1e-6);
  layers::AveragePooling2D valid_pool({2, 3});
  auto z = valid_pool(x);
  CHECK(z.dims() == std::array<std::int64_t, 4>{2, 2, 2, 3});
  CHECK(max_diff(z.numpy(), valid) <= 1e-6);
}

TEST_CASE("ZeroPadding2D matches Keras 3 and padding forms and gradient") {
  // reference_values.py pooling.
  std::vector<float> const want{
      0.0f,   0.0f,         0.0f,    0.0f,        0.0f,          0.0f,         0.0f,
      0.0f,   -1.54166663f, 0.0f,    1.54166663f, -0.958333313f, 0.583333313f, -1.91666663f,
      0.0f,   0.0f,         -0.375f, 1.16666663f, -1.33333337f,  0.208333328f, 1.75f,
      -0.75f, 0.0f,         0.0f,    0.0f,        0.0f,          0.0f,         0.0f,
      0.0f,   0.0f,         0.0f,    0.0f,        0.0f,          0.0f,         0.0f,
      0.0f,   0.0f,         0.0f,    0.0f,        0.0f};
  auto x = data<4>({1, 2, 3, 2});
  layers::ZeroPadding2D pad({{1, 2}, {0, 1}});
  auto y = pad(x);
  CHECK(y.dims() == std::array<std::int64_t, 4>{1, 5, 4, 2});
  CHECK(y.numpy() == want);
  CHECK(pad.class_name() == "ZeroPadding2D");
  CHECK(layers::ZeroPadding2D()(x).dims() == std::array<std::int64_t, 4>{1, 4, 5, 2});
  CHECK(layers::ZeroPadding2D(3)(x).dims() == std::array<std::int64_t, 4>{1, 8, 9, 2});
  CHECK(layers::ZeroPadding2D({2, 0})(x).dims() == std::array<std::int64_t, 4>{1, 6, 3, 2});
  CHECK_THROWS_AS(layers::ZeroPadding2D(-1), tf::invalid_argument);
  tf::GradientTape tape;
  tape.watch(x);
  auto g = tape.gradient(tf::reduce_sum(pad(x) * 2.0f), x);
  CHECK(g->numpy() == std::vector<float>(12, 2.0f));
}

TEST_CASE("ReLU matches Keras 3 (max_value, negative_slope, threshold)") {
  // reference_values.py activations: x = data((2, 3, 4)) * 4, in [-8, 8].
  auto x = data<3>({2, 3, 4}) * 4.0f;
  struct Case {
    layers::ReLUOptions options;
    std::vector<float> want;
  };
  std::vector<Case> const cases{
      {{}, {0.0f, 0.0f,         6.16666651f, 0.0f, 2.33333325f, 0.0f, 0.0f,         4.66666651f,
            0.0f, 0.833333313f, 7.0f,        0.0f, 3.16666675f, 0.0f, 0.0f,         5.5f,
            0.0f, 1.66666663f,  7.83333349f, 0.0f, 4.0f,        0.0f, 0.166666672f, 6.33333349f}},
      {{.max_value = 6.0f},
       {0.0f, 0.0f,         6.0f, 0.0f, 2.33333325f, 0.0f, 0.0f,         4.66666651f,
        0.0f, 0.833333313f, 6.0f, 0.0f, 3.16666675f, 0.0f, 0.0f,         5.5f,
        0.0f, 1.66666663f,  6.0f, 0.0f, 4.0f,        0.0f, 0.166666672f, 6.0f}},
      {{.max_value = 4.5f},
       {0.0f, 0.0f,         4.5f, 0.0f, 2.33333325f, 0.0f, 0.0f,         4.5f,
        0.0f, 0.833333313f, 4.5f, 0.0f, 3.16666675f, 0.0f, 0.0f,         4.5f,
        0.0f, 1.66666663f,  4.5f, 0.0f, 4.0f,        0.0f, 0.166666672f, 4.5f}},
      {{.negative_slope = 0.1f},
       {-0.616666675f, 0.0f,          6.16666651f,    -0.383333325f, 2.33333325f,   -0.766666651f,
        -0.150000006f, 4.66666651f,   -0.533333361f,  0.833333313f,  7.0f,          -0.300000012f,
        3.16666675f,   -0.683333337f, -0.0666666701f, 5.5f,          -0.450000018f, 1.66666663f,
        7.83333349f,   -0.216666684f, 4.0f,           -0.600000024f, 0.166666672f,  6.33333349f}},
      {{.threshold = 0.5f},
       {0.0f, 0.0f,         6.16666651f, 0.0f, 2.33333325f, 0.0f, 0.0f, 4.66666651f,
        0.0f, 0.833333313f, 7.0f,        0.0f, 3.16666675f, 0.0f, 0.0f, 5.5f,
        0.0f, 1.66666663f,  7.83333349f, 0.0f, 4.0f,        0.0f, 0.0f, 6.33333349f}},
      {{.max_value = 6.0f, .negative_slope = 0.2f, .threshold = 1.0f},
       {-1.43333328f, -0.200000003f, 6.0f,          -0.966666639f,  2.33333325f,   -1.73333323f,
        -0.5f,        4.66666651f,   -1.26666677f,  -0.0333333388f, 6.0f,          -0.800000012f,
        3.16666675f,  -1.56666672f,  -0.333333343f, 5.5f,           -1.10000002f,  1.66666663f,
        6.0f,         -0.633333385f, 4.0f,          -1.39999998f,   -0.166666672f, 6.0f}},
  };
  for (auto const& c : cases) {
    layers::ReLU relu(c.options);
    CHECK(max_diff(relu(x).numpy(), c.want) <= 1e-6);
  }
  CHECK(layers::ReLU().name().rfind("re_lu", 0) == 0);
  CHECK(layers::ReLU().class_name() == "ReLU");
  CHECK_THROWS_AS(layers::ReLU({.max_value = -1.0f}), tf::invalid_argument);
  CHECK_THROWS_AS(layers::ReLU({.negative_slope = -0.5f}), tf::invalid_argument);
  // Gradients: 1 inside (0, max), slope below the threshold, 0 above max.
  auto p = tf::constant<float>({-2.0f, 0.5f, 3.0f, 7.0f});
  layers::ReLU relu6({.max_value = 6.0f});
  layers::ReLU leaky({.max_value = 6.0f, .negative_slope = 0.25f});
  tf::GradientTape tape({.persistent = true});
  tape.watch(p);
  auto g6 = tape.gradient(tf::reduce_sum(relu6(p)), p);
  auto gl = tape.gradient(tf::reduce_sum(leaky(p)), p);
  CHECK(g6->numpy() == std::vector<float>{0, 1, 1, 0});
  CHECK(gl->numpy() == std::vector<float>{0.25f, 1, 1, 0});
}

TEST_CASE("Activation layer and Rescaling match Keras 3") {
  // reference_values.py activations.
  auto x = data<3>({2, 3, 4}) * 4.0f;
  layers::Activation relu6("relu6");
  CHECK(max_diff(relu6(x).numpy(),
                 {0.0f, 0.0f,         6.0f, 0.0f, 2.33333325f, 0.0f, 0.0f,         4.66666651f,
                  0.0f, 0.833333313f, 6.0f, 0.0f, 3.16666675f, 0.0f, 0.0f,         5.5f,
                  0.0f, 1.66666663f,  6.0f, 0.0f, 4.0f,        0.0f, 0.166666672f, 6.0f}) == 0);
  layers::Activation softmax("softmax");
  CHECK(max_diff(softmax(data<3>({2, 3, 4})).numpy(),
                 {0.0341350324f, 0.159491494f,  0.745203495f, 0.0611700341f, 0.306972712f,
                  0.0251978599f, 0.117733724f,  0.550095677f, 0.0341350213f, 0.159491494f,
                  0.745203495f,  0.0611700341f, 0.306972712f, 0.0251978543f, 0.117733724f,
                  0.550095677f,  0.0341350213f, 0.159491479f, 0.745203495f,  0.0611700341f,
                  0.306972712f,  0.0251978561f, 0.117733724f, 0.550095737f}) <= 1e-6);
  layers::Activation by_function(tf::nn::relu);
  CHECK(by_function(x).numpy() == layers::ReLU()(x).numpy());
  CHECK(relu6.class_name() == "Activation");
  CHECK(relu6.name().rfind("activation", 0) == 0);
  CHECK(relu6.variables().empty());
  CHECK_THROWS_AS(layers::Activation("no_such_activation"), tf::invalid_argument);

  std::vector<std::uint8_t> pixels;
  for (int i = 0; i < 24; ++i) {
    pixels.push_back(static_cast<std::uint8_t>((i * 37) % 256));
  }
  auto images = tf::constant<std::uint8_t, 3>(pixels, {2, 3, 4});
  layers::Rescaling rescale(static_cast<float>(1.0 / 127.5), {.offset = -1.0f});
  auto y = rescale(images);
  static_assert(std::is_same_v<decltype(y), tf::Tensor<float, 3>>);
  CHECK(max_diff(y.numpy(),
                 {-1.0f,         -0.709803939f, -0.419607818f,  -0.129411697f, 0.160784364f,
                  0.450980425f,  0.741176605f,  -0.97647059f,   -0.686274529f, -0.396078408f,
                  -0.105882287f, 0.184313774f,  0.474509835f,   0.764706016f,  -0.952941179f,
                  -0.662745118f, -0.372548997f, -0.0823528767f, 0.207843184f,  0.498039246f,
                  0.788235426f,  -0.929411769f, -0.639215708f,  -0.349019587f}) <= 1e-6);
  CHECK(rescale.class_name() == "Rescaling");
  CHECK(layers::Rescaling(2.0f)(x).numpy() == (x * 2.0f).numpy());
}

TEST_CASE("Add and Concatenate match Keras 3 and Reshape") {
  // reference_values.py merging.
  auto a = data<3>({2, 3, 4});
  auto b = data<3>({2, 3, 4}, 1);
  auto c = data<3>({2, 3, 4}, 2);
  layers::Add add;
  CHECK(max_diff(add(std::vector{a, b, c}).numpy(),
                 {-4.5f,       0.125f,       4.75f,        -2.75f,  1.875f, -5.625f,
                  -1.0f,       3.625f,       -3.875f,      0.75f,   5.375f, -2.125f,
                  2.5f,        -5.0f,        -0.37500003f, 4.25f,   -3.25f, 1.375f,
                  1.95833349f, -1.50000012f, 3.125f,       -4.375f, 0.25f,  4.875f}) <= 1e-6);
  CHECK(add(a, b).numpy() == (a + b).numpy());
  CHECK(add.class_name() == "Add");
  CHECK_THROWS_AS(add(std::vector<tf::Tensor<float, 3>>{}), tf::invalid_argument);
  layers::Concatenate concat;
  auto last = concat(std::vector{a, b});
  CHECK(last.dims() == std::array<std::int64_t, 3>{2, 3, 8});
  CHECK(
      last.numpy() ==
      std::vector<float>{
          -1.54166663f,  0.0f,          1.54166663f,   -0.958333313f, -1.5f,         0.0416666679f,
          1.58333337f,   -0.916666687f, 0.583333313f,  -1.91666663f,  -0.375f,       1.16666663f,
          0.625f,        -1.875f,       -0.333333343f, 1.20833337f,   -1.33333337f,  0.208333328f,
          1.75f,         -0.75f,        -1.29166663f,  0.25f,         1.79166663f,   -0.708333313f,
          0.791666687f,  -1.70833337f,  -0.166666672f, 1.375f,        0.833333313f,  -1.66666663f,
          -0.125f,       1.41666663f,   -1.125f,       0.416666657f,  1.95833337f,   -0.541666687f,
          -1.08333337f,  0.458333343f,  2.0f,          -0.5f,         1.0f,          -1.5f,
          0.0416666679f, 1.58333337f,   1.04166663f,   -1.45833337f,  0.0833333358f, 1.625f});
  layers::Concatenate rows(1);
  auto joined = rows(a, b);
  CHECK(joined.dims() == std::array<std::int64_t, 3>{2, 6, 4});
  CHECK(joined.numpy() ==
        std::vector<float>{-1.54166663f,  0.0f,          1.54166663f,  -0.958333313f, 0.583333313f,
                           -1.91666663f,  -0.375f,       1.16666663f,  -1.33333337f,  0.208333328f,
                           1.75f,         -0.75f,        -1.5f,        0.0416666679f, 1.58333337f,
                           -0.916666687f, 0.625f,        -1.875f,      -0.333333343f, 1.20833337f,
                           -1.29166663f,  0.25f,         1.79166663f,  -0.708333313f, 0.791666687f,
                           -1.70833337f,  -0.166666672f, 1.375f,       -1.125f,       0.416666657f,
                           1.95833337f,   -0.541666687f, 1.0f,         -1.5f,         0.0416666679f,
                           1.58333337f,   0.833333313f,  -1.66666663f, -0.125f,       1.41666663f,
                           -1.08333337f,  0.458333343f,  2.0f,         -0.5f,         1.04166663f,
                           -1.45833337f,  0.0833333358f, 1.625f});
  CHECK(rows.class_name() == "Concatenate");
  CHECK_THROWS_AS(concat(std::vector{a, data<3>({2, 2, 4})}), tf::invalid_argument);
  // Gradients reach every input.
  tf::GradientTape tape({.persistent = true});
  tape.watch(a);
  tape.watch(b);
  auto s = tf::reduce_sum(add(a, b) * 3.0f) + tf::reduce_sum(concat(a, b) * 2.0f);
  CHECK(tape.gradient(s, a)->numpy() == std::vector<float>(24, 5.0f));
  CHECK(tape.gradient(s, b)->numpy() == std::vector<float>(24, 5.0f));
  // Reshape (keras/layers/flatten.hpp) with an inferred axis, as Keras' Reshape((3, -1)).
  layers::Reshape reshape({3, -1});
  CHECK(reshape(a).dims() == std::array<std::int64_t, 3>{2, 3, 4});
  CHECK(layers::Reshape({-1})(a).dims() == std::array<std::int64_t, 2>{2, 12});
}

TEST_CASE("DepthwiseConv2D: weights named as Keras, values match Keras 3") {
  // reference_values.py depthwise: kernel = data(kernel_shape, 7) / 2, bias[k] = 0.1 k - 0.2.
  auto x = data<4>({2, 5, 6, 3});
  auto set = [](layers::DepthwiseConv2D& layer, bool bias) {
    auto kernel = layer.depthwise_kernel();
    kernel.assign(data<4>(kernel.dims(), 7) / 2.0f);
    if (bias) {
      set_channels(layer.bias(), [](double k) { return 0.1 * k - 0.2; });
    }
  };
  layers::DepthwiseConv2D same(3, {.padding = "same"});
  (void)same(x);
  set(same, true);
  auto y = same(x);
  CHECK(y.dims() == std::array<std::int64_t, 4>{2, 5, 6, 3});
  CHECK(max_diff(y.numpy(),
                 {-2.54809046f,   -0.414236099f, -0.8984375f,    -1.97864568f,   -0.638194501f,
                  2.66927099f,    1.53263867f,   -1.58611095f,   0.377604157f,   1.42326391f,
                  -0.849999905f,  -1.66145825f,  1.31388891f,    -0.787500083f,  -1.09027767f,
                  0.0152778327f,  1.9034723f,    -0.510416627f,  -1.31631947f,   0.281944424f,
                  -0.0260416623f, -2.0098958f,   1.3479166f,     2.85677075f,    -1.27118051f,
                  1.16562498f,    2.42708349f,   1.65677083f,    -1.96371531f,   -0.10763897f,
                  0.964062512f,   -2.23020816f,  -2.38975692f,   -0.554166734f,  -1.30312514f,
                  -1.76909721f,   0.659374952f,  -0.0791666806f, -1.71354175f,   -1.70347238f,
                  1.51718748f,    0.699652672f,  0.382465243f,   1.33489585f,    2.88020873f,
                  2.29999995f,    1.1526041f,    2.45052075f,    1.60729146f,    -1.97673619f,
                  -0.0842013881f, 0.348611057f,  -2.98975706f,   -2.59288192f,   0.445833385f,
                  0.2333332f,     -1.29600692f,  -3.67048597f,   1.18124998f,    -1.71006942f,
                  -3.94218779f,   1.5041666f,    0.723090291f,   -0.677430391f,  1.3218751f,
                  2.90364623f,    2.25052071f,   1.13958347f,    2.47395825f,    1.25138879f,
                  -0.634722173f,  -0.806423664f, 0.392013907f,   -2.2388885f,    -0.246527761f,
                  0.680208266f,   -1.46371543f,  -0.714409709f,  -0.976041615f,  2.10399318f,
                  -0.848090291f,  -0.274652839f, 1.63003469f,    1.12326396f,    -0.920486212f,
                  1.15607631f,    2.8420136f,    -0.368402839f,  -0.129513949f,  -1.16145837f,
                  0.504861116f,   -1.0809027f,   -0.990451455f,  1.39201367f,    -1.12083304f,
                  -1.49826384f,   1.28263879f,   -1.05833328f,   -0.927083313f,  -2.19479156f,
                  1.3618052f,     -0.355902791f, -3.2303822f,    0.919097066f,   0.215277717f,
                  -1.68697929f,   0.186458349f,  1.37847221f,    0.310416639f,   1.17083347f,
                  3.74565959f,    1.45885396f,   -2.01579857f,   -0.0138887893f, 0.766145825f,
                  -2.28229141f,   -2.29600692f,  0.241840348f,   -2.04357648f,   -1.9678818f,
                  -2.47170138f,   1.1421876f,    -1.63975692f,   -1.09236109f,   1.12569439f,
                  0.258680582f,   0.265277922f,  0.809722245f,   1.21614587f,    2.10208321f,
                  1.10052097f,    2.54427075f,   1.40937495f,    -2.02881956f,   0.00954863988f,
                  0.716666639f,   -4.14774275f,  -2.27256918f,   0.192360982f,   -2.73020816f,
                  -1.94444454f,   -0.526388884f, 1.71249998f,    -0.565104187f,  -2.22170162f,
                  0.44861111f,    -0.218750015f, -0.875347018f,  1.2697916f,     2.99739599f,
                  2.05260396f,    1.08749998f,   2.56770825f,    1.35989571f,    -0.357812494f,
                  0.0329859257f,  0.667187572f,  -1.29791701f,   -2.24913192f,   -0.970833182f,
                  1.79409695f,    -1.38888884f,  -0.127083272f,  0.679513872f,   -1.46874988f,
                  -0.170486197f,  1.49461818f,   1.08506942f,    -0.816319466f,  1.02065969f,
                  2.80381942f,    -0.451736093f, -2.40034723f,   -1.28732646f,   -0.0871527642f,
                  -2.95850682f,   -0.494791687f, -0.590625048f,  -1.12430549f,   -0.318576366f}) <=
        1e-5);

  layers::DepthwiseConv2D strided(3, {.strides = 2, .padding = "same", .depth_multiplier = 2});
  (void)strided(x);
  set(strided, true);
  auto z = strided(x);
  CHECK(z.dims() == std::array<std::int64_t, 4>{2, 3, 3, 6});
  CHECK(max_diff(z.numpy(),
                 {3.92673612f,   -1.74236119f,   -1.16753471f,  1.38819444f,    2.38750005f,
                  2.39027762f,   -0.303298622f,  -0.239757001f, 0.2578125f,     -1.97899306f,
                  -0.214930579f, -0.710416615f,  -1.6114583f,   0.488541633f,   -1.13802075f,
                  0.0739583522f, 0.498611093f,   -0.440451324f, -4.25034714f,   0.294097334f,
                  -2.18836784f,  3.1156249f,     -1.21406257f,  -2.13923621f,   1.14114583f,
                  -0.703298628f, -1.0703125f,    2.89687514f,   3.12447906f,    3.97795105f,
                  -0.78680557f,  0.997222185f,   3.36979151f,   -2.70381951f,   -1.08559024f,
                  -0.197395921f, -2.06979179f,   1.4173609f,    1.69704866f,    -1.66302073f,
                  -1.29565966f,  0.116840288f,   -0.446527719f, -0.573090374f,  -0.791666687f,
                  1.58090281f,   -0.48663193f,   -1.50902772f,  1.81041646f,    -0.59479171f,
                  -0.509548604f, 0.0704860985f,  -0.403298557f, 4.50920153f,    -0.414409757f,
                  -0.253645867f, 0.341145784f,   -2.13524318f,  -0.273958266f,  -0.672222316f,
                  -2.28680563f,  3.60659742f,    -0.422742903f, -0.702951372f,  -0.687152743f,
                  -0.404861152f, 4.37986135f,    -1.44982648f,  -1.0703125f,    1.22152781f,
                  2.2208333f,    0.00399309397f, 1.00920117f,   -0.689409792f,  -0.910590231f,
                  2.86562467f,   2.90225697f,    3.90156269f,   0.0855903476f,  -0.592187405f,
                  4.83854151f,   -5.18385458f,   -0.842534602f, -0.0012152791f, -2.75729179f,
                  -0.616493106f, -3.02343726f,   3.38472199f,   -0.113368079f,  -1.14184022f,
                  -0.623611033f, -0.6529513f,    -0.774305463f, 1.69548619f,    -0.611632049f,
                  -1.53680563f,  1.75746524f,    -0.706770837f, -0.905381918f,  -0.87048614f,
                  0.534201324f,  4.16284752f,    -0.689583361f, 1.01631951f,    1.42361104f,
                  -0.452951401f, -0.604687512f,  -0.0854166746f}) <= 1e-5);

  layers::DepthwiseConv2D dilated({2, 3}, {.dilation_rate = 2, .use_bias = false});
  (void)dilated(x);
  set(dilated, false);
  auto d = dilated(x);
  CHECK(d.dims() == std::array<std::int64_t, 4>{2, 3, 2, 3});
  CHECK(
      max_diff(d.numpy(), {0.376735955f, -0.231770873f, 2.13715267f,   0.741319418f,  -0.705729187f,
                           -1.95399308f, -2.48784733f,  3.15538192f,   2.26128483f,   0.40277791f,
                           -0.26562497f, 2.12760448f,   -0.637152612f, -0.446180552f, 0.532986104f,
                           -2.46180558f, 3.12152767f,   2.25173616f,   0.368055493f,  -1.39930558f,
                           -2.12586784f, 0.732638896f,  -1.87326396f,  -1.33333325f,  -0.138888985f,
                           0.809027731f, -2.0017364f,   0.394097209f,  -1.43315971f,  -2.13541675f,
                           0.532986045f, -0.434895873f, 2.07986116f,   -0.112847269f, 0.775173604f,
                           -2.01128483f}) <= 1e-5);

  // Names: the variable and tf_keras attribute "depthwise_kernel"; Keras 3's attribute "kernel".
  auto vars = strided.variables();
  REQUIRE(vars.size() == 2);
  CHECK(vars[0].name() == strided.name() + "/depthwise_kernel");
  CHECK(vars[0].shape() == tf::Shape({3, 3, 3, 2}));
  CHECK(vars[1].name() == strided.name() + "/bias");
  CHECK(vars[1].shape() == tf::Shape({6}));
  auto keras3 = strided.trackable_children(tf::train::Layout::keras3);
  REQUIRE(keras3.size() == 2);
  CHECK(keras3[0].name == "kernel");
  CHECK(keras3[1].name == "bias");
  CHECK(strided.trackable_children(tf::train::Layout::tf_keras)[0].name == "depthwise_kernel");
  CHECK(dilated.variables().size() == 1);
  CHECK(strided.class_name() == "DepthwiseConv2D");
  CHECK(strided.name().rfind("depthwise_conv2d", 0) == 0);
  CHECK_THROWS_AS(layers::DepthwiseConv2D(3, {.depth_multiplier = 0}), tf::invalid_argument);
  CHECK_THROWS_AS(same(data<4>({1, 5, 5, 2})), tf::invalid_argument);  // built for 3 channels

  // Gradients reach the kernel, the bias and the input.
  tf::GradientTape tape;
  tape.watch(x);
  auto loss = tf::reduce_sum(tf::square(strided(x)));
  auto ids = tf::ids_of(strided.trainable_variables());
  ids.push_back(x.id());
  auto grads = tape.gradient_by_id(loss, ids);
  REQUIRE(grads.size() == 3);
  for (auto const& g : grads) {
    CHECK(g.has_value());
  }
}

TEST_CASE("The layers trace with an unknown batch size") {
  // A tf::function with a free batch axis traces symbolic tensors of dims -1: no layer may make
  // a concrete tensor of the input's shape (ReLU's threshold compares with a scalar 0).
  layers::ReLU relu({.max_value = 4.0f, .negative_slope = 0.1f, .threshold = 0.5f});
  layers::BatchNormalization bn;
  layers::DepthwiseConv2D dw(3, {.padding = "same"});
  layers::GlobalAveragePooling2D gap;
  auto x = data<4>({2, 4, 4, 3});
  auto f = tf::function(
      [&](const tf::Tensor<float, 4>& in) { return relu(bn(gap(dw(in)), {.training = true})); },
      {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::float32, {-1, 4, 4, 3}}}});
  auto traced = f(x);
  auto eager = relu(bn(gap(dw(x)), {.training = true}));
  CHECK(traced.dims() == std::array<std::int64_t, 2>{2, 3});
  CHECK(max_diff(traced.numpy(), eager.numpy()) == 0);
}

TEST_CASE("A MobileNetV2-style Sequential model: ranks, training mode, summary") {
  // [snippet:mobilenet_block]
  auto model = tf::keras::Sequential(
      layers::Rescaling(1.0f / 127.5f, {.offset = -1.0f}), layers::ZeroPadding2D({{0, 1}, {0, 1}}),
      layers::Conv2D(4, 3, {.strides = 2, .use_bias = false}),
      layers::BatchNormalization({.momentum = 0.9}), layers::ReLU({.max_value = 6.0f}),
      layers::DepthwiseConv2D(3, {.padding = "same", .use_bias = false}),
      layers::BatchNormalization(), layers::Activation("relu6"), layers::GlobalAveragePooling2D(),
      layers::Dense(3, {.activation = "softmax"}));
  auto x = data<4>({2, 8, 8, 3}) * 50.0f + 100.0f;
  auto before = model(x);  // builds; inference
  CHECK(before.dims() == std::array<std::int64_t, 2>{2, 3});
  auto y = model(x, true);  // batch statistics; the moving ones move
  // [snippet:mobilenet_block]
  CHECK(y.dims() == std::array<std::int64_t, 2>{2, 3});
  CHECK(max_diff(model(x).numpy(), before.numpy()) > 0);
  std::ostringstream os;
  model.summary(os);
  const std::string s = os.str();
  for (const char* type : {"(Rescaling)", "(ZeroPadding2D)", "(BatchNormalization)", "(ReLU)",
                           "(DepthwiseConv2D)", "(Activation)", "(GlobalAveragePooling2D)"}) {
    CHECK(s.find(type) != std::string::npos);
  }
  // Conv2D 3*3*3*4, two BatchNormalization 4*4, DepthwiseConv2D 3*3*4, Dense 4*3+3.
  CHECK(s.find("Total params: 191\n") != std::string::npos);
  CHECK(s.find("Non-trainable params: 16\n") != std::string::npos);
}

}  // namespace test_keras_application_layers
