// The one place tapeflow includes Eigen (its Tensor module). Only op kernels reach it, so
// headers that move bytes or shapes stay fast to compile (MAINTAINERS.md, "Compile time").
#pragma once

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wdeprecated"
#endif
#include <unsupported/Eigen/CXX11/Tensor>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
