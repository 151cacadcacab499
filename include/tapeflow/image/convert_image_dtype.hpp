// `tf::image::convert_image_dtype<Out>(image)` (`tf.image.convert_image_dtype`): integer images
// are in [0, MAX], floating images in [0, 1]. int -> float divides by MAX; float -> int
// multiplies by MAX + 0.5 and truncates (TensorFlow's rounding), clamping to [0, MAX] (C++ has
// no defined out-of-range cast, so this always saturates); float <-> float is a cast;
// int -> int rescales by the ratio of the maxima.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image {

template <class Out, class In, std::size_t R>
  requires(std::is_arithmetic_v<Out> && std::is_arithmetic_v<In> && !std::same_as<Out, bool> &&
           !std::same_as<In, bool>)
Tensor<Out, R> convert_image_dtype(const Tensor<In, R>& image) {
  auto out = Tensor<Out, R>::uninitialized(image.dims());
  Out* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
  const In* src = image.data();
  const std::int64_t n = image.num_elements();
  for (std::int64_t i = 0; i < n; ++i) {
    const In x = src[i];
    if constexpr (std::is_floating_point_v<In> && std::is_floating_point_v<Out>) {
      dst[i] = static_cast<Out>(x);
    } else if constexpr (std::is_integral_v<In> && std::is_floating_point_v<Out>) {
      // TensorFlow multiplies by the reciprocal, in Out's precision
      constexpr Out scale =
          static_cast<Out>(1.0 / static_cast<double>(std::numeric_limits<In>::max()));
      dst[i] = static_cast<Out>(x) * scale;
    } else if constexpr (std::is_floating_point_v<In> && std::is_integral_v<Out>) {
      constexpr In scale =
          static_cast<In>(static_cast<double>(std::numeric_limits<Out>::max()) + 0.5);
      const In scaled = x * scale;  // in In's precision, like TensorFlow
      dst[i] = static_cast<Out>(std::clamp(static_cast<double>(scaled), 0.0,
                                           static_cast<double>(std::numeric_limits<Out>::max())));
    } else {
      const double scaled = static_cast<double>(x) *
                            static_cast<double>(std::numeric_limits<Out>::max()) /
                            static_cast<double>(std::numeric_limits<In>::max());
      dst[i] =
          static_cast<Out>(std::clamp(scaled, static_cast<double>(std::numeric_limits<Out>::min()),
                                      static_cast<double>(std::numeric_limits<Out>::max())));
    }
  }
  return out;
}

}  // namespace image
TAPEFLOW_END_NAMESPACE
