#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/function/control_flow.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_function_control_flow {

namespace tf = tapeflow;
using i32 = std::int32_t;

TEST_CASE("cond eagerly calls one branch", "[function][control_flow]") {
  int true_runs = 0;
  int false_runs = 0;
  auto x = tf::constant(2.0f);
  auto pick = [&](const tf::Tensor<float, 0>& v) {
    return tf::cond(
        v > 0.0f,
        [&] {
          ++true_runs;
          return v * 2.0f;
        },
        [&] {
          ++false_runs;
          return v * v;
        });
  };
  CHECK(pick(x).item() == 4.0f);
  CHECK(pick(tf::constant(-3.0f)).item() == 9.0f);
  CHECK(true_runs == 1);
  CHECK(false_runs == 1);
  tf::Variable<bool, 0> flag(false);
  auto [a, b] = tf::cond(
      flag,
      [&] {
        return std::tuple{x, x + 1.0f};
      },
      [&] {
        return std::tuple{x * 3.0f, x};
      });
  CHECK(a.item() == 6.0f);
  CHECK(b.item() == 2.0f);
}

TEST_CASE("traced cond takes both branches of one trace", "[function][control_flow]") {
  // [snippet:traced_cond]
  int branch_traces = 0;
  auto f = tf::function([&](const tf::Tensor<float, 0>& x) {
    return tf::cond(
        x > 0.0f,
        [&] {
          ++branch_traces;
          return x * 2.0f;
        },
        [&] {
          ++branch_traces;
          return x * x;
        });
  });
  CHECK(f(tf::constant(3.0f)).item() == 6.0f);
  CHECK(f(tf::constant(-3.0f)).item() == 9.0f);
  CHECK(f(tf::constant(0.5f)).item() == 1.0f);
  CHECK(f.trace_count() == 1);
  CHECK(branch_traces == 2);  // both branches traced once, never run as C++ again
  const std::string text = f.concrete_functions()[0]->to_string();
  CHECK_THAT(text, Catch::Contains("StatelessIf[then_branch=StatelessIf_true, "
                                   "else_branch=StatelessIf_false](Greater, arg0)"));
  // [snippet:traced_cond]
}

namespace {
// Ops that differ only in their `stateful` member: the tracer reads it, not the op's name.
template <bool Stateful>
struct Identity {
  static constexpr std::string_view name = Stateful ? "MyStatefulIdentity" : "MyIdentity";
  static constexpr bool stateful = Stateful;
  [[nodiscard]] tf::Tensor<float, 0> forward(const tf::Tensor<float, 0>& x) const { return x; }
};

template <bool Stateful>
std::string traced_cond_text() {
  auto f = tf::function([](const tf::Tensor<float, 0>& x) {
    return tf::cond(
        x > 0.0f, [&] { return tf::detail::execute(Identity<Stateful>{}, x); },
        [&] { return x * 2.0f; });
  });
  CHECK(f(tf::constant(3.0f)).item() == 3.0f);
  CHECK(f(tf::constant(-3.0f)).item() == -6.0f);
  return f.concrete_functions()[0]->to_string();
}
}  // namespace

TEST_CASE("cond is If when a branch holds an op whose stateful member is true",
          "[function][control_flow]") {
  CHECK_THAT(traced_cond_text<false>(), Catch::Contains(" = StatelessIf["));
  const std::string stateful = traced_cond_text<true>();
  CHECK_THAT(stateful, Catch::Contains(" = If[") && !Catch::Contains("StatelessIf"));
  // Built-in stateful ops: random sampling and printing.
  auto sample = tf::function([](const tf::Tensor<float, 0>& x) {
    return tf::cond(
        x > 0.0f,
        [&] { return x + tf::random::normal<float>(std::array<std::int64_t, 0>{}, {.seed = 3}); },
        [&] { return x; });
  });
  (void)sample(tf::constant(1.0f));
  CHECK_THAT(sample.concrete_functions()[0]->to_string(), Catch::Contains(" = If["));
}

