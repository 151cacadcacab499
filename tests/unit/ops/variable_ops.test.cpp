// The state ops: variable reads and writes (ops/state/variable_ops.hpp) and the fused optimizer
// updates (ops/training/resource_apply.hpp), eager and traced.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/ops/state/variable.hpp>
#include <tapeflow/ops/training/resource_apply.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_variable_ops {

namespace tf = tapeflow;

namespace {
tf::Tensor<float, 0> s(float v) { return tf::Tensor<float, 0>(v); }
tf::Variable<float, 1> var(std::vector<float> v, const char* name) {
  return tf::Variable<float, 1>(tf::constant<float>(v), {.name = name});
}
std::vector<float> values(const tf::Variable<float, 1>& v) { return v.value().numpy(); }
}  // namespace

TEST_CASE("variable reads and writes are traced as ReadVariableOp and Assign*VariableOp nodes",
          "[ops][variable_ops]") {
  auto v = var({1, 2}, "v");
  auto f = tf::function([&](const tf::Tensor<float, 1>& x) {
    v.assign_add(x);
    v.assign_sub(tf::constant<float>({0.5f, 0.5f}));
    auto before = v.value();
    v.assign(before * 2.0f);
    return before;
  });
  CHECK(f(tf::constant<float>({1, 1})).numpy() == std::vector<float>{1.5f, 2.5f});
  CHECK(values(v) == std::vector<float>{3, 5});
  CHECK(f(tf::constant<float>({0, 0})).numpy() == std::vector<float>{2.5f, 4.5f});
  CHECK(values(v) == std::vector<float>{5, 9});
  const std::string text = f.concrete_functions()[0]->to_string();
  for (const char* op : {"= ReadVariableOp()", "= AssignAddVariableOp(arg0)",
                         "= AssignSubVariableOp(Const", "= AssignVariableOp(Mul)"}) {
    CHECK_THAT(text, Catch::Contains(op));
  }
  for (const auto& node : f.concrete_functions()[0]->nodes()) {
    if (node.op != "Mul") {
      CHECK(node.resources == std::vector<std::int64_t>{v.id()});  // the variable, by id
    }
  }
  // The shape rule runs while tracing, too.
  auto bad = tf::function([&](const tf::Tensor<float, 1>& x) {
    v.assign(x);
    return x;
  });
  CHECK_THROWS_WITH(bad(tf::constant<float>({1, 2, 3})),
                    Catch::Contains("assign on 'v'") && Catch::Contains("(3,)"));
}

TEST_CASE("assign_add and assign_sub give every element the scalar result", "[ops][variable_ops]") {
  // Long enough for the SIMD loop and its scalar tail; a variable added to itself too.
  auto check = [&]<class T>() {
    constexpr std::int64_t n = 37;
    std::vector<T> start(n);
    std::vector<T> delta(n);
    for (std::int64_t i = 0; i < n; ++i) {
      start[static_cast<std::size_t>(i)] = static_cast<T>(3 * i - 50) / T(4);
      delta[static_cast<std::size_t>(i)] = static_cast<T>(i % 7) - T(2.5);
    }
    tf::Variable<T, 1> v(tf::constant<T>(start));
    v.assign_add(tf::constant<T>(delta));
    v.assign_sub(tf::constant<T>(std::vector<T>(n, T(0.75))));
    auto value = v.value().numpy();
    for (std::size_t i = 0; i < start.size(); ++i) {
      REQUIRE(value[i] == static_cast<T>(static_cast<T>(start[i] + delta[i]) - T(0.75)));
    }
    v.assign_add(v.value());
    for (std::size_t i = 0; i < start.size(); ++i) {
      REQUIRE(v.value().numpy()[i] == static_cast<T>(value[i] + value[i]));
    }
  };
  check.template operator()<float>();
  check.template operator()<double>();
  tf::Variable<std::int32_t, 1> counts(
      tf::constant<std::int32_t>(std::vector<std::int32_t>(20, 7)));
  counts.assign_sub(tf::constant<std::int32_t>(std::vector<std::int32_t>(20, 9)));
  CHECK(counts.value().numpy() == std::vector<std::int32_t>(20, -2));
}

TEST_CASE("a read inside a traced body keeps the variable's identity for the tape",
          "[ops][variable_ops]") {
  tf::Variable<float, 1> w(tf::constant<float>({1, 2}), {.name = "w"});
  auto grad = tf::function([&](const tf::Tensor<float, 1>& x) {
    tf::GradientTape tape;
    auto loss = tf::reduce_sum(x * w.value() * w.value());
    return *tape.gradient(loss, w);
  });
  CHECK(grad(tf::constant<float>({3, 1})).numpy() == std::vector<float>{6, 4});  // 2 x w
  w.assign(tf::constant<float>({2, 2}));
  CHECK(grad(tf::constant<float>({3, 1})).numpy() == std::vector<float>{12, 4});
}

