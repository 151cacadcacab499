#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/core/eigen.hpp>  // Eigen::Tensor arguments below
#include <tapeflow/function/function.hpp>
#include <tapeflow/ops/logging/print.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_function_function {

namespace tf = tapeflow;

namespace {
// Whether two floating-point values have the same bits.
template <class T>
bool same(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  return std::bit_cast<Bits>(a) == std::bit_cast<Bits>(b);
}
}  // namespace

TEST_CASE("traces once per signature - the body runs only while tracing", "[function][function]") {
  std::ostringstream out;
  int body_runs = 0;
  auto f = tf::function([&](const auto& x) {
    ++body_runs;
    tf::print(x, out);
  });
  f(tf::constant<std::int32_t>(1));
  f(tf::constant<std::int32_t>(2));
  Eigen::Tensor<std::int32_t, 0> host;
  host() = 3;
  f(host);  // a host array shares the tensor's trace
  CHECK(body_runs == 1);
  f(tf::constant(0.5f));               // dtype changes: retrace
  f(std::vector<std::int32_t>{1, 2});  // rank changes: retrace
  CHECK(body_runs == 3);
  CHECK(f.trace_count() == 3);
  CHECK(out.str() == "1\n2\n3\n0.5\n[1 2]\n");
  REQUIRE(f.retrace_reasons().size() == 2);
  CHECK(f.retrace_reasons()[0] == "argument 0: dtype int32 -> float32");
  CHECK_THAT(f.retrace_reasons()[1], Catch::Contains("rank 0 -> 1"));
}

TEST_CASE("Eigen tensor arguments convert to row-major tensors", "[function][function]") {
  auto f = tf::function([](const tf::Tensor<float, 2>& x) { return x + 0.0f; });
  Eigen::Tensor<float, 2> col_major(2, 3);  // Eigen's default layout
  col_major.setValues({{1, 2, 3}, {4, 5, 6}});
  auto y = f(col_major);
  CHECK(y.shape() == tf::Shape{2, 3});
  CHECK(y.numpy() == std::vector<float>{1, 2, 3, 4, 5, 6});
  Eigen::Tensor<float, 3, Eigen::RowMajor> row_major(2, 1, 2);
  row_major.setValues({{{1, 2}}, {{3, 4}}});
  auto g = tf::function([](const tf::Tensor<float, 3>& x) { return x * 2.0f; });
  CHECK(g(row_major).numpy() == std::vector<float>{2, 4, 6, 8});
  Eigen::Tensor<double, 3> cube(2, 3, 4);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        cube(i, j, k) = 100 * i + 10 * j + k;
      }
    }
  }
  auto h = tf::function([](const tf::Tensor<double, 3>& x) { return x + 0.0; });
  auto values = h(cube).numpy();
  REQUIRE(values.size() == 24);
  CHECK(values[0] == 0);
  CHECK(values[1] == 1);     // (0, 0, 1)
  CHECK(values[4] == 10);    // (0, 1, 0)
  CHECK(values[12] == 100);  // (1, 0, 0)
  CHECK(values[23] == 123);
}

TEST_CASE("plain numbers are keyed by value", "[function][function]") {
  std::ostringstream out;
  auto f = tf::function([&](auto x) { tf::print(x, out); }, {.max_traces_before_warning = 100});
  f(1);
  f(2);
  f(1);
  f(0.1);
  f(0.2);
  f(0.1);
  CHECK(f.trace_count() == 4);
  CHECK(out.str() == "1\n2\n1\n0.1\n0.2\n0.1\n");
  CHECK_THAT(f.retrace_reasons()[0], Catch::Contains("value int32 1 -> int32 2"));
}

TEST_CASE("shape changes retrace and are explained", "[function][function]") {
  auto f = tf::function([](const tf::Tensor<float, 1>& x) { return x * 2.0f; });
  CHECK(f(tf::constant<float>({1, 2})).numpy() == std::vector<float>{2, 4});
  CHECK(f(tf::constant<float>({3, 4})).numpy() == std::vector<float>{6, 8});
  CHECK(f.trace_count() == 1);
  CHECK(f(tf::constant<float>({1, 2, 3})).numpy() == std::vector<float>{2, 4, 6});
  CHECK(f.trace_count() == 2);
  CHECK(f.retrace_reasons()[0] == "argument 0: shape (2,) -> (3,) (relaxed to (None,))");
  // The relaxed graph serves every later length: no more traces.
  CHECK(f(tf::constant<float>({1, 2, 3, 4, 5})).numpy() == std::vector<float>{2, 4, 6, 8, 10});
  CHECK(f(tf::constant<float>({7})).numpy() == std::vector<float>{14});
  CHECK(f.trace_count() == 2);
}

