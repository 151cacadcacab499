// The tf.function chapter's two quizzes in C++: when a tf::function traces, and what runs on
// cached calls. std::cout runs only while tracing; tf::print is a graph op and runs every call.
#include <iostream>

#include <tapeflow/core/eigen.hpp>  // Eigen::Tensor, the host array below
#include <tapeflow/function/function.hpp>
#include <tapeflow/ops/logging/print.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"

namespace tf = tapeflow;

int main(int argc, char** argv) {
  examples::ArgumentParser parser(
      "function_quiz",
      "Runs the tf.function chapter's quizzes: a traced function called with int32 and float32\n"
      "tensors, a host array and plain numbers, then a function updating a variable. Prints the\n"
      "chapter's expected output.");
  parser.parse_args(argc, argv);
  // [seed:function_quiz begin]
  // [snippet:quiz_tensors]
  // The quiz retraces six times on purpose; allow that without the retracing warning.
  auto f = tf::function(
      [](const auto& x) {
        std::cout << "The function is running in Python\n";  // the chapter's trace message
        tf::print(x);
      },
      {.max_traces_before_warning = 6, .name = "f"});
  auto a = tf::constant<std::int32_t>(1);
  auto b = tf::constant<std::int32_t>(2);
  Eigen::Tensor<std::int32_t, 0> b_;  // a host array, as the chapter's np.array(2)
  b_() = 2;
  auto c = tf::constant(0.1f);
  auto d = tf::constant(0.2f);
  f(a);
  f(b);
  f(b_);
  f(c);
  f(d);
  // [snippet:quiz_tensors]
  // [snippet:quiz_numbers]
  // Plain numbers are part of the signature by value, as Python numbers are.
  f(1);
  f(2);
  f(1);
  f(0.1);
  f(0.2);
  f(0.1);
  // [snippet:quiz_numbers]

  // [snippet:quiz_variable]
  // Variables are captured by reference and read and written when the graph runs.
  tf::Variable<float, 0> var(0.0f);
  auto g = tf::function([&]() -> tf::Tensor<float, 0> {
    var.assign(var + 1.0f);
    return var;
  });
  std::cout << g() << "\n";
  std::cout << g() << "\n";
  std::cout << g() << "\n";
  // [snippet:quiz_variable]
  // [seed:function_quiz end]
  return 0;
}
