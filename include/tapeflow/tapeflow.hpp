// tapeflow: TensorFlow 2's everyday modules for C++. This umbrella includes every module;
// it costs Eigen's Tensor module (about 2 s) plus the templates you instantiate. Include a
// module header (<tapeflow/core.hpp>, <tapeflow/ops.hpp>, ...) to pay for less.
//
//     namespace tf = tapeflow;
#pragma once

#include <tapeflow/autodiff.hpp>  // IWYU pragma: export
#include <tapeflow/core.hpp>      // IWYU pragma: export
#include <tapeflow/ops.hpp>       // IWYU pragma: export
#include <tapeflow/version.hpp>   // IWYU pragma: export
