// `detail::deferred<Deferred>(x)`: `x`, as an expression whose type depends on a template
// parameter. Class bodies that would instantiate ops at include time (a loss class's virtual
// call, an activation chosen by name) go through templates on a defaulted `Deferred`
// parameter and pass their tensors through this, so that only what a program uses is
// compiled: GCC instantiates the non-dependent calls of a template body even when the template
// itself is never instantiated.
// IWYU pragma: private
#pragma once

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

template <class Deferred, class T>
constexpr const T& deferred(const T& x) noexcept {
  return x;
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
