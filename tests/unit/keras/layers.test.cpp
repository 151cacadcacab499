#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/layers/conv2d.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/layers/dropout.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/layers/pooling.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/ops/random/random.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_layers {

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {

template <std::size_t R>
tf::Tensor<float, R> data(std::array<std::int64_t, R> dims, std::int64_t seed) {
  return tf::random::uniform<float>(dims, {.minval = -1.0f, .maxval = 1.0f, .seed = seed});
}

// A fixed weighting so every output element is checked, not just their sum.
template <std::size_t R>
tf::Tensor<float, 0> weigh(const tf::Tensor<float, R>& y) {
  std::vector<float> w(static_cast<std::size_t>(y.num_elements()));
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = 0.5f + 0.37f * float((i * 7919) % 11) / 11.0f;
  }
  return tf::reduce_sum(y * tf::constant<float, R>(std::span<const float>(w), y.dims()));
}

// Central differences in float (step 1e-2) against the tape's gradients for the layer's
// input and every weight.
template <class Layer, std::size_t R>
void check_layer_gradients(Layer& layer, const tf::Tensor<float, R>& x, double tol = 2e-2) {
  (void)layer(x);  // build
  auto vars = layer.trainable_variables();
  tf::GradientTape tape;
  tape.watch(x);
  auto loss = weigh(layer(x));
  tape.stop();
  auto ids = tf::ids_of(vars);
  ids.push_back(x.id());
  auto grads = tape.gradient_by_id(loss, ids);
  const float h = 1e-2f;
  auto numeric = [&](auto&& eval, std::int64_t n, const tf::AnyTensor& g) {
    REQUIRE(g.has_value());
    const float* gd = static_cast<const float*>(g.raw_data());
    for (std::int64_t i = 0; i < n; ++i) {
      const double d = (eval(i, h) - eval(i, -h)) / (2.0 * h);
      INFO("element " << i << ": numeric " << d << " vs tape " << gd[i]);
      CHECK(std::abs(d - gd[i]) <= tol * (1.0 + std::abs(d)));
    }
  };
  for (std::size_t k = 0; k < vars.size(); ++k) {
    auto v = vars[k];
    const auto original = v.value();
    auto eval = [&](std::int64_t i, float delta) {
      std::vector<float> vals(
          static_cast<const float*>(original.raw_data()),
          static_cast<const float*>(original.raw_data()) + original.num_elements());
      vals[std::size_t(i)] += delta;
      tf::detail::keras_impl::with_rank(original.rank(), "test", [&]<std::size_t VR>() {
        std::array<std::int64_t, VR> dims{};
        for (std::size_t a = 0; a < VR; ++a) {
          dims[a] = original.shape()[a];
        }
        v.assign(tf::constant<float, VR>(std::span<const float>(vals), dims));
        return 0;
      });
      const double y = double(weigh(layer(x)).item());
      v.assign(original);
      return y;
    };
    numeric(eval, original.num_elements(), grads[k]);
  }
  auto eval_x = [&](std::int64_t i, float delta) {
    auto vals = x.numpy();
    vals[std::size_t(i)] += delta;
    return double(
        weigh(layer(tf::constant<float, R>(std::span<const float>(vals), x.dims()))).item());
  };
  numeric(eval_x, x.num_elements(), grads.back());
}

}  // namespace

TEST_CASE("Dense: lazy build, output shape, weights named kernel and bias") {
  layers::Dense dense(3, {.activation = tf::nn::relu, .name = "my_dense"});
  CHECK_FALSE(dense.built());
  CHECK(dense.variables().empty());
  auto y = dense(data<2>({4, 5}, 1));
  CHECK(dense.built());
  CHECK(y.dims() == std::array<std::int64_t, 2>{4, 3});
  auto vars = dense.variables();
  REQUIRE(vars.size() == 2);
  CHECK(vars[0].name() == "my_dense/kernel");
  CHECK(vars[0].shape() == tf::Shape({5, 3}));
  CHECK(vars[1].name() == "my_dense/bias");
  auto tv = dense.trackable_children(tf::train::Layout::tf_keras);
  REQUIRE(tv.size() == 2);
  CHECK(tv[0].name == "kernel");
  CHECK(tv[1].name == "bias");
  CHECK(dense.trackable_children(tf::train::Layout::keras3)[0].name == "_kernel");
  CHECK(dense.count_params() == 18);
  // relu output is non-negative
  for (float v : y.values()) {
    CHECK(v >= 0.0f);
  }
  // rank-3 input: applied on the last axis
  auto y3 = dense(data<3>({2, 4, 5}, 2));
  CHECK(y3.dims() == std::array<std::int64_t, 3>{2, 4, 3});
  CHECK_THROWS_AS(dense(data<2>({4, 6}, 3)), tf::invalid_argument);
  CHECK_THROWS_AS(layers::Dense(0), tf::invalid_argument);
}

