#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/losses.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_losses {

namespace tf = tapeflow;
namespace losses = tf::keras::losses;
using Catch::Detail::Approx;

TEST_CASE("sparse_categorical_crossentropy: probabilities and logits, by hand") {
  auto probs = tf::constant<float>({{0.7f, 0.2f, 0.1f}, {0.1f, 0.1f, 0.8f}});
  auto labels = tf::constant<std::int32_t>({0, 2});
  auto l = losses::sparse_categorical_crossentropy(labels, probs);
  REQUIRE(l.dims() == std::array<std::int64_t, 1>{2});
  CHECK(l(0) == Approx(-std::log(0.7)).epsilon(1e-5));
  CHECK(l(1) == Approx(-std::log(0.8)).epsilon(1e-5));
  // logits [1, 2, 3]: -log(e^3 / (e + e^2 + e^3)) = 0.40760596
  auto logits = tf::constant<float>({{1, 2, 3}});
  auto ll = losses::sparse_categorical_crossentropy(tf::constant<std::uint8_t>({2}), logits, true);
  CHECK(ll(0) == Approx(0.40760596).epsilon(1e-5));
  // probability 0 is clipped to 1e-7: finite loss
  auto zero = losses::sparse_categorical_crossentropy(tf::constant<std::int64_t>({1}),
                                                      tf::constant<float>({{1.0f, 0.0f}}));
  CHECK(zero(0) == Approx(-std::log(1e-7)).epsilon(1e-3));
  // labels [N, 1] are accepted
  auto l2 = losses::sparse_categorical_crossentropy(tf::constant<std::int32_t>({{0}, {2}}), probs);
  CHECK(l2.numpy() == l.numpy());
  // class form: mean over the batch
  losses::SparseCategoricalCrossentropy scce;
  CHECK(scce(tf::AnyTensor(labels), tf::AnyTensor(probs)).item() ==
        Approx((-std::log(0.7) - std::log(0.8)) / 2).epsilon(1e-5));
  losses::SparseCategoricalCrossentropy from_logits({.from_logits = true});
  CHECK(from_logits(tf::AnyTensor(tf::constant<std::int32_t>({2})), tf::AnyTensor(logits)).item() ==
        Approx(0.40760596).epsilon(1e-5));
  CHECK_THROWS_AS(scce(tf::AnyTensor(tf::constant<float>({0, 2})), tf::AnyTensor(probs)),
                  tf::invalid_argument);
  CHECK_THROWS_AS(scce(tf::AnyTensor(tf::constant<std::int32_t>({0, 5})), tf::AnyTensor(probs)),
                  tf::invalid_argument);
}

TEST_CASE("sparse crossentropy from logits is stable for large logits, and differentiable") {
  auto logits = tf::constant<float>({{1000, 0, -1000}});
  auto l = losses::sparse_categorical_crossentropy(tf::constant<std::int32_t>({0}), logits, true);
  CHECK(l(0) == Approx(0.0).margin(1e-6));
  tf::Variable<float, 2> z(tf::constant<float>({{1, 2, 3}}));
  tf::GradientTape tape;
  auto loss = tf::reduce_mean(
      losses::sparse_categorical_crossentropy(tf::constant<std::int32_t>({1}), z, true));
  auto g = tape.gradient(loss, z);
  REQUIRE(g.has_value());
  // softmax - one_hot
  const double s = std::exp(1) + std::exp(2) + std::exp(3);
  CHECK((*g)(0, 0) == Approx(std::exp(1) / s).epsilon(1e-5));
  CHECK((*g)(0, 1) == Approx(std::exp(2) / s - 1).epsilon(1e-5));
}

TEST_CASE("categorical_crossentropy, mean_squared_error, binary_crossentropy by hand") {
  auto y = tf::constant<float>({{0, 1, 0}});
  auto p = tf::constant<float>({{0.2f, 0.5f, 0.3f}});
  CHECK(losses::categorical_crossentropy(y, p)(0) == Approx(-std::log(0.5)).epsilon(1e-5));
  // unnormalized probabilities are normalized first (as Keras does)
  CHECK(losses::categorical_crossentropy(y, p * 2.0f)(0) == Approx(-std::log(0.5)).epsilon(1e-5));
  auto logits = tf::constant<float>({{1, 2, 3}});
  CHECK(losses::categorical_crossentropy(y, logits, true)(0) == Approx(1.40760596).epsilon(1e-5));
  losses::CategoricalCrossentropy cce;
  CHECK(cce(tf::AnyTensor(y), tf::AnyTensor(p)).item() == Approx(-std::log(0.5)).epsilon(1e-5));

  auto a = tf::constant<float>({{1, 2}, {3, 4}});
  auto b = tf::constant<float>({{1, 4}, {0, 4}});
  auto mse = losses::mean_squared_error(a, b);
  CHECK(mse.numpy() == std::vector<float>{2.0f, 4.5f});
  CHECK(losses::MeanSquaredError()(tf::AnyTensor(a), tf::AnyTensor(b)).item() == Approx(3.25));

  auto t = tf::constant<float>({{1, 0}});
  auto q = tf::constant<float>({{0.9f, 0.2f}});
  const double expect = -(std::log(0.9) + std::log(0.8)) / 2;
  CHECK(losses::binary_crossentropy(t, q)(0) == Approx(expect).epsilon(1e-5));
  // from logits: sigmoid(x) = q
  auto x = tf::constant<float>({{float(std::log(0.9 / 0.1)), float(std::log(0.2 / 0.8))}});
  CHECK(losses::binary_crossentropy(t, x, true)(0) == Approx(expect).epsilon(1e-4));
  CHECK(losses::BinaryCrossentropy({.from_logits = true})(tf::AnyTensor(t), tf::AnyTensor(x))
            .item() == Approx(expect).epsilon(1e-4));
}

namespace {
// The handbook's custom loss.
struct MeanSquaredError : losses::Loss {
  MeanSquaredError() : Loss("my_mse") {}
  tf::AnyTensor call(const tf::AnyTensor& y_true, const tf::AnyTensor& y_pred) const override {
    return tf::reduce_mean(tf::square(y_pred.as<float, 2>() - y_true.as<float, 2>()));
  }
};
}  // namespace

TEST_CASE("a user-defined Loss") {
  MeanSquaredError mse;
  auto a = tf::constant<float>({{1, 2}, {3, 4}});
  auto b = tf::constant<float>({{1, 4}, {0, 4}});
  CHECK(mse(tf::AnyTensor(a), tf::AnyTensor(b)).item() == Approx(3.25));
  losses::LossHandle h = mse;
  CHECK(h.get().name() == "my_mse");
}

}  // namespace test_keras_losses
