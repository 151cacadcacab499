// IWYU pragma: private, include <tapeflow/image.hpp>
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image::detail {

/// Codecs run eagerly only: a decoded image's shape depends on the bytes, which a traced
/// tf::function does not have. A symbolic input is a clear error naming the op.
template <class T, std::size_t R>
void require_eager(const Tensor<T, R>& t, std::string_view op) {
  if (t.is_symbolic()) {
    throw unimplemented(std::string(op) +
                        ": inside a tf::function being traced (its input is symbolic); image "
                        "codecs run eagerly only, e.g. in a tf.data map, because the output "
                        "shape depends on the data");
  }
}

/// Whether a decoded [height, width, channels] uint8 image fits in `max_bytes` (no overflow).
inline bool fits_decoded_limit(std::uint64_t height, std::uint64_t width, std::uint64_t channels,
                               std::size_t max_bytes) {
  if (height == 0 || width == 0 || channels == 0) {
    return true;
  }
  return width <= max_bytes / height && channels <= max_bytes / (height * width);
}

// What decode_png/decode_jpeg accept: a scalar string tensor, or bytes held by the caller. The
// std::string overload is needed: a std::string converts both to string_view and (through
// Tensor's scalar constructor) to Tensor<std::string, 0>, which would be ambiguous.
inline std::string_view contents_of(const Tensor<std::string, 0>& t, std::string_view op) {
  require_eager(t, op);
  return t.item();
}
inline std::string_view contents_of(std::string_view s, std::string_view) { return s; }
inline std::string_view contents_of(const std::string& s, std::string_view) { return s; }
inline std::string_view contents_of(const char* s, std::string_view) { return s; }

}  // namespace image::detail
TAPEFLOW_END_NAMESPACE
