// Umbrella for every op (tf::, tf::math, tf::nn, tf::random). Includes Eigen's Tensor module
// through the kernel bodies (about 1-2 s of compile time; none with TAPEFLOW_PRECOMPILED, when
// tapeflow::instantiations has them compiled); kernels instantiate only for the ops you call.
#pragma once

#include <tapeflow/ops/array/concat.hpp>             // IWYU pragma: export
#include <tapeflow/ops/array/gather.hpp>             // IWYU pragma: export
#include <tapeflow/ops/array/one_hot.hpp>            // IWYU pragma: export
#include <tapeflow/ops/array/pad.hpp>                // IWYU pragma: export
#include <tapeflow/ops/array/reshape.hpp>            // IWYU pragma: export
#include <tapeflow/ops/array/reverse.hpp>            // IWYU pragma: export
#include <tapeflow/ops/array/slice.hpp>              // IWYU pragma: export
#include <tapeflow/ops/array/stack.hpp>              // IWYU pragma: export
#include <tapeflow/ops/array/transpose.hpp>          // IWYU pragma: export
#include <tapeflow/ops/array/where.hpp>              // IWYU pragma: export
#include <tapeflow/ops/linalg/matmul.hpp>            // IWYU pragma: export
#include <tapeflow/ops/math/argmax.hpp>              // IWYU pragma: export
#include <tapeflow/ops/math/arithmetic.hpp>          // IWYU pragma: export
#include <tapeflow/ops/math/cast.hpp>                // IWYU pragma: export
#include <tapeflow/ops/math/compare.hpp>             // IWYU pragma: export
#include <tapeflow/ops/math/segment.hpp>             // IWYU pragma: export
#include <tapeflow/ops/math/unary.hpp>               // IWYU pragma: export
#include <tapeflow/ops/nn/batch_norm.hpp>            // IWYU pragma: export
#include <tapeflow/ops/nn/conv2d.hpp>                // IWYU pragma: export
#include <tapeflow/ops/nn/cross_entropy.hpp>         // IWYU pragma: export
#include <tapeflow/ops/nn/depthwise_conv2d.hpp>      // IWYU pragma: export
#include <tapeflow/ops/nn/dropout.hpp>               // IWYU pragma: export
#include <tapeflow/ops/nn/pooling.hpp>               // IWYU pragma: export
#include <tapeflow/ops/nn/relu6.hpp>                 // IWYU pragma: export
#include <tapeflow/ops/nn/softmax.hpp>               // IWYU pragma: export
#include <tapeflow/ops/random/random.hpp>            // IWYU pragma: export
#include <tapeflow/ops/reduce/reduce.hpp>            // IWYU pragma: export
#include <tapeflow/ops/state/any_variable.hpp>       // IWYU pragma: export
#include <tapeflow/ops/state/variable.hpp>           // IWYU pragma: export
#include <tapeflow/ops/training/resource_apply.hpp>  // IWYU pragma: export

// Last, after every op: with TAPEFLOW_PRECOMPILED it declares their common specializations
// extern (tapeflow::instantiations).
#include <tapeflow/ops/detail/precompiled.hpp>  // IWYU pragma: export
