// error: tf::data::from_range: the range.s elements must be tensors
#include <vector>

#include <tapeflow/data/source/from_range.hpp>

namespace tf = tapeflow;

int main() {
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  // nested vectors are not an element type: make tensors of them first
  std::vector<std::vector<float>> rows{{1, 2}, {3, 4}};
#else
  std::vector<float> rows{1, 2, 3, 4};
#endif
  auto ds = tf::data::from_range(rows);
  return static_cast<int>(ds.cardinality()) - static_cast<int>(rows.size());
}