TEST_CASE("relaxed shapes: a varying batch size retraces once", "[function][function]") {
  auto w = tf::random::normal<float>({4, 3}, {.seed = 5});
  auto b = tf::constant<float>({0.1f, -0.2f, 0.3f});
  auto body = [&](const tf::Tensor<float, 2>& x, const tf::Tensor<std::int32_t, 1>& y) {
    auto logits = tf::nn::relu(tf::matmul(x, w) + b);
    auto loss = tf::reduce_mean(tf::nn::sparse_softmax_cross_entropy_with_logits(y, logits));
    return std::tuple{tf::nn::softmax(logits), loss};
  };
  auto f = tf::function(body);
  for (std::int64_t batch : {8, 5, 8, 3, 11}) {
    auto x = tf::random::uniform<float>({batch, 4}, {.seed = static_cast<std::uint64_t>(batch)});
    auto y = tf::random::uniform<std::int32_t>({batch}, {.minval = 0, .maxval = 3, .seed = 2});
    auto [p, loss] = f(x, y);
    auto [p_eager, loss_eager] = body(x, y);
    REQUIRE(p.shape() == p_eager.shape());
    CHECK(loss.item() == Approx(loss_eager.item()));
  }
  CHECK(f.trace_count() == 2);  // (8, 4) exact, then (-1, 4) for every other batch size
  CHECK(f.retrace_reasons()[0] ==
        "argument 0: shape (8, 4) -> (5, 4); argument 1: shape (8,) -> (5,) (relaxed to (None, 4) "
        "(None,))");
  // A dtype change is not relaxed; under ShapePolicy::exact every new shape retraces.
  auto g = tf::function([](const tf::Tensor<float, 1>& x) { return x + 1.0f; },
                        {.shape_policy = tf::ShapePolicy::exact});
  for (std::int64_t n : {2, 3, 4, 3}) {
    g(tf::zeros<float>({n}));
  }
  CHECK(g.trace_count() == 3);
}

TEST_CASE("a relaxed retrace an op cannot take traces the exact shapes", "[function][function]") {
  // The gradient of a mean needs its element count: with the length unknown it cannot be
  // built, so the function traces each length exactly, with correct gradients.
  auto grad = tf::function([](const tf::Tensor<float, 1>& x) {
    tf::GradientTape tape;
    tape.watch(x);
    auto y = tf::reduce_mean(x * x);
    return *tape.gradient(y, x);
  });
  CHECK(grad(tf::constant<float>({1, 2})).numpy() == std::vector<float>{1, 2});
  CHECK(grad(tf::constant<float>({3, 6, 9})).numpy() == std::vector<float>{2, 4, 6});
  CHECK(grad(tf::constant<float>({2, 2, 2, 2})).numpy() == std::vector<float>{1, 1, 1, 1});
  CHECK(grad.trace_count() == 3);
  REQUIRE(grad.retrace_reasons().size() == 2);
  CHECK_THAT(grad.retrace_reasons()[0],
             Catch::StartsWith("argument 0: shape (2,) -> (3,) (not relaxed: "));
  CHECK(grad.retrace_reasons()[1] == "argument 0: shape (3,) -> (4,)");  // no second attempt
  // A random op needs its shape (Dropout's mask): the same fallback.
  auto noisy = tf::function([](const tf::Tensor<float, 1>& x) {
    return x + tf::random::uniform<float>(x.dims(), {.maxval = 0.5f, .seed = 3});
  });
  CHECK(noisy(tf::zeros<float>({2})).shape() == tf::Shape{2});
  CHECK(noisy(tf::zeros<float>({5})).shape() == tf::Shape{5});
  CHECK_THAT(noisy.retrace_reasons()[0], Catch::Contains("(not relaxed: RandomUniform"));
}

TEST_CASE("variables are captured by reference", "[function][function]") {
  tf::Variable<float, 0> a(0.0f);
  auto g = tf::function([&]() -> tf::Tensor<float, 0> {
    a.assign(a + 1.0f);
    return a;
  });
  CHECK(g().item() == 1.0f);
  CHECK(g().item() == 2.0f);
  CHECK(g().item() == 3.0f);
  CHECK(a.value().item() == 3.0f);
  a.assign(tf::constant(10.0f));  // an outside assignment is seen by the next call
  CHECK(g().item() == 11.0f);
  CHECK(g.trace_count() == 1);
  const std::string text = g.concrete_functions()[0]->to_string();
  CHECK_THAT(text, Catch::Contains("ReadVariableOp") && Catch::Contains("AssignVariableOp") &&
                       Catch::Contains("AddV2"));
}

TEST_CASE("tuples, pairs and tensors computed from arguments", "[function][function]") {
  auto f = tf::function([](const tf::Tensor<float, 2>& x, const tf::Tensor<float, 2>& w) {
    auto y = tf::matmul(x, w);
    return std::tuple{y, tf::reduce_sum(y)};
  });
  auto [y, s] = f(tf::constant<float>({{1, 2}}), tf::constant<float>({{3}, {4}}));
  CHECK(y.numpy() == std::vector<float>{11});
  CHECK(s.item() == 11.0f);
  const std::string text = f.concrete_functions()[0]->to_string();
  CHECK_THAT(text, Catch::Contains("BatchMatMulV2[adj_x=false, adj_y=false](arg0, arg1)"));
}

TEST_CASE("tuples and lists of tensors are arguments keyed on each tensor",
          "[function][function]") {
  int traces = 0;
  auto f = tf::function([&](const std::tuple<tf::Tensor<float, 1>, tf::Tensor<std::int32_t, 0>>& xy,
                            const std::vector<tf::Tensor<float, 1>>& more) {
    ++traces;
    auto total = std::get<0>(xy) * tf::cast<float>(std::get<1>(xy));
    for (const auto& m : more) {
      total = total + m;
    }
    return total;
  });
  const std::vector<tf::Tensor<float, 1>> two{tf::constant<float>({1, 2}),
                                              tf::constant<float>({3, 4})};
  CHECK(f(std::tuple{tf::constant<float>({1, 1}), tf::constant<std::int32_t>(2)}, two).numpy() ==
        std::vector<float>{6, 8});
  // New values of the same signature reuse the trace: the tensors are arguments, not constants.
  CHECK(f(std::tuple{tf::constant<float>({2, 3}), tf::constant<std::int32_t>(3)}, two).numpy() ==
        std::vector<float>{10, 15});
  CHECK(traces == 1);
  CHECK(f.concrete_functions()[0]->graph().arg_slots.size() == 4);
  // A list's length and each tensor's shape are part of the key.
  const std::vector<tf::Tensor<float, 1>> three{two[0], two[1], tf::constant<float>({1, 1})};
  CHECK(f(std::tuple{tf::constant<float>({1, 1}), tf::constant<std::int32_t>(1)}, three).numpy() ==
        std::vector<float>{6, 8});
  CHECK(f(std::tuple{tf::constant<float>({1, 1, 1}), tf::constant<std::int32_t>(1)},
          std::vector<tf::Tensor<float, 1>>{tf::constant<float>({0, 0, 0})})
            .numpy() == std::vector<float>{1, 1, 1});
  CHECK(traces == 3);
  REQUIRE(f.retrace_reasons().size() == 2);
  CHECK_THAT(f.retrace_reasons()[0],
             Catch::StartsWith("argument 1 (a list): value list of 2 -> list of 3"));
  CHECK_THAT(f.retrace_reasons()[1], Catch::StartsWith("argument 0, tensor 0: shape (2,) -> (3,)"));
}