TEST_CASE("cond captures outer tensors, constants and variables", "[function][control_flow]") {
  tf::Variable<float, 0> v(10.0f);
  auto f = tf::function([&](const tf::Tensor<float, 0>& x, const tf::Tensor<bool, 0>& flag) {
    auto y = x + 1.0f;              // symbolic in the outer trace: captured
    auto c = tf::constant(100.0f);  // made while tracing: an op node of the outer graph
    return tf::cond(
        flag,
        [&] {
          v.assign_add(y);
          return std::tuple{y * 2.0f, v.value()};
        },
        [&] {
          return std::tuple{y + c, v.value() - x};
        });
  });
  auto [a, b] = f(tf::constant(1.0f), tf::constant(true));
  CHECK(a.item() == 4.0f);
  CHECK(b.item() == 12.0f);
  CHECK(v.value().item() == 12.0f);
  auto [a2, b2] = f(tf::constant(1.0f), tf::constant(false));
  CHECK(a2.item() == 102.0f);
  CHECK(b2.item() == 11.0f);
  CHECK(v.value().item() == 12.0f);  // the assignment runs only in the branch taken
  CHECK(f.trace_count() == 1);
  const std::string text = f.concrete_functions()[0]->to_string();
  CHECK_THAT(text, Catch::Contains(" = If[") && Catch::Contains("IfOutput[index=1](If)"));

  // Branches without results, only side effects.
  auto g = tf::function([&](const tf::Tensor<bool, 0>& flag) {
    tf::cond(
        flag, [&] { v.assign(tf::constant(1.0f)); }, [&] { v.assign(tf::constant(2.0f)); });
  });
  g(tf::constant(true));
  CHECK(v.value().item() == 1.0f);
  g(tf::constant(false));
  CHECK(v.value().item() == 2.0f);
  CHECK(g.trace_count() == 1);
}

TEST_CASE("traced cond: branches must agree on shapes", "[function][control_flow]") {
  auto f = tf::function([](const tf::Tensor<float, 1>& x, const tf::Tensor<bool, 0>& flag) {
    return tf::cond(
        flag, [&] { return x; },
        [&] {
          return tf::constant<float>({1, 2, 3});
        });
  });
  CHECK_THROWS_WITH(f(tf::constant<float>({1, 2}), tf::constant(true)),
                    Catch::Contains("tf::cond") && Catch::Contains("(3,)"));
}

namespace {
// [snippet:while_loop]
// sum of 1..n
tf::Tensor<i32, 0> sum_to(const tf::Tensor<i32, 0>& n) {
  auto [i, s] = tf::while_loop([&](const auto& i, const auto&) { return i <= n; },
                               [](const auto& i, const auto& s) {
                                 return std::tuple{i + tf::constant<i32>(1), s + i};
                               },
                               std::tuple{tf::constant<i32>(1), tf::constant<i32>(0)});
  (void)i;
  return s;
}
// [snippet:while_loop]
// x ** n by repeated multiplication
template <class T, std::size_t R>
tf::Tensor<T, R> power(const tf::Tensor<T, R>& x, const tf::Tensor<i32, 0>& n) {
  auto [i, p] = tf::while_loop([&](const auto& i, const auto&) { return i < n; },
                               [&](const auto& i, const auto& p) {
                                 return std::tuple{i + tf::constant<i32>(1), p * x};
                               },
                               std::tuple{tf::constant<i32>(0), tf::ones_like(x)});
  (void)i;
  return p;
}
}  // namespace

TEST_CASE("while_loop eagerly", "[function][control_flow]") {
  CHECK(sum_to(tf::constant<i32>(5)).item() == 15);
  CHECK(sum_to(tf::constant<i32>(0)).item() == 0);
  CHECK(power(tf::constant(2.0f), tf::constant<i32>(10)).item() == 1024.0f);
  auto doubled = tf::while_loop([](const auto& x) { return x < 100.0f; },
                                [](const auto& x) { return x * 2.0f; }, tf::constant(1.0f));
  CHECK(doubled.item() == 128.0f);
}