TEST_CASE("Dense computes x @ kernel + bias") {
  layers::Dense dense(2, {.kernel_initializer = tf::keras::initializers::Ones(),
                          .bias_initializer = tf::keras::initializers::Constant(0.5f)});
  auto y = dense(tf::constant<float>({{1, 2, 3}}));
  CHECK(y.numpy() == std::vector<float>{6.5f, 6.5f});
}

TEST_CASE("Dense gradients match central differences") {
  layers::Dense dense(3, {.activation = tf::nn::sigmoid,
                          .kernel_initializer = tf::keras::initializers::GlorotUniform({.seed = 3}),
                          .bias_initializer = tf::keras::initializers::RandomNormal({.seed = 4})});
  check_layer_gradients(dense, data<2>({2, 4}, 5));
  layers::Dense softmax_dense(3, {.activation = tf::nn::softmax});
  check_layer_gradients(softmax_dense, data<2>({2, 3}, 6));
}

TEST_CASE("Conv2D: shapes for same/valid/strides, gradients") {
  layers::Conv2D same(4, 3, {.padding = "same", .activation = tf::nn::relu});
  CHECK(same(data<4>({2, 5, 5, 3}, 1)).dims() == std::array<std::int64_t, 4>{2, 5, 5, 4});
  CHECK(same.kernel().shape() == tf::Shape({3, 3, 3, 4}));
  layers::Conv2D valid(2, {2, 3}, {.strides = 2});
  CHECK(valid(data<4>({1, 6, 7, 1}, 2)).dims() == std::array<std::int64_t, 4>{1, 3, 3, 2});
  layers::Conv2D small(2, 2, {.padding = "same", .activation = tf::nn::tanh});
  check_layer_gradients(small, data<4>({1, 3, 3, 2}, 7));
}

TEST_CASE("Pooling layers: shapes, values, gradients") {
  auto x = tf::reshape(tf::range<float>(16), {1, 4, 4, 1});
  layers::MaxPooling2D max_pool;
  auto m = max_pool(x);
  CHECK(m.numpy() == std::vector<float>{5, 7, 13, 15});
  layers::AveragePooling2D avg_pool(2);
  CHECK(avg_pool(x).numpy() == std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f});
  layers::MaxPooling2D strided(3, {.strides = 1, .padding = "same"});
  CHECK(strided(x).dims() == std::array<std::int64_t, 4>{1, 4, 4, 1});
  layers::AveragePooling2D avg(2, {.strides = 1});
  check_layer_gradients(avg, data<4>({1, 3, 3, 2}, 8));
  layers::MaxPooling2D mp(2);
  check_layer_gradients(mp, data<4>({1, 4, 4, 1}, 9));
}

TEST_CASE("Flatten, Reshape, Dropout") {
  layers::Flatten flatten;
  auto f = flatten(data<4>({3, 2, 2, 5}, 1));
  CHECK(f.dims() == std::array<std::int64_t, 2>{3, 20});
  layers::Reshape reshape({4, 5});
  CHECK(reshape(f).dims() == std::array<std::int64_t, 3>{3, 4, 5});
  check_layer_gradients(flatten, data<3>({2, 2, 3}, 2));

  layers::Dropout dropout(0.5, {.seed = 1});
  auto x = tf::ones<float>({1000});
  CHECK(dropout(x).numpy() == x.numpy());  // inference: identity
  auto d = dropout(x, true);
  int zeros = 0;
  for (float v : d.values()) {
    CHECK((v == 0.0f || v == 2.0f));
    zeros += v == 0.0f ? 1 : 0;
  }
  CHECK(zeros > 400);
  CHECK(zeros < 600);
  CHECK_THROWS_AS(layers::Dropout(1.0), tf::invalid_argument);
}

