// tf.keras.datasets.mnist / fashion_mnist: the IDX gzip files as uint8 tensors.
//
// The files are found as `tf::keras::utils::get_file` finds a dataset (keras/utils/get_file.hpp:
// the `path` argument, else $TAPEFLOW_DATASETS, the build-time TAPEFLOW_DEFAULT_DATASETS_DIR,
// Keras' cache, data/ or shared/data/ in a parent directory), in a folder named after the
// dataset ("mnist", "fashion-mnist"). Keras downloads them; tapeflow never downloads.
// With TAPEFLOW_WITH_ZLIB=0 (detail/macros.hpp) calling load_data is a compile error naming it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/utils/get_file.hpp>

#if TAPEFLOW_WITH_ZLIB
#include <zlib.h>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace datasets {

/// The four arrays `load_data` returns: `auto [x_train, y_train, x_test, y_test] = ...`.
struct ImageDataset {
  Tensor<std::uint8_t, 3> x_train;  ///< [60000, 28, 28], pixels 0..255
  Tensor<std::uint8_t, 1> y_train;  ///< [60000], labels 0..9
  Tensor<std::uint8_t, 3> x_test;   ///< [10000, 28, 28]
  Tensor<std::uint8_t, 1> y_test;   ///< [10000]
};

#if TAPEFLOW_WITH_ZLIB
namespace idx {

/// The most bytes an IDX file may decompress to (MNIST's largest is 47 MB): a corrupt or
/// hostile .gz stops with resource_exhausted here instead of filling memory.
inline constexpr std::size_t max_decompressed_bytes = std::size_t{1} << 30;

/// Decompresses gzip bytes (one or more members) read from `name`; data_loss on corrupt data,
/// resource_exhausted past `max_bytes`.
inline std::vector<std::uint8_t> gunzip(std::span<const std::uint8_t> bytes,
                                        const std::string& name,
                                        std::size_t max_bytes = max_decompressed_bytes) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    throw resource_exhausted("tf::keras::datasets: " + name + ": zlib inflateInit2 failed");
  }
  std::vector<std::uint8_t> out;
  std::array<std::uint8_t, 1 << 16> chunk{};
  // zlib takes uInt counts: feed the input in pieces that fit one
  std::size_t fed = 0;
  int rc = Z_OK;
  auto fail = [&](auto make, const std::string& what) {
    const std::size_t at = fed - z.avail_in;
    inflateEnd(&z);
    throw make("tf::keras::datasets: " + name + ": " + what + " at compressed byte offset " +
               std::to_string(at));
  };
  while (true) {
    if (z.avail_in == 0 && fed < bytes.size()) {
      const std::size_t n = std::min<std::size_t>(bytes.size() - fed, 1u << 30);
      z.next_in = const_cast<Bytef*>(bytes.data() + fed);
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    z.next_out = chunk.data();
    z.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&z, Z_NO_FLUSH);
    const std::size_t produced = chunk.size() - z.avail_out;
    if (rc != Z_OK && rc != Z_STREAM_END) {
      if (rc == Z_BUF_ERROR) {  // no progress possible: the input ran out mid-stream
        fail([](std::string m) { return data_loss(m); }, "gzip data ends early");
      }
      fail([](std::string m) { return data_loss(m); },
           std::string("gzip error: ") + (z.msg != nullptr ? z.msg : "corrupt data"));
    }
    if (out.size() + produced > max_bytes) {
      fail([](std::string m) { return resource_exhausted(m); },
           "decompresses to more than " + std::to_string(max_bytes) + " bytes");
    }
    out.insert(out.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(produced));
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0 && fed == bytes.size()) {
        break;
      }
      inflateReset(&z);  // another gzip member follows, as gzread reads it
    }
  }
  inflateEnd(&z);
  return out;
}

/// Decompresses a whole gzip file (throws not_found / data_loss naming the file).
inline std::vector<std::uint8_t> read_gzip(const std::filesystem::path& file,
                                           std::size_t max_bytes = max_decompressed_bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw not_found("tf::keras::datasets: cannot open " + file.string());
  }
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  return gunzip(bytes, file.string(), max_bytes);
}

inline std::uint32_t be32(std::span<const std::uint8_t> b, std::size_t at) {
  return (std::uint32_t(b[at]) << 24) | (std::uint32_t(b[at + 1]) << 16) |
         (std::uint32_t(b[at + 2]) << 8) | std::uint32_t(b[at + 3]);
}

/// Decodes IDX uint8 image bytes (magic 2051) read from `name` as [count, rows, cols].
inline Tensor<std::uint8_t, 3> decode_images(std::span<const std::uint8_t> b,
                                             const std::string& name) {
  if (b.size() < 16 || be32(b, 0) != 2051) {
    throw data_loss("tf::keras::datasets: " + name +
                    " is not an IDX image file (magic 2051 expected at byte 0)");
  }
  const std::uint64_t n = be32(b, 4), rows = be32(b, 8), cols = be32(b, 12);
  // Each dimension is below 2^32, so any two multiply without overflow; the shape must also
  // keep every product (element count, strides) within int64 even when a dimension is 0.
  const std::uint64_t pixels = b.size() - 16, limit = std::numeric_limits<std::int64_t>::max();
  const bool representable =
      n * rows <= limit && rows * cols <= limit && (n * rows == 0 || cols <= limit / (n * rows));
  if (!representable || n * rows * cols != pixels) {
    throw data_loss("tf::keras::datasets: " + name + ": header says " + std::to_string(n) + "x" +
                    std::to_string(rows) + "x" + std::to_string(cols) + " pixels but " +
                    std::to_string(pixels) + " bytes follow byte 16");
  }
  auto t = Tensor<std::uint8_t, 3>::uninitialized(
      {std::int64_t(n), std::int64_t(rows), std::int64_t(cols)});
  std::copy(b.begin() + 16, b.end(), t.mutable_data());
  return t;
}

