// dropout: zeroes random elements and scales the rest (TensorFlow: `tf.nn.dropout`).
//
// Built from other ops rather than as an op of its own: the scaled keep-mask is a constant
// tensor drawn with `tf::random::uniform` (nothing to differentiate), and the result is
// `x * mask`, so the tape records one multiply and the gradient is `dy * mask`, reusing the
// forward's mask. This is how TensorFlow's Python `dropout` is written too.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/math/compare.hpp>
#include <tapeflow/ops/random/random.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace nn {

/// Keyword arguments of `tf::nn::dropout` (TensorFlow: `noise_shape`, `seed`).
struct DropoutOptions {
  /// Shape of the keep/drop mask, broadcast against x: each entry equals x's dimension or 1
  /// (e.g. {N, 1, 1, C} drops whole feature maps). Empty: x's own shape.
  std::vector<std::int64_t> noise_shape = {};
  /// Op seed of the mask (see Note [Random seeds] in <tapeflow/ops/random/random.hpp>).
  std::optional<std::int64_t> seed = std::nullopt;
};

/// Randomly sets elements of `x` to zero with probability `rate` and scales the kept ones by
/// 1 / (1 - rate), so the expected value is unchanged (TensorFlow: `tf.nn.dropout(x, rate,
/// noise_shape, seed)`).
///
///     auto h = tf::nn::dropout(tf::nn::relu(z), 0.5, {.seed = 1});
///
/// Like `tf.nn.dropout`, it always drops: call it only while training (Keras' Dropout layer
/// decides that). The gradient is `dy * mask / (1 - rate)` with the mask drawn in the forward
/// pass. `rate == 0` returns `x` itself. Throws invalid_argument when `rate` is outside
/// [0, 1) or `noise_shape` does not broadcast to x's shape.
template <tensor_like X>
tensor_type_of<X> dropout(X const& x, double rate, DropoutOptions const& options = {}) {
  using T = value_type_of<X>;
  constexpr std::size_t R = rank_of<X>;
  static_assert(floating_element<T>, "tf::nn::dropout(x, rate): x must be float or double");
  auto const& t = tapeflow::detail::as_tensor(x);
  if (!(rate >= 0.0 && rate < 1.0)) {
    throw invalid_argument("tf::nn::dropout: rate must be a scalar in [0, 1), got " +
                           std::to_string(rate));
  }
  std::array<std::int64_t, R> noise = t.dims();
  if (!options.noise_shape.empty()) {
    bool ok = options.noise_shape.size() == R;
    for (std::size_t i = 0; ok && i < R; ++i) {
      ok = options.noise_shape[i] == t.dims()[i] || options.noise_shape[i] == 1;
      noise[i] = options.noise_shape[i];
    }
    if (!ok) {
      std::string text = "(";
      for (std::size_t i = 0; i < options.noise_shape.size(); ++i) {
        text += (i > 0 ? ", " : "") + std::to_string(options.noise_shape[i]);
      }
      throw invalid_argument("tf::nn::dropout: noise_shape " + text +
                             ") does not broadcast to the shape of x " + t.shape().to_string() +
                             " (each entry must be x's dimension or 1)");
    }
  }
  if (rate == 0.0) {
    return t;
  }
  auto const u = random::uniform<T>(noise, {.seed = options.seed});
  auto const mask =
      cast<T>(greater_equal(u, static_cast<T>(rate))) * static_cast<T>(1.0 / (1.0 - rate));
  return t * mask;
}

}  // namespace nn
TAPEFLOW_END_NAMESPACE