TEST_CASE("traced while_loop: one trace for several n", "[function][control_flow]") {
  auto f = tf::function([](const tf::Tensor<i32, 0>& n) { return sum_to(n); });
  CHECK(f(tf::constant<i32>(5)).item() == 15);
  CHECK(f(tf::constant<i32>(10)).item() == 55);
  CHECK(f(tf::constant<i32>(0)).item() == 0);
  CHECK(f.trace_count() == 1);
  const std::string text = f.concrete_functions()[0]->to_string();
  CHECK_THAT(text, Catch::Contains("While[cond=While_cond, body=While_body]") &&
                       Catch::Contains("WhileOutput[index=1](While)"));

  auto p = tf::function(
      [](const tf::Tensor<float, 1>& x, const tf::Tensor<i32, 0>& n) { return power(x, n); });
  CHECK(p(tf::constant<float>({2, 3}), tf::constant<i32>(4)).numpy() == std::vector<float>{16, 81});
  CHECK(p(tf::constant<float>({2, 3}), tf::constant<i32>(0)).numpy() == std::vector<float>{1, 1});
  CHECK(p.trace_count() == 1);
}

TEST_CASE("while_loop maximum_iterations", "[function][control_flow]") {
  auto count = [](const tf::Tensor<i32, 0>& limit) {
    return tf::while_loop([&](const auto& i) { return i < limit; },
                          [](const auto& i) { return i + tf::constant<i32>(1); },
                          tf::constant<i32>(0), {.maximum_iterations = 7});
  };
  CHECK(count(tf::constant<i32>(100)).item() == 7);
  CHECK(count(tf::constant<i32>(3)).item() == 3);
  auto f = tf::function(count);
  CHECK(f(tf::constant<i32>(100)).item() == 7);
  CHECK(f(tf::constant<i32>(3)).item() == 3);
  CHECK(f.trace_count() == 1);
  CHECK_THAT(f.concrete_functions()[0]->to_string(), Catch::Contains("maximum_iterations=7"));
}

TEST_CASE("cond nested in a while body captures through two levels", "[function][control_flow]") {
  // s = sum over i < n of (i < k ? x : -x)
  auto f = tf::function(
      [](const tf::Tensor<float, 0>& x, const tf::Tensor<i32, 0>& n, const tf::Tensor<i32, 0>& k) {
        auto [i, s] = tf::while_loop([&](const auto& i, const auto&) { return i < n; },
                                     [&](const auto& i, const auto& s) {
                                       auto next = tf::cond(
                                           i < k, [&] { return s + x; }, [&] { return s - x; });
                                       return std::tuple{i + tf::constant<i32>(1), next};
                                     },
                                     std::tuple{tf::constant<i32>(0), tf::zeros_like(x)});
        (void)i;
        return s;
      });
  CHECK(f(tf::constant(2.0f), tf::constant<i32>(5), tf::constant<i32>(3)).item() == 2.0f);
  CHECK(f(tf::constant(1.0f), tf::constant<i32>(4), tf::constant<i32>(4)).item() == 4.0f);
  CHECK(f.trace_count() == 1);
}

TEST_CASE("gradients flow through cond", "[function][control_flow][gradient]") {
  auto body = [](const tf::Tensor<double, 1>& x) {
    return tf::cond(
        tf::reduce_sum(x) > 0.0, [&] { return tf::tanh(x) * x; }, [&] { return x * x * x; });
  };
  auto data = tapeflow_test::test_data<1>({4});
  auto negated = -data;
  REQUIRE(tf::reduce_sum(data).item() != 0.0);
  // Eagerly.
  tapeflow_test::check_gradients(body, data);
  tapeflow_test::check_gradients(body, negated);
  // Through a traced function differentiated from outside: both branches of one trace.
  auto f = tf::function(body);
  tapeflow_test::check_gradients([&](const auto& x) { return f(x); }, data);
  tapeflow_test::check_gradients([&](const auto& x) { return f(x); }, negated);
  CHECK(f.trace_count() == 1);
  // A variable read inside a branch.
  tf::Variable<double, 0> v(3.0);
  auto g = tf::function([&](const tf::Tensor<bool, 0>& flag) {
    return tf::cond(
        flag, [&] { return v * v; }, [&] { return v * 2.0; });
  });
  {
    tf::GradientTape tape;
    auto y = g(tf::constant(true));
    CHECK(tape.gradient(y, v)->item() == Approx(6.0));
  }
  {
    tf::GradientTape tape;
    auto y = g(tf::constant(false));
    CHECK(tape.gradient(y, v)->item() == Approx(2.0));
  }
}

