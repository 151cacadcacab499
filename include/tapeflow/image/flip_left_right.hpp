// `tf::image::flip_left_right(image)` and `flip_up_down(image)` for [h, w, c] or [n, h, w, c]
// (`tf.image.flip_left_right`, `tf.image.flip_up_down`).
#pragma once

#include <cstdint>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image {

namespace detail {
template <class T, std::size_t R>
Tensor<T, R> flip(const Tensor<T, R>& image, bool horizontal) {
  const std::int64_t n = R == 4 ? image.dim(0) : 1;
  const std::int64_t h = image.dim(R - 3), w = image.dim(R - 2), c = image.dim(R - 1);
  auto out = Tensor<T, R>::uninitialized(image.dims());
  T* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
  const T* src = image.data();
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t i = 0; i < h; ++i) {
      for (std::int64_t j = 0; j < w; ++j) {
        const std::int64_t si = horizontal ? i : h - 1 - i, sj = horizontal ? w - 1 - j : j;
        const T* p = src + ((b * h + si) * w + sj) * c;
        T* q = dst + ((b * h + i) * w + j) * c;
        for (std::int64_t ch = 0; ch < c; ++ch) {
          q[ch] = p[ch];
        }
      }
    }
  }
  return out;
}
}  // namespace detail

template <class T, std::size_t R>
  requires(R == 3 || R == 4)
Tensor<T, R> flip_left_right(const Tensor<T, R>& image) {
  return detail::flip(image, true);
}
template <class T, std::size_t R>
  requires(R == 3 || R == 4)
Tensor<T, R> flip_up_down(const Tensor<T, R>& image) {
  return detail::flip(image, false);
}

}  // namespace image
TAPEFLOW_END_NAMESPACE
