// IWYU pragma: private, include <tapeflow/data.hpp>
#pragma once

#include <chrono>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data::detail {
using clock = std::chrono::steady_clock;
inline double seconds_since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}
}  // namespace data::detail
TAPEFLOW_END_NAMESPACE
