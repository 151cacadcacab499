// `tf::io::read_file(filename)` and `tf::io::write_file(filename, contents)`: whole files as
// scalar string tensors (TensorFlow: `tf.io.read_file`, `tf.io.write_file`).
#pragma once

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace io {

/// The bytes of a file (not_found when it cannot be opened).
inline Tensor<std::string, 0> read_file(const std::string& filename) {
  std::FILE* f = std::fopen(filename.c_str(), "rb");
  if (f == nullptr) {
    throw not_found("tf::io::read_file: cannot open '" + filename + "'");
  }
  std::string out;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    out.append(buf, n);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) {
    throw data_loss("tf::io::read_file: read error in '" + filename + "' after byte " +
                    std::to_string(out.size()));
  }
  return Tensor<std::string, 0>(std::move(out));
}
/// The same with the file name as a scalar string tensor.
inline Tensor<std::string, 0> read_file(const Tensor<std::string, 0>& filename) {
  return read_file(filename.item());
}

/// Writes `contents` to `filename`, replacing it.
inline void write_file(const std::string& filename, std::string_view contents) {
  std::FILE* f = std::fopen(filename.c_str(), "wb");
  if (f == nullptr) {
    throw not_found("tf::io::write_file: cannot create '" + filename + "'");
  }
  const std::size_t n = std::fwrite(contents.data(), 1, contents.size(), f);
  const bool ok = n == contents.size() && std::fclose(f) == 0;
  if (!ok) {
    throw resource_exhausted("tf::io::write_file: short write to '" + filename + "'");
  }
}
/// The same with the contents as a scalar string tensor.
inline void write_file(const std::string& filename, const Tensor<std::string, 0>& contents) {
  write_file(filename, std::string_view(contents.item()));
}

}  // namespace io
TAPEFLOW_END_NAMESPACE
