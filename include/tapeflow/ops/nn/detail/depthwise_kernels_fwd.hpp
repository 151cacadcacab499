// The declarations of the depthwise convolution kernels (ops/nn/depthwise_conv2d.hpp). Their
// bodies, ops/nn/detail/depthwise_kernels.hpp, need <immintrin.h>: header-only programs get them
// through depthwise_conv2d.hpp, while programs built with TAPEFLOW_PRECOMPILED link their float
// and double specializations from tapeflow::instantiations.
// IWYU pragma: private, include <tapeflow/ops/nn/depthwise_conv2d.hpp>
#pragma once

#include <cstdint>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/nn/padding.hpp>  // Window2D

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

/// y = depthwise_conv2d(x, w), depth multiplier `mult`.
template <class T>
void depthwise_forward(Window2D const& g, std::int64_t mult, T const* x, T const* w, T* y);

/// dx = depthwise_conv2d_backprop_input(w, dy).
template <class T>
void depthwise_backprop_input(Window2D const& g, std::int64_t mult, T const* w, T const* dy, T* dx);

/// dw = depthwise_conv2d_backprop_filter(x, dy).
template <class T>
void depthwise_backprop_filter(Window2D const& g, std::int64_t mult, T const* x, T const* dy,
                               T* dw);

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
