// `tf::io::TFRecordReader`: reads and checks the records of one TFRecord file (or a buffer),
// the engine under `tf::data::TFRecordDataset`.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/crc32c.hpp>
#include <tapeflow/io/detail/byte_stream.hpp>
#include <tapeflow/io/tfrecord_options.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace io {

/// Reads records one by one, checking both CRCs.
///
///     tf::io::TFRecordReader reader("train.tfrecords");
///     std::string record;
///     while (reader.read(record)) { ... }
///
/// `read_view` hands out the record in place instead (no copy; valid until the next read).
/// A bad CRC raises `data_loss("<file>: corrupted record at byte offset N (...)")`, a record
/// cut short raises `data_loss("<file>: truncated record at byte offset N")`; N is the offset
/// of the record's first byte (in the decompressed stream for ZLIB/GZIP files). With
/// `.skip_corrupt = true` such records are skipped and counted instead.
class TFRecordReader {
 public:
  /// Opens the file at `path`; throws not_found if it does not exist (failed_precondition
  /// when it may not be read).
  explicit TFRecordReader(const std::string& path, TFRecordReaderOptions options = {})
      : TFRecordReader(std::make_unique<detail::byte_stream::FileSource>(path), path, options) {}

  /// Reads records from memory (`data` must outlive the reader); `name` appears in errors.
  [[nodiscard]] static TFRecordReader from_memory(std::string_view data,
                                                  TFRecordReaderOptions options = {},
                                                  std::string name = "<memory>") {
    return TFRecordReader(std::make_unique<detail::byte_stream::MemorySource>(data),
                          std::move(name), options);
  }
  /// A temporary string would die before the reader reads it: keep the bytes in a variable.
  static TFRecordReader from_memory(std::string&& data, TFRecordReaderOptions options = {},
                                    std::string name = "<memory>") = delete;

  /// Reads the next record into `record`; false at the end of the file. A string reused from
  /// call to call keeps its capacity, so reading allocates only when a record is longer than
  /// any before it.
  bool read(std::string& record) { return read_record(&record, nullptr); }

  /// Reads the next record without copying it: `record` views the record's bytes inside the
  /// reader's buffer (their CRC checked in place). The view stays valid until the next call
  /// that reads or moves the reader (`read`, `read_view`, `next`, `next_view`, `skip_to`);
  /// false at the end of the file. The fastest way through a file:
  ///
  ///     std::string_view record;
  ///     while (reader.read_view(record)) { consume(record); }
  bool read_view(std::string_view& record) { return read_record(nullptr, &record); }

  /// The next record, or nothing at the end.
  [[nodiscard]] std::optional<std::string> next() {
    std::string r;
    if (!read(r)) {
      return std::nullopt;
    }
    return r;
  }
  /// The next record as a view (see `read_view` for how long it stays valid), or nothing at
  /// the end.
  [[nodiscard]] std::optional<std::string_view> next_view() {
    std::string_view r;
    if (!read_view(r)) {
      return std::nullopt;
    }
    return r;
  }

  /// Byte offset of the next record in the (decompressed) stream.
  [[nodiscard]] std::uint64_t offset() const noexcept { return buf_offset_ + pos_; }
  /// Records returned so far.
  [[nodiscard]] std::int64_t records_read() const noexcept { return records_; }
  /// Corrupt records (or runs of corrupt bytes) skipped with `.skip_corrupt`.
  [[nodiscard]] std::int64_t corrupt_records_skipped() const noexcept { return skipped_; }
  /// The file's path (or from_memory's `name`), as errors show it.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  /// Discards bytes up to stream offset `target` (>= offset()); used to restore a position.
  void skip_to(std::uint64_t target) {
    while (offset() < target) {
      const std::size_t have = fill(1);
      if (have == 0) {
        throw data_loss(name_ + ": cannot restore position " + std::to_string(target) +
                        ": the stream ends at byte offset " + std::to_string(offset()));
      }
      pos_ += static_cast<std::size_t>(std::min<std::uint64_t>(have, target - offset()));
    }
  }

 private:
  static constexpr std::size_t header_size = 12;
  static constexpr std::size_t footer_size = 4;
  static constexpr std::size_t align = 64;

  TFRecordReader(std::unique_ptr<detail::byte_stream::Source> source, std::string name,
                 const TFRecordReaderOptions& options)
      : name_(std::move(name)),
        options_(options),
        buffer_size_(std::max<std::size_t>(options.buffer_size, align)),
        small_(std::min<std::size_t>(buffer_size_, 32 * 1024)),
        buf_(buffer_size_ + 3 * align),
        // Aligned start; room for buffer_size_ + align bytes after any start offset below
        // `align` (a whole small record with its footer fits).
        data_(buf_.data() + (align - reinterpret_cast<std::uintptr_t>(buf_.data()) % align)),
        cap_(buffer_size_ + 2 * align) {
    if (options.compression == Compression::none) {
      source_ = std::move(source);
    } else {
      source_ = std::make_unique<detail::byte_stream::InflateSource>(
          std::move(source), options.compression, options.buffer_size, name_);
    }
  }

