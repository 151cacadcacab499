// Keras weight initializers (tf.keras.initializers): glorot_uniform, glorot_normal, he_normal,
// he_uniform, zeros, ones, constant, random_normal, random_uniform.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/random/random.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace initializers {

/// An initializer: the float values (row-major) of a new weight of the given shape. Any
/// callable `std::vector<float>(const tf::Shape&)` is one.
using Initializer = std::function<std::vector<float>(const Shape&)>;

/// Keras' fan computation: a dense kernel [in, out] has fan_in = in, fan_out = out; a
/// convolution kernel [h, w, in, out] multiplies both by the receptive field h * w.
inline std::pair<double, double> compute_fans(const Shape& shape) {
  const std::size_t r = shape.rank();
  if (r == 0) {
    return {1.0, 1.0};
  }
  if (r == 1) {
    return {double(shape[0]), double(shape[0])};
  }
  double receptive = 1;
  for (std::size_t i = 0; i + 2 < r; ++i) {
    receptive *= double(shape[i]);
  }
  return {double(shape[r - 2]) * receptive, double(shape[r - 1]) * receptive};
}

/// The values of a rank-1 tensor (how the random initializers return their draws).
inline std::vector<float> to_vector(const Tensor<float, 1>& t) { return t.numpy(); }

/// All zeros (tf.keras.initializers.Zeros).
inline Initializer Zeros() {
  return [](const Shape& s) { return std::vector<float>(std::size_t(s.num_elements()), 0.0f); };
}
/// All ones.
inline Initializer Ones() {
  return [](const Shape& s) { return std::vector<float>(std::size_t(s.num_elements()), 1.0f); };
}
/// Every element `value`.
inline Initializer Constant(float value) {
  return
      [value](const Shape& s) { return std::vector<float>(std::size_t(s.num_elements()), value); };
}

/// Options of the random initializers (a seed makes them reproducible).
struct SeedOptions {
  /// Op seed of the draws (Note [Random seeds] in ops/random/random.hpp); unset: nondeterministic
  /// unless a global seed is set.
  std::optional<std::int64_t> seed = std::nullopt;
};
/// Options of RandomNormal (Keras' `mean`, `stddev`, `seed`).
struct RandomNormalOptions {
  double mean = 0.0;                                ///< mean of the normal distribution
  double stddev = 0.05;                             ///< standard deviation (Keras' default 0.05)
  std::optional<std::int64_t> seed = std::nullopt;  ///< as SeedOptions::seed
};
/// Options of RandomUniform (Keras' `minval`, `maxval`, `seed`).
struct RandomUniformOptions {
  double minval = -0.05;                            ///< lower bound (inclusive)
  double maxval = 0.05;                             ///< upper bound (exclusive)
  std::optional<std::int64_t> seed = std::nullopt;  ///< as SeedOptions::seed
};

