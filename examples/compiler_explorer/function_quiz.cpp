// The tf.function chapter's two quizzes, in one file for Compiler Explorer (README, "Compiler
// Explorer"): when a tf::function traces (std::cout runs only while tracing; tf::print is a
// graph op and runs on every call), and variables read and written by a traced function.
#include <cstdint>
#include <iostream>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
  auto f = tf::function(
      [](const auto& x) {
        std::cout << "The function is running in Python\n";
        tf::print(x);
      },
      {.max_traces_before_warning = 6});  // it retraces on purpose
  f(tf::constant<std::int32_t>(1));
  f(tf::constant<std::int32_t>(2));  // same signature: no trace
  f(tf::constant(0.1f));             // float32: traces
  f(tf::constant(0.2f));
  f(1);  // plain numbers are part of the signature by value, as Python numbers are
  f(2);
  f(1);

  tf::Variable<float, 0> var(0.0f);
  auto g = tf::function([&]() -> tf::Tensor<float, 0> {
    var.assign(var + 1.0f);  // runs on every call, not only while tracing
    return var;
  });
  std::cout << g() << "\n" << g() << "\n" << g() << "\n";
}