TEST_CASE("AnyTensor arguments and results trace on their dtype and shape",
          "[function][function]") {
  int traces = 0;
  auto twice = tf::function([&](const tf::AnyTensor& x) -> tf::AnyTensor {
    ++traces;
    if (x.dtype() == tf::DType::float64) {
      return x.as<double, 1>() * 2.0;
    }
    return x.as<float, 1>() * 2.0f;
  });
  CHECK(twice(tf::AnyTensor(tf::constant<float>({1, 2}))).as<float, 1>().numpy() ==
        std::vector<float>{2, 4});
  CHECK(twice(tf::AnyTensor(tf::constant<float>({3, 4}))).as<float, 1>().numpy() ==
        std::vector<float>{6, 8});
  CHECK(traces == 1);
  // A new dtype traces anew; a new length traces once more with the length unknown.
  CHECK(twice(tf::AnyTensor(tf::constant<double>({5}))).as<double, 1>().numpy() ==
        std::vector<double>{10});
  CHECK(twice(tf::AnyTensor(tf::constant<float>({1, 2, 3}))).as<float, 1>().numpy() ==
        std::vector<float>{2, 4, 6});
  CHECK(twice(tf::AnyTensor(tf::constant<float>({1, 2, 3, 4}))).as<float, 1>().numpy() ==
        std::vector<float>{2, 4, 6, 8});
  CHECK(traces == 3);
  CHECK(twice.retrace_reasons() ==
        std::vector<std::string>{"argument 0: dtype float32 -> float64",
                                 "argument 0: shape (2,) -> (3,) (relaxed to (None,))"});
  CHECK_THROWS_WITH(twice(tf::AnyTensor{}), Catch::Contains("holds no tensor"));

  auto pinned = tf::function(
      [](const tf::AnyTensor& x) { return x; },
      {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::float32, tf::Shape{-1}}}});
  CHECK(pinned(tf::AnyTensor(tf::constant<float>({1}))).shape() == tf::Shape{1});
  CHECK_THROWS_WITH(pinned(tf::AnyTensor(tf::constant<std::int32_t>({1}))),
                    Catch::Contains("does not match input_signature") && Catch::Contains("int32"));
  CHECK_THROWS_WITH(pinned(tf::AnyTensor(tf::constant<float>({{1}}))),
                    Catch::Contains("does not match input_signature") && Catch::Contains("(1, 1)"));
}

TEST_CASE("input_signature pins the signature", "[function][function]") {
  // [snippet:input_signature]
  auto f = tf::function(
      [](const tf::Tensor<float, 1>& x) { return tf::reduce_sum(x); },
      {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::float32, tf::Shape{-1}}}});
  CHECK(f(tf::constant<float>({1, 2})).item() == 3.0f);
  CHECK(f(tf::constant<float>({1, 2, 3})).item() == 6.0f);
  CHECK(f.trace_count() == 1);
  // [snippet:input_signature]
  auto g = tf::function(
      [](const tf::Tensor<float, 1>& x) { return x; },
      {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::float32, tf::Shape{2}}}});
  CHECK_THROWS_WITH(g(tf::constant<float>({1, 2, 3})),
                    Catch::Contains("does not match input_signature") && Catch::Contains("(3,)"));
  auto h = tf::function(
      [](const tf::Tensor<double, 1>& x) { return x; },
      {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::float32, tf::Shape{2}}}});
  CHECK_THROWS_WITH(h(tf::constant<double>({1, 2})), Catch::Contains("float64"));
}

TEST_CASE("excessive retracing warns once and names the cause", "[function][function]") {
  std::ostringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  auto f = tf::function([](int v) { return tf::constant(v); });
  for (int i = 0; i < 8; ++i) {
    f(i);
  }
  std::cerr.rdbuf(old);
  CHECK(f.trace_count() == 8);
  CHECK_THAT(captured.str(),
             Catch::Contains("traced 6 times") && Catch::Contains("value int32 4 -> int32 5"));
}

