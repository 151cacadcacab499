// One mapping from a failed system call's errno to tapeflow's typed errors, for every reader
// and writer of files (docs/reliability.md): a full disk is resource_exhausted, a missing path
// not_found, a read-only or forbidden one failed_precondition.
// IWYU pragma: private, include <tapeflow/io/tfrecord.hpp>
#pragma once

#include <cerrno>
#include <cstring>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// Throws the tapeflow error matching `err` (an errno value) for an operation on `path`;
/// the message is "<what> '<path>': <strerror>".
[[noreturn]] inline void throw_errno(int err, const std::string& what, const std::string& path) {
  const std::string msg = what + " '" + path + "': " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      throw not_found(msg);
    case ENOSPC:
    case EFBIG:  // past the file-size limit: as good as a full disk
    case ENOMEM:
    case EDQUOT:
      throw resource_exhausted(msg);
    case EACCES:
    case EPERM:
    case EISDIR:
    case EROFS:
      throw failed_precondition(msg);
    default:
      throw data_loss(msg);
  }
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
