// `tf::image::rot90(image, k)`: rotates [height, width, channels] (or a [batch, h, w, c] batch)
// by k * 90 degrees counter-clockwise (`tf.image.rot90`). Made of ReverseV2 and Transpose ops
// as TensorFlow's is, so it traces, differentiates and exports.
#pragma once

#include <array>
#include <cstddef>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/reverse.hpp>
#include <tapeflow/ops/array/transpose.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image {

/// Rotates a [h, w, c] image or [n, h, w, c] batch by `k` * 90 degrees counter-clockwise
/// (TensorFlow: `tf.image.rot90`); any integer `k`, taken modulo 4.
template <class T, std::size_t R>
  requires(R == 3 || R == 4)
Tensor<T, R> rot90(const Tensor<T, R>& image, int k = 1) {
  constexpr int h = static_cast<int>(R) - 3;  // the height axis; width is h + 1
  // Swaps height and width: {1, 0, 2} for an image, {0, 2, 1, 3} for a batch.
  std::array<int, R> swap{};
  for (std::size_t a = 0; a < R; ++a) {
    swap[a] = static_cast<int>(a);
  }
  swap[h] = h + 1;
  swap[h + 1] = h;
  switch (((k % 4) + 4) % 4) {
    case 1:
      return transpose(reverse(image, {h + 1}), swap);
    case 2:
      return reverse(image, {h, h + 1});
    case 3:
      return reverse(transpose(image, swap), {h + 1});
    default:
      return image;
  }
}

}  // namespace image
TAPEFLOW_END_NAMESPACE
