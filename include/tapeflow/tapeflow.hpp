// tapeflow: TensorFlow 2's everyday modules for C++. This umbrella is the core TensorFlow API
// (`tf.*`): tensors, variables, every op, GradientTape, tf.function with tf.cond,
// tf.while_loop and tf.TensorArray, tf.autograph.to_code, and tf.print. It costs Eigen's Tensor
// module (about 1 s) plus the templates you instantiate; linking tapeflow::instantiations removes
// Eigen and most of the latter (README, "Faster builds").
//
// The other modules have their own umbrellas, as TensorFlow's submodules: <tapeflow/data.hpp>
// (tf.data), <tapeflow/image.hpp> (tf.image), <tapeflow/io.hpp> (tf.io: TFRecord, Example),
// <tapeflow/summary.hpp> (tf.summary), <tapeflow/train.hpp> (tf.train: checkpoints) and
// <tapeflow/keras.hpp> (tf.keras). <tapeflow/all.hpp> includes everything.
//
//     namespace tf = tapeflow;
#pragma once

#include <tapeflow/autodiff.hpp>               // IWYU pragma: export
#include <tapeflow/core.hpp>                   // IWYU pragma: export
#include <tapeflow/function/control_flow.hpp>  // IWYU pragma: export
#include <tapeflow/function/function.hpp>      // IWYU pragma: export
#include <tapeflow/function/tensor_array.hpp>  // IWYU pragma: export
#include <tapeflow/function/to_code.hpp>       // IWYU pragma: export
#include <tapeflow/ops.hpp>                    // IWYU pragma: export
#include <tapeflow/ops/logging/print.hpp>      // IWYU pragma: export
#include <tapeflow/version.hpp>                // IWYU pragma: export
