// Tensors and GradientTape, in one file for Compiler Explorer (README, "Compiler Explorer").
// There: add the libraries Eigen and range-v3, compile with -std=c++20 -O2, and include the
// single header by its URL instead of <tapeflow/tapeflow.hpp>.
#include <iostream>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
  // [snippet:tensors]
  auto a = tf::constant<float>({{1, 2}, {3, 4}});
  auto b = tf::matmul(a, a) + 1.0f;  // broadcasting like NumPy
  std::cout << b << "\n";
  // [snippet:tensors]

  // [snippet:nested_tapes]
  // d/dx sum(x^3) = 3x^2, and the second derivative 6x from a tape around the tape.
  tf::Variable<float, 1> x(tf::constant<float>({1, 2, 3}), {.name = "x"});
  tf::GradientTape outer;
  tf::GradientTape inner;
  auto y = tf::reduce_sum(x * x * x);
  auto dy_dx = *inner.gradient(y, x);
  auto d2y_dx2 = *outer.gradient(dy_dx, x);
  std::cout << "dy/dx = " << dy_dx << "\nd2y/dx2 = " << d2y_dx2 << "\n";
  // [snippet:nested_tapes]
  return dy_dx(2) == 27.0f && d2y_dx2(2) == 18.0f ? 0 : 1;
}
