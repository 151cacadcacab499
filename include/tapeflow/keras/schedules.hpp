// tf.keras.optimizers.schedules: learning rates as a function of the optimizer step.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace optimizers {
namespace schedules {

/// A learning-rate schedule: the rate at optimizer step `step` (0 for the first update).
using LearningRateSchedule = std::function<double(std::int64_t step)>;

/// Options of ExponentialDecay (Keras' keyword arguments; these defaults are tapeflow's).
struct ExponentialDecayOptions {
  double initial_learning_rate = 0.01;  ///< the rate at step 0
  double decay_steps = 1000;            ///< steps per factor of decay_rate (> 0)
  double decay_rate = 0.96;             ///< factor applied every decay_steps steps
  bool staircase = false;               ///< decay in whole periods (floor of the exponent)
};
/// initial * decay_rate ^ (step / decay_steps) (floor of the exponent with staircase)
/// (tf.keras.optimizers.schedules.ExponentialDecay).
inline LearningRateSchedule ExponentialDecay(ExponentialDecayOptions o) {
  if (o.decay_steps <= 0) {
    throw invalid_argument("ExponentialDecay: decay_steps must be positive");
  }
  return [o](std::int64_t step) {
    double p = double(step) / o.decay_steps;
    if (o.staircase) {
      p = std::floor(p);
    }
    return o.initial_learning_rate * std::pow(o.decay_rate, p);
  };
}

/// values[i] while step <= boundaries[i] (and values.back() after the last boundary)
/// (tf.keras.optimizers.schedules.PiecewiseConstantDecay).
inline LearningRateSchedule PiecewiseConstantDecay(std::vector<std::int64_t> boundaries,
                                                   std::vector<double> values) {
  if (values.size() != boundaries.size() + 1) {
    throw invalid_argument(
        "PiecewiseConstantDecay: values must have one more entry than "
        "boundaries (" +
        std::to_string(values.size()) + " values, " + std::to_string(boundaries.size()) +
        " boundaries)");
  }
  return [b = std::move(boundaries), v = std::move(values)](std::int64_t step) {
    for (std::size_t i = 0; i < b.size(); ++i) {
      if (step <= b[i]) {
        return v[i];
      }
    }
    return v.back();
  };
}

/// Options of CosineDecay (Keras' keyword arguments; these defaults are tapeflow's).
struct CosineDecayOptions {
  double initial_learning_rate = 0.01;  ///< the rate at step 0
  double decay_steps = 1000;            ///< steps to decay over (> 0); constant afterwards
  double alpha = 0.0;                   ///< final rate as a fraction of initial_learning_rate
};
/// initial * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)
/// (tf.keras.optimizers.schedules.CosineDecay).
inline LearningRateSchedule CosineDecay(CosineDecayOptions o) {
  if (o.decay_steps <= 0) {
    throw invalid_argument("CosineDecay: decay_steps must be positive");
  }
  return [o](std::int64_t step) {
    const double p = std::min(double(step), o.decay_steps) / o.decay_steps;
    const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * p));
    return o.initial_learning_rate * ((1.0 - o.alpha) * cosine + o.alpha);
  };
}

}  // namespace schedules
}  // namespace optimizers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
