// The declarations of the convolution kernels Conv2D and its backprops call (ops/nn/conv2d.hpp).
// Their bodies, ops/nn/detail/conv2d_kernels.hpp, bring the GEMM's micro-kernels and
// <immintrin.h>: header-only programs get them through conv2d.hpp, while programs built with
// TAPEFLOW_PRECOMPILED link their float and double specializations from tapeflow::instantiations.
// IWYU pragma: private, include <tapeflow/ops/nn/conv2d.hpp>
#pragma once

#include <cstdint>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/nn/padding.hpp>  // Window2D

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

/// y = conv2d(x, filter).
template <class T>
void conv2d_forward(Window2D const& g, std::int64_t out_channels, T const* x, T const* filter,
                    T* y);

/// dx = conv2d_backprop_input(filter, dy).
template <class T>
void conv2d_backprop_input(Window2D const& g, std::int64_t out_channels, T const* filter,
                           T const* dy, T* dx);

/// dfilter = conv2d_backprop_filter(x, dy).
template <class T>
void conv2d_backprop_filter(Window2D const& g, std::int64_t out_channels, T const* x, T const* dy,
                            T* dfilter);

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
