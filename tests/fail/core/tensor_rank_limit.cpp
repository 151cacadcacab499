// error: Rank exceeds tapeflow's maximum rank
#include <tapeflow/core/tensor.hpp>

namespace tf = tapeflow;

int main() {
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  tf::Tensor<float, 9> too_many_axes;
#else
  tf::Tensor<float, 8> too_many_axes;
#endif
  return static_cast<int>(too_many_axes.has_value());
}
