// Keras as the handbook writes it: model(x), layers built on their first call, members tracked
// with one TAPEFLOW_TRACK line (and checked), tape.gradient over model.trainable_variables(),
// fit/evaluate/predict without any override.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_model_call {

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

namespace {

// The handbook's MLP, line for line.
struct MLP : tf::keras::Model<MLP> {
  layers::Flatten flatten;
  layers::Dense dense1{16, {.activation = tf::nn::relu}};
  layers::Dropout dropout{0.5, {.seed = 3}};
  layers::Dense dense2{10};
  MLP() { TAPEFLOW_TRACK(flatten, dense1, dropout, dense2); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& inputs, bool training) {
    auto x = dropout(dense1(flatten(inputs)), {.training = training});
    return tf::nn::softmax(dense2(x));
  }
};

// The handbook's custom layer: build(input_shape) runs once, on the first call.
struct LinearLayer : tf::keras::Layer<LinearLayer> {
  std::int64_t units;
  tf::Variable<float, 2> w;
  tf::Variable<float, 1> b;
  int builds = 0;
  explicit LinearLayer(std::int64_t units) : units(units) {}
  void build(const tf::Shape& input_shape) override {
    ++builds;
    w = add_weight<float, 2>("w", {input_shape[input_shape.rank() - 1], units},
                             tf::keras::initializers::Zeros());
    b = add_weight<float, 1>("b", {units}, tf::keras::initializers::Zeros());
  }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 2>& inputs) {
    return tf::matmul(inputs, w) + b;
  }
};

// Token ids in, logits out: fit/predict pass integer batches through as integers.
struct TokenModel : tf::keras::Model<TokenModel> {
  layers::Embedding embedding{7, 4};
  layers::Flatten flatten;
  layers::Dense dense{3};
  TokenModel() { TAPEFLOW_TRACK(embedding, flatten, dense); }
  tf::Tensor<float, 2> call(const tf::Tensor<std::int32_t, 2>& ids) {
    return dense(flatten(embedding(ids)));
  }
};

tf::Tensor<float, 4> images(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n * 28 * 28));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = float((i * 37) % 101) / 101.0f;
  }
  return tf::constant<float, 4>(std::span<const float>(v), {n, 28, 28, 1});
}

}  // namespace

TEST_CASE("model(x) builds on the first call and runs call - training reaches Dropout") {
  MLP model;
  CHECK(model.name().rfind("mlp", 0) == 0);  // named after the class, as Keras does
  CHECK(model.class_name() == "MLP");
  CHECK_FALSE(model.built());
  auto y = model(images(2));
  CHECK(model.built());
  CHECK(y.dims() == std::array<std::int64_t, 2>{2, 10});
  CHECK(model.trainable_variables().size() == 4);
  auto again = model(images(2));
  CHECK(tf::reduce_max(tf::abs(again - y)).item() == 0.0f);  // inference: dropout is off
  auto trained = model(images(2), {.training = true});
  CHECK(tf::reduce_max(tf::abs(trained - y)).item() > 0.0f);  // training: dropout on
  // Sequential takes the same call options
  tf::keras::Sequential seq(layers::Flatten(), layers::Dropout(0.5, {.seed = 1}));
  CHECK(tf::reduce_max(tf::abs(seq(images(1), {.training = false}) - seq(images(1)))).item() ==
        0.0f);
  CHECK(tf::reduce_max(tf::abs(seq(images(1), {.training = true}) - seq(images(1)))).item() > 0.0f);
}

TEST_CASE("a custom layer's build runs once, from the first input's shape") {
  LinearLayer layer(3);
  CHECK(layer.name().rfind("linear_layer", 0) == 0);
  CHECK(layer.class_name() == "LinearLayer");  // what summary() shows
  CHECK(layers::Dense(2).class_name() == "Dense");
  CHECK(layers::MaxPool2D().class_name() == "MaxPooling2D");  // Keras' alias
  auto x = tf::constant<float>({{1, 2}, {3, 4}});
  (void)layer(x);
  (void)layer(x);
  CHECK(layer.builds == 1);
  CHECK(layer.w.dims() == std::array<std::int64_t, 2>{2, 3});
}

TEST_CASE("model(x) inside tf::function traces once and matches eager") {
  MLP model;
  auto eager = model(images(3));
  auto f = tf::function([&](const tf::Tensor<float, 4>& x) { return model(x); });
  auto traced = f(images(3));
  CHECK(f.trace_count() == 1);
  CHECK(tf::reduce_max(tf::abs(traced - eager)).item() <= 1e-6f);
}

TEST_CASE("a tf::function whose first trace builds the model and the optimizer trains as eager") {
  // Weights and slots created while the first call traces get their initial values eagerly
  // (TensorFlow's init_scope), so the traced step trains like the eager one from step 1.
  const auto x = images(4);
  const auto y = tf::constant<std::int32_t>({1, 2, 3, 4});
  auto losses = [&](bool traced) {
    tf::random::set_seed(11);
    MLP model;
    tf::keras::optimizers::Adam adam({.learning_rate = 0.01});
    auto step = [&](const tf::Tensor<float, 4>& images, const tf::Tensor<std::int32_t, 1>& labels) {
      tf::GradientTape tape;
      auto loss = tf::reduce_mean(
          tf::keras::losses::sparse_categorical_crossentropy(labels, model(images)));
      adam.apply_gradients(tape.gradient(loss, model.trainable_variables()),
                           model.trainable_variables());
      return loss;
    };
    auto f = tf::function(step);
    std::vector<float> out;
    for (int i = 0; i < 3; ++i) {
      out.push_back((traced ? f(x, y) : step(x, y)).item());
    }
    return out;
  };
  const auto eager = losses(false);
  const auto traced = losses(true);
  for (std::size_t i = 0; i < eager.size(); ++i) {
    INFO("step " << i);
    CHECK(std::isfinite(traced[i]));
    CHECK(traced[i] == Approx(eager[i]).epsilon(1e-5));
  }
  CHECK(eager[2] < eager[0]);
}

