// A minimal 8-bit PNG encoder for image summaries, on libpng's simplified API.
// (tf::image's encode_png lives in another module; summary keeps its own small copy so it
// depends on io only, per the layering in docs/architecture.md.) Compiled out with
// TAPEFLOW_WITH_PNG=0 (detail/macros.hpp); tf::summary::image then fails to compile.
// IWYU pragma: private, include <tapeflow/summary.hpp>
#pragma once

#include <cstdint>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

#if TAPEFLOW_WITH_PNG
#include <png.h>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace summary::detail {
#if TAPEFLOW_WITH_PNG

/// PNG bytes of an 8-bit image, rows top to bottom, `channels` = 1 (gray), 2 (gray+alpha),
/// 3 (RGB) or 4 (RGBA) interleaved.
inline std::string encode_png(const std::uint8_t* pixels, std::int64_t height, std::int64_t width,
                              std::int64_t channels) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  switch (channels) {
    case 1:
      image.format = PNG_FORMAT_GRAY;
      break;
    case 2:
      image.format = PNG_FORMAT_GA;
      break;
    case 3:
      image.format = PNG_FORMAT_RGB;
      break;
    case 4:
      image.format = PNG_FORMAT_RGBA;
      break;
    default:
      throw invalid_argument("tf::summary::image: images need 1, 2, 3 or 4 channels, got " +
                             std::to_string(channels));
  }
  const auto stride = static_cast<png_int_32>(width * channels);
  png_alloc_size_t size = 0;
  if (png_image_write_to_memory(&image, nullptr, &size, 0, pixels, stride, nullptr) == 0) {
    std::string message = image.message;
    png_image_free(&image);
    throw internal("tf::summary::image: PNG encoding failed: " + message);
  }
  std::string out(static_cast<std::size_t>(size), '\0');
  if (png_image_write_to_memory(&image, out.data(), &size, 0, pixels, stride, nullptr) == 0) {
    std::string message = image.message;
    png_image_free(&image);
    throw internal("tf::summary::image: PNG encoding failed: " + message);
  }
  out.resize(static_cast<std::size_t>(size));
  return out;
}
#else
// Never runs: tf::summary::image static_asserts on TAPEFLOW_WITH_PNG before this is reached.
template <class Pixel>
std::string encode_png(const Pixel* /*pixels*/, std::int64_t /*height*/, std::int64_t /*width*/,
                       std::int64_t /*channels*/) {
  return {};
}
#endif

}  // namespace summary::detail
TAPEFLOW_END_NAMESPACE
