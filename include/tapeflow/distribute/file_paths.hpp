// Where each worker writes what only the chief keeps (TensorFlow's `distributed_file_utils`,
// used by the multi-worker tutorial and Keras' callbacks): every worker takes part in saving a
// checkpoint or a model, since saving may read mirrored state together, but only the chief's
// files are kept; the others write to a temporary folder beside them and delete it after.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/strategy.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// The folder this worker writes `dirpath` as (TensorFlow: `write_dirpath`): `dirpath` on the
/// chief and under every single-process strategy, `<dirpath>/workertemp_<worker>` elsewhere.
[[nodiscard]] inline std::filesystem::path write_dirpath(const std::filesystem::path& dirpath,
                                                         const Strategy& strategy) {
  if (strategy.should_checkpoint()) {
    return dirpath;
  }
  return dirpath / ("workertemp_" + std::to_string(strategy.worker_index()));
}

/// The file this worker writes `filepath` as (TensorFlow: `write_filepath`): the same name in
/// write_dirpath of its folder.
[[nodiscard]] inline std::filesystem::path write_filepath(const std::filesystem::path& filepath,
                                                          const Strategy& strategy) {
  return write_dirpath(filepath.parent_path(), strategy) / filepath.filename();
}

/// Deletes what a worker other than the chief wrote for `dirpath` (TensorFlow:
/// `remove_temp_dirpath`); nothing on the chief. Never throws: a cleanup that fails leaves the
/// temporary folder behind.
inline void remove_temp_dirpath(const std::filesystem::path& dirpath,
                                const Strategy& strategy) noexcept {
  if (!strategy.should_checkpoint()) {
    std::error_code ignored;
    std::filesystem::remove_all(write_dirpath(dirpath, strategy), ignored);
  }
}

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
