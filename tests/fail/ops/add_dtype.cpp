// error: both operands must have the same dtype
#include <tapeflow/ops/math/arithmetic.hpp>

namespace tf = tapeflow;

int main() {
  auto f = tf::constant<float>({1, 2});
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto i = tf::constant<std::int64_t>({1, 2});
  auto bad = f + i;  // TensorFlow does not promote float32 + int64
#else
  auto bad = f + tf::cast<float>(tf::constant<std::int64_t>({1, 2}));
#endif
  return static_cast<int>(bad.num_elements()) - 2;
}
