// `tf::io::TFRecordWriter`: writes records framed as TensorFlow does (docs/formats.md section 3):
// length (uint64 LE), masked CRC-32C of the length, payload, masked CRC-32C of the payload;
// optionally inside one zlib or gzip stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/crc32c.hpp>
#include <tapeflow/io/detail/byte_stream.hpp>
#include <tapeflow/io/tfrecord_options.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace io {

/// Bytes of framing around each record's payload (12 before, 4 after).
inline constexpr std::size_t tfrecord_header_size = 12;
/// Bytes of framing after each record's payload: its masked CRC-32C.
inline constexpr std::size_t tfrecord_footer_size = 4;

/// The 12-byte header of a record of `length` bytes: length LE + masked CRC of those 8 bytes.
inline void tfrecord_header(std::uint64_t length, char (&out)[tfrecord_header_size]) noexcept {
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((length >> (8 * i)) & 0xFF);
  }
  const std::uint32_t crc = masked_crc32c(out, 8);
  for (int i = 0; i < 4; ++i) {
    out[8 + i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
  }
}
/// The 4-byte footer of a record: masked CRC-32C of the payload, LE.
inline void tfrecord_footer(std::string_view payload, char (&out)[tfrecord_footer_size]) noexcept {
  const std::uint32_t crc = masked_crc32c(payload);
  for (int i = 0; i < 4; ++i) {
    out[i] = static_cast<char>((crc >> (8 * i)) & 0xFF);
  }
}
/// Appends one framed record to `out` (for writers that manage their own files, e.g. event
/// files).
inline void append_tfrecord(std::string& out, std::string_view payload) {
  char header[tfrecord_header_size];
  char footer[tfrecord_footer_size];
  tfrecord_header(payload.size(), header);
  tfrecord_footer(payload, footer);
  out.append(header, sizeof header);
  out.append(payload);
  out.append(footer, sizeof footer);
}

/// Writes a TFRecord file (TensorFlow: `tf.io.TFRecordWriter`).
///
///     tf::io::TFRecordWriter writer("train.tfrecords", {.compression =
///     tf::io::Compression::gzip}); writer.write(example.serialize());
///
/// The file is created (truncated) by the constructor and closed by `close()` or the
/// destructor; errors name the file (not_found for a missing directory, resource_exhausted
/// for a full disk, ...). A destructor cannot report errors: call `close()` to see them.
class TFRecordWriter {
 public:
  /// Creates (truncates) the file at `path`.
  explicit TFRecordWriter(const std::string& path, TFRecordOptions options = {})
      : path_(path), sink_(std::make_unique<detail::byte_stream::Sink>(path, options)) {}
  /// Takes over `other`'s open file; `other` is left closed.
  TFRecordWriter(TFRecordWriter&&) noexcept = default;
  /// Closes this writer's file (errors ignored), then takes over `other`'s.
  TFRecordWriter& operator=(TFRecordWriter&& other) noexcept {
    if (this != &other) {
      close_quietly();
      path_ = std::move(other.path_);
      sink_ = std::move(other.sink_);
    }
    return *this;
  }
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;
  ~TFRecordWriter() { close_quietly(); }

  /// Appends one record.
  void write(std::string_view record) {
    require_open("write");
    char header[tfrecord_header_size];
    char footer[tfrecord_footer_size];
    tfrecord_header(record.size(), header);
    tfrecord_footer(record, footer);
    sink_->write(header, sizeof header);
    sink_->write(record.data(), record.size());
    sink_->write(footer, sizeof footer);
  }
  /// Makes the records written so far readable by others (a zlib sync flush when compressed).
  void flush() {
    require_open("flush");
    sink_->flush();
  }
  /// Finishes the compressed stream and closes the file; later calls do nothing.
  void close() {
    if (sink_ && sink_->is_open()) {
      sink_->close();
    }
  }
  /// Whether records can still be written (false after close() or a move).
  [[nodiscard]] bool is_open() const noexcept { return sink_ && sink_->is_open(); }
  /// The file's path.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  void require_open(const char* what) const {
    if (!is_open()) {
      throw failed_precondition(std::string("tf::io::TFRecordWriter::") + what + ": '" + path_ +
                                "' is closed");
    }
  }
  void close_quietly() noexcept {
    try {
      close();
    } catch (...) {  // NOLINT(bugprone-empty-catch): destructors must not throw
    }
  }

  std::string path_;
  std::unique_ptr<detail::byte_stream::Sink> sink_;
};

}  // namespace io
TAPEFLOW_END_NAMESPACE
