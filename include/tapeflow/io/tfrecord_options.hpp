// Compression choice and options shared by TFRecordWriter, TFRecordReader and
// data::TFRecordDataset (TensorFlow: `tf.io.TFRecordOptions`).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace io {

/// How the whole TFRecord byte stream is compressed (TensorFlow's `compression_type`:
/// "", "ZLIB", "GZIP"). Records inside keep their framing; nothing is compressed per record.
enum class Compression {
  none,  ///< ""
  zlib,  ///< "ZLIB": RFC 1950 stream
  gzip,  ///< "GZIP": RFC 1952 stream
};

/// TensorFlow's name for a compression type: "", "ZLIB" or "GZIP".
[[nodiscard]] constexpr std::string_view compression_name(Compression c) noexcept {
  switch (c) {
    case Compression::zlib:
      return "ZLIB";
    case Compression::gzip:
      return "GZIP";
    case Compression::none:
      break;
  }
  return "";
}

/// Parses TensorFlow's `compression_type` string ("", "NONE", "ZLIB", "GZIP").
[[nodiscard]] inline Compression compression_type(std::string_view name) {
  if (name.empty() || name == "NONE") {
    return Compression::none;
  }
  if (name == "ZLIB") {
    return Compression::zlib;
  }
  if (name == "GZIP") {
    return Compression::gzip;
  }
  throw invalid_argument("tf::io::compression_type: unsupported compression type '" +
                         std::string(name) + "' (expected \"\", \"ZLIB\" or \"GZIP\")");
}

/// Options of `TFRecordWriter` (TensorFlow: `tf.io.TFRecordOptions`).
struct TFRecordOptions {
  Compression compression = Compression::none;
  /// zlib level 0..9, or -1 for zlib's default (6), as TensorFlow.
  int compression_level = -1;
  /// Bytes buffered before compressing/writing (TensorFlow uses 256 KiB).
  std::size_t buffer_size = 256 * 1024;
};

/// Options of `TFRecordReader`.
struct TFRecordReaderOptions {
  Compression compression = Compression::none;
  /// Read buffer in bytes (TensorFlow's TFRecordDataset default: 256 KiB).
  std::size_t buffer_size = 256 * 1024;
  /// Skip corrupted records (bad CRC, truncated tail) instead of raising data_loss; the count
  /// is `TFRecordReader::corrupt_records_skipped()`. After a corrupt length field the reader
  /// resynchronises on the next position whose length CRC checks out.
  bool skip_corrupt = false;
};

}  // namespace io
TAPEFLOW_END_NAMESPACE
