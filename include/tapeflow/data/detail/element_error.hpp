// IWYU pragma: private, include <tapeflow/data.hpp>
// Naming the element whose user function failed. A pipeline's function runs on a worker thread,
// so the consumer's stack says nothing about which element broke; the message does instead:
// "tf::data::map: element 5: <what f said>". docs/guide/data.md describes what a user catches.
#pragma once

#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data::detail {

// `e` with the same tapeflow error type and `message`, or null when `e` is no tapeflow error.
inline std::exception_ptr same_error_type(const error& e, const std::string& message) {
  std::exception_ptr out;
  const auto try_type = [&]<class E>(E*) {
    if (!out && dynamic_cast<const E*>(&e) != nullptr) {
      out = std::make_exception_ptr(E(message));
    }
  };
  try_type(static_cast<invalid_argument*>(nullptr));
  try_type(static_cast<not_found*>(nullptr));
  try_type(static_cast<data_loss*>(nullptr));
  try_type(static_cast<out_of_range*>(nullptr));
  try_type(static_cast<failed_precondition*>(nullptr));
  try_type(static_cast<resource_exhausted*>(nullptr));
  try_type(static_cast<unimplemented*>(nullptr));
  try_type(static_cast<internal*>(nullptr));
  try_type(static_cast<unavailable*>(nullptr));
  try_type(static_cast<deadline_exceeded*>(nullptr));
  return out;
}

// The exception the function of stage `stage` threw at `position` (0-based, counted from the
// start of the iterator, or from where it was restored), annotated with both:
// - a tapeflow error keeps its type, its message prefixed;
// - another std::exception becomes an invalid_argument with the prefixed message, nesting the
//   original (std::rethrow_if_nested gives it back);
// - anything else passes unchanged.
inline std::exception_ptr at_element(std::exception_ptr thrown, std::string_view stage,
                                     std::int64_t position) {
  const auto prefixed = [&](const char* what) {
    return "tf::data::" + std::string(stage) + ": element " + std::to_string(position) + ": " +
           what;
  };
  try {
    std::rethrow_exception(thrown);
  } catch (const error& e) {
    if (auto same = same_error_type(e, prefixed(e.what()))) {
      return same;
    }
    return thrown;
  } catch (const std::exception& e) {
    try {
      std::throw_with_nested(invalid_argument(prefixed(e.what())));
    } catch (...) {
      return std::current_exception();
    }
  } catch (...) {
    return thrown;
  }
}

}  // namespace data::detail
TAPEFLOW_END_NAMESPACE
