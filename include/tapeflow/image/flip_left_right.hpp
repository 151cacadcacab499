// `tf::image::flip_left_right(image)` and `flip_up_down(image)` for [h, w, c] or [n, h, w, c]
// (`tf.image.flip_left_right`, `tf.image.flip_up_down`): one ReverseV2 op each, as in
// TensorFlow, so they trace, differentiate and appear in graphs under that name.
#pragma once

#include <cstddef>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/reverse.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image {

/// Reverses the width axis of a [h, w, c] image or [n, h, w, c] batch (TensorFlow:
/// `tf.image.flip_left_right`); one ReverseV2 op.
template <class T, std::size_t R>
  requires(R == 3 || R == 4)
Tensor<T, R> flip_left_right(const Tensor<T, R>& image) {
  return reverse(image, {static_cast<int>(R) - 2});  // the width axis
}
/// Reverses the height axis of a [h, w, c] image or [n, h, w, c] batch (TensorFlow:
/// `tf.image.flip_up_down`); one ReverseV2 op.
template <class T, std::size_t R>
  requires(R == 3 || R == 4)
Tensor<T, R> flip_up_down(const Tensor<T, R>& image) {
  return reverse(image, {static_cast<int>(R) - 3});  // the height axis
}

}  // namespace image
TAPEFLOW_END_NAMESPACE
