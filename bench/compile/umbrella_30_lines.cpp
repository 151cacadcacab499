// Compile-time benchmark (bench/compile/run.sh): a 30-line program through the umbrella
// header — constants, matmul, broadcasting, a GradientTape gradient, reduce_mean, printing.
#include <iostream>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
  auto x = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}});
  auto y = tf::constant<float>({{1}, {2}, {3}});
  tf::Variable<float, 2> w(tf::zeros<float>({2, 1}), {.name = "w"});
  tf::Variable<float, 1> b(tf::zeros<float>({1}), {.name = "b"});
  float loss_value = 0;
  for (int step = 0; step < 100; ++step) {
    tf::GradientTape tape;
    auto pred = tf::matmul(x, w) + b;
    auto loss = tf::reduce_mean(tf::square(pred - y));
    auto [dw, db] = tape.gradient(loss, w, b);
    w.assign_sub(0.01f * *dw);
    b.assign_sub(0.01f * *db);
    loss_value = loss.item();
  }
  std::cout << "loss " << loss_value << "\n" << w.value() << "\n";
  return 0;
}