  // Little-endian loads: one instruction each (GCC does not merge the byte-wise loop).
  static std::uint64_t load64(const char* p) noexcept {
    std::uint64_t v = 0;
    std::memcpy(&v, p, 8);
    if constexpr (std::endian::native == std::endian::big) {
      v = byteswap64(v);
    }
    return v;
  }
  static std::uint32_t load32(const char* p) noexcept {
    std::uint32_t v = 0;
    std::memcpy(&v, p, 4);
    if constexpr (std::endian::native == std::endian::big) {
      v = static_cast<std::uint32_t>(byteswap64(v) >> 32);
    }
    return v;
  }
  static constexpr std::uint64_t byteswap64(std::uint64_t v) noexcept {
    std::uint64_t r = 0;
    for (int i = 0; i < 8; ++i) {
      r = (r << 8) | ((v >> (8 * i)) & 0xFF);
    }
    return r;
  }
  std::string stream_note() const {
    return options_.compression == Compression::none
               ? std::string()
               : " of the decompressed " + std::string(compression_name(options_.compression)) +
                     " stream";
  }
  bool truncated(std::uint64_t at, bool resyncing) {
    pos_ = end_;  // nothing usable follows
    if (!options_.skip_corrupt) {
      throw data_loss(name_ + ": truncated record at byte offset " + std::to_string(at) +
                      stream_note());
    }
    if (!resyncing) {
      ++skipped_;
    }
    return false;
  }

  /// One record into `*copy` (a copy) or `*view` (a view of the buffer, or of `spill_` for a
  /// record too large for the buffer); exactly one of the two is set.
  bool read_record(std::string* copy, std::string_view* view) {
    bool resyncing = false;
    for (;;) {
      const std::uint64_t at = offset();
      const std::size_t have = fill(header_size);
      if (have == 0) {
        return false;
      }
      if (have < header_size) {
        return truncated(at, resyncing);
      }
      const char* h = data_ + pos_;
      const std::uint64_t length = load64(h);
      if (mask_crc32c(detail::crc32c_impl::crc32c_u64(length)) != load32(h + 8)) {
        if (!options_.skip_corrupt) {
          throw data_loss(name_ + ": corrupted record at byte offset " + std::to_string(at) +
                          " (length CRC mismatch)" + stream_note());
        }
        // Resynchronise: try the next byte as a record start; count the run once.
        if (!resyncing) {
          ++skipped_;
          resyncing = true;
        }
        ++pos_;
        large_ = false;  // scanning byte by byte: full buffer reads again
        continue;
      }
      pos_ += header_size;
      // After a large record, read no further than the next header (see fill()).
      large_ = length > small_;
      std::uint32_t data_crc = 0;
      std::uint32_t stored = 0;
      const std::size_t buffered = end_ - pos_;
      if (length <= small_ || (buffered >= footer_size && length <= buffered - footer_size)) {
        // The whole record and its footer in the buffer: CRC in place (view), or copied out
        // with the CRC computed on the way (copy).
        const auto n = static_cast<std::size_t>(length);
        if (fill(n + footer_size) < n + footer_size) {
          return truncated(at, resyncing);
        }
        require_within_ceiling(n, length, at);
        const char* src = data_ + pos_;
        if (view != nullptr) {
          data_crc = crc32c(src, n);
          *view = std::string_view(src, n);
        } else {
          data_crc = copy_out(*copy, src, n);
        }
        stored = load32(src + n);
        pos_ += n + footer_size;
      } else {
        std::string& into = view != nullptr ? spill_ : *copy;
        if (!read_large(into, length, at, data_crc) || fill(footer_size) < footer_size) {
          return truncated(at, resyncing);
        }
        stored = load32(data_ + pos_);
        pos_ += footer_size;
        if (view != nullptr) {
          *view = spill_;
        }
      }
      if (mask_crc32c(data_crc) != stored) {
        if (!options_.skip_corrupt) {
          throw data_loss(name_ + ": corrupted record at byte offset " + std::to_string(at) +
                          " (data CRC mismatch, length " + std::to_string(length) + ")" +
                          stream_note());
        }
        if (!resyncing) {
          ++skipped_;
        }
        resyncing = false;
        continue;
      }
      ++records_;
      return true;
    }
  }

