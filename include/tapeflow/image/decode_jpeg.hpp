// `tf::image::decode_jpeg(contents, {.channels})` (also `tf::io::decode_jpeg`), with
// libjpeg(-turbo) configured as TensorFlow configures it by default (integer-fast IDCT, fancy
// upsampling), and `tf::image::encode_jpeg(image, {.quality})`. Images are `Tensor<uint8_t, 3>`
// [height, width, channels]. Corrupt input throws invalid_argument naming what libjpeg reported.
// With TAPEFLOW_WITH_JPEG=0 (detail/macros.hpp) both stay declared and calling one is a compile
// error naming the macro.
#pragma once

// jpeglib.h needs FILE and size_t first
#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/image/detail/contents.hpp>

#if TAPEFLOW_WITH_JPEG
#include <jerror.h>
#include <jpeglib.h>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace image {

/// Options of decode_jpeg (tf.io.decode_jpeg's keyword arguments).
struct DecodeJpegOptions {
  int channels = 0;  ///< 0: as stored; 1: grayscale; 3: RGB (others: invalid_argument)
  /// "" / "INTEGER_FAST" (TensorFlow's default) or "INTEGER_ACCURATE".
  std::string dct_method{};
  /// Smooth (not replicated) upsampling of subsampled chroma, TensorFlow's default.
  bool fancy_upscaling = true;
  /// Accept a truncated file (the missing rows are grey), as TensorFlow's option of that name.
  bool try_recover_truncated = false;
  /// The largest decoded image accepted, in bytes (height x width x channels; 1 GiB). A header
  /// declaring more raises resource_exhausted before anything is allocated.
  std::size_t max_decoded_bytes = std::size_t{1} << 30;
};

/// Options of encode_jpeg (tf.io.encode_jpeg's keyword arguments).
struct EncodeJpegOptions {
  int quality = 95;  ///< 0..100 (TensorFlow's default)
};

#if TAPEFLOW_WITH_JPEG
namespace detail {
struct jpeg_error_mgr_jmp {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  bool truncated;
};
extern "C" inline void tapeflow_jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<jpeg_error_mgr_jmp*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}
extern "C" inline void tapeflow_jpeg_warning(j_common_ptr cinfo, int level) {
  auto* err = reinterpret_cast<jpeg_error_mgr_jmp*>(cinfo->err);
  if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
    err->truncated = true;  // libjpeg pads a truncated file; TensorFlow rejects it by default
  }
}
}  // namespace detail

