// The README's example, compiled and run by the tests (examples/CMakeLists.txt checks the
// README block is this file's snippet, verbatim).
// [readme]
#include <iostream>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

int main() {
  auto x = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}});  // (3, 2)
  auto y = tf::constant<float>({{1}, {2}, {3}});           // (3, 1)
  tf::Variable<float, 2> w(tf::zeros<float>({2, 1}), {.name = "w"});
  tf::Variable<float, 1> b(tf::zeros<float>({1}), {.name = "b"});
  for (int step = 0; step < 2000; ++step) {
    tf::GradientTape tape;  // records while alive
    auto loss = tf::reduce_mean(tf::square(tf::matmul(x, w) + b - y));
    auto [dw, db] = tape.gradient(loss, w, b);  // std::optional each
    w.assign_sub(0.02f * *dw);
    b.assign_sub(0.02f * *db);
  }
  std::cout << w.value() << "\n";  // y = x w + b holds for w = (1/6, 1/3), b = 1/6; it prints:
  // tf.Tensor(
  // [[0.16666739]
  //  [0.33333287]], shape=(2, 1), dtype=float32)
}
// [readme]
