// GPU tests (tests/unit/cuda/, CTest label `gpu`) call this first: without a CUDA device it
// prints the line CTest's SKIP_REGULAR_EXPRESSION matches, so the case counts as skipped in the
// summary instead of passing silently.
#pragma once

#include <iostream>

#include <tapeflow/backend/cuda/platform.hpp>

namespace tapeflow_test {
inline bool gpu_available(const char* test) {
  if (tapeflow::backend::cuda::device_count() > 0) {
    return true;
  }
  std::cout << "GPU TESTS SKIPPED: no CUDA device on this machine (" << test << ")\n";
  return false;
}
}  // namespace tapeflow_test