TEST_CASE("a GradientTape and an optimizer step inside a traced function", "[function][function]") {
  tf::Variable<float, 2> w(tf::constant<float>({{0.5f}, {-0.5f}}));
  auto x = tf::constant<float>({{1, 2}, {3, 4}});
  auto y = tf::constant<float>({{1}, {2}});
  auto step = tf::function([&](const tf::Tensor<float, 2>& xs, const tf::Tensor<float, 2>& ys) {
    tf::GradientTape tape;
    auto loss = tf::reduce_mean(tf::square(tf::matmul(xs, w) - ys));
    auto grad = tape.gradient(loss, w);
    w.assign_sub(0.05f * *grad);
    return loss;
  });
  // The same steps eagerly, on a copy of the weights.
  tf::Variable<float, 2> w2(tf::constant<float>({{0.5f}, {-0.5f}}));
  for (int i = 0; i < 5; ++i) {
    auto traced_loss = step(x, y);
    tf::GradientTape tape;
    auto loss = tf::reduce_mean(tf::square(tf::matmul(x, w2) - y));
    auto grad = tape.gradient(loss, w2);
    w2.assign_sub(0.05f * *grad);
    CHECK(traced_loss.item() == Approx(loss.item()));
  }
  CHECK(step.trace_count() == 1);
  CHECK(w.value()(0, 0) == Approx(w2.value()(0, 0)));
}

TEST_CASE("a traced function is differentiable from outside", "[function][function]") {
  auto f =
      tf::function([](const tf::Tensor<double, 1>& x) { return tf::reduce_sum(tf::tanh(x) * x); });
  tapeflow_test::check_gradients([&](const auto& x) { return f(x); },
                                 tapeflow_test::test_data<1>({4}));
  tf::Variable<double, 0> v(2.0);
  auto g = tf::function([&]() -> tf::Tensor<double, 0> { return v * v; });
  tf::GradientTape tape;
  auto y = g();
  CHECK(tape.gradient(y, v)->item() == Approx(4.0));
}

TEST_CASE("functions called inside a trace are inlined", "[function][function]") {
  auto inner = tf::function([](const tf::Tensor<float, 0>& x) { return x * 3.0f; });
  auto outer = tf::function([&](const tf::Tensor<float, 0>& x) { return inner(x) + 1.0f; });
  CHECK(outer(tf::constant(2.0f)).item() == 7.0f);
  CHECK(inner.trace_count() == 0);
  CHECK(outer.trace_count() == 1);
}

TEST_CASE("symbolic tensors have no value", "[function][function]") {
  auto f = tf::function([](const tf::Tensor<float, 0>& x) {
    CHECK(x.is_symbolic());
    CHECK_THROWS_WITH(x.item(), Catch::Contains("symbolic"));
    return x;
  });
  CHECK(f(tf::constant(1.0f)).item() == 1.0f);
}

TEST_CASE("elementwise chains are fused and agree with eager execution", "[function][function]") {
  auto body = [](const tf::Tensor<float, 1>& x) {
    auto y = x;
    for (int i = 0; i < 4; ++i) {
      y = tf::tanh(y * 0.9f + 0.1f) - x;
      y = y * x;
    }
    return std::tuple{y, tf::reduce_sum(y)};
  };
  auto f = tf::function(body);
  auto x = tf::random::uniform<float>({3000}, {.minval = -1.0f, .maxval = 1.0f, .seed = 7});
  auto [traced, traced_sum] = f(x);
  auto [eager, eager_sum] = body(x);
  for (std::int64_t i = 0; i < 3000; ++i) {
    REQUIRE(traced.values()[static_cast<std::size_t>(i)] ==
            eager.values()[static_cast<std::size_t>(i)]);
  }
  // The sum joins the chain and adds the same blocks in the same order as the op.
  CHECK(std::bit_cast<std::uint32_t>(traced_sum.item()) ==
        std::bit_cast<std::uint32_t>(eager_sum.item()));
  const auto chains = f.concrete_functions()[0]->fused_chains();
  REQUIRE(chains.size() == 1);
  CHECK(chains[0] == 21);  // 5 ops x 4 rounds, and the sum of the last
  // Under an outside tape the same graph runs node by node, so gradients flow.
  tf::GradientTape tape;
  tape.watch(x);
  auto [y, s] = f(x);
  CHECK(tape.gradient(s, x).has_value());
}

TEST_CASE("fused chains read run-time scalars and keep intermediates used later",
          "[function][function]") {
  // `s` is a scalar argument (a new value each call, broadcast per run); `mid` is produced
  // inside the chain but also returned, so the chain writes it out while fusing.
  auto body = [](const tf::Tensor<double, 2>& x, const tf::Tensor<double, 0>& s) {
    auto mid = x * s + 1.0;
    auto y = tf::sigmoid(mid) * mid - s;
    return std::tuple{mid, y};
  };
  auto f = tf::function(body);
  auto x = tf::random::uniform<double>({7, 301}, {.minval = -2.0, .maxval = 2.0, .seed = 3});
  for (double value : {0.5, -1.5, 3.0}) {
    auto s = tf::constant(value);
    auto [mid, y] = f(x, s);
    auto [mid_eager, y_eager] = body(x, s);
    REQUIRE(mid.shape() == x.shape());
    for (std::size_t i = 0; i < mid.values().size(); ++i) {
      REQUIRE(mid.values()[i] == mid_eager.values()[i]);
      REQUIRE(y.values()[i] == Approx(y_eager.values()[i]).epsilon(1e-14));
    }
  }
  CHECK(f.trace_count() == 1);
  REQUIRE(f.concrete_functions()[0]->fused_chains().size() == 1);
}