TEST_CASE("gradients flow through while_loop", "[function][control_flow][gradient]") {
  auto cube = [](const tf::Tensor<double, 1>& x) { return power(x, tf::constant<i32>(3)); };
  tapeflow_test::check_gradients(cube, tapeflow_test::test_data<1>({3}));
  auto f = tf::function(cube);
  tapeflow_test::check_gradients([&](const auto& x) { return f(x); },
                                 tapeflow_test::test_data<1>({3}));
  CHECK(f.trace_count() == 1);
}

TEST_CASE("while_loop: a body that changes a shape throws", "[function][control_flow]") {
  auto grow = [](const tf::Tensor<float, 1>& x) {
    auto [i, y] = tf::while_loop([](const auto& i, const auto&) { return i < 2.0f; },
                                 [](const auto& i, const auto&) {
                                   return std::tuple{i + 1.0f, tf::constant<float>({1, 2, 3})};
                                 },
                                 std::tuple{tf::constant(0.0f), x});
    (void)i;
    return y;
  };
  CHECK_THROWS_AS(grow(tf::constant<float>({1, 2})), tf::invalid_argument);
  CHECK_THROWS_WITH(grow(tf::constant<float>({1, 2})), Catch::Contains("loop variable 1") &&
                                                           Catch::Contains("(2,)") &&
                                                           Catch::Contains("(3,)"));
  auto f = tf::function(grow);
  CHECK_THROWS_WITH(f(tf::constant<float>({1, 2})), Catch::Contains("loop variable 1"));
}

namespace {
// arr[k] = x * k for k < n, written at the loop counter (a symbolic index when traced).
tf::Tensor<float, 2> rows_times_index(const tf::Tensor<i32, 0>& n, const tf::Tensor<float, 1>& x) {
  tf::TensorArray<float, 1> arr(4, {.element_shape = tf::Shape{2}});
  auto [i, out] = tf::while_loop([&](const auto& k, const auto&) { return k < n; },
                                 [&](const auto& k, const auto& a) {
                                   return std::tuple{k + 1, a.write(k, x * tf::cast<float>(k))};
                                 },
                                 std::tuple{tf::constant<i32>(0), arr});
  CHECK(out.size() == 4);
  return out.stack();
}
}  // namespace

TEST_CASE("TensorArray as a while_loop variable, eager and traced", "[function][tensor_array]") {
  const auto x = tf::constant<float>({1, 2});
  CHECK(rows_times_index(tf::constant<i32>(3), x).numpy() ==
        std::vector<float>{0, 0, 1, 2, 2, 4, 0, 0});
  auto f = tf::function(rows_times_index);
  CHECK(f(tf::constant<i32>(3), x).numpy() == std::vector<float>{0, 0, 1, 2, 2, 4, 0, 0});
  CHECK(f(tf::constant<i32>(4), x).numpy() == std::vector<float>{0, 0, 1, 2, 2, 4, 3, 6});
  CHECK(f.trace_count() == 1);
  CHECK_THAT(f.concrete_functions()[0]->to_string(), Catch::Contains("While["));

  // Reads at the counter too: a running sum over an unstacked input.
  auto cumsum = tf::function([](const tf::Tensor<float, 1>& v) {
    auto in = tf::TensorArray<float, 0>(4).unstack(v);
    tf::TensorArray<float, 0> acc(4, {.element_shape = tf::Shape{}});
    auto [k, s, out] = tf::while_loop([](const auto& j, const auto&, const auto&) { return j < 4; },
                                      [&](const auto& j, const auto& total, const auto& a) {
                                        auto next = total + in.read(j);
                                        return std::tuple{j + 1, next, a.write(j, next)};
                                      },
                                      std::tuple{tf::constant<i32>(0), tf::constant(0.0f), acc});
    return out.stack();
  });
  CHECK(cumsum(tf::constant<float>({1, 2, 3, 4})).numpy() == std::vector<float>{1, 3, 6, 10});
}