TEST_CASE("Sequential: default names in order, object-graph children, variables") {
  auto model = tf::keras::Sequential(layers::Flatten(), layers::Dense(4, {.activation = "relu"}),
                                     layers::Dense(2));
  auto d0 = model.layer<1>().name();
  auto d1 = model.layer<2>().name();
  // dense, dense_1 (or later numbers if other tests created dense layers first): in order
  CHECK(d0.rfind("dense", 0) == 0);
  CHECK(d1 == (d0 == "dense" ? std::string("dense_1")
                             : "dense_" + std::to_string(std::stoi(d0.substr(6)) + 1)));
  auto y = model(data<3>({5, 2, 3}, 1));
  CHECK(y.dims() == std::array<std::int64_t, 2>{5, 2});
  CHECK(model.variables().size() == 4);
  CHECK(model.trainable_variables().size() == 4);
  CHECK(model.count_params() == 6 * 4 + 4 + 4 * 2 + 2);
  auto children = model.trackable_children(tf::train::Layout::tf_keras);
  std::vector<std::string> names;
  for (auto& c : children) {
    names.push_back(c.name);
  }
  CHECK(names == std::vector<std::string>{"layer-0", "layer_with_weights-0", "layer-1",
                                          "layer_with_weights-1", "layer-2"});
  CHECK(children[2].object == children[1].object);
  // Keras 3: _functional/_operations/<i>, the InputLayer first
  auto k3 = model.trackable_children(tf::train::Layout::keras3);
  REQUIRE(k3.size() == 1);
  CHECK(k3[0].name == "_functional");
  auto functional = k3[0].target()->trackable_children(tf::train::Layout::keras3);
  CHECK(functional.back().name == "_operations");
  auto ops = functional.back().target()->trackable_children(tf::train::Layout::keras3);
  REQUIRE(ops.size() == 4);
  CHECK(ops[2].object == children[1].object);
  // uint8 inputs are cast to float as Keras layers do
  auto u = tf::zeros<std::uint8_t>({2, 6});
  CHECK(model(u).dims() == std::array<std::int64_t, 2>{2, 2});
  // call_any dispatches on the run-time rank
  CHECK(model.call_any(tf::AnyTensor(data<2>({3, 6}, 2)), false).shape() == tf::Shape({3, 2}));
  CHECK_THROWS_AS(model.call_any(tf::AnyTensor(data<1>({6}, 2)), false), tf::invalid_argument);
}

TEST_CASE("Sequential::build and summary") {
  // [snippet:build_summary]
  auto model = tf::keras::Sequential(layers::Dense(3, {.name = "hidden"}),
                                     layers::Dense(1, {.name = "out"}));
  model.build({4});
  std::ostringstream os;
  // [snippet:build_summary]
  model.summary(os);
  const std::string s = os.str();
  // Keras 2's columns: 29, 26 and 10 characters.
  CHECK(s.find("\n hidden (Dense)              (None, 3)                 15        \n") !=
        std::string::npos);
  CHECK(s.find("\n out (Dense)                 (None, 1)                 4         \n") !=
        std::string::npos);
  CHECK(s.find("Total params: 19\n") != std::string::npos);
  CHECK(s.find("Trainable params: 19\n") != std::string::npos);
}

namespace {
// The handbook's custom layer: weights created in build from the input shape, which the call
// operator runs once.
struct MyLayer : tf::keras::Layer<MyLayer> {
  std::int64_t units;
  tf::Variable<float, 2> w;
  tf::Variable<float, 1> b;
  explicit MyLayer(std::int64_t u) : units(u) {}
  void build(const tf::Shape& input_shape) override {
    w = add_weight<float, 2>("w", {input_shape[1], units});
    b = add_weight<float, 1>("b", {units}, tf::keras::initializers::Zeros());
  }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 2>& x) { return tf::matmul(x, w) + b; }
};
struct Block : tf::keras::Layer<Block> {
  MyLayer inner{3};
  layers::Dense outer{2};
  Block() { TAPEFLOW_TRACK(inner, outer); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 2>& x) { return outer(inner(x)); }
};
}  // namespace

TEST_CASE("User layers: add_weight, tracked children, restore hook, moves") {
  MyLayer layer(3);
  std::vector<std::string> created;
  layer.set_children_changed_hook([&] {
    auto children = layer.trackable_children(tf::train::Layout::keras3);
    created.push_back(children.back().name);
    if (children.back().name == "b") {
      children.back().variable.assign(tf::AnyTensor(tf::fill<float, 1>({3}, 7.0f)));  // deferred
    }
  });
  auto y = layer(data<2>({2, 4}, 1));
  CHECK(created == std::vector<std::string>{"w", "b"});
  CHECK(layer.b.value().numpy() == std::vector<float>{7, 7, 7});
  CHECK(y.dims() == std::array<std::int64_t, 2>{2, 3});
  check_layer_gradients(layer, data<2>({2, 4}, 3));

  Block block;
  (void)block(data<2>({2, 4}, 2));
  auto children = block.trackable_children(tf::train::Layout::keras3);
  REQUIRE(children.size() == 2);
  CHECK(children[0].name == "inner");
  CHECK(children[0].object == &block.inner);
  CHECK(block.variables().size() == 4);
  Block moved = std::move(block);  // tracked members follow the object
  CHECK(moved.trackable_children(tf::train::Layout::keras3)[1].object == &moved.outer);
  CHECK(moved.variables().size() == 4);
  moved.set_trainable(false);
  CHECK(moved.trainable_variables().empty());
  CHECK(moved.non_trainable_variables().size() == 4);
}

}  // namespace test_keras_layers