/// Decodes a JPEG to [height, width, channels] uint8 (`tf.io.decode_jpeg`).
template <class Contents>
Tensor<std::uint8_t, 3> decode_jpeg(const Contents& contents, DecodeJpegOptions o = {}) {
  const std::string_view bytes =
      detail::contents_of(contents, "tf::image::decode_jpeg (DecodeJpeg)");
  if (o.channels != 0 && o.channels != 1 && o.channels != 3) {
    throw invalid_argument("tf::image::decode_jpeg: channels must be 0, 1 or 3, got " +
                           std::to_string(o.channels));
  }
  jpeg_decompress_struct cinfo{};
  detail::jpeg_error_mgr_jmp err{};
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = detail::tapeflow_jpeg_error_exit;
  err.pub.emit_message = detail::tapeflow_jpeg_warning;
  Tensor<std::uint8_t, 3> out;
  // Only trivially destructible locals live across setjmp/longjmp below.
  if (setjmp(err.jump) != 0) {
    jpeg_destroy_decompress(&cinfo);
    throw invalid_argument(std::string("tf::image::decode_jpeg: invalid JPEG data: ") +
                           err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  if (o.channels == 1) {
    cinfo.out_color_space = JCS_GRAYSCALE;
  } else if (o.channels == 3 || cinfo.jpeg_color_space != JCS_GRAYSCALE) {
    if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK) {
      jpeg_destroy_decompress(&cinfo);
      throw unimplemented("tf::image::decode_jpeg: CMYK JPEGs are not supported");
    }
    cinfo.out_color_space = JCS_RGB;
  } else {
    cinfo.out_color_space = JCS_GRAYSCALE;
  }
  cinfo.dct_method = o.dct_method == "INTEGER_ACCURATE" ? JDCT_ISLOW : JDCT_IFAST;
  cinfo.do_fancy_upsampling = o.fancy_upscaling ? TRUE : FALSE;
  jpeg_calc_output_dimensions(&cinfo);
  if (!detail::fits_decoded_limit(cinfo.output_height, cinfo.output_width, cinfo.output_components,
                                  o.max_decoded_bytes)) {
    const auto declared = std::to_string(cinfo.output_height) + "x" +
                          std::to_string(cinfo.output_width) + "x" +
                          std::to_string(cinfo.output_components);
    jpeg_destroy_decompress(&cinfo);
    throw resource_exhausted("tf::image::decode_jpeg: the header declares a " + declared +
                             " image, more than max_decoded_bytes (" +
                             std::to_string(o.max_decoded_bytes) + ")");
  }
  if (!o.try_recover_truncated && !cinfo.progressive_mode && !cinfo.arith_code) {
    // Sequential Huffman coding spends at least 2 bits on every 8x8 block (a DC code and an
    // end-of-block code): a header claiming more blocks than the bytes can hold is a lie or a
    // truncated file, found before the image is allocated.
    std::uint64_t blocks = 0;
    for (int i = 0; i < cinfo.num_components; ++i) {
      blocks +=
          std::uint64_t{cinfo.comp_info[i].width_in_blocks} * cinfo.comp_info[i].height_in_blocks;
    }
    if (blocks / 4 > bytes.size()) {
      const auto declared =
          std::to_string(cinfo.image_height) + "x" + std::to_string(cinfo.image_width);
      jpeg_destroy_decompress(&cinfo);
      throw invalid_argument("tf::image::decode_jpeg: the header declares a " + declared +
                             " image (" + std::to_string(blocks) + " blocks) but the " +
                             std::to_string(bytes.size()) +
                             " bytes cannot hold it: truncated JPEG data");
    }
  }
  // libjpeg's own buffers (a progressive file keeps every coefficient: 2 bytes per sample)
  // stay under a bound too; past it libjpeg reports an error instead of allocating.
  cinfo.mem->max_memory_to_use =
      static_cast<long>(std::min<std::size_t>(o.max_decoded_bytes, std::size_t{1} << 40) * 3);
  jpeg_start_decompress(&cinfo);
  const std::int64_t h = cinfo.output_height, w = cinfo.output_width, c = cinfo.output_components;
  out = Tensor<std::uint8_t, 3>::uninitialized({h, w, c});
  std::uint8_t* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
  while (cinfo.output_scanline < cinfo.output_height) {
    // several rows per call (libjpeg's natural unit) saves per-call overhead
    JSAMPROW rows[16];
    const int want =
        std::min<int>(16, static_cast<int>(cinfo.output_height - cinfo.output_scanline));
    for (int r = 0; r < want; ++r) {
      rows[r] = dst + (static_cast<std::int64_t>(cinfo.output_scanline) + r) * w * c;
    }
    if (jpeg_read_scanlines(&cinfo, rows, static_cast<JDIMENSION>(want)) == 0) {
      break;  // suspended: cannot happen with a memory source
    }
  }
  if (err.truncated && !o.try_recover_truncated) {
    jpeg_destroy_decompress(&cinfo);
    throw invalid_argument("tf::image::decode_jpeg: truncated JPEG data (" +
                           std::to_string(bytes.size()) + " bytes)");
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return out;
}

/// Encodes [height, width, 1 or 3] uint8 as a JPEG (`tf.io.encode_jpeg`).
inline Tensor<std::string, 0> encode_jpeg(const Tensor<std::uint8_t, 3>& image,
                                          EncodeJpegOptions o = {}) {
  detail::require_eager(image, "tf::image::encode_jpeg (EncodeJpeg)");
  image.require_value("tf::image::encode_jpeg");
  const std::int64_t h = image.dim(0), w = image.dim(1), c = image.dim(2);
  if (c != 1 && c != 3) {
    throw invalid_argument("tf::image::encode_jpeg: image must have 1 or 3 channels, shape " +
                           image.shape().to_string());
  }
  if (h <= 0 || w <= 0 || h > 65500 || w > 65500) {
    throw invalid_argument("tf::image::encode_jpeg: bad image size " + image.shape().to_string());
  }
  jpeg_compress_struct cinfo{};
  detail::jpeg_error_mgr_jmp err{};
  cinfo.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = detail::tapeflow_jpeg_error_exit;
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  if (setjmp(err.jump) != 0) {
    jpeg_destroy_compress(&cinfo);
    std::free(buf);
    throw internal(std::string("tf::image::encode_jpeg: ") + err.message);
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &buf, &size);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = static_cast<int>(c);
  cinfo.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, o.quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  const std::uint8_t* src = image.data();
  while (cinfo.next_scanline < cinfo.image_height) {
    auto* row = const_cast<JSAMPROW>(src + static_cast<std::int64_t>(cinfo.next_scanline) * w * c);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::string out(reinterpret_cast<const char*>(buf), size);
  jpeg_destroy_compress(&cinfo);
  std::free(buf);
  return Tensor<std::string, 0>(std::move(out));
}
#else   // TAPEFLOW_WITH_JPEG
// Compiled out: a template that fails only when called, so including the header stays fine.
template <class Contents>
Tensor<std::uint8_t, 3> decode_jpeg(const Contents& /*contents*/, DecodeJpegOptions /*o*/ = {}) {
  static_assert(sizeof(Contents) == 0,
                "tf::image::decode_jpeg needs libjpeg, compiled out here: define "
                "TAPEFLOW_WITH_JPEG=1 before including tapeflow and link -ljpeg");
  return {};
}
template <int NeedsLibjpeg = 0>
Tensor<std::string, 0> encode_jpeg(const Tensor<std::uint8_t, 3>& /*image*/,
                                   EncodeJpegOptions /*o*/ = {}) {
  static_assert(NeedsLibjpeg != 0,
                "tf::image::encode_jpeg needs libjpeg, compiled out here: define "
                "TAPEFLOW_WITH_JPEG=1 before including tapeflow and link -ljpeg");
  return {};
}
#endif  // TAPEFLOW_WITH_JPEG

}  // namespace image

namespace io {
using image::decode_jpeg;  // tf.io.decode_jpeg is tf.image.decode_jpeg
using image::encode_jpeg;
}  // namespace io
TAPEFLOW_END_NAMESPACE
