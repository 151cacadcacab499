// The compiled half of Keras 3 weights files (`*.weights.h5`, and the `model.weights.h5` inside a
// `.keras` archive): HDF5 through libhdf5 and the archive through libzip, in the small target
// tapeflow::keras_io (src/keras_io/). Linking it defines TAPEFLOW_HAS_HDF5 (and
// TAPEFLOW_HAS_LIBZIP); keras/weights.hpp calls these declarations only then, and otherwise
// raises `unimplemented` naming the missing package. Layout: docs/formats.md 13.
// IWYU pragma: private
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::keras_hdf5 {

/// One `<path>/vars` group: its `name` attribute (the layer's name) and datasets "0", "1", ...
struct WeightsGroup {
  std::string path;               ///< "layers/dense" ("" for the model itself)
  std::string name;               ///< the layer's (or optimizer's) name
  std::vector<AnyTensor> values;  ///< the variables, in Keras's order
};

/// A dataset's shape and element type as stored.
struct StoredVariable {
  Shape shape;
  DType dtype = DType::float32;
};

/// Writes every group (creating parent groups) to `filename` through a temporary file renamed
/// over it, so a failed write never leaves a half-written file. Throws unavailable/
/// invalid_argument naming the file.
void write_weights(const std::string& filename, const std::vector<WeightsGroup>& groups);

/// An open weights file (or a file image in memory, for `.keras` archives).
class WeightsFile {
 public:
  /// Opens `filename`; not_found when it does not exist, data_loss when it is not HDF5.
  explicit WeightsFile(const std::string& filename);
  /// Opens an HDF5 file image held in memory; `name` is used in errors.
  WeightsFile(std::string image, std::string name);
  WeightsFile(const WeightsFile&) = delete;
  WeightsFile& operator=(const WeightsFile&) = delete;
  ~WeightsFile();

  /// The datasets "0", "1", ... of group `<path>/vars` ("vars" for the root), nullopt when the
  /// group does not exist. data_loss for a dataset of an unsupported type.
  [[nodiscard]] std::optional<std::vector<StoredVariable>> variables(const std::string& path) const;
  /// Reads dataset `<path>/vars/<index>` as `dtype` (converted as HDF5 converts numbers) into
  /// `out`, which holds `count` elements; the caller has checked the shape.
  void read(const std::string& path, std::size_t index, DType dtype, std::int64_t count,
            void* out) const;
  /// The name errors use.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  // data_loss unless dataset `set` (a hid_t) stores its `count` elements inside this file.
  void check_storage(std::int64_t set, std::int64_t count, const std::string& where) const;

  std::int64_t file_ = -1;  // hid_t
  std::string name_;
  std::string image_;  // keeps a file image alive while HDF5 reads it
};

/// The bytes of `member` in zip archive `archive` (a `.keras` file). not_found when the archive
/// or the member is missing, data_loss when it is not a zip; unimplemented without libzip.
std::string read_archive_member(const std::string& archive, const std::string& member);
/// The same for an archive held in memory (`bytes`); `name` is used in errors.
std::string read_archive_member(std::string_view bytes, const std::string& name,
                                const std::string& member);

}  // namespace detail::keras_hdf5
TAPEFLOW_END_NAMESPACE
