// Forward declarations of tapeflow's public class templates, for headers that only name them.
#pragma once

#include <cstddef>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
template <class T>
struct dtype_traits;
class Shape;
class AnyTensor;
class GradientTape;
struct VariableOptions;
TAPEFLOW_END_NAMESPACE

// Tensor and Variable constrain their element type with a concept; they are declared in
// <tapeflow/core/tensor.hpp> and <tapeflow/core/tensor_concepts.hpp>, which are cheap (no Eigen).
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
