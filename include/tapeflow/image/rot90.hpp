// `tf::image::rot90(image, k)`: rotates [height, width, channels] (or a [batch, h, w, c] batch)
// by k * 90 degrees counter-clockwise (`tf.image.rot90`).
#pragma once

#include <cstdint>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image {

template <class T, std::size_t R>
  requires(R == 3 || R == 4)
Tensor<T, R> rot90(const Tensor<T, R>& image, int k = 1) {
  k = ((k % 4) + 4) % 4;
  const std::int64_t n = R == 4 ? image.dim(0) : 1;
  const std::int64_t h = image.dim(R - 3), w = image.dim(R - 2), c = image.dim(R - 1);
  const std::int64_t oh = (k % 2) != 0 ? w : h, ow = (k % 2) != 0 ? h : w;
  std::array<std::int64_t, R> dims = image.dims();
  dims[R - 3] = oh;
  dims[R - 2] = ow;
  auto out = Tensor<T, R>::uninitialized(dims);
  T* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
  const T* src = image.data();
  // Source offset of output pixel (i, j) is base + i * di + j * dj (in pixels), per k.
  std::int64_t base = 0, di = 0, dj = 0;
  switch (k) {
    case 0:
      base = 0, di = w, dj = 1;
      break;  // (i, j)
    case 1:
      base = w - 1, di = -1, dj = w;
      break;  // (j, w-1-i)
    case 2:
      base = (h - 1) * w + (w - 1), di = -w, dj = -1;
      break;  // (h-1-i, w-1-j)
    default:
      base = (h - 1) * w, di = 1, dj = -w;
      break;  // (h-1-j, i)
  }
  for (std::int64_t b = 0; b < n; ++b) {
    const T* s = src + b * h * w * c;
    T* d = dst + b * h * w * c;
    for (std::int64_t i = 0; i < oh; ++i) {
      const T* row = s + (base + i * di) * c;
      if (c == 1) {
        for (std::int64_t j = 0; j < ow; ++j) {
          *d++ = row[j * dj];
        }
      } else {
        for (std::int64_t j = 0; j < ow; ++j) {
          const T* p = row + j * dj * c;
          for (std::int64_t ch = 0; ch < c; ++ch) {
            *d++ = p[ch];
          }
        }
      }
    }
  }
  return out;
}

}  // namespace image
TAPEFLOW_END_NAMESPACE
