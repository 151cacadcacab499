#include <cstdint>
#include <string>
#include <tuple>

#include <catch2/catch.hpp>

#include <tapeflow/function/control_flow.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/function/to_code.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_function_to_code {

namespace tf = tapeflow;
using i32 = std::int32_t;

// [snippet:square_if_positive]
auto square_if_positive() {
  return tf::function(
      [](const tf::Tensor<i32, 0>& x) {
        return tf::cond(
            x > 0, [&] { return x * x; }, [&] { return tf::constant(0); });
      },
      {.name = "square_if_positive"});
}
// [snippet:square_if_positive]

TEST_CASE("to_code shows a cond with both branches indented", "[function][to_code]") {
  auto f = square_if_positive();
  CHECK(f(tf::constant(3)).item() == 9);
  CHECK(f(tf::constant(-1)).item() == 0);
  CHECK(tf::autograph::to_code(f) ==
        "def square_if_positive(arg0: int32()):\n"
        "  Greater = Greater(arg0, 0) -> bool()\n"
        "  StatelessIf = StatelessIf(Greater, arg0) -> int32():\n"
        "    then_branch StatelessIf_true(arg0):\n"
        "      Mul = Mul(arg0, arg0) -> int32()\n"
        "      return Mul\n"
        "    else_branch StatelessIf_false():\n"
        "      return 0\n"
        "  return StatelessIf\n");
}

TEST_CASE("to_code names loop variables after the While node results", "[function][to_code]") {
  auto f = tf::function(
      [](const tf::Tensor<i32, 0>& n) {
        auto [i, s] = tf::while_loop([&](const auto& i, const auto&) { return i <= n; },
                                     [](const auto& i, const auto& s) {
                                       return std::tuple{i + 1, s + i};
                                     },
                                     std::tuple{tf::constant(1), tf::constant(0)});
        return s;
      },
      {.name = "sum_to"});
  CHECK(f(tf::constant(4)).item() == 10);
  CHECK(tf::autograph::to_code(f) ==
        "def sum_to(arg0: int32()):\n"
        "  While = While(1, 0, arg0) -> int32():\n"
        "    cond While_cond(While, WhileOutput, arg0):\n"
        "      LessEqual = LessEqual(While, arg0) -> bool()\n"
        "      return LessEqual\n"
        "    body While_body(While, WhileOutput):\n"
        "      AddV2 = AddV2(While, 1) -> int32()\n"
        "      AddV2_1 = AddV2(WhileOutput, While) -> int32()\n"
        "      return AddV2, AddV2_1\n"
        "  WhileOutput = WhileOutput[index=1](While) -> int32()\n"
        "  return WhileOutput\n");
}

TEST_CASE("to_code declares large constants and needs a trace", "[function][to_code]") {
  auto f = tf::function([](const tf::Tensor<float, 1>& x) { return x + tf::ones<float>({10}); });
  CHECK_THROWS_AS(tf::autograph::to_code(f), tf::failed_precondition);
  (void)f(tf::ones<float>({10}));
  const std::string code = tf::autograph::to_code(*f.concrete_functions().at(0));
  CHECK(code ==
        "def function(arg0: float32(10,)):\n"
        "  Const1 = Const() -> float32(10,)\n"
        "  AddV2 = AddV2(arg0, Const1) -> float32(10,)\n"
        "  return AddV2\n");
  CHECK(tf::autograph::to_code(f) == code);
}

}  // namespace test_function_to_code
