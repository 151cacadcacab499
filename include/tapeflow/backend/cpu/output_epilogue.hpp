// Note [Output epilogues]: work that a traced graph runs on an op's output while the kernel's
// writes are still in cache. The executor (function/detail/executor.hpp) offers one to the
// next kernel run on its thread when a fused chain reads the op's output (a convolution followed
// by batch normalization and its activation); a kernel that can take it calls it on each range
// of its output as soon as that range is final, so the chain's pass reads from cache instead of
// memory. Kernels that cannot (another code path, another backend) leave it, and the executor
// runs the chain after the op as usual. Only kernels that say so in their op
// (`static constexpr bool output_epilogue = true`) are offered one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cpu {

/// Work on ranges of a kernel's output, called from any of the kernel's threads.
struct OutputEpilogue {
  /// Runs on output elements [start, start + n) of `output` (the kernel's output buffer).
  void (*run)(const void* context, void* output, std::int64_t start, std::int64_t n) = nullptr;
  const void* context = nullptr;  ///< what `run` works with
  std::int64_t elements = 0;      ///< the output's element count it was offered for
  std::int64_t unit = 1;          ///< every range starts at a multiple of it
};

namespace detail {
inline thread_local const OutputEpilogue* offered_epilogue = nullptr;
}  // namespace detail

/// Offers `epilogue` to the next kernel that takes one on this thread, until the scope ends.
class OfferedEpilogue {
 public:
  /// Offers `epilogue` (which must outlive the scope).
  explicit OfferedEpilogue(const OutputEpilogue& epilogue) noexcept
      : saved_(std::exchange(detail::offered_epilogue, &epilogue)) {}
  OfferedEpilogue(const OfferedEpilogue&) = delete;
  OfferedEpilogue& operator=(const OfferedEpilogue&) = delete;
  ~OfferedEpilogue() { detail::offered_epilogue = saved_; }
  /// Whether a kernel took it.
  [[nodiscard]] bool taken() const noexcept { return detail::offered_epilogue == nullptr; }

 private:
  const OutputEpilogue* saved_;
};

/// The epilogue offered for an output of `elements` elements, or null; taking it obliges the
/// kernel to call it exactly once on every element of its output, after the element is final,
/// in ranges that start at multiples of its `unit` (any length).
[[nodiscard]] inline const OutputEpilogue* take_output_epilogue(std::int64_t elements) noexcept {
  const OutputEpilogue* offered = detail::offered_epilogue;
  if (offered == nullptr || offered->elements != elements) {
    return nullptr;
  }
  detail::offered_epilogue = nullptr;
  return offered;
}

/// How many rows of `row_elements` elements a range must hold, a multiple of, so that ranges of
/// whole rows start at multiples of `unit`.
[[nodiscard]] inline std::int64_t epilogue_row_multiple(std::int64_t unit,
                                                        std::int64_t row_elements) noexcept {
  return unit / std::gcd(unit, std::max<std::int64_t>(row_elements, 1));
}

}  // namespace backend::cpu
TAPEFLOW_END_NAMESPACE
