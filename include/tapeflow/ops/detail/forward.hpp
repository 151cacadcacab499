// Declarations the op headers need from each other before their definitions (the gradient
// of one op is written in others; see Note [One definition per op]).
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <cstddef>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {
enum class ReduceKind { sum, mean, max, min };
template <ReduceKind Kind, std::size_t OutRank>
struct Reduce;
template <std::size_t OutRank>
struct Reshape;
}  // namespace ops
TAPEFLOW_END_NAMESPACE