TEST_CASE("ResourceApply ops update the variable and slots as TensorFlow's kernels do",
          "[ops][variable_ops]") {
  const std::vector<float> g{0.5f, -1.0f};
  auto grad = tf::constant<float>(g);
  SECTION("GradientDescent") {
    auto w = var({1, 2}, "w");
    (void)tf::detail::execute(tf::ops::ResourceApplyGradientDescent{w}, s(0.1f), grad);
    CHECK(values(w) == std::vector<float>{1 - 0.05f, 2 + 0.1f});
  }
  for (bool nesterov : {false, true}) {
    SECTION(nesterov ? "KerasMomentum, nesterov" : "KerasMomentum") {
      auto w = var({1, 2}, "w");
      auto accum = var({0.25f, 0}, "w/momentum");
      (void)tf::detail::execute(tf::ops::ResourceApplyKerasMomentum{w, accum, nesterov}, s(0.1f),
                                grad, s(0.9f));
      std::vector<float> a(2), expect(2);
      const std::vector<float> a0{0.25f, 0}, w0{1, 2};
      for (int i = 0; i < 2; ++i) {
        a[i] = 0.9f * a0[i] - 0.1f * g[i];
        expect[i] = nesterov ? w0[i] + 0.9f * a[i] - 0.1f * g[i] : w0[i] + a[i];
      }
      CHECK(values(accum)[0] == Approx(a[0]));
      CHECK(values(accum)[1] == Approx(a[1]));
      CHECK(values(w)[0] == Approx(expect[0]));
      CHECK(values(w)[1] == Approx(expect[1]));
    }
  }
  SECTION("Adam, two steps") {
    auto w = var({1, 2}, "w");
    auto m = var({0, 0}, "w/m");
    auto v = var({0, 0}, "w/v");
    double wd[2] = {1, 2}, md[2] = {0, 0}, vd[2] = {0, 0};
    for (int t = 1; t <= 2; ++t) {
      const double b1p = std::pow(0.9, t), b2p = std::pow(0.999, t);
      (void)tf::detail::execute(tf::ops::ResourceApplyAdam{w, m, v}, s(float(b1p)), s(float(b2p)),
                                s(0.01f), s(0.9f), s(0.999f), s(1e-7f), grad);
      const double alpha = 0.01 * std::sqrt(1 - b2p) / (1 - b1p);
      for (int i = 0; i < 2; ++i) {
        md[i] = 0.9 * md[i] + 0.1 * g[i];
        vd[i] = 0.999 * vd[i] + 0.001 * g[i] * g[i];
        wd[i] -= alpha * md[i] / (std::sqrt(vd[i]) + 1e-7);
      }
    }
    for (int i = 0; i < 2; ++i) {
      CHECK(values(w)[i] == Approx(wd[i]).epsilon(1e-5));
      CHECK(values(m)[i] == Approx(md[i]).epsilon(1e-5));
      CHECK(values(v)[i] == Approx(vd[i]).epsilon(1e-4));
    }
  }
  SECTION("RMSProp") {
    auto w = var({1, 2}, "w");
    auto ms = var({1, 0}, "w/rms");
    (void)tf::detail::execute(tf::ops::ResourceApplyRMSProp{w, ms}, s(0.01f), s(0.9f), s(1e-7f),
                              grad);
    const double ms0 = 0.9 * 1 + 0.1 * 0.25, ms1 = 0.1 * 1.0;
    CHECK(values(ms)[0] == Approx(ms0));
    CHECK(values(ms)[1] == Approx(ms1));
    CHECK(values(w)[0] == Approx(1 - 0.01 * 0.5 / std::sqrt(ms0 + 1e-7)));
    CHECK(values(w)[1] == Approx(2 + 0.01 * 1.0 / std::sqrt(ms1 + 1e-7)));
  }
}

TEST_CASE("ResourceApply ops keep values read before, and reject mismatched operands",
          "[ops][variable_ops]") {
  auto w = var({1, 2}, "w");
  auto held = w.value();  // a reader holds the old value: the update writes a fresh buffer
  (void)tf::detail::execute(tf::ops::ResourceApplyGradientDescent{w}, s(1.0f),
                            tf::constant<float>({1, 1}));
  CHECK(held.numpy() == std::vector<float>{1, 2});
  CHECK(values(w) == std::vector<float>{0, 1});

  CHECK_THROWS_WITH(tf::detail::execute(tf::ops::ResourceApplyGradientDescent{w}, s(1.0f),
                                        tf::constant<float>({1, 1, 1})),
                    Catch::Contains("ResourceApplyGradientDescent") && Catch::Contains("(3,)") &&
                        Catch::Contains("'w'"));
  auto short_slot = var({0}, "w/m");
  CHECK_THROWS_WITH(tf::detail::execute(tf::ops::ResourceApplyRMSProp{w, short_slot}, s(1.0f),
                                        s(0.9f), s(1e-7f), tf::constant<float>({1, 1})),
                    Catch::Contains("ResourceApplyRMSProp") && Catch::Contains("'w/m'"));
  tf::Variable<double, 1> wd(tf::constant<double>({1, 2}), {.name = "wd"});
  CHECK_THROWS_AS(tf::detail::execute(tf::ops::ResourceApplyGradientDescent{wd}, s(1.0f),
                                      tf::constant<float>({1, 1})),
                  tf::invalid_argument);
  CHECK(values(w) == std::vector<float>{0, 1});  // nothing was half-applied
}

TEST_CASE("a traced ResourceApply node runs at every call", "[ops][variable_ops]") {
  auto w = var({1, 2}, "w");
  auto step = tf::function([&](const tf::Tensor<float, 1>& g) {
    (void)tf::detail::execute(tf::ops::ResourceApplyGradientDescent{w}, s(0.5f), g);
    return w.value();
  });
  CHECK(step(tf::constant<float>({2, 2})).numpy() == std::vector<float>{0, 1});
  CHECK(step(tf::constant<float>({2, 0})).numpy() == std::vector<float>{-1, 1});
  CHECK(step.trace_count() == 1);
  CHECK_THAT(step.concrete_functions()[0]->to_string(),
             Catch::Contains("= ResourceApplyGradientDescent(Const"));
  CHECK(step.concrete_functions()[0]->nodes().at(0).resources == std::vector<std::int64_t>{w.id()});
}

}  // namespace test_ops_variable_ops