TEST_CASE("gradients flow through a TensorArray carried by a traced while_loop",
          "[function][tensor_array][gradient]") {
  auto f = tf::function([](const tf::Tensor<double, 1>& x) {
    tf::TensorArray<double, 1> arr(3, {.element_shape = tf::Shape{2}});
    auto [i, out] =
        tf::while_loop([](const auto& k, const auto&) { return k < 3; },
                       [&](const auto& k, const auto& a) {
                         auto prev = tf::cond(
                             k > 0, [&] { return a.read(k - 1); }, [&] { return x; });
                         return std::tuple{k + 1, a.write(k, prev * x)};  // x^2, x^3, x^4
                       },
                       std::tuple{tf::constant<i32>(0), arr});
    return out.stack();
  });
  tapeflow_test::check_gradients([&](const auto& x) { return f(x); },
                                 tapeflow_test::test_data<1>({2}));
  const auto y = f(tf::constant<double>({2, 3}));
  CHECK(y.numpy() == std::vector<double>{4, 9, 8, 27, 16, 81});
}

TEST_CASE("TensorArray loop variables: what a traced while_loop cannot carry",
          "[function][tensor_array]") {
  auto loop_over = [](const tf::TensorArray<float, 0>& arr, const tf::Tensor<i32, 0>& n) {
    return std::get<1>(tf::while_loop([&](const auto& k, const auto&) { return k < n; },
                                      [](const auto& k, const auto& a) {
                                        return std::tuple{k + 1, a.write(k, tf::constant(1.0f))};
                                      },
                                      std::tuple{tf::constant<i32>(0), arr}));
  };
  auto dynamic = tf::function([&](const tf::Tensor<i32, 0>& n) {
    return loop_over(tf::TensorArray<float, 0>(0, {.dynamic_size = true}), n).stack();
  });
  CHECK_THROWS_AS(dynamic(tf::constant<i32>(2)), tf::unimplemented);
  // Eagerly the same loop grows the array.
  CHECK(loop_over(tf::TensorArray<float, 0>(0, {.dynamic_size = true}), tf::constant<i32>(2))
            .stack()
            .numpy() == std::vector<float>{1, 1});
  auto unknown_shape = tf::function([&](const tf::Tensor<i32, 0>& n) {
    return loop_over(tf::TensorArray<float, 0>(2), n).stack();
  });
  CHECK_THROWS_AS(unknown_shape(tf::constant<i32>(2)), tf::failed_precondition);
  // A counter past the end fails when the function runs, naming the index.
  auto past_end = tf::function([&](const tf::Tensor<i32, 0>& n) {
    return loop_over(tf::TensorArray<float, 0>(2, {.element_shape = tf::Shape{}}), n).stack();
  });
  CHECK(past_end(tf::constant<i32>(2)).numpy() == std::vector<float>{1, 1});
  CHECK_THROWS_WITH(past_end(tf::constant<i32>(3)), Catch::Contains("= 2 is not in [0, 2)"));
}

namespace {
template <class T, std::size_t R>
void check_close(const tf::Tensor<T, R>& got, const tf::Tensor<T, R>& want) {
  REQUIRE(got.shape() == want.shape());
  const auto g = got.numpy();
  const auto w = want.numpy();
  for (std::size_t i = 0; i < g.size(); ++i) {
    CHECK(g[i] == Approx(w[i]).epsilon(1e-9));
  }
}
// A traced gradient through cond/while is zeros where eagerly there is none (the branch taken
// does not use the source), as TensorFlow's If/While gradients give.
template <class T, std::size_t R>
tf::Tensor<T, R> or_zeros(const std::optional<tf::Tensor<T, R>>& g, const tf::Tensor<T, R>& like) {
  return g ? *g : tf::zeros_like(like);
}
}  // namespace