  /// Makes at least `need` bytes available at pos_ if the stream has them; returns the count
  /// available (less than `need` only at the end of the stream). `need` <= buffer_size_ + 64.
  std::size_t fill(std::size_t need) {
    if (end_ - pos_ >= need) {
      return end_ - pos_;
    }
    // Keep the byte at stream offset o at a buffer address congruent to o modulo 64, so the
    // kernel's copy from the page cache has source and destination equally aligned.
    const auto start = static_cast<std::size_t>(offset() % align);
    if (pos_ != start) {
      const std::size_t rem = end_ - pos_;
      std::memmove(data_ + start, data_ + pos_, rem);
      buf_offset_ = offset() - start;
      pos_ = start;
      end_ = start + rem;
    }
    while (end_ - pos_ < need && !eof_) {
      // After a large record, read no further than the next header: if its record is large
      // too, the payload then goes straight from the source into the record, never copied.
      const std::size_t want =
          large_ ? std::min(cap_ - end_, need - (end_ - pos_) + header_size) : cap_ - end_;
      const std::size_t got = source_->read(data_ + end_, want);
      if (got == 0) {
        eof_ = true;
      }
      end_ += got;
    }
    return end_ - pos_;
  }

  /// Makes `record` at least `n` bytes long. A reused record keeps its bytes (they are
  /// overwritten), so only growth is zero-filled.
  static char* ensure_size(std::string& record, std::size_t n) {
    if (record.size() < n) {
      record.resize(n);
    }
    return record.data();
  }

  /// Copies `n` buffered bytes into `record`; returns their CRC-32C.
  static std::uint32_t copy_out(std::string& record, const char* src, std::size_t n) {
    if (record.size() >= n) {  // a reused record: copy into place, CRC on the way
      const std::uint32_t crc = crc32c_extend_copy(0, record.data(), src, n);
      record.resize(n);
      return crc;
    }
    // A new one: append (no zero-fill first), then CRC the copy while it is hot.
    record.clear();
    record.append(src, n);
    return crc32c(record);
  }

  /// Raises resource_exhausted before more than max_record_bytes of one record are buffered.
  void require_within_ceiling(std::uint64_t buffered, std::uint64_t length,
                              std::uint64_t at) const {
    if (buffered > options_.max_record_bytes) {
      throw resource_exhausted(name_ + ": record at byte offset " + std::to_string(at) +
                               stream_note() + " is " + std::to_string(length) +
                               " bytes long, more than max_record_bytes (" +
                               std::to_string(options_.max_record_bytes) + ")");
    }
  }

  /// Reads `length` payload bytes (more than fit the buffer) into `record`: whatever is
  /// buffered first, then large reads straight into the record. Their CRC-32C goes to `crc`.
  /// Memory grows with the bytes actually present (within a factor of two), so a corrupt but
  /// CRC-valid huge length cannot exhaust memory, and stops at max_record_bytes (a
  /// decompression bomb).
  bool read_large(std::string& record, std::uint64_t length, std::uint64_t at, std::uint32_t& crc) {
    auto filled = static_cast<std::size_t>(std::min<std::uint64_t>(end_ - pos_, length));
    require_within_ceiling(filled, length, at);
    crc = crc32c_extend_copy(0, ensure_size(record, filled), data_ + pos_, filled);
    pos_ += filled;
    while (filled < length) {
      if (eof_) {
        return false;
      }
      // Grow geometrically (1 MiB, then what is already read, at most 16 MiB per read): a
      // length that lies costs at most about twice the bytes that actually follow it.
      const std::uint64_t step =
          std::clamp<std::uint64_t>(filled, std::uint64_t{1} << 20, std::uint64_t{1} << 24);
      const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(length - filled, step));
      require_within_ceiling(filled + chunk, length, at);
      char* dst = ensure_size(record, filled + chunk) + filled;
      const std::size_t got = source_->read(dst, chunk);
      crc = crc32c_extend(crc, dst, got);  // just read: still in cache
      filled += got;
      buf_offset_ += got;
      if (got == 0) {
        eof_ = true;
      }
    }
    record.resize(filled);
    return true;
  }

  std::string name_;
  TFRecordReaderOptions options_;
  std::unique_ptr<detail::byte_stream::Source> source_;
  std::size_t buffer_size_;
  std::size_t small_;  // records up to this size always go through the buffer
  std::vector<char> buf_;
  char* data_;       // 64-byte aligned, inside buf_ (moves with it)
  std::size_t cap_;  // usable bytes from data_
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  std::uint64_t buf_offset_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;
  bool large_ = false;  // the last record was larger than small_
  std::string spill_;   // read_view's copy of a record larger than the buffer
  std::int64_t records_ = 0;
  std::int64_t skipped_ = 0;
};

}  // namespace io
TAPEFLOW_END_NAMESPACE
