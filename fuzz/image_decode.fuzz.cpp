// libFuzzer target for the JPEG and PNG decoders behind `tf::image::decode_jpeg` / `decode_png`:
// the first byte picks the decoder (bit 0), the channels asked for (bits 1-3) and, for JPEG,
// the DCT method and truncation recovery (bits 4-5); the rest is the file. Any bytes must give
// an image of the declared shape or a tf::error (invalid_argument, or resource_exhausted past
// max_decoded_bytes, lowered here to 64 MiB) — never crash, read out of bounds or allocate
// what the header merely claims.
//   ./image_decode_fuzzer -max_total_time=600 <fresh dir> fuzz/corpus/image_decode
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/image/decode_jpeg.hpp>
#include <tapeflow/image/decode_png.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace image = tapeflow::image;
  if (size == 0) {
    return 0;
  }
  const std::uint8_t mode = data[0];
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  constexpr std::size_t ceiling = std::size_t{64} << 20;
  try {
    const int channels = (mode >> 1) & 7;
    if ((mode & 1) == 0) {
      const auto img = image::decode_jpeg(
          file, {.channels = channels % 4 == 2 ? 0 : channels % 4,
                 .dct_method = (mode & 16) != 0 ? "INTEGER_ACCURATE" : "",
                 .try_recover_truncated = (mode & 32) != 0,
                 .max_decoded_bytes = ceiling});
      if (img.size() > static_cast<std::int64_t>(ceiling)) {
        __builtin_trap();
      }
    } else {
      const auto img =
          image::decode_png(file, {.channels = channels % 5, .max_decoded_bytes = ceiling});
      if (img.size() > static_cast<std::int64_t>(ceiling)) {
        __builtin_trap();
      }
    }
  } catch (const tapeflow::error&) {
  }
  return 0;
}
