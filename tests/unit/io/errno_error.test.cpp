// detail::throw_errno: the one mapping from a failed system call's errno to tapeflow's typed
// errors that every file reader and writer uses (docs/reliability.md).
#include <cerrno>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/io/detail/errno_error.hpp>

namespace test_io_errno_error {
namespace tf = tapeflow;

template <class E>
void check_maps(int err) {
  INFO("errno " << err);
  CHECK_THROWS_AS(tf::detail::throw_errno(err, "cannot write to", "dir/file"), E);
}

TEST_CASE("errno values map to TensorFlow's error codes", "[io][errors]") {
  check_maps<tf::not_found>(ENOENT);
  check_maps<tf::not_found>(ENOTDIR);
  for (int full : {ENOSPC, EFBIG, EDQUOT, ENOMEM}) {
    check_maps<tf::resource_exhausted>(full);
  }
  for (int denied : {EACCES, EPERM, EROFS, EISDIR}) {
    check_maps<tf::failed_precondition>(denied);
  }
  check_maps<tf::data_loss>(EIO);
}

TEST_CASE("the message names the operation and the path", "[io][errors]") {
  CHECK_THROWS_WITH(tf::detail::throw_errno(EFBIG, "cannot write to", "logs/events"),
                    std::string("cannot write to 'logs/events': ") + std::strerror(EFBIG));
}

}  // namespace test_io_errno_error
