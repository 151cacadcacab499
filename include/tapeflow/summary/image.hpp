// tf::summary::image (TensorFlow: `tf.summary.image`).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/summary/detail/encode.hpp>
#include <tapeflow/summary/detail/png.hpp>
#include <tapeflow/summary/writer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// Options of image().
struct ImageOptions {
  /// At most this many images of the batch are written.
  std::int64_t max_outputs = 3;
  /// Markdown shown in TensorBoard's tooltip (TensorFlow: `description`).
  std::string description{};
};

namespace detail {
/// TensorFlow's `convert_image_dtype(x, uint8, saturate=True)` for one float value.
template <class T>
std::uint8_t to_uint8(T x) {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    return x;
  } else {
    const float scaled = static_cast<float>(x) * 255.5f;
    if (std::isnan(scaled)) {
      return 0;
    }
    return static_cast<std::uint8_t>(std::clamp(scaled, 0.0f, 255.0f));
  }
}

/// The serialized Summary.Value of an image summary: DT_STRING [2 + k] = width, height, PNGs.
template <class T>
std::string image_value(std::string_view name, const Tensor<T, 4>& data,
                        const ImageOptions& options) {
  data.require_value("summary::image");
  const auto& d = data.dims();
  if (d[3] < 1 || d[3] > 4) {
    throw invalid_argument("tf::summary::image: '" + std::string(name) +
                           "': expected [k, h, w, c] with c in 1..4, got shape " +
                           data.shape().to_string());
  }
  if (options.max_outputs < 0) {
    throw invalid_argument("tf::summary::image: max_outputs must be >= 0");
  }
  const std::int64_t k = std::min(d[0], options.max_outputs);
  std::vector<std::string> strings;
  strings.reserve(static_cast<std::size_t>(k + 2));
  strings.push_back(std::to_string(d[2]));
  strings.push_back(std::to_string(d[1]));
  const std::int64_t per_image = d[1] * d[2] * d[3];
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(per_image));
  for (std::int64_t i = 0; i < k; ++i) {
    const T* src = data.data() + i * per_image;
    std::transform(src, src + per_image, pixels.begin(), [](T x) { return to_uint8(x); });
    strings.push_back(encode_png(pixels.data(), d[1], d[2], d[3]));
  }
  const std::int64_t dims[1] = {k + 2};
  return summary_value(
      name, [&](wire::Writer& t) { write_tensor_strings(t, dims, strings); }, "images", {},
      options.description);
}
}  // namespace detail

/// Writes up to `max_outputs` images of a `[k, h, w, c]` batch as PNGs (TensorFlow:
/// `tf.summary.image`). uint8 pixels are written as is; float pixels in [0, 1] are scaled to
/// uint8 as `convert_image_dtype(saturate=True)` does. Returns false without a default writer.
template <class T>
bool image(std::string_view name, const Tensor<T, 4>& data, std::optional<std::int64_t> step = {},
           const ImageOptions& options = {}) {
  static_assert(std::is_same_v<T, std::uint8_t> || std::is_floating_point_v<T>,
                "tf::summary::image: images must be uint8 or float");
  static_assert(TAPEFLOW_WITH_PNG != 0 || sizeof(T) == 0,
                "tf::summary::image writes PNGs and needs libpng, compiled out here: define "
                "TAPEFLOW_WITH_PNG=1 before including tapeflow and link -lpng");
  detail::WriterState* writer = detail::active_writer();
  if (writer == nullptr) {
    return false;
  }
  detail::Item item;
  item.kind = detail::Item::Kind::value;
  item.step = detail::resolve_step(step, "image");
  item.wall_time = detail::wall_time_now();
  item.bytes = detail::image_value(name, data, options);
  writer->push(std::move(item));
  return true;
}

}  // namespace summary
TAPEFLOW_END_NAMESPACE
