// error: tf::matmul\(a, b\): both operands must have rank >= 2
#include <tapeflow/ops/linalg/matmul.hpp>

namespace tf = tapeflow;

int main() {
  auto m = tf::constant<float>({{1, 2}, {3, 4}});
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto v = tf::constant<float>({1, 2});
  auto bad = tf::matmul(m, v);  // a vector is rank 1
#else
  auto bad = tf::matmul(m, m);
#endif
  return static_cast<int>(bad.num_elements()) - 4;
}