TEST_CASE("a tape inside a traced body differentiates through cond",
          "[function][control_flow][gradient]") {
  tf::Variable<double, 1> w(tf::constant<double>({0.5, -1.5, 2.0}));
  int traces = 0;
  auto body = [&](const tf::Tensor<double, 1>& x) {
    ++traces;
    tf::GradientTape tape;
    tape.watch(x);
    auto y = tf::cond(
        tf::reduce_sum(x) > 0.0, [&] { return x * x * w; }, [&] { return -x * tf::exp(x); });
    auto [g_x, g_w] = tape.gradient(tf::reduce_sum(y), x, w);
    REQUIRE(g_x);
    return std::tuple{y, *g_x, or_zeros(g_w, tf::Tensor<double, 1>(w))};
  };
  auto f = tf::function(body);
  const auto pos = tf::constant<double>({1.0, 2.0, 3.0});
  const auto neg = tf::constant<double>({-1.0, 0.5, -3.0});
  for (const auto& x : {pos, neg, pos}) {
    auto [y, g_x, g_w] = f(x);
    auto [ey, eg_x, eg_w] = body(x);  // the same body, eagerly
    check_close(y, ey);
    check_close(g_x, eg_x);
    check_close(g_w, eg_w);
  }
  CHECK(f.trace_count() == 1);
  // By hand: d/dx sum(x*x*w) = 2xw, d/dw = x*x; the false branch does not read w: zeros.
  auto [y, g_x, g_w] = f(pos);
  CHECK(g_x.numpy() == std::vector<double>{1.0, -6.0, 12.0});
  CHECK(g_w.numpy() == std::vector<double>{1.0, 4.0, 9.0});
  auto [y2, g_x2, g_w2] = f(neg);
  CHECK(g_w2.numpy() == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(g_x2.numpy()[1] == Approx(-(1.0 + 0.5) * std::exp(0.5)));
}

TEST_CASE("traced cond gradients: several results, unconnected sources",
          "[function][control_flow][gradient]") {
  auto body = [](const tf::Tensor<double, 1>& x, const tf::Tensor<double, 0>& s,
                 const tf::Tensor<double, 1>& z, const tf::Tensor<bool, 0>& flag) {
    tf::GradientTape tape({.persistent = true});
    tape.watch(x);
    tape.watch(s);
    tape.watch(z);
    auto [a, b] = tf::cond(
        flag,
        [&] {
          return std::tuple{x * s, tf::reduce_sum(x)};
        },
        [&] {
          return std::tuple{x + 1.0, s * s};
        });
    // Only the second result feeds the target: the first gets no upstream gradient.
    auto [g_x, g_s, g_z] = tape.gradient(b * 3.0, x, s, z);
    auto g_z_zero =
        tape.gradient(b * 3.0, z, {.unconnected_gradients = tf::UnconnectedGradients::zero});
    auto [h_x, h_s] = tape.gradient(tf::reduce_sum(a) + b, x, s);
    REQUIRE(g_z_zero);
    // z is used by neither branch: no gradient, as GradientTape gives for unconnected sources
    // (checked while tracing and eagerly).
    CHECK_FALSE(g_z.has_value());
    return std::tuple{or_zeros(g_x, x), or_zeros(g_s, s), *g_z_zero, or_zeros(h_x, x),
                      or_zeros(h_s, s)};
  };
  auto f = tf::function(body);
  const auto x = tf::constant<double>({1.0, 2.0});
  const auto s = tf::constant(3.0);
  const auto z = tf::constant<double>({4.0, 5.0});
  for (bool flag : {true, false}) {
    auto got = f(x, s, z, tf::constant(flag));
    auto want = body(x, s, z, tf::constant(flag));
    check_close(std::get<0>(got), std::get<0>(want));
    check_close(std::get<1>(got), std::get<1>(want));
    CHECK(std::get<2>(got).numpy() == std::vector<double>{0.0, 0.0});
    check_close(std::get<3>(got), std::get<3>(want));
    check_close(std::get<4>(got), std::get<4>(want));
  }
  auto on_true = f(x, s, z, tf::constant(true));
  CHECK(std::get<0>(on_true).numpy() == std::vector<double>{3.0, 3.0});  // d sum(x)*3 / dx
  CHECK(std::get<1>(on_true).item() == 0.0);          // s is not used by the true branch's result b
  CHECK(std::get<4>(on_true).item() == Approx(3.0));  // d sum(x*s) / ds
  auto on_false = f(x, s, z, tf::constant(false));
  CHECK(std::get<0>(on_false).numpy() == std::vector<double>{0.0, 0.0});
  CHECK(std::get<1>(on_false).item() == Approx(18.0));  // d 3 s^2 / ds
  CHECK(f.trace_count() == 1);
}

TEST_CASE("a tape inside a traced body differentiates through while_loop",
          "[function][control_flow][gradient]") {
  tf::Variable<double, 1> w(tf::constant<double>({0.5, 1.5, -2.0}));
  auto body = [&](const tf::Tensor<double, 1>& x, const tf::Tensor<i32, 0>& n) {
    tf::GradientTape tape;
    tape.watch(x);
    // p = x^(n+1) * w^n: x is both the initial loop value and captured by the body.
    auto [i, p] = tf::while_loop([&](const auto& k, const auto&) { return k < n; },
                                 [&](const auto& k, const auto& q) {
                                   return std::tuple{k + 1, q * x * w};
                                 },
                                 std::tuple{tf::constant<i32>(0), x});
    auto [g_x, g_w] = tape.gradient(tf::reduce_sum(tf::tanh(p)), x, w);
    (void)i;
    return std::tuple{p, or_zeros(g_x, x), or_zeros(g_w, x)};
  };
  auto f = tf::function(body);
  const auto x = tf::constant<double>({0.9, -0.7, 0.4});
  for (i32 n : {0, 1, 2, 4, 3}) {
    auto [p, g_x, g_w] = f(x, tf::constant<i32>(n));
    auto [ep, eg_x, eg_w] = body(x, tf::constant<i32>(n));
    check_close(p, ep);
    check_close(g_x, eg_x);
    check_close(g_w, eg_w);
  }
  CHECK(f.trace_count() == 1);
  // By hand for n = 2: p = x^3 w^2.
  auto [p, g_x, g_w] = f(x, tf::constant<i32>(2));
  const auto xv = x.numpy();
  const auto wv = w.value().numpy();
  for (std::size_t k = 0; k < 3; ++k) {
    const double t = std::tanh(xv[k] * xv[k] * xv[k] * wv[k] * wv[k]);
    const double c = 1.0 - t * t;
    CHECK(g_x.numpy()[k] == Approx(c * 3 * xv[k] * xv[k] * wv[k] * wv[k]));
    CHECK(g_w.numpy()[k] == Approx(c * 2 * xv[k] * xv[k] * xv[k] * wv[k]));
  }
  // n = 0: the loop is the identity, w is unused.
  auto [p0, g_x0, g_w0] = f(x, tf::constant<i32>(0));
  CHECK(g_w0.numpy() == std::vector<double>{0.0, 0.0, 0.0});
}

TEST_CASE("traced gradients through a cond nested in a while body and a TensorArray loop",
          "[function][control_flow][tensor_array][gradient]") {
  auto body = [](const tf::Tensor<double, 1>& x, const tf::Tensor<i32, 0>& n) {
    tf::GradientTape tape;
    tape.watch(x);
    auto [i, s] =
        tf::while_loop([&](const auto& k, const auto&) { return k < n; },
                       [&](const auto& k, const auto& acc) {
                         auto term = tf::cond(
                             k < 2, [&] { return acc * x; }, [&] { return acc + tf::square(x); });
                         return std::tuple{k + 1, term};
                       },
                       std::tuple{tf::constant<i32>(0), tf::ones_like(x)});
    tf::TensorArray<double, 1> arr(2, {.element_shape = tf::Shape{2}});
    auto [j, out] = tf::while_loop([](const auto& k, const auto&) { return k < 2; },
                                   [&](const auto& k, const auto& a) {
                                     return std::tuple{k + 1, a.write(k, s * x)};
                                   },
                                   std::tuple{tf::constant<i32>(0), arr});
    (void)i;
    (void)j;
    auto g = tape.gradient(tf::reduce_sum(out.stack()), x);
    REQUIRE(g);
    return *g;
  };
  auto f = tf::function(body);
  const auto x = tf::constant<double>({1.5, -0.5});
  for (i32 n : {0, 1, 2, 3, 5}) {
    check_close(f(x, tf::constant<i32>(n)), body(x, tf::constant<i32>(n)));
  }
  CHECK(f.trace_count() == 1);
}

}  // namespace test_function_control_flow
