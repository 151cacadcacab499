// Umbrella for every op (tf::, tf::nn, tf::random). Includes Eigen's Tensor module through
// core/eigen.hpp (about 2 s of compile time); kernels instantiate only for the ops you call.
#pragma once

#include <tapeflow/ops/array/reshape.hpp>    // IWYU pragma: export
#include <tapeflow/ops/array/where.hpp>      // IWYU pragma: export
#include <tapeflow/ops/linalg/matmul.hpp>    // IWYU pragma: export
#include <tapeflow/ops/math/arithmetic.hpp>  // IWYU pragma: export
#include <tapeflow/ops/math/cast.hpp>        // IWYU pragma: export
#include <tapeflow/ops/math/compare.hpp>     // IWYU pragma: export
#include <tapeflow/ops/math/unary.hpp>       // IWYU pragma: export
#include <tapeflow/ops/reduce/reduce.hpp>    // IWYU pragma: export
