// Umbrella for automatic differentiation: GradientTape.
#pragma once

#include <tapeflow/autodiff/gradient_tape.hpp>  // IWYU pragma: export
