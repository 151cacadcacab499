// Umbrella for the core module: Tensor, AnyTensor, Variable, constants, dtypes, errors.
// Costs little to compile: it does not include Eigen.
#pragma once

#include <tapeflow/core/any_tensor.hpp>         // IWYU pragma: export
#include <tapeflow/core/constant.hpp>           // IWYU pragma: export
#include <tapeflow/core/dtype.hpp>              // IWYU pragma: export
#include <tapeflow/core/errors.hpp>             // IWYU pragma: export
#include <tapeflow/core/shape.hpp>              // IWYU pragma: export
#include <tapeflow/core/tensor.hpp>             // IWYU pragma: export
#include <tapeflow/core/tensor_concepts.hpp>    // IWYU pragma: export
#include <tapeflow/ops/state/any_variable.hpp>  // IWYU pragma: export
#include <tapeflow/ops/state/variable.hpp>      // IWYU pragma: export
