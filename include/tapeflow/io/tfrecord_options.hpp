// Compression choice and options shared by TFRecordWriter, TFRecordReader and
// data::TFRecordDataset (TensorFlow: `tf.io.TFRecordOptions`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace io {

#if TAPEFLOW_WITH_ZLIB
#define TAPEFLOW_DETAIL_NEEDS_ZLIB
#else
#define TAPEFLOW_DETAIL_NEEDS_ZLIB                                                             \
  TAPEFLOW_DETAIL_UNAVAILABLE(                                                                 \
      "compressed TFRecords need zlib, compiled out here: define TAPEFLOW_WITH_ZLIB=1 before " \
      "including tapeflow and link -lz")
#endif

/// How the whole TFRecord byte stream is compressed (TensorFlow's `compression_type`:
/// "", "ZLIB", "GZIP"). Records inside keep their framing; nothing is compressed per record.
/// With TAPEFLOW_WITH_ZLIB=0 (the single header's default) naming `zlib` or `gzip` is a
/// compile error.
enum class Compression {
  none,                             ///< ""
  zlib TAPEFLOW_DETAIL_NEEDS_ZLIB,  ///< "ZLIB": RFC 1950 stream
  gzip TAPEFLOW_DETAIL_NEEDS_ZLIB,  ///< "GZIP": RFC 1952 stream
};
#undef TAPEFLOW_DETAIL_NEEDS_ZLIB

/// TensorFlow's name for a compression type: "", "ZLIB" or "GZIP".
[[nodiscard]] constexpr std::string_view compression_name(Compression c) noexcept {
#if TAPEFLOW_WITH_ZLIB
  switch (c) {
    case Compression::zlib:
      return "ZLIB";
    case Compression::gzip:
      return "GZIP";
    case Compression::none:
      break;
  }
#else
  static_cast<void>(c);  // only `none` can be named without zlib
#endif
  return "";
}

/// Parses TensorFlow's `compression_type` string ("", "NONE", "ZLIB", "GZIP").
[[nodiscard]] inline Compression compression_type(std::string_view name) {
  if (name.empty() || name == "NONE") {
    return Compression::none;
  }
  if (name == "ZLIB" || name == "GZIP") {
#if TAPEFLOW_WITH_ZLIB
    return name == "ZLIB" ? Compression::zlib : Compression::gzip;
#else
    throw unimplemented("tf::io::compression_type: '" + std::string(name) +
                        "' needs zlib, compiled out here: define TAPEFLOW_WITH_ZLIB=1 before "
                        "including tapeflow and link -lz");
#endif
  }
  throw invalid_argument("tf::io::compression_type: unsupported compression type '" +
                         std::string(name) + "' (expected \"\", \"ZLIB\" or \"GZIP\")");
}

/// Options of `TFRecordWriter` (TensorFlow: `tf.io.TFRecordOptions`).
struct TFRecordOptions {
  Compression compression = Compression::none;  ///< ZLIB/GZIP stream around the records, or none
  /// zlib level 0..9, or -1 for zlib's default (6), as TensorFlow.
  int compression_level = -1;
  /// Bytes buffered before compressing/writing (TensorFlow uses 256 KiB).
  std::size_t buffer_size = 256 * 1024;
};

/// Options of `TFRecordReader`.
struct TFRecordReaderOptions {
  Compression compression = Compression::none;  ///< must match how the file was written
  /// Read buffer in bytes (TensorFlow's TFRecordDataset default: 256 KiB).
  std::size_t buffer_size = 256 * 1024;
  /// Skip corrupted records (bad CRC, truncated tail) instead of raising data_loss; the count
  /// is `TFRecordReader::corrupt_records_skipped()`. After a corrupt length field the reader
  /// resynchronises on the next position whose length CRC checks out.
  bool skip_corrupt = false;
  /// The longest record read (2 GiB, protobuf's own message limit, by default). A longer one
  /// raises resource_exhausted once that many of its bytes have arrived: a ZLIB/GZIP stream
  /// expanding to an endless record cannot fill memory. (A length larger than the bytes left
  /// in an uncompressed file is data_loss as before: only bytes present are ever buffered.)
  std::uint64_t max_record_bytes = std::uint64_t{1} << 31;
};

}  // namespace io
TAPEFLOW_END_NAMESPACE
