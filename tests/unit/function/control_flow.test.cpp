#include <cstdint>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/function/control_flow.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/tapeflow.hpp>

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