TEST_CASE("numpy() of a symbolic tensor is failed_precondition") {
  auto f = tf::function([](const tf::Tensor<float, 1>& x) {
    (void)x.numpy();
    return x;
  });
  CHECK_THROWS_AS(f(tf::constant<float>({1.0f})), tf::failed_precondition);
}

TEST_CASE("tape.gradient(loss, model.trainable_variables()) is what apply_gradients takes") {
  MLP model;
  tf::keras::optimizers::SGD sgd({.learning_rate = 0.1});
  const auto x = images(4);
  const auto y = tf::constant<std::int32_t>({1, 2, 3, 4});
  float first = 0, last = 0;
  for (int step = 0; step < 20; ++step) {
    tf::GradientTape tape;
    auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, model(x)));
    auto grads = tape.gradient(loss, model.trainable_variables());
    // a non-persistent tape stops recording at gradient(): nothing after it is recorded
    CHECK(tf::detail::tape::active().empty());
    sgd.apply_gradients(grads, model.trainable_variables());
    (step == 0 ? first : last) = loss.item();
  }
  CHECK(last < first);
  SECTION("unconnected variables: empty, or zeros on request") {
    LinearLayer unused(2);
    (void)unused(tf::constant<float>({{1.0f}}));
    tf::GradientTape tape;
    auto loss = tf::reduce_sum(model(x));
    auto g = tape.gradient(loss, unused.trainable_variables());
    REQUIRE(g.size() == 2);
    CHECK_FALSE(g[0].has_value());
    tf::GradientTape tape2;
    auto loss2 = tf::reduce_sum(model(x));
    auto z = tape2.gradient(loss2, unused.trainable_variables(),
                            {.unconnected_gradients = tf::UnconnectedGradients::zero});
    CHECK(z[1].shape() == tf::Shape({2}));
  }
}

TEST_CASE("fit, evaluate and predict need no override (float images and integer tokens)") {
  MLP model;
  model.compile({.optimizer = tf::keras::optimizers::Adam({.learning_rate = 0.01}),
                 .loss = tf::keras::losses::SparseCategoricalCrossentropy(),
                 .metrics = {tf::keras::metrics::SparseCategoricalAccuracy()}});
  const auto x = images(8);
  const auto y = tf::constant<std::int32_t>({0, 1, 2, 3, 0, 1, 2, 3});
  auto history = model.fit(tf::AnyTensor(x), tf::AnyTensor(y),
                           {.batch_size = 4, .epochs = 3, .verbose = 0, .seed = 1});
  CHECK(history.history.at("loss").size() == 3);
  CHECK(model.predict(tf::AnyTensor(x)).shape() == tf::Shape({8, 10}));
  CHECK_THROWS_AS(model.predict(tf::AnyTensor(tf::zeros<float>({2, 28, 28}))),
                  tf::invalid_argument);  // call takes rank-4 images

  TokenModel tokens;
  tokens.compile({.optimizer = tf::keras::optimizers::SGD({.learning_rate = 0.1}),
                  .loss = tf::keras::losses::SparseCategoricalCrossentropy({.from_logits = true})});
  const auto ids = tf::constant<std::int32_t>({{1, 2}, {3, 4}, {5, 6}, {0, 1}});
  const auto labels = tf::constant<std::int32_t>({0, 1, 2, 0});
  auto h = tokens.fit(tf::AnyTensor(ids), tf::AnyTensor(labels),
                      {.batch_size = 2, .epochs = 5, .verbose = 0, .seed = 2});
  CHECK(h.history.at("loss").back() < h.history.at("loss").front());
  CHECK(tokens.predict(tf::AnyTensor(tf::cast<std::int64_t>(ids))).shape() == tf::Shape({4, 3}));
}

TEST_CASE("track checks that children are members and names are unique") {
  struct Outside : tf::keras::Layer<Outside> {
    explicit Outside(layers::Dense& other) {
      try {
        track("other", other);
      } catch (const tf::invalid_argument& e) {
        message = e.what();
      }
    }
    tf::Tensor<float, 2> call(const tf::Tensor<float, 2>& x) { return x; }
    std::string message;
  };
  layers::Dense stray(3);
  Outside outside(stray);
  CHECK(outside.message.find("'other' is not a member of layer 'outside") != std::string::npos);

  struct Twice : tf::keras::Layer<Twice> {
    layers::Dense a{1}, b{1};
    Twice() {
      track("a", a);
      track("a", b);
    }
    tf::Tensor<float, 2> call(const tf::Tensor<float, 2>& x) { return a(x); }
  };
  CHECK_THROWS_WITH(Twice(), Catch::Contains("already tracks a child named 'a'"));
}

}  // namespace test_keras_model_call
