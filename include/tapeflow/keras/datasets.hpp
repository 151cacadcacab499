// tf.keras.datasets.mnist / fashion_mnist: the IDX gzip files as uint8 tensors.
//
// The files are found as `tf::keras::utils::get_file` finds a dataset (keras/utils/get_file.hpp:
// the `path` argument, else $TAPEFLOW_DATASETS, the build-time TAPEFLOW_DEFAULT_DATASETS_DIR,
// Keras' cache, data/ or shared/data/ in a parent directory), in a folder named after the
// dataset ("mnist", "fashion-mnist"). Keras downloads them; tapeflow never downloads.
// With TAPEFLOW_WITH_ZLIB=0 (detail/macros.hpp) calling load_data is a compile error naming it.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
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

/// Decompresses a whole gzip file (throws not_found / data_loss naming the file).
inline std::vector<std::uint8_t> read_gzip(const std::filesystem::path& file) {
  gzFile f = gzopen(file.string().c_str(), "rb");
  if (f == nullptr) {
    throw not_found("tf::keras::datasets: cannot open " + file.string());
  }
  std::vector<std::uint8_t> out;
  std::array<std::uint8_t, 1 << 16> chunk{};
  for (;;) {
    const int n = gzread(f, chunk.data(), unsigned(chunk.size()));
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      throw data_loss("tf::keras::datasets: " + file.string() + ": gzip error: " + msg);
    }
    if (n == 0) {
      break;
    }
    out.insert(out.end(), chunk.begin(), chunk.begin() + n);
  }
  gzclose(f);
  return out;
}

inline std::uint32_t be32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return (std::uint32_t(b[at]) << 24) | (std::uint32_t(b[at + 1]) << 16) |
         (std::uint32_t(b[at + 2]) << 8) | std::uint32_t(b[at + 3]);
}

/// Reads an IDX uint8 image file (magic 2051) as [count, rows, cols].
inline Tensor<std::uint8_t, 3> read_images(const std::filesystem::path& file) {
  auto b = read_gzip(file);
  if (b.size() < 16 || be32(b, 0) != 2051) {
    throw data_loss("tf::keras::datasets: " + file.string() +
                    " is not an IDX image file (magic 2051 expected at byte 0)");
  }
  const std::int64_t n = be32(b, 4), rows = be32(b, 8), cols = be32(b, 12);
  if (std::int64_t(b.size()) - 16 != n * rows * cols) {
    throw data_loss("tf::keras::datasets: " + file.string() + ": header says " + std::to_string(n) +
                    "x" + std::to_string(rows) + "x" + std::to_string(cols) + " pixels but " +
                    std::to_string(b.size() - 16) + " bytes follow byte 16");
  }
  auto t = Tensor<std::uint8_t, 3>::uninitialized({n, rows, cols});
  std::copy(b.begin() + 16, b.end(), t.mutable_data());
  return t;
}

/// Reads an IDX uint8 label file (magic 2049) as [count].
inline Tensor<std::uint8_t, 1> read_labels(const std::filesystem::path& file) {
  auto b = read_gzip(file);
  if (b.size() < 8 || be32(b, 0) != 2049) {
    throw data_loss("tf::keras::datasets: " + file.string() +
                    " is not an IDX label file (magic 2049 expected at byte 0)");
  }
  const std::int64_t n = be32(b, 4);
  if (std::int64_t(b.size()) - 8 != n) {
    throw data_loss("tf::keras::datasets: " + file.string() + ": header says " + std::to_string(n) +
                    " labels but " + std::to_string(b.size() - 8) + " bytes follow byte 8");
  }
  auto t = Tensor<std::uint8_t, 1>::uninitialized({n});
  std::copy(b.begin() + 8, b.end(), t.mutable_data());
  return t;
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
