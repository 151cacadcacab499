// IWYU pragma: private, include <tapeflow/image.hpp>
#pragma once

#include <string>
#include <string_view>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image::detail {
// What decode_png/decode_jpeg accept: a scalar string tensor, or bytes held by the caller. The
// std::string overload is needed: a std::string converts both to string_view and (through
// Tensor's scalar constructor) to Tensor<std::string, 0>, which would be ambiguous.
inline std::string_view contents_of(const Tensor<std::string, 0>& t) { return t.item(); }
inline std::string_view contents_of(std::string_view s) { return s; }
inline std::string_view contents_of(const std::string& s) { return s; }
inline std::string_view contents_of(const char* s) { return s; }
}  // namespace image::detail
TAPEFLOW_END_NAMESPACE
