// Byte sources and sinks behind the TFRecord reader and writer: a file, a memory buffer, and
// zlib/gzip (de)compression wrapped around either (docs/formats.md section 3.3), compiled only
// with TAPEFLOW_WITH_ZLIB (detail/macros.hpp).
// IWYU pragma: private, include <tapeflow/io/tfrecord.hpp>
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/errno_error.hpp>
#include <tapeflow/io/tfrecord_options.hpp>

#if TAPEFLOW_WITH_ZLIB
#include <zlib.h>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::byte_stream {

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

inline FilePtr open_file(const std::string& path, const char* mode, const char* what) {
  errno = 0;
  FilePtr f(std::fopen(path.c_str(), mode));
  if (!f) {
    throw_errno(errno != 0 ? errno : EIO, what, path);
  }
  return f;
}

/// Something bytes are read from; `read` returns 0 only at the end.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::size_t read(char* dst, std::size_t n) = 0;
};

class FileSource final : public Source {
 public:
  explicit FileSource(std::string path)
      : path_(std::move(path)), file_(open_file(path_, "rb", "cannot open")) {
    // We buffer ourselves; a second stdio buffer would only copy.
    std::setvbuf(file_.get(), nullptr, _IONBF, 0);
  }
  std::size_t read(char* dst, std::size_t n) override {
    const std::size_t got = std::fread(dst, 1, n, file_.get());
    if (got < n && std::ferror(file_.get()) != 0) {
      throw_errno(errno != 0 ? errno : EIO, "read error in", path_);
    }
    return got;
  }

 private:
  std::string path_;
  FilePtr file_;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::string_view data) noexcept : data_(data) {}
  std::size_t read(char* dst, std::size_t n) override {
    const std::size_t k = std::min(n, data_.size() - pos_);
    std::memcpy(dst, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

#if TAPEFLOW_WITH_ZLIB
inline int window_bits(io::Compression c) noexcept {
  return c == io::Compression::gzip ? 15 + 16 : 15;
}

/// Decompresses a zlib or gzip stream read from `inner`. Concatenated gzip members are read
/// one after the other, as zcat does.
class InflateSource final : public Source {
 public:
  InflateSource(std::unique_ptr<Source> inner, io::Compression c, std::size_t buffer_size,
                std::string name)
      : inner_(std::move(inner)),
        kind_(c),
        in_(std::max<std::size_t>(buffer_size, 64)),
        name_(std::move(name)) {
    if (inflateInit2(&z_, window_bits(c)) != Z_OK) {
      throw resource_exhausted(name_ + ": zlib inflateInit2 failed");
    }
  }
  InflateSource(const InflateSource&) = delete;
  InflateSource& operator=(const InflateSource&) = delete;
  ~InflateSource() override { inflateEnd(&z_); }

  std::size_t read(char* dst, std::size_t n) override {
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(n, 1U << 30));
    const uInt want = z_.avail_out;
    while (z_.avail_out == want) {
      if (z_.avail_in == 0 && !inner_eof_) {
        const std::size_t got = inner_->read(reinterpret_cast<char*>(in_.data()), in_.size());
        consumed_ += got;
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(got);
        inner_eof_ = got == 0;
      }
      if (z_.avail_in == 0 && inner_eof_) {
        if (!stream_ended_) {
          throw data_loss(name_ + ": truncated " + std::string(io::compression_name(kind_)) +
                          " stream (compressed input ends at byte offset " +
                          std::to_string(consumed_) + ")");
        }
        break;
      }
      if (stream_ended_) {
        // More input after a complete stream: another gzip member.
        if (inflateReset(&z_) != Z_OK) {
          throw internal(name_ + ": zlib inflateReset failed");
        }
        stream_ended_ = false;
      }
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        stream_ended_ = true;
      } else if (rc == Z_BUF_ERROR) {
        continue;  // needs more input; loop reads it
      } else if (rc != Z_OK) {
        throw data_loss(name_ + ": corrupt " + std::string(io::compression_name(kind_)) +
                        " stream near compressed byte offset " +
                        std::to_string(consumed_ - z_.avail_in) +
                        " (zlib: " + (z_.msg != nullptr ? z_.msg : "error") + ")");
      }
    }
    return want - z_.avail_out;
  }

 private:
  std::unique_ptr<Source> inner_;
  io::Compression kind_;
  std::vector<Bytef> in_;
  std::string name_;
  z_stream z_{};
  std::uint64_t consumed_ = 0;
  bool inner_eof_ = false;
  bool stream_ended_ = false;
};
#endif  // TAPEFLOW_WITH_ZLIB

