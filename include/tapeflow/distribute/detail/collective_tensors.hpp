// What the collectives' implementations share (in-process, MPI, NCCL): the signature of an
// operation's tensors that the replicas compare before moving bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute::detail {

/// What replicas must agree on before an operation: `extra` (the operation), the tensors'
/// count, dtypes (-1 without a value) and shapes, hashed (FNV-1a). Non-negative, so a
/// negative value can mean "unusable".
inline std::int64_t signature(std::span<const AnyTensor> tensors, std::int64_t extra) {
  std::uint64_t h = 1469598103934665603ULL;
  const auto mix = [&](std::int64_t v) {
    h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ULL;
  };
  mix(extra);
  mix(static_cast<std::int64_t>(tensors.size()));
  for (const auto& t : tensors) {
    mix(t.has_value() ? static_cast<std::int64_t>(t.dtype()) : -1);
    mix(static_cast<std::int64_t>(t.rank()));
    for (std::size_t i = 0; i < t.rank(); ++i) {
      mix(t.shape()[i]);
    }
  }
  return static_cast<std::int64_t>(h >> 1);
}

}  // namespace distribute::detail
TAPEFLOW_END_NAMESPACE
