// Typed errors mirroring TensorFlow's status codes.
//
// Every error names what went wrong precisely (op, shapes, file, byte offset): the message is
// the whole diagnosis a user gets, so it is built where the facts are known.
#pragma once

#include <stdexcept>
#include <string>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// Base of every exception tapeflow throws (TensorFlow: `tf.errors.OpError`).
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  /// TensorFlow's name for the status code, e.g. "INVALID_ARGUMENT".
  [[nodiscard]] virtual const char* code() const noexcept = 0;
};

#define TAPEFLOW_DEFINE_ERROR(name, status)                                     \
  class name : public error {                                                   \
   public:                                                                      \
    using error::error;                                                         \
    [[nodiscard]] char const* code() const noexcept override { return status; } \
  };

/// Bad arguments: wrong shapes, out-of-range attributes (`tf.errors.InvalidArgumentError`).
TAPEFLOW_DEFINE_ERROR(invalid_argument, "INVALID_ARGUMENT")
/// A file, key or name does not exist (`tf.errors.NotFoundError`).
TAPEFLOW_DEFINE_ERROR(not_found, "NOT_FOUND")
/// Unrecoverable corruption or loss of data (`tf.errors.DataLossError`).
TAPEFLOW_DEFINE_ERROR(data_loss, "DATA_LOSS")
/// Iteration or an index went past the end (`tf.errors.OutOfRangeError`).
TAPEFLOW_DEFINE_ERROR(out_of_range, "OUT_OF_RANGE")
/// The system is not in a state the operation needs (`tf.errors.FailedPreconditionError`).
TAPEFLOW_DEFINE_ERROR(failed_precondition, "FAILED_PRECONDITION")
/// Memory or another resource ran out (`tf.errors.ResourceExhaustedError`).
TAPEFLOW_DEFINE_ERROR(resource_exhausted, "RESOURCE_EXHAUSTED")
/// The operation is not implemented or supported (`tf.errors.UnimplementedError`).
TAPEFLOW_DEFINE_ERROR(unimplemented, "UNIMPLEMENTED")
/// An invariant of tapeflow itself broke (`tf.errors.InternalError`).
TAPEFLOW_DEFINE_ERROR(internal, "INTERNAL")
/// A peer (another replica or worker) is gone (`tf.errors.UnavailableError`).
TAPEFLOW_DEFINE_ERROR(unavailable, "UNAVAILABLE")
/// An operation did not complete within its timeout (`tf.errors.DeadlineExceededError`).
TAPEFLOW_DEFINE_ERROR(deadline_exceeded, "DEADLINE_EXCEEDED")

#undef TAPEFLOW_DEFINE_ERROR

TAPEFLOW_END_NAMESPACE
