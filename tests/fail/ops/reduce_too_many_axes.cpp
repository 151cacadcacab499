// error: more axes than the tensor's rank
#include <tapeflow/ops/reduce/reduce.hpp>

namespace tf = tapeflow;

int main() {
  auto v = tf::constant<float>({1, 2});
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto bad = tf::reduce_sum(v, {0, 1});  // a rank-1 tensor has one axis
#else
  auto bad = tf::reduce_sum(v, {0});
#endif
  return static_cast<int>(bad.item()) - 3;
}
