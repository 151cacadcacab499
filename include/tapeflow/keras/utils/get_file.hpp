// `tf::keras::utils::get_file` (tf.keras.utils.get_file): the path of a dataset file or folder
// on this machine. Keras downloads into ~/.keras/datasets; tapeflow never downloads, it looks.
//
// Where it looks (`dataset_dirs()`), in order:
//   1. $TAPEFLOW_DATASETS;
//   2. TAPEFLOW_DEFAULT_DATASETS_DIR, a directory compiled in when that macro is defined.
//      tapeflow's own examples, tests and benches define it as the repository's data/ folder
//      (cmake/TapeflowHelpers.cmake), so they run from any working directory. The installed
//      package defines nothing (it ships no data); define it for your own targets if you keep
//      datasets beside your sources, the same for every translation unit of a program:
//        target_compile_definitions(app PRIVATE
//                                   TAPEFLOW_DEFAULT_DATASETS_DIR="${CMAKE_SOURCE_DIR}/data")
//   3. $KERAS_HOME/datasets, then ~/.keras/datasets (Keras' cache);
//   4. data/ and shared/data/ in the current directory and in each of its parents.
// In each, `<dir>/<fname>`; in Keras' cache, which keeps its files flat, also
// `<dir>/<last component of fname>`. An explicit directory (`cache_dir`: what a `--data_dir`
// flag passes) replaces the search: `<cache_dir>/<fname>`, then `<cache_dir>/<last component>`.
// When nothing is found, not_found lists every path tried.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras::utils {

/// The directories searched for datasets, in search order (see the header comment); only the
/// ones named by a set variable or the compiled-in default, whether or not they exist.
[[nodiscard]] inline std::vector<std::filesystem::path> dataset_dirs() {
  namespace fs = std::filesystem;
  std::vector<fs::path> dirs;
  auto env = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
  };
  if (const char* v = env("TAPEFLOW_DATASETS")) {
    dirs.emplace_back(v);
  }
#ifdef TAPEFLOW_DEFAULT_DATASETS_DIR
  dirs.emplace_back(TAPEFLOW_DEFAULT_DATASETS_DIR);
#endif
  if (const char* v = env("KERAS_HOME")) {
    dirs.push_back(fs::path(v) / "datasets");
  }
  if (const char* v = env("HOME")) {
    dirs.push_back(fs::path(v) / ".keras" / "datasets");
  }
  std::error_code ec;
  for (fs::path d = fs::current_path(ec); !d.empty(); d = d.parent_path()) {
    dirs.push_back(d / "data");
    dirs.push_back(d / "shared" / "data");
    if (d == d.root_path()) {
      break;
    }
  }
  return dirs;
}

/// Keyword arguments of `get_file`.
struct GetFileOptions {
  /// Look only here (a `--data_dir` flag): `<cache_dir>/<fname>`, then
  /// `<cache_dir>/<last component of fname>`.
  std::optional<std::filesystem::path> cache_dir = std::nullopt;
};

namespace impl {
/// The paths `get_file(fname, options)` tries, in order.
inline std::vector<std::filesystem::path> get_file_candidates(const std::filesystem::path& fname,
                                                              const GetFileOptions& options) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  auto add = [&](const fs::path& p) {
    for (const auto& q : out) {
      if (q == p) {
        return;
      }
    }
    out.push_back(p);
  };
  if (options.cache_dir) {
    add(*options.cache_dir / fname);
    add(*options.cache_dir / fname.filename());
    return out;
  }
  const char* keras_home = std::getenv("KERAS_HOME");
  const char* home = std::getenv("HOME");
  for (const auto& dir : dataset_dirs()) {
    add(dir / fname);
    const bool keras_cache = (keras_home != nullptr && dir == fs::path(keras_home) / "datasets") ||
                             (home != nullptr && dir == fs::path(home) / ".keras" / "datasets");
    if (keras_cache) {
      add(dir / fname.filename());
    }
  }
  return out;
}
}  // namespace impl

namespace impl {
/// get_file with `who` naming the caller in the error.
inline std::filesystem::path find_file(const std::filesystem::path& fname,
                                       const GetFileOptions& options, const std::string& who) {
  const auto candidates = get_file_candidates(fname, options);
  std::error_code ec;
  for (const auto& c : candidates) {
    if (std::filesystem::exists(c, ec)) {
      return c;
    }
  }
  std::string tried;
  for (const auto& c : candidates) {
    tried += "\n  " + c.string();
  }
  throw not_found(who + ": " + fname.string() + " not found; tried:" + tried +
                  (options.cache_dir ? std::string()
                                     : "\n(pass the directory that holds it, e.g. --data_dir, or "
                                       "set TAPEFLOW_DATASETS to a folder laid out like the "
                                       "repository's data/)"));
}
}  // namespace impl

/// The path of dataset file or folder `fname` (relative, e.g. "text/nietzsche.txt" or
/// "mnist"), found where the header comment says (TensorFlow: `tf.keras.utils.get_file(fname,
/// origin)`, which downloads `origin` when the file is missing; tapeflow never downloads).
///
///     auto path = tf::keras::utils::get_file("text/nietzsche.txt");
///     auto mine = tf::keras::utils::get_file("text/nietzsche.txt", {.cache_dir = data_dir});
///
/// Throws not_found listing every path tried.
[[nodiscard]] inline std::filesystem::path get_file(const std::filesystem::path& fname,
                                                    const GetFileOptions& options = {}) {
  return impl::find_file(fname, options, "tf::keras::utils::get_file");
}

}  // namespace keras::utils
TAPEFLOW_END_NAMESPACE
