// `tf::image::decode_png(contents, {.channels})` and `tf::image::encode_png(image)` (also in
// `tf::io`), on libpng's simplified API. 8-bit output; 16-bit PNGs are reduced to 8 bits
// (TensorFlow can return uint16: not supported here). Corrupt input throws invalid_argument.
// With TAPEFLOW_WITH_PNG=0 (detail/macros.hpp) both stay declared and calling one is a compile
// error naming the macro.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/image/detail/contents.hpp>

#if TAPEFLOW_WITH_PNG
#include <png.h>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace image {

/// Options of decode_png (tf.io.decode_png's keyword arguments).
struct DecodePngOptions {
  /// 0: as stored; 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA (others: invalid_argument).
  int channels = 0;
  /// The largest decoded image accepted, in bytes (height x width x channels; 1 GiB). A header
  /// declaring more raises resource_exhausted before anything is allocated or inflated.
  std::size_t max_decoded_bytes = std::size_t{1} << 30;
};

#if TAPEFLOW_WITH_PNG
/// Decodes a PNG to [height, width, channels] uint8 (`tf.io.decode_png`).
template <class Contents>
Tensor<std::uint8_t, 3> decode_png(const Contents& contents, DecodePngOptions o = {}) {
  const std::string_view bytes = detail::contents_of(contents, "tf::image::decode_png (DecodePng)");
  if (o.channels < 0 || o.channels > 4) {
    throw invalid_argument("tf::image::decode_png: channels must be 0..4, got " +
                           std::to_string(o.channels));
  }
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_memory(&img, bytes.data(), bytes.size()) == 0) {
    throw invalid_argument(std::string("tf::image::decode_png: invalid PNG data: ") + img.message);
  }
  int c = o.channels;
  if (c == 0) {
    const bool color = (img.format & PNG_FORMAT_FLAG_COLOR) != 0;
    const bool alpha = (img.format & PNG_FORMAT_FLAG_ALPHA) != 0;
    c = (color ? 3 : 1) + (alpha ? 1 : 0);
  }
  static constexpr png_uint_32 formats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB,
                                            PNG_FORMAT_RGBA};
  img.format = formats[c];
  if (!detail::fits_decoded_limit(img.height, img.width, static_cast<std::uint64_t>(c),
                                  o.max_decoded_bytes)) {
    const auto declared =
        std::to_string(img.height) + "x" + std::to_string(img.width) + "x" + std::to_string(c);
    png_image_free(&img);
    throw resource_exhausted("tf::image::decode_png: the header declares a " + declared +
                             " image, more than max_decoded_bytes (" +
                             std::to_string(o.max_decoded_bytes) + ")");
  }
  auto out = Tensor<std::uint8_t, 3>::uninitialized(
      {static_cast<std::int64_t>(img.height), static_cast<std::int64_t>(img.width), c});
  // TensorFlow leaves pixel values alone (no gamma/background processing): decode linearly.
  if (png_image_finish_read(&img, nullptr, ::tapeflow::detail::tensor_access::mutable_data(out), 0,
                            nullptr) == 0) {
    const std::string msg = img.message;
    png_image_free(&img);
    throw invalid_argument("tf::image::decode_png: invalid PNG data: " + msg);
  }
  return out;
}

/// Encodes [height, width, 1..4] uint8 as PNG bytes (`tf.io.encode_png`).
inline Tensor<std::string, 0> encode_png(const Tensor<std::uint8_t, 3>& image) {
  detail::require_eager(image, "tf::image::encode_png (EncodePng)");
  image.require_value("tf::image::encode_png");
  const std::int64_t h = image.dim(0), w = image.dim(1), c = image.dim(2);
  if (c < 1 || c > 4 || h <= 0 || w <= 0) {
    throw invalid_argument(
        "tf::image::encode_png: need [height, width, 1..4] with nonzero size, "
        "got shape " +
        image.shape().to_string());
  }
  static constexpr png_uint_32 formats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB,
                                            PNG_FORMAT_RGBA};
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(w);
  img.height = static_cast<png_uint_32>(h);
  img.format = formats[c];
  png_alloc_size_t size = 0;
  if (png_image_write_to_memory(&img, nullptr, &size, 0, image.data(), 0, nullptr) == 0) {
    throw internal(std::string("tf::image::encode_png: ") + img.message);
  }
  std::string out(size, '\0');
  if (png_image_write_to_memory(&img, out.data(), &size, 0, image.data(), 0, nullptr) == 0) {
    throw internal(std::string("tf::image::encode_png: ") + img.message);
  }
  out.resize(size);
  return Tensor<std::string, 0>(std::move(out));
}
#else   // TAPEFLOW_WITH_PNG
// Compiled out: a template that fails only when called, so including the header stays fine.
template <class Contents>
Tensor<std::uint8_t, 3> decode_png(const Contents& /*contents*/, DecodePngOptions /*o*/ = {}) {
  static_assert(sizeof(Contents) == 0,
                "tf::image::decode_png needs libpng, compiled out here: define TAPEFLOW_WITH_PNG=1 "
                "before including tapeflow and link -lpng");
  return {};
}
template <int NeedsLibpng = 0>
Tensor<std::string, 0> encode_png(const Tensor<std::uint8_t, 3>& /*image*/) {
  static_assert(NeedsLibpng != 0,
                "tf::image::encode_png needs libpng, compiled out here: define TAPEFLOW_WITH_PNG=1 "
                "before including tapeflow and link -lpng");
  return {};
}
#endif  // TAPEFLOW_WITH_PNG

}  // namespace image

namespace io {
using image::decode_png;
using image::encode_png;
}  // namespace io
TAPEFLOW_END_NAMESPACE
