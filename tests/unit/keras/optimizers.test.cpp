#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/ops.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_optimizers {

namespace tf = tapeflow;
namespace opt = tf::keras::optimizers;
using Catch::Detail::Approx;

namespace {
// One update of w (= {1, -2}) with gradient g (= {0.5, -1}) per call.
struct Fixture {
  tf::Variable<float, 1> w{tf::constant<float>({1.0f, -2.0f}), {.name = "w"}};
  tf::Tensor<float, 1> g = tf::constant<float>({0.5f, -1.0f});
  void step(opt::Optimizer& o) {
    std::vector<tf::AnyTensor> grads{g};
    std::vector<tf::AnyVariable> vars{w};
    o.apply_gradients(grads, vars);
  }
};
}  // namespace

TEST_CASE("SGD: plain, momentum, nesterov (hand-computed)") {
  Fixture f;
  opt::SGD sgd({.learning_rate = 0.1});
  f.step(sgd);
  CHECK(f.w.value()(0) == Approx(0.95));
  CHECK(f.w.value()(1) == Approx(-1.9));
  CHECK(sgd.iterations() == 1);
  CHECK(sgd.slot_variables().empty());

  Fixture m;
  opt::SGD momentum({.learning_rate = 0.1, .momentum = 0.9});
  m.step(momentum);
  CHECK(m.w.value()(0) == Approx(0.95));
  m.step(momentum);  // v = 0.9 * -0.05 - 0.05 = -0.095
  CHECK(m.w.value()(0) == Approx(0.855));
  auto slots = momentum.slot_variables();
  REQUIRE(slots.size() == 1);
  CHECK(slots[0].slot_name == "momentum");
  CHECK(slots[0].original.same_as(tf::AnyVariable(m.w)));
  CHECK(slots[0].slot.value().as<float, 1>()(0) == Approx(-0.095));

  Fixture n;
  opt::SGD nesterov({.learning_rate = 0.1, .momentum = 0.9, .nesterov = true});
  n.step(nesterov);  // v = -0.05; w += 0.9 * v - 0.05
  CHECK(n.w.value()(0) == Approx(0.905));
}

TEST_CASE("Adam (hand-computed) and its tracked names") {
  Fixture f;
  opt::Adam adam({.learning_rate = 0.1});
  f.step(adam);
  // t = 1: m = 0.05, v = 0.00025, lr_t = 0.1 * sqrt(0.001) / 0.1; update = lr_t * m / sqrt(v) = 0.1
  CHECK(f.w.value()(0) == Approx(0.9).epsilon(1e-5));
  CHECK(f.w.value()(1) == Approx(-1.9).epsilon(1e-5));
  f.step(adam);
  // t = 2: m = 0.095, v = 0.00049975, lr_t = 0.1 * sqrt(1 - 0.999^2) / (1 - 0.81)
  const double m2 = 0.9 * 0.05 + 0.1 * 0.5, v2 = 0.999 * 0.00025 + 0.001 * 0.25;
  const double lr2 = 0.1 * std::sqrt(1 - 0.999 * 0.999) / (1 - 0.81);
  CHECK(f.w.value()(0) == Approx(0.9 - lr2 * m2 / (std::sqrt(v2) + 1e-7)).epsilon(1e-5));
  CHECK(adam.iterations() == 2);
  auto names_in = [&](tf::train::Layout layout) {
    std::vector<std::string> names;
    for (auto& v : adam.trackable_children(layout)) {
      names.push_back(v.name);
    }
    return names;
  };
  CHECK(names_in(tf::train::Layout::tf_keras_legacy) ==
        std::vector<std::string>{"iter", "learning_rate", "decay", "beta_1", "beta_2"});
  CHECK(names_in(tf::train::Layout::keras3) ==
        std::vector<std::string>{"_variables", "_trainable_variables",
                                 "_trainable_variables_indices", "_iterations", "_learning_rate",
                                 "_momentums", "_velocities"});
  CHECK(names_in(tf::train::Layout::tf_keras) ==
        std::vector<std::string>{"_variables", "_iterations", "_learning_rate", "_index_dict",
                                 "_momentums", "_velocities"});
  // _variables: iterations, (Keras 3: learning_rate,) then each variable's m and v
  CHECK(adam.trackable_children(tf::train::Layout::keras3)[0]
            .target()
            ->trackable_children(tf::train::Layout::keras3)
            .size() == 4);
  auto slots = adam.slot_variables();
  REQUIRE(slots.size() == 2);
  CHECK(slots[0].slot_name == "m");
  CHECK(slots[1].slot_name == "v");
  CHECK(slots[0].slot.name() == "w/m");
  CHECK(adam.get_slot(f.w, "v").has_value());
  CHECK_FALSE(adam.get_slot(f.w, "rms").has_value());
}