TEST_CASE("a Reshape between elementwise ops joins their chain", "[function][function]") {
  // Forward and gradient: the chain goes on through both reshapes (a bias of 4 after the
  // first), and the gradient's reshapes sit inside its chain too. Results are the eager ones,
  // bitwise: a reshape moves no element.
  auto b = tf::random::uniform<float>({4}, {.minval = -1.0f, .maxval = 1.0f, .seed = 2});
  auto body = [&](const tf::Tensor<float, 2>& x) {
    auto y = tf::tanh(x * 2.0f);
    auto z = tf::reshape(y, {60, 4}) + b;
    return tf::reshape(z, {240}) * 3.0f;
  };
  auto gradient_of = [&](const tf::Tensor<float, 2>& x) {
    tf::GradientTape tape;
    tape.watch(x);
    auto loss = tf::reduce_sum(tf::square(body(x)));
    return *tape.gradient(loss, x);
  };
  auto f = tf::function(body);
  auto g = tf::function(gradient_of);
  auto x = tf::random::uniform<float>({6, 40}, {.minval = -1.0f, .maxval = 1.0f, .seed = 1});
  auto require_bitwise_equal = [](const auto& traced, const auto& eager) {
    REQUIRE(traced.shape() == eager.shape());
    const auto a = traced.values();
    const auto b = eager.values();
    for (std::size_t i = 0; i < a.size(); ++i) {
      REQUIRE(std::bit_cast<std::uint32_t>(a[i]) == std::bit_cast<std::uint32_t>(b[i]));
    }
  };
  require_bitwise_equal(f(x), body(x));
  CHECK(f.concrete_functions()[0]->fused_chains() == std::vector<std::size_t>{6});
  require_bitwise_equal(g(x), gradient_of(x));
  // The whole gradient graph, forward and backward with their reshapes, is one chain (the
  // gradient's reshape of a reshape is one Reshape: Note [Graph passes]).
  CHECK(g.concrete_functions()[0]->fused_chains() == std::vector<std::size_t>{13});

  // At a chain's ends a reshape stays a view: it neither joins nor makes a chain of its own.
  auto ends = tf::function([](const tf::Tensor<float, 2>& x) {
    return tf::reshape(tf::exp(tf::reshape(x, {240})) * 2.0f, {4, 60});
  });
  require_bitwise_equal(ends(x), tf::reshape(tf::exp(tf::reshape(x, {240})) * 2.0f, {4, 60}));
  CHECK(ends.concrete_functions()[0]->fused_chains() == std::vector<std::size_t>{2});
  auto lone = tf::function([](const tf::Tensor<float, 2>& x) { return tf::reshape(x, {240}); });
  require_bitwise_equal(lone(x), tf::reshape(x, {240}));

  // Inside a chain, a reshape of a value from outside it (an argument) is read in place; one
  // whose value is also returned writes it out.
  auto outside = [](const tf::Tensor<float, 2>& x, const tf::Tensor<float, 1>& v) {
    auto y = tf::tanh(x * 2.0f);
    auto r = tf::reshape(v, {6, 40});  // traced after the chain began: inside it
    auto s = tf::reshape(y + r, {240});
    return std::tuple{s * 3.0f, s};
  };
  auto h = tf::function(outside);
  auto v = tf::random::uniform<float>({240}, {.seed = 3});
  const auto [traced_out, traced_s] = h(x, v);
  const auto [eager_out, eager_s] = outside(x, v);
  require_bitwise_equal(traced_out, eager_out);
  require_bitwise_equal(traced_s, eager_s);
  CHECK(h.concrete_functions()[0]->fused_chains() == std::vector<std::size_t>{6});
  CHECK(lone.concrete_functions()[0]->fused_chains().empty());
}

TEST_CASE("fused chains agree with eager execution at every chunk size", "[function][function]") {
  // Many distinct constants shrink a chain's chunk (its splats must fit in L1), equal ones
  // share a splat, and lengths around the chunk sizes leave short last chunks, which join the
  // chunk before: exp's scalar path (std::exp) differs from its packets, and eager runs put
  // all but a lone value's elements through packets.
  auto body = [](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    auto y = x;
    for (int i = 0; i < 24; ++i) {
      y = y * static_cast<T>(0.5 + 0.01 * i) + static_cast<T>(i % 3 == 0 ? 0.25 : -0.125);
      y = tf::tanh(y) - x;
    }
    return tf::exp(y);
  };
  auto check = [&]<class T>(std::int64_t n) {
    auto f = tf::function([&](const tf::Tensor<T, 1>& x) { return body(x); });
    auto x = tf::random::uniform<T>({n}, {.minval = T(-2), .maxval = T(2), .seed = 11});
    auto traced = f(x);
    auto eager = body(x);
    REQUIRE(f.concrete_functions()[0]->fused_chains().size() == 1);
    for (std::size_t i = 0; i < eager.values().size(); ++i) {
      INFO("n = " << n << " element " << i);
      REQUIRE(traced.values()[i] == eager.values()[i]);
    }
  };
  for (std::int64_t n : {2, 17, 255, 257, 262, 1000, 1025, 1030, 4099, 20000, 20495}) {
    check.template operator()<float>(n);
    check.template operator()<double>(n);
  }
}

