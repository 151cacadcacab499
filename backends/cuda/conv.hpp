// Convolutions on a GPU through cuDNN (conv.cpp): what the Conv2D kernels pass it. Internal to
// tapeflow::cuda.
#pragma once

#include <array>
#include <cstdint>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

class CudaMemory;

/// Which of a convolution's three products to compute.
enum class ConvDirection { forward, backward_data, backward_filter };

/// A convolution's shapes (input and output NHWC, filter KRSC [out, kh, kw, in]) and window,
/// with TensorFlow's padding split into the rows/columns before and after.
struct ConvGeometry {
  ConvDirection direction = ConvDirection::forward;
  std::array<std::int64_t, 4> input{};
  std::array<std::int64_t, 4> filter_krsc{};
  std::array<std::int64_t, 4> output{};
  std::array<std::int64_t, 2> strides{1, 1};
  std::array<std::int64_t, 2> dilations{1, 1};
  std::array<std::int64_t, 2> pre_padding{0, 0};
  std::array<std::int64_t, 2> post_padding{0, 0};
};

/// Runs one float convolution on `device`'s stream. Operands by direction (filters HWIO):
/// forward (input, filter) -> output; backward_data (filter, dy) -> dx; backward_filter
/// (input, dy) -> dw.
void run_convolution(CudaMemory& device, const ConvGeometry& g, const float* a, const float* b,
                     float* out);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