/// Decodes IDX uint8 label bytes (magic 2049) read from `name` as [count].
inline Tensor<std::uint8_t, 1> decode_labels(std::span<const std::uint8_t> b,
                                             const std::string& name) {
  if (b.size() < 8 || be32(b, 0) != 2049) {
    throw data_loss("tf::keras::datasets: " + name +
                    " is not an IDX label file (magic 2049 expected at byte 0)");
  }
  const std::uint64_t n = be32(b, 4);
  if (b.size() - 8 != n) {
    throw data_loss("tf::keras::datasets: " + name + ": header says " + std::to_string(n) +
                    " labels but " + std::to_string(b.size() - 8) + " bytes follow byte 8");
  }
  auto t = Tensor<std::uint8_t, 1>::uninitialized({std::int64_t(n)});
  std::copy(b.begin() + 8, b.end(), t.mutable_data());
  return t;
}

/// Reads an IDX uint8 image file (magic 2051) as [count, rows, cols].
inline Tensor<std::uint8_t, 3> read_images(const std::filesystem::path& file) {
  return decode_images(read_gzip(file), file.string());
}

/// Reads an IDX uint8 label file (magic 2049) as [count].
inline Tensor<std::uint8_t, 1> read_labels(const std::filesystem::path& file) {
  return decode_labels(read_gzip(file), file.string());
}

/// The directory holding dataset `name`'s IDX files: the one with
/// `<name>/train-images-idx3-ubyte.gz` found by `utils::get_file` (so `path` may be that
/// directory itself or a datasets folder holding `<name>/`). Throws not_found listing every
/// path tried.
inline std::filesystem::path find_dir(const std::string& name,
                                      const std::optional<std::filesystem::path>& path) {
  return utils::impl::find_file(std::filesystem::path(name) / "train-images-idx3-ubyte.gz",
                                {.cache_dir = path}, "tf::keras::datasets::" + name + "::load_data")
      .parent_path();
}

/// Loads the four IDX files of an MNIST-format dataset directory.
inline ImageDataset load(const std::string& name,
                         const std::optional<std::filesystem::path>& path) {
  const auto dir = find_dir(name, path);
  ImageDataset d;
  d.x_train = read_images(dir / "train-images-idx3-ubyte.gz");
  d.y_train = read_labels(dir / "train-labels-idx1-ubyte.gz");
  d.x_test = read_images(dir / "t10k-images-idx3-ubyte.gz");
  d.y_test = read_labels(dir / "t10k-labels-idx1-ubyte.gz");
  if (d.x_train.dim(0) != d.y_train.dim(0) || d.x_test.dim(0) != d.y_test.dim(0)) {
    throw data_loss("tf::keras::datasets::" + name + ": image and label counts differ in " +
                    dir.string());
  }
  return d;
}

}  // namespace idx

namespace mnist {
/// MNIST digits (tf.keras.datasets.mnist.load_data): 60000 train and 10000 test 28x28 uint8
/// images with labels 0-9. `path`: a directory with the IDX .gz files, or one holding them in
/// `mnist/` (see the header comment for where it looks otherwise).
///
///     auto [x_train, y_train, x_test, y_test] = tf::keras::datasets::mnist::load_data();
inline ImageDataset load_data(const std::optional<std::filesystem::path>& path = std::nullopt) {
  return idx::load("mnist", path);
}
}  // namespace mnist

namespace fashion_mnist {
/// Fashion-MNIST (tf.keras.datasets.fashion_mnist.load_data), same layout as MNIST.
inline ImageDataset load_data(const std::optional<std::filesystem::path>& path = std::nullopt) {
  return idx::load("fashion-mnist", path);
}
}  // namespace fashion_mnist
#else   // TAPEFLOW_WITH_ZLIB
// Compiled out: templates that fail only when called, so including the header stays fine.
namespace mnist {
template <int NeedsZlib = 0>
ImageDataset load_data(const std::optional<std::filesystem::path>& /*path*/ = std::nullopt) {
  static_assert(NeedsZlib != 0,
                "tf::keras::datasets::mnist::load_data needs zlib for the .gz files, compiled out "
                "here: define TAPEFLOW_WITH_ZLIB=1 before including tapeflow and link -lz");
  return {};
}
}  // namespace mnist
namespace fashion_mnist {
template <int NeedsZlib = 0>
ImageDataset load_data(const std::optional<std::filesystem::path>& /*path*/ = std::nullopt) {
  static_assert(
      NeedsZlib != 0,
      "tf::keras::datasets::fashion_mnist::load_data needs zlib for the .gz files, compiled out "
      "here: define TAPEFLOW_WITH_ZLIB=1 before including tapeflow and link -lz");
  return {};
}
}  // namespace fashion_mnist
#endif  // TAPEFLOW_WITH_ZLIB

}  // namespace datasets
}  // namespace keras
TAPEFLOW_END_NAMESPACE