TEST_CASE("a sum or mean of a fused chain's value joins the chain", "[function][function]") {
  // The chain's value is summed chunk by chunk (never written out unless returned), and the
  // result is bitwise the op's: the same blocks added in the same order (Note [Full sums]).
  auto body = [](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    auto y = x;
    for (int i = 0; i < 6; ++i) {
      y = tf::tanh(y * static_cast<T>(0.5 + 0.07 * i)) - x;  // constants shrink the chunk
    }
    auto z = y * y;
    return std::tuple{y, tf::reduce_sum(z), tf::reduce_mean(tf::exp(y), {0, 1}, tf::keepdims)};
  };
  auto check = [&]<class T>(std::int64_t rows) {
    INFO("rows = " << rows);
    auto f = tf::function([&](const tf::Tensor<T, 2>& x) { return body(x); });
    auto x = tf::random::uniform<T>({rows, 3}, {.minval = T(-2), .maxval = T(2), .seed = 5});
    auto [y, sum, mean] = f(x);
    auto [y_eager, sum_eager, mean_eager] = body(x);
    CHECK(same(sum.item(), sum_eager.item()));
    REQUIRE(mean.shape() == tf::Shape{1, 1});
    CHECK(same(mean.values()[0], mean_eager.values()[0]));
    for (std::size_t i = 0; i < y.values().size(); ++i) {
      REQUIRE(y.values()[i] == y_eager.values()[i]);
    }
    const auto chains = f.concrete_functions()[0]->fused_chains();
    REQUIRE(chains.size() == 2);
    CHECK(chains[0] == 20);  // 3 ops x 6 rounds, the square and its sum
    CHECK(chains[1] == 2);   // exp and its mean
  };
  for (std::int64_t rows : {1, 5, 85, 86, 87, 341, 342, 1367, 33334}) {
    check.template operator()<float>(rows);
    check.template operator()<double>(rows);
  }
  // A sum of an argument, or a max, stays out of the chain; a sum of rows joins (the test
  // after the next).
  auto g = tf::function([](const tf::Tensor<float, 2>& x) {
    return std::tuple{tf::reduce_sum(tf::exp(x), 1), tf::reduce_sum(x), tf::reduce_max(x * x)};
  });
  auto x = tf::random::uniform<float>({50, 40}, {.seed = 6});
  auto [rows, total, max] = g(x);
  CHECK(rows.numpy() == tf::reduce_sum(tf::exp(x), 1).numpy());
  CHECK(total.item() == tf::reduce_sum(x).item());
  CHECK(max.item() == tf::reduce_max(x * x).item());
  CHECK(g.concrete_functions()[0]->fused_chains() == std::vector<std::size_t>{2, 1});
}

TEST_CASE("a sum or mean over leading axes of a fused chain's value joins the chain",
          "[function][function]") {
  // A batch's variance by channel ([rows, C] -> [C]) and a bias gradient ([N, H, W, C] -> [C]):
  // the chain's value is summed block by block, bitwise the op's (Note [Leading-axis sums]).
  auto body = [](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    auto flat = tf::reshape(x, std::array<std::int64_t, 2>{-1, x.dims()[3]});
    auto mean = tf::reduce_mean(flat, 0);  // of an argument: no chain
    auto variance = tf::reduce_mean(tf::math::squared_difference(flat, mean), 0);
    auto y = tf::nn::relu(x * static_cast<T>(0.5) - static_cast<T>(0.25));
    int const axes[3] = {0, 1, 2};
    return std::tuple{mean, variance, y, tf::reduce_sum(y * x, axes)};
  };
  auto check = [&]<class T>(std::int64_t rows, std::int64_t c, bool fuses) {
    INFO("rows = " << rows << " channels = " << c);
    auto f = tf::function([&](const tf::Tensor<T, 4>& x) { return body(x); });
    auto x = tf::reshape(
        tf::random::uniform<T>({rows * c}, {.minval = T(-2), .maxval = T(2), .seed = 8}),
        std::array<std::int64_t, 4>{rows, 1, 1, c});
    auto traced = f(x);
    auto eager = body(x);
    auto sum_rows_ref = std::vector<double>(static_cast<std::size_t>(c), 0.0);
    for (std::size_t i = 0; i < x.values().size(); ++i) {
      sum_rows_ref[i % static_cast<std::size_t>(c)] += double(x.values()[i]);
    }
    for (std::int64_t k = 0; k < c; ++k) {
      auto const i = static_cast<std::size_t>(k);
      CHECK(same(std::get<0>(traced).values()[i], std::get<0>(eager).values()[i]));
      CHECK(same(std::get<1>(traced).values()[i], std::get<1>(eager).values()[i]));
      CHECK(same(std::get<3>(traced).values()[i], std::get<3>(eager).values()[i]));
      CHECK(double(std::get<0>(eager).values()[i]) ==
            Approx(sum_rows_ref[i] / double(rows)).margin(1e-5));
    }
    const auto chains = f.concrete_functions()[0]->fused_chains();
    // squared_difference and its mean; *, -, relu, * and the sum (relu's value is returned).
    // Past 1024 channels neither the repeated mean (but of one row: not repeated) nor the
    // blocks fit a chunk.
    auto const unfused = rows == 1 ? std::vector<std::size_t>{1, 4} : std::vector<std::size_t>{4};
    CHECK(chains == (fuses ? std::vector<std::size_t>{2, 5} : unfused));
  };
  for (std::int64_t rows : {1, 15, 16, 17, 64, 65, 1000, 3333}) {
    for (std::int64_t c : {3, 32, 96, 960}) {
      check.template operator()<float>(rows, c, true);
    }
    check.template operator()<double>(rows, 33, true);
    check.template operator()<float>(rows, 1500, false);  // blocks of 16 rows would not fit L2
  }
}

