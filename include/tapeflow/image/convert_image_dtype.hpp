// `tf::image::convert_image_dtype<Out>(image)` (`tf.image.convert_image_dtype`): integer images
// are in [0, MAX], floating images in [0, 1]. int -> float divides by MAX; float -> int
// multiplies by MAX + 0.5 and truncates (TensorFlow's rounding), clamping to [0, MAX] (C++ has
// no defined out-of-range cast, so this always saturates); float <-> float is a cast;
// int -> int rescales by the ratio of the maxima.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image {

/// Converts `image` to element type `Out`, rescaling values (TensorFlow:
/// `tf.image.convert_image_dtype`): integer images are in [0, MAX], floating ones in [0, 1].
/// int -> float divides by MAX; float -> int multiplies by MAX + 0.5, truncates and clamps to
/// [0, MAX]; float -> float is a cast; int -> int rescales by the ratio of the maxima.
template <class Out, class In, std::size_t R>
  requires(std::is_arithmetic_v<Out> && std::is_arithmetic_v<In> && !std::same_as<Out, bool> &&
           !std::same_as<In, bool>)
Tensor<Out, R> convert_image_dtype(const Tensor<In, R>& image) {
  // Made of Cast, Mul, Maximum and Minimum ops as TensorFlow's is (so it traces and exports);
  // clamping happens in double, where every integer maximum is exact.
  constexpr double out_max = static_cast<double>(std::numeric_limits<Out>::max());
  constexpr double in_max = static_cast<double>(std::numeric_limits<In>::max());
  if constexpr (std::same_as<In, Out>) {
    return image;
  } else if constexpr (std::is_floating_point_v<In> && std::is_floating_point_v<Out>) {
    return cast<Out>(image);
  } else if constexpr (std::is_integral_v<In> && std::is_floating_point_v<Out>) {
    // TensorFlow multiplies by the reciprocal, in Out's precision
    return cast<Out>(image) * static_cast<Out>(1.0 / in_max);
  } else if constexpr (std::is_floating_point_v<In> && std::is_integral_v<Out>) {
    const auto scaled = image * static_cast<In>(out_max + 0.5);  // in In's precision, like TF
    return cast<Out>(minimum(maximum(cast<double>(scaled), 0.0), out_max));
  } else {
    constexpr double out_min = static_cast<double>(std::numeric_limits<Out>::min());
    return cast<Out>(minimum(maximum(cast<double>(image) * (out_max / in_max), out_min), out_max));
  }
}

}  // namespace image
TAPEFLOW_END_NAMESPACE
