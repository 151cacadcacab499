#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/ops/linalg/matmul.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_autodiff_gradient_tape {

namespace tf = tapeflow;

TEST_CASE("gradient of a variable read inside the tape", "[autodiff][gradient_tape]") {
  // [snippet:variable]
  tf::Variable<float, 0> x(3.0f);
  tf::GradientTape tape;
  auto y = x * x;  // watched automatically: x is a trainable variable
  auto dy = tape.gradient(y, x);
  REQUIRE(dy.has_value());
  CHECK(dy->item() == 6.0f);
  // [snippet:variable]
  CHECK(tape.watched_variable_ids() == std::vector<std::int64_t>{x.id()});
}

TEST_CASE("tensors need watch() - unconnected sources are nullopt or zeros",
          "[autodiff][gradient_tape]") {
  auto x = tf::constant(2.0);
  auto z = tf::constant(5.0);
  {
    tf::GradientTape tape;
    auto y = x * x;
    CHECK_FALSE(tape.gradient(y, x).has_value());
  }
  {
    tf::GradientTape tape({.persistent = true});
    tape.watch(x);
    tape.watch(z);
    auto y = tf::square(x);
    CHECK(tape.gradient(y, x)->item() == 4.0);
    CHECK_FALSE(tape.gradient(y, z).has_value());
    auto zero = tape.gradient(y, z, {.unconnected_gradients = tf::UnconnectedGradients::zero});
    REQUIRE(zero.has_value());
    CHECK(zero->item() == 0.0);
  }
}

TEST_CASE("non-trainable variables and watch_accessed_variables=false",
          "[autodiff][gradient_tape]") {
  tf::Variable<double, 0> frozen(2.0, {.trainable = false});
  tf::Variable<double, 0> w(3.0);
  {
    tf::GradientTape tape;
    auto y = frozen * w;
    auto [gf, gw] = tape.gradient(y, frozen, w);
    CHECK_FALSE(gf.has_value());
    CHECK(gw->item() == 2.0);
  }
  {
    tf::GradientTape tape({.watch_accessed_variables = false});
    auto y = frozen * w;
    CHECK_FALSE(tape.gradient(y, w).has_value());
  }
}

TEST_CASE("a non-persistent tape allows one gradient call", "[autodiff][gradient_tape]") {
  auto x = tf::constant(1.0f);
  tf::GradientTape tape;
  tape.watch(x);
  auto y = tf::exp(x);
  CHECK(tape.gradient(y, x)->item() == Approx(std::exp(1.0f)));
  CHECK_THROWS_AS(tape.gradient(y, x), tf::failed_precondition);
}

TEST_CASE("persistent tapes give several gradients", "[autodiff][gradient_tape]") {
  // [snippet:persistent]
  auto x = tf::constant(3.0);
  tf::GradientTape tape({.persistent = true});
  tape.watch(x);
  auto y = x * x;
  auto z = y * y;
  CHECK(tape.gradient(z, x)->item() == Approx(108.0));  // 4 x^3
  // [snippet:persistent]
  CHECK(tape.gradient(y, x)->item() == Approx(6.0));
}

TEST_CASE("stop_gradient, stop_recording and stop", "[autodiff][gradient_tape]") {
  auto x = tf::constant(2.0);
  tf::GradientTape tape({.persistent = true});
  tape.watch(x);
  auto y = x * tf::stop_gradient(x);
  CHECK(tape.gradient(y, x)->item() == 2.0);
  {
    auto pause = tape.stop_recording();
    auto hidden = x * x;
    CHECK_FALSE(tape.gradient(hidden, x).has_value());
  }
  tape.stop();
  auto after = x * x;
  CHECK_FALSE(tape.gradient(after, x).has_value());
}

TEST_CASE("non-scalar targets are summed - vector and tuple sources", "[autodiff][gradient_tape]") {
  tf::Variable<float, 2> w(tf::constant<float>({{1, 2}, {3, 4}}));
  tf::Variable<float, 1> b(tf::constant<float>({1, 1}));
  auto x = tf::constant<float>({{1, 0}});
  tf::GradientTape tape({.persistent = true});
  auto y = tf::matmul(x, w) + b;  // [[2, 3]]
  auto grads = tape.gradient(y, std::vector{&w});
  REQUIRE(grads.size() == 1);
  CHECK(grads[0]->numpy() == std::vector<float>{1, 1, 0, 0});
  auto [gw, gb] = tape.gradient(y, w, b);
  CHECK(gb->numpy() == std::vector<float>{1, 1});
}

TEST_CASE("second-order gradients through nested tapes", "[autodiff][gradient_tape]") {
  SECTION("tanh") {
    auto x = tf::constant(0.5);
    tf::GradientTape outer;
    outer.watch(x);
    tf::GradientTape inner;
    inner.watch(x);
    auto y = tf::tanh(x);
    auto dy = *inner.gradient(y, x);  // 1 - tanh^2
    auto d2y = *outer.gradient(dy, x);
    const double t = std::tanh(0.5);
    CHECK(dy.item() == Approx(1 - t * t));
    CHECK(d2y.item() == Approx(-2 * t * (1 - t * t)));
  }
  SECTION("square") {
    tf::Variable<double, 0> x(3.0);
    tf::GradientTape outer;
    tf::GradientTape inner;
    auto y = tf::square(x) * x;  // x^3
    auto dy = *inner.gradient(y, x);
    CHECK(dy.item() == Approx(27.0));
    CHECK(outer.gradient(dy, x)->item() == Approx(18.0));
  }
  SECTION("matmul") {
    // f(W) = sum((x W)^2); df/dW = 2 x^T x W; d/dW sum(df/dW * V) = 2 x^T x V.
    auto x = tapeflow_test::test_data<2>({3, 2}, 1);
    auto v = tapeflow_test::test_data<2>({2, 2}, 2);
    tf::Variable<double, 2> w(tapeflow_test::test_data<2>({2, 2}, 3));
    tf::GradientTape outer;
    tf::GradientTape inner;
    auto f = tf::reduce_sum(tf::square(tf::matmul(x, w)));
    auto g = *inner.gradient(f, w);
    auto h = *outer.gradient(tf::reduce_sum(g * v), w);
    auto expected = 2.0 * tf::matmul(tf::matmul(x, x, {.transpose_a = true}), v);
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(h.values()[i] == Approx(expected.values()[i]));
    }
  }
}

TEST_CASE("gradients accumulate over every use", "[autodiff][gradient_tape]") {
  tapeflow_test::check_gradients(
      [](const auto& x) { return x * x + tf::exp(x) * x - x / (x * x + 2.0); },
      tapeflow_test::test_data<1>({5}));
}

TEST_CASE("ops without a gradient report it when differentiated", "[autodiff][gradient_tape]") {
  auto x = tf::constant<double>({1, 2});
  tf::GradientTape tape;
  tape.watch(x);
  auto s = tf::sign(x) * x;  // sign stops the gradient on its branch
  CHECK(tape.gradient(s, x)->numpy() == std::vector<double>{1, 1});
}

}  // namespace test_autodiff_gradient_tape