TEST_CASE("a sum or mean over trailing axes of a fused chain's value joins the chain",
          "[function][function]") {
  // A row's squared norm or mean ([rows, red] -> [rows], here [rows, 1, red] over its last two
  // axes and [rows, red] over its last): each chunk holds whole rows, summed by the op's own row
  // kernel, so results are bitwise eager's however the chain is chunked or threaded.
  auto body = [](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    auto y = tf::nn::relu(x * static_cast<T>(0.5) - static_cast<T>(0.25));
    int const last_two[2] = {1, 2};
    auto norm = tf::reduce_sum(y * x, last_two);  // before the Reshape, which ends a chain
    auto flat = tf::reshape(x, std::array<std::int64_t, 2>{x.dims()[0], -1});
    return std::tuple{y, norm,
                      tf::reduce_mean(tf::math::squared_difference(flat, static_cast<T>(1)), 1)};
  };
  auto check = [&]<class T>(std::int64_t rows, std::int64_t red, bool fuses) {
    INFO("rows = " << rows << " row length = " << red);
    auto f = tf::function([&](const tf::Tensor<T, 3>& x) { return body(x); });
    auto x = tf::reshape(
        tf::random::uniform<T>({rows * red}, {.minval = T(-2), .maxval = T(2), .seed = 9}),
        std::array<std::int64_t, 3>{rows, 1, red});
    auto traced = f(x);
    auto eager = body(x);
    for (std::int64_t r = 0; r < rows; ++r) {
      auto const i = static_cast<std::size_t>(r);
      CHECK(same(std::get<1>(traced).values()[i], std::get<1>(eager).values()[i]));
      CHECK(same(std::get<2>(traced).values()[i], std::get<2>(eager).values()[i]));
      double want = 0;
      for (std::int64_t k = 0; k < red; ++k) {
        double const v = double(x.values()[static_cast<std::size_t>(r * red + k)]);
        want += (v - 1) * (v - 1);
      }
      CHECK(double(std::get<2>(eager).values()[i]) == Approx(want / double(red)).epsilon(1e-5));
    }
    CHECK(std::get<0>(traced).numpy() == std::get<0>(eager).numpy());
    // *, -, relu, * and the sum (relu's value is returned); squared_difference and its mean.
    // A row whose length and 16's least common multiple passes 16K elements stays out.
    const auto chains = f.concrete_functions()[0]->fused_chains();
    CHECK(chains == (fuses ? std::vector<std::size_t>{5, 2} : std::vector<std::size_t>{4, 1}));
  };
  for (std::int64_t rows : {2, 3, 17, 64, 333}) {
    for (std::int64_t red : {2, 10, 16, 100, 784, 1000}) {
      check.template operator()<float>(rows, red, true);
    }
    check.template operator()<double>(rows, 33, true);
    check.template operator()<float>(rows, 1025, false);
  }
}

TEST_CASE("a sum or mean over middle axes of a fused chain's value joins the chain",
          "[function][function]") {
  // [outer, red, columns] -> [outer, columns] (a pooled feature map's mean over height and
  // width): each chunk holds whole [red, columns] slices, summed by the op's own slice kernel,
  // so results are bitwise eager's however the chain is chunked or threaded.
  auto body = [](const auto& x) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    auto y = tf::nn::relu(x * static_cast<T>(0.5) - static_cast<T>(0.25));
    int const height_width[2] = {1, 2};
    int const height[1] = {1};
    return std::tuple{y, tf::reduce_mean(y * x, height_width),
                      tf::reduce_sum(tf::exp(x), height, tf::keepdims)};
  };
  auto check = [&]<class T>(std::int64_t outer, std::int64_t red, std::int64_t columns) {
    INFO("outer = " << outer << " red = " << red << " columns = " << columns);
    auto f = tf::function([&](const tf::Tensor<T, 4>& x) { return body(x); });
    auto x = tf::reshape(tf::random::uniform<T>({outer * red * columns},
                                                {.minval = T(-2), .maxval = T(2), .seed = 11}),
                         std::array<std::int64_t, 4>{outer, red, 1, columns});
    auto traced = f(x);
    auto eager = body(x);
    REQUIRE(std::get<1>(traced).shape() == tf::Shape{outer, columns});
    REQUIRE(std::get<2>(traced).shape() == tf::Shape{outer, 1, 1, columns});
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t c = 0; c < columns; ++c) {
        auto const i = static_cast<std::size_t>(o * columns + c);
        CHECK(same(std::get<1>(traced).values()[i], std::get<1>(eager).values()[i]));
        CHECK(same(std::get<2>(traced).values()[i], std::get<2>(eager).values()[i]));
        double want = 0;
        for (std::int64_t r = 0; r < red; ++r) {
          want +=
              std::exp(double(x.values()[static_cast<std::size_t>((o * red + r) * columns + c)]));
        }
        CHECK(double(std::get<2>(eager).values()[i]) == Approx(want).epsilon(1e-5));
      }
    }
    CHECK(std::get<0>(traced).numpy() == std::get<0>(eager).numpy());
    // *, -, relu, * and the mean (relu's value is returned); exp and its sum. A slice over 2048
    // elements, or whose length and 16's least common multiple passes 16K, stays out.
    bool const fuses = red * columns <= 2048 && std::lcm(red * columns, std::int64_t{16}) <= 16384;
    const auto chains = f.concrete_functions()[0]->fused_chains();
    CHECK(chains == (fuses ? std::vector<std::size_t>{5, 2} : std::vector<std::size_t>{4, 1}));
  };
  for (std::int64_t outer : {2, 3, 17, 50}) {
    for (std::int64_t red : {2, 7, 49}) {
      for (std::int64_t columns : {2, 16, 33, 40, 64}) {  // out: 49 x 33 (lcm), 49 x 64 (3,136)
        check.template operator()<float>(outer, red, columns);
      }
      check.template operator()<double>(outer, red, 5);
    }
    check.template operator()<float>(outer, 49, 1280);  // MobileNetV2's pooling: 62,720, out
  }
  // Reduced axes that are not one run ({0, 2}) are none of these: as before.
  auto g = tf::function([](const tf::Tensor<float, 3>& x) {
    int const axes[2] = {0, 2};
    return tf::reduce_sum(tf::exp(x), axes);
  });
  const auto x = tf::random::uniform<float>({4, 8, 16}, {.seed = 10});
  int const axes[2] = {0, 2};
  CHECK(g(x).numpy() == tf::reduce_sum(tf::exp(x), axes).numpy());
  CHECK(g.concrete_functions()[0]->fused_chains() == std::vector<std::size_t>{1});
}