/// N(mean, stddev) (tf.keras.initializers.RandomNormal; Keras' default stddev 0.05).
inline Initializer RandomNormal(RandomNormalOptions o = {}) {
  return [o](const Shape& s) {
    return to_vector(random::normal<float>({s.num_elements()},
                                           {.mean = o.mean, .stddev = o.stddev, .seed = o.seed}));
  };
}
/// U[minval, maxval) (tf.keras.initializers.RandomUniform).
inline Initializer RandomUniform(RandomUniformOptions o = {}) {
  return [o](const Shape& s) {
    return to_vector(random::uniform<float>(
        {s.num_elements()},
        {.minval = float(o.minval), .maxval = float(o.maxval), .seed = o.seed}));
  };
}
/// U[-limit, limit) with limit = sqrt(6 / (fan_in + fan_out)) (Keras' default kernel
/// initializer, tf.keras.initializers.GlorotUniform).
inline Initializer GlorotUniform(SeedOptions o = {}) {
  return [o](const Shape& s) {
    auto [fan_in, fan_out] = compute_fans(s);
    const auto limit = float(std::sqrt(6.0 / (fan_in + fan_out)));
    return to_vector(random::uniform<float>({s.num_elements()},
                                            {.minval = -limit, .maxval = limit, .seed = o.seed}));
  };
}
/// Truncated normal with stddev sqrt(2 / (fan_in + fan_out)) (GlorotNormal).
inline Initializer GlorotNormal(SeedOptions o = {}) {
  return [o](const Shape& s) {
    auto [fan_in, fan_out] = compute_fans(s);
    // Keras divides by the stddev of a unit normal truncated at 2 sigma.
    const double stddev = std::sqrt(2.0 / (fan_in + fan_out)) / 0.87962566103423978;
    return to_vector(
        random::truncated_normal<float>({s.num_elements()}, {.stddev = stddev, .seed = o.seed}));
  };
}
/// Truncated normal with stddev sqrt(2 / fan_in) (tf.keras.initializers.HeNormal).
inline Initializer HeNormal(SeedOptions o = {}) {
  return [o](const Shape& s) {
    auto [fan_in, fan_out] = compute_fans(s);
    (void)fan_out;
    const double stddev = std::sqrt(2.0 / fan_in) / 0.87962566103423978;
    return to_vector(
        random::truncated_normal<float>({s.num_elements()}, {.stddev = stddev, .seed = o.seed}));
  };
}
/// U[-limit, limit) with limit = sqrt(6 / fan_in) (HeUniform).
inline Initializer HeUniform(SeedOptions o = {}) {
  return [o](const Shape& s) {
    auto [fan_in, fan_out] = compute_fans(s);
    (void)fan_out;
    const auto limit = float(std::sqrt(6.0 / fan_in));
    return to_vector(random::uniform<float>({s.num_elements()},
                                            {.minval = -limit, .maxval = limit, .seed = o.seed}));
  };
}

/// A (semi-)orthogonal matrix: the Q factor of a normal random matrix, the shape flattened to
/// [prod(shape[:-1]), shape[-1]] (tf.keras.initializers.Orthogonal; Keras' default recurrent
/// kernel initializer).
inline Initializer Orthogonal(SeedOptions o = {}) {
  return [o](const Shape& s) {
    const std::int64_t cols = s.rank() == 0 ? 1 : s[s.rank() - 1];
    const std::int64_t rows = cols == 0 ? 0 : s.num_elements() / cols;
    const bool tall = rows >= cols;
    const std::int64_t r = tall ? rows : cols, c = tall ? cols : rows;  // r >= c
    auto z = to_vector(random::normal<float>({r * c}, {.seed = o.seed}));
    std::vector<double> q(z.begin(), z.end());  // r x c, row-major; columns orthonormalized
    for (std::int64_t j = 0; j < c; ++j) {
      for (std::int64_t k = 0; k < j; ++k) {
        double dot = 0;
        for (std::int64_t i = 0; i < r; ++i) {
          dot += q[i * c + j] * q[i * c + k];
        }
        for (std::int64_t i = 0; i < r; ++i) {
          q[i * c + j] -= dot * q[i * c + k];
        }
      }
      double norm = 0;
      for (std::int64_t i = 0; i < r; ++i) {
        norm += q[i * c + j] * q[i * c + j];
      }
      norm = std::sqrt(norm) > 0 ? std::sqrt(norm) : 1.0;
      for (std::int64_t i = 0; i < r; ++i) {
        q[i * c + j] /= norm;
      }
    }
    std::vector<float> out(static_cast<std::size_t>(rows * cols));
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) {
        out[std::size_t(i * cols + j)] = float(tall ? q[i * c + j] : q[j * c + i]);
      }
    }
    return out;
  };
}

/// Looks an initializer up by its Keras string name ("glorot_uniform", "he_normal", "zeros",
/// ...); throws invalid_argument for an unknown name.
inline Initializer get(const std::string& name) {
  if (name == "glorot_uniform") {
    return GlorotUniform();
  }
  if (name == "glorot_normal") {
    return GlorotNormal();
  }
  if (name == "he_normal") {
    return HeNormal();
  }
  if (name == "he_uniform") {
    return HeUniform();
  }
  if (name == "orthogonal") {
    return Orthogonal();
  }
  if (name == "zeros") {
    return Zeros();
  }
  if (name == "ones") {
    return Ones();
  }
  if (name == "random_normal") {
    return RandomNormal();
  }
  if (name == "random_uniform") {
    return RandomUniform();
  }
  throw invalid_argument("tf::keras::initializers::get: unknown initializer '" + name + "'");
}

}  // namespace initializers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
