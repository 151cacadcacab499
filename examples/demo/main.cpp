// Linear regression with GradientTape and matmul: the TensorFlow 2 tutorial's first program
// (house prices 2013-2017), in C++.
#include <iostream>

#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"

namespace tf = tapeflow;

namespace {
examples::ArgumentParser parser(
    "demo",
    "Fits price = a * year + b on normalized 2013-2017 data by gradient descent with\n"
    "tf::GradientTape, printing the loss and the fitted parameters.");
auto& steps = parser.add_argument("--steps", 10000);
auto& learning_rate = parser.add_argument("--learning_rate", 5e-4f);
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  // [snippet:linear_regression]
  // Years and prices, normalized to [0, 1] as the tutorial does.
  auto x_raw = tf::constant<float>({{2013}, {2014}, {2015}, {2016}, {2017}});
  auto y_raw = tf::constant<float>({{12000}, {14000}, {15000}, {16500}, {17500}});
  auto x = (x_raw - tf::reduce_min(x_raw)) / (tf::reduce_max(x_raw) - tf::reduce_min(x_raw));
  auto y = (y_raw - tf::reduce_min(y_raw)) / (tf::reduce_max(y_raw) - tf::reduce_min(y_raw));

  tf::Variable<float, 2> a(tf::zeros<float>({1, 1}), {.name = "a"});
  tf::Variable<float, 1> b(tf::zeros<float>({1}), {.name = "b"});
  for (int step = 0; step < steps; ++step) {
    tf::GradientTape tape;
    auto y_pred = tf::matmul(x, a) + b;
    auto loss = tf::reduce_sum(tf::square(y_pred - y)) * 0.5f;
    auto [grad_a, grad_b] = tape.gradient(loss, a, b);
    a.assign_sub(*grad_a * learning_rate * 100.0f);
    b.assign_sub(*grad_b * learning_rate * 100.0f);
    if (step % (steps / 5 > 0 ? steps / 5 : 1) == 0 || step == steps - 1) {
      std::cout << "step " << step << " loss " << loss.item() << "\n";
    }
  }
  std::cout << "a = " << a.value() << "\nb = " << b.value() << "\n";
  // [snippet:linear_regression]
  return 0;
}
