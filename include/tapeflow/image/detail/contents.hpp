// IWYU pragma: private, include <tapeflow/image.hpp>
#pragma once

#include <string>
#include <string_view>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image::detail {
inline std::string_view contents_of(const Tensor<std::string, 0>& t) { return t.item(); }
inline std::string_view contents_of(std::string_view s) { return s; }
}  // namespace image::detail
TAPEFLOW_END_NAMESPACE