TEST_CASE("RMSprop (hand-computed)") {
  Fixture f;
  opt::RMSprop rms({.learning_rate = 0.1});
  f.step(rms);  // rms = 0.025; w -= 0.1 * 0.5 / sqrt(0.025 + 1e-7)
  CHECK(f.w.value()(0) == Approx(1.0 - 0.1 * 0.5 / std::sqrt(0.025 + 1e-7)).epsilon(1e-5));
  CHECK(rms.slot_variables().at(0).slot_name == "rms");
  // A gradient whose square is near epsilon tells sqrt(rms + eps) (Keras, TensorFlow's
  // ApplyRMSProp) from sqrt(rms) + eps: 0.2236 vs 0.3162 here.
  tf::Variable<float, 1> u(tf::constant<float>({0.0f}));
  opt::RMSprop small({.learning_rate = 0.1});
  std::vector<tf::AnyTensor> g{tf::constant<float>({1e-3f})};
  std::vector<tf::AnyVariable> v{u};
  small.apply_gradients(g, v);
  CHECK(u.value()(0) == Approx(-0.1 * 1e-3 / std::sqrt(1e-7 + 1e-7)).epsilon(1e-4));
}

TEST_CASE("learning-rate schedules") {
  auto exp = opt::schedules::ExponentialDecay(
      {.initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5});
  CHECK(exp(0) == Approx(0.1));
  CHECK(exp(5) == Approx(0.1 * std::sqrt(0.5)));
  auto stair = opt::schedules::ExponentialDecay(
      {.initial_learning_rate = 0.1, .decay_steps = 10, .decay_rate = 0.5, .staircase = true});
  CHECK(stair(5) == Approx(0.1));
  CHECK(stair(10) == Approx(0.05));
  auto pw = opt::schedules::PiecewiseConstantDecay({10, 20}, {1.0, 0.5, 0.1});
  CHECK(pw(10) == 1.0);
  CHECK(pw(11) == 0.5);
  CHECK(pw(21) == 0.1);
  CHECK_THROWS_AS(opt::schedules::PiecewiseConstantDecay({10}, {1.0}), tf::invalid_argument);
  auto cosine = opt::schedules::CosineDecay({.initial_learning_rate = 1.0, .decay_steps = 10});
  CHECK(cosine(5) == Approx(0.5));
  CHECK(cosine(20) == Approx(0.0).margin(1e-12));

  // An optimizer follows its schedule: step 0 at 0.1, step 1 at 0.05.
  Fixture f;
  opt::SGD sgd({.learning_rate = opt::schedules::PiecewiseConstantDecay({0}, {0.1, 0.05})});
  f.step(sgd);
  CHECK(f.w.value()(0) == Approx(0.95));
  f.step(sgd);
  CHECK(f.w.value()(0) == Approx(0.925));
  CHECK(sgd.current_learning_rate() == Approx(0.05));
}

TEST_CASE("apply_gradients: skips missing gradients, checks shapes, copies share state") {
  Fixture f;
  opt::Adam adam;
  opt::Adam copy = adam;
  std::vector<tf::AnyTensor> grads{tf::AnyTensor{}};
  std::vector<tf::AnyVariable> vars{f.w};
  adam.apply_gradients(grads, vars);
  CHECK(f.w.value()(0) == 1.0f);
  CHECK(copy.iterations() == 1);
  std::vector<tf::AnyTensor> bad{tf::constant<float>({1.0f, 2.0f, 3.0f})};
  CHECK_THROWS_AS(adam.apply_gradients(bad, vars), tf::invalid_argument);
  // typed form
  tf::Variable<float, 1> b(tf::constant<float>({1.0f}));
  opt::SGD sgd({.learning_rate = 1.0});
  sgd.apply_gradients(
      std::vector<std::optional<tf::Tensor<float, 1>>>{tf::constant<float>({0.25f})},
      std::vector<tf::Variable<float, 1>*>{&b});
  CHECK(b.value()(0) == 0.75f);
}

TEST_CASE("the first step builds every slot, in Keras's order, and tells the hook once") {
  Fixture f;
  opt::Adam adam;
  opt::Adam copy = adam;  // copies share state, and so the hook
  std::vector<std::string> seen;
  adam.set_children_changed_hook([&] {
    for (const auto& s : adam.slot_variables()) {
      seen.push_back(s.original.name() + ":" + s.slot_name);
    }
  });
  f.step(copy);
  f.step(adam);
  CHECK(seen == std::vector<std::string>{"w:m", "w:v"});
  CHECK(adam.built());
}

TEST_CASE("updates leave earlier reads (a tape's snapshots) intact") {
  Fixture f;
  auto snapshot = f.w.value();
  opt::Adam adam({.learning_rate = 0.1});
  f.step(adam);
  CHECK(snapshot(0) == 1.0f);
  CHECK(f.w.value()(0) == Approx(0.9).epsilon(1e-5));
}