/// Without zlib a compressed stream cannot be read or written. Naming Compression::zlib or
/// ::gzip is then a compile error, so only a value cast from an integer gets here.
[[noreturn]] inline void throw_no_zlib(const std::string& what) {
  throw unimplemented(what +
                      ": compressed TFRecords need zlib, compiled out here: define "
                      "TAPEFLOW_WITH_ZLIB=1 before including tapeflow and link -lz");
}

#if !TAPEFLOW_WITH_ZLIB
class InflateSource final : public Source {
 public:
  InflateSource(std::unique_ptr<Source> /*inner*/, io::Compression /*c*/,
                std::size_t /*buffer_size*/, const std::string& name) {
    throw_no_zlib(name);
  }
  std::size_t read(char* /*dst*/, std::size_t /*n*/) override { return 0; }
};
#endif

/// A file written through an optional deflate stream, with TensorFlow's zlib settings
/// (level -1 = 6, memLevel 9, default strategy).
class Sink {
 public:
  Sink(const std::string& path, const io::TFRecordOptions& options)
      : path_(path),
        file_(open_file(path, "wb", "cannot create")),
        compression_(options.compression) {
    if (compression_ != io::Compression::none) {
#if !TAPEFLOW_WITH_ZLIB
      throw_no_zlib("tf::io::TFRecordWriter: '" + path + "'");
#else
      if (deflateInit2(&z_, options.compression_level, Z_DEFLATED, window_bits(compression_), 9,
                       Z_DEFAULT_STRATEGY) != Z_OK) {
        throw invalid_argument("tf::io::TFRecordWriter: zlib deflateInit2 failed for '" + path +
                               "' (compression_level " + std::to_string(options.compression_level) +
                               ")");
      }
      deflating_ = true;
      out_.resize(std::max<std::size_t>(options.buffer_size, 64));
#endif
    } else {
      // Must precede any I/O on the stream; a null buffer lets stdio allocate it.
      std::setvbuf(file_.get(), nullptr, _IOFBF, std::max<std::size_t>(options.buffer_size, 64));
    }
  }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;
  ~Sink() {
#if TAPEFLOW_WITH_ZLIB
    if (deflating_) {
      deflateEnd(&z_);
    }
#endif
  }

  void write(const char* p, std::size_t n) {
    if (!deflating_) {
      put(p, n);
      return;
    }
#if TAPEFLOW_WITH_ZLIB
    while (n > 0) {  // avail_in is a 32-bit uInt
      const std::size_t chunk = std::min<std::size_t>(n, std::size_t{1} << 30);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
      z_.avail_in = static_cast<uInt>(chunk);
      pump(Z_NO_FLUSH);
      p += chunk;
      n -= chunk;
    }
#endif
  }
  /// Pushes everything written so far to the OS (a sync flush for compressed streams).
  void flush() {
#if TAPEFLOW_WITH_ZLIB
    if (deflating_) {
      pump(Z_SYNC_FLUSH);
    }
#endif
    if (std::fflush(file_.get()) != 0) {
      throw_errno(errno != 0 ? errno : EIO, "cannot flush", path_);
    }
  }
  void close() {
    if (!file_) {
      return;
    }
#if TAPEFLOW_WITH_ZLIB
    if (deflating_) {
      pump(Z_FINISH);
      deflateEnd(&z_);
      deflating_ = false;
    }
#endif
    std::FILE* f = file_.release();
    if (std::fclose(f) != 0) {
      throw_errno(errno != 0 ? errno : EIO, "cannot close", path_);
    }
  }
  [[nodiscard]] bool is_open() const noexcept { return file_ != nullptr; }

 private:
  void put(const char* p, std::size_t n) {
    if (n != 0 && std::fwrite(p, 1, n, file_.get()) != n) {
      throw_errno(errno != 0 ? errno : EIO, "cannot write to", path_);
    }
  }
#if TAPEFLOW_WITH_ZLIB
  void pump(int flush) {
    for (;;) {
      z_.next_out = out_.data();
      z_.avail_out = static_cast<uInt>(out_.size());
      const int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) {
        throw internal("tf::io::TFRecordWriter: zlib deflate failed for '" + path_ + "'");
      }
      put(reinterpret_cast<const char*>(out_.data()), out_.size() - z_.avail_out);
      if (flush == Z_FINISH ? rc == Z_STREAM_END : (z_.avail_in == 0 && z_.avail_out != 0)) {
        return;
      }
    }
  }
#endif

  std::string path_;
  FilePtr file_;
  io::Compression compression_;
  bool deflating_ = false;  // always false without zlib
#if TAPEFLOW_WITH_ZLIB
  z_stream z_{};
  std::vector<Bytef> out_;
#endif
};

}  // namespace detail::byte_stream
TAPEFLOW_END_NAMESPACE
