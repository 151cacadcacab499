// error: the value must have the variable's dtype and rank
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/state/variable.hpp>

namespace tf = tapeflow;

int main() {
  tf::Variable<float, 1> v(tf::constant<float>({1, 2}));
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  v.assign(tf::constant<float>({{1, 2}}));  // rank 2 into a rank-1 variable
#else
  v.assign(tf::constant<float>({3, 4}));
#endif
  return static_cast<int>(v.value().num_elements()) - 2;
}