TEST_CASE("optimizer state decaying into the denormal range is flushed, not slow") {
  // A zero gradient makes Adam's m decay by 0.9 per step: after ~830 steps it would be denormal
  // (MNIST's border pixels do this); the update runs with denormals flushed to zero, as
  // TensorFlow's kernels do, so m reaches exactly 0 instead of lingering in the denormal range.
  tf::Variable<float, 1> w{tf::constant<float>({1.0f}), {.name = "w"}};
  opt::Adam adam({.learning_rate = 1e-3});
  auto step = [&](float g) {
    std::vector<tf::AnyTensor> grads{tf::constant<float>({g})};
    std::vector<tf::AnyVariable> vars{w};
    adam.apply_gradients(grads, vars);
  };
  step(1e-30f);
  for (int i = 0; i < 200; ++i) {  // unflushed, m would be 1e-31 * 0.9^200 = 7e-41
    step(0.0f);
  }
  const float m = adam.get_slot(w, "m")->value().as<float, 1>()(0);
  CHECK(m == 0.0f);
  CHECK(std::isfinite(w.value()(0)));
}

TEST_CASE("apply_gradients inside a traced tf::function: ResourceApply nodes, same updates") {
  auto x = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}});
  auto y = tf::constant<float>({{1}, {0}, {2}});
  auto make_w = [] {
    return tf::Variable<float, 2>(tf::constant<float>({{0.5f}, {-0.5f}}), {.name = "w"});
  };
  auto loss_of = [](const tf::Tensor<float, 2>& xs, const tf::Tensor<float, 2>& ys,
                    const tf::Variable<float, 2>& w) {
    return tf::reduce_mean(tf::square(tf::matmul(xs, w) - ys));
  };
  for (int kind = 0; kind < 3; ++kind) {
    auto make_opt = [&]() -> std::unique_ptr<opt::Optimizer> {
      if (kind == 0) {
        // A schedule is evaluated at run time, at the step each call runs.
        return std::make_unique<opt::Adam>(opt::AdamOptions{
            .learning_rate = opt::schedules::ExponentialDecay(
                {.initial_learning_rate = 0.1, .decay_steps = 1, .decay_rate = 0.5})});
      }
      if (kind == 1) {
        return std::make_unique<opt::SGD>(opt::SGDOptions{.learning_rate = 0.05, .momentum = 0.9});
      }
      return std::make_unique<opt::RMSprop>(opt::RMSpropOptions{.learning_rate = 0.01});
    };
    auto traced_w = make_w();
    auto eager_w = make_w();
    auto traced_opt = make_opt();
    auto eager_opt = make_opt();
    auto step = tf::function([&](const tf::Tensor<float, 2>& xs, const tf::Tensor<float, 2>& ys) {
      tf::GradientTape tape;
      auto loss = loss_of(xs, ys, traced_w);
      tape.stop();
      std::vector<tf::AnyVariable> vars{traced_w};
      traced_opt->apply_gradients(tape.gradient(loss, vars), vars);
      return loss;
    });
    for (int i = 0; i < 4; ++i) {
      auto traced_loss = step(x, y);
      tf::GradientTape tape;
      auto loss = loss_of(x, y, eager_w);
      tape.stop();
      std::vector<tf::AnyVariable> vars{eager_w};
      eager_opt->apply_gradients(tape.gradient(loss, vars), vars);
      CHECK(traced_loss.item() == Approx(loss.item()).epsilon(1e-5));
      CHECK(traced_w.value()(1, 0) == Approx(eager_w.value()(1, 0)).epsilon(1e-5));
    }
    CHECK(step.trace_count() == 1);
    CHECK(traced_opt->iterations() == 4);
    CHECK(traced_opt->current_learning_rate() == Approx(eager_opt->current_learning_rate()));
    const std::string text = step.concrete_functions()[0]->to_string();
    CHECK_THAT(text, Catch::Contains(traced_opt->apply_op_name()));
    CHECK_THAT(text, Catch::Contains("AssignAddVariableOp"));
    // The traced update ops hold the variables and slots they update, not the optimizer
    // object: the function keeps training after the object is gone, as TensorFlow's does.
    CHECK_THAT(text, Catch::Contains("ReadVariableOp"));
    const float before = traced_w.value()(1, 0);
    traced_opt.reset();
    (void)step(x, y);
    CHECK(traced_w.value()(1, 0) != before);
  }
}

TEST_CASE("large variables are updated in parallel chunks, every element once") {
  constexpr std::int64_t n = 600001;  // two 256k-element chunks or more, and an odd tail
  tf::Variable<float, 1> w(tf::fill<float>({n}, 1.0f), {.name = "big"});
  auto held = w.value();  // a held value: the update writes a fresh buffer from it
  opt::SGD sgd({.learning_rate = 0.5, .momentum = 0.5});
  std::vector<tf::AnyTensor> grads{tf::fill<float>({n}, 2.0f)};
  std::vector<tf::AnyVariable> vars{w};
  sgd.apply_gradients(grads, vars);  // velocity -1, w = 0
  sgd.apply_gradients(grads, vars);  // velocity -1.5, w = -1.5
  const auto v = w.value().numpy();
  CHECK(std::all_of(v.begin(), v.end(), [](float x) { return x == -1.5f; }));
  CHECK(held(n - 1) == 1.0f);
}

}  // namespace test_keras_optimizers