TEST_CASE("a bias add joins the chain of its activation", "[function][function]") {
  // A value repeated along leading axes (a bias: [C] to [N, C], [W, C] to [N, H, W, C]) is
  // tiled into a chunk whose length is a multiple of it; adds, subtractions, products and
  // quotients round exactly, so results stay bitwise eager's.
  auto check = [](std::array<std::int64_t, 4> x_dims, std::array<std::int64_t, 2> b_dims,
                  std::vector<std::size_t> chains) {
    const tf::Shape x_shape(x_dims);
    const tf::Shape b_shape(b_dims);
    INFO("x " << x_shape.to_string() << " bias " << b_shape.to_string());
    auto body = [](const tf::Tensor<float, 4>& x, const tf::Tensor<float, 2>& b) {
      auto c = b + 4.0f;  // a group of its own: fewer elements
      auto y = tf::nn::relu(x + b);
      return std::tuple{y, tf::tanh((y - b) * b / c)};
    };
    auto f = tf::function(body);
    auto x = tf::reshape(
        tf::random::uniform<float>({x_shape.num_elements()}, {.minval = -2, .maxval = 2}), x_dims);
    auto b =
        tf::reshape(tf::random::uniform<float>({b_shape.num_elements()}, {.minval = 1}), b_dims);
    auto [y, z] = f(x, b);
    auto [y_eager, z_eager] = body(x, b);
    for (std::size_t i = 0; i < y.values().size(); ++i) {
      REQUIRE(y.values()[i] == y_eager.values()[i]);
      REQUIRE(z.values()[i] == z_eager.values()[i]);
    }
    CHECK(f.concrete_functions()[0]->fused_chains() == chains);
  };
  const std::vector<std::size_t> whole{1, 6};    // c; then +, relu, -, *, /, tanh
  check({50, 1, 1, 100}, {1, 100}, whole);       // a Dense layer's bias: chunks of 800
  check({3, 26, 26, 32}, {1, 32}, whole);        // a convolution's
  check({2, 9, 5, 3}, {5, 3}, whole);            // repeated over two leading axes: chunks of 240
  check({1, 1, 2, 784}, {1, 784}, whole);        // one whole row per chunk
  check({4, 1, 1, 7}, {1, 7}, whole);            // one short chunk
  check({2, 1, 3, 1000}, {1, 1000}, {1, 1, 1});  // chunks of 2000 would not fit: c, relu, tanh
}

TEST_CASE("graph nodes carry the ops' attributes", "[function][function]") {
  auto f = tf::function([](const tf::Tensor<float, 4>& x, const tf::Tensor<float, 4>& w) {
    auto y = tf::nn::conv2d(x, w, {.strides = 2, .padding = tf::nn::Padding::same});
    auto p = tf::nn::max_pool2d(y, 2, 2, tf::nn::Padding::valid);
    auto flat = tf::reshape(p, {-1, 8});
    auto m = tf::matmul(flat, flat, {.transpose_b = true});
    return tf::reduce_sum(tf::nn::softmax(m), 1, tf::keepdims);
  });
  auto x = tf::random::normal<float>({2, 8, 8, 3}, {.seed = 1});
  auto w = tf::random::normal<float>({3, 3, 3, 8}, {.seed = 2});
  f(x, w);
  const std::string text = f.concrete_functions()[0]->to_string();
  CHECK_THAT(text, Catch::Contains("Conv2D[strides=[1, 2, 2, 1], padding=SAME, dilations=[1, 1, "
                                   "1, 1], data_format=NHWC]"));
  CHECK_THAT(text, Catch::Contains("MaxPool[ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], "
                                   "padding=VALID, data_format=NHWC]"));
  CHECK_THAT(text, Catch::Contains("Reshape[shape=[-1, 8]]"));
  CHECK_THAT(text, Catch::Contains("BatchMatMulV2[adj_x=false, adj_y=true]"));
  CHECK_THAT(text, Catch::Contains("Softmax = Softmax(BatchMatMulV2)"));  // no axis in TF's op
  CHECK_THAT(text, Catch::Contains("Sum[keep_dims=true, reduction_indices=[1]]"));
}

TEST_CASE("slices and unstack trace over an unknown batch dim", "[function][function]") {
  // A pinned signature with a free batch (-1): the shape rules check the known dims only and
  // the graph computes with the batch of each call.
  auto f = tf::function(
      [](const tf::Tensor<float, 3>& x) {
        auto steps = tf::unstack(x, 1);
        return steps[0] + steps[1];
      },
      {.input_signature = std::vector<tf::TensorSpec>{{tf::DType::float32, tf::Shape{-1, 2, 2}}}});
  auto x = tf::constant<float>({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}, {{9, 10}, {11, 12}}});
  auto y = f(x);
  CHECK(y.dims() == std::array<std::int64_t, 2>{3, 2});
  CHECK(std::vector<float>(y.values().begin(), y.values().end()) ==
        std::vector<float>{4, 6, 12, 14, 20, 22});
  auto one = f(tf::constant<float>({{{1, 1}, {2, 2}}}));
  CHECK(std::vector<float>(one.values().begin(), one.values().end()) == std::vector<float>{3, 3});
  CHECK(f.trace_count() == 1);
}

}  // namespace test_function_function
