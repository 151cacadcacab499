// `tf::image::resize(images, {height, width}, {.method})` for [h, w, c] or [n, h, w, c]
// (`tf.image.resize`, TF2 semantics: half-pixel centers, no antialiasing). Bilinear returns
// float like TensorFlow; nearest also returns float here (the return type is static) — use
// `resize_nearest_neighbor` to keep the input dtype.
//   bilinear: in = (out + 0.5) * in_size / out_size - 0.5; lower = max(floor(in), 0),
//             upper = min(ceil(in), in_size - 1), weight = in - floor(in) (TensorFlow's kernel).
//   nearest:  in = min(floor((out + 0.5) * in_size / out_size), in_size - 1).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace image {

/// Interpolation of resize (TensorFlow: `tf.image.ResizeMethod`, BILINEAR and NEAREST_NEIGHBOR).
enum class ResizeMethod { bilinear, nearest_neighbor };

/// Options of resize (tf.image.resize's keyword arguments).
struct ResizeOptions {
  ResizeMethod method = ResizeMethod::bilinear;  ///< interpolation (TensorFlow's default)
};

namespace detail {
struct interp {
  std::int64_t lower, upper;
  float lerp;
};
inline std::vector<interp> bilinear_weights(std::int64_t out, std::int64_t in) {
  std::vector<interp> v(static_cast<std::size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (std::int64_t i = 0; i < out; ++i) {
    const float x = (static_cast<float>(i) + 0.5f) * scale - 0.5f;
    const float xf = std::floor(x);
    v[static_cast<std::size_t>(i)] = {
        std::max<std::int64_t>(static_cast<std::int64_t>(xf), 0),
        std::min<std::int64_t>(static_cast<std::int64_t>(std::ceil(x)), in - 1), x - xf};
  }
  return v;
}
inline std::vector<std::int64_t> nearest_index(std::int64_t out, std::int64_t in) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (std::int64_t i = 0; i < out; ++i) {
    const auto x = static_cast<std::int64_t>(std::floor((static_cast<float>(i) + 0.5f) * scale));
    v[static_cast<std::size_t>(i)] = std::clamp<std::int64_t>(x, 0, in - 1);
  }
  return v;
}
template <std::size_t R>
void check_resize(const std::array<std::int64_t, R>& dims, std::array<std::int64_t, 2> size) {
  if (size[0] <= 0 || size[1] <= 0) {
    throw invalid_argument("tf::image::resize: size must be positive, got [" +
                           std::to_string(size[0]) + ", " + std::to_string(size[1]) + "]");
  }
  if (dims[R - 3] <= 0 || dims[R - 2] <= 0) {
    throw invalid_argument("tf::image::resize: empty input image");
  }
}
}  // namespace detail

namespace detail {

template <class T, std::size_t R>
std::array<std::int64_t, R> resized_dims(const std::array<std::int64_t, R>& dims,
                                         std::array<std::int64_t, 2> size) {
  check_resize(dims, size);
  auto out = dims;
  out[R - 3] = size[0];
  out[R - 2] = size[1];
  return out;
}

template <class T, std::size_t R>
void resize_nearest_kernel(const Tensor<T, R>& images, Tensor<T, R>& out) {
  const std::int64_t n = R == 4 ? images.dim(0) : 1;
  const std::int64_t h = images.dim(R - 3), w = images.dim(R - 2), c = images.dim(R - 1);
  const std::int64_t oh = out.dim(R - 3), ow = out.dim(R - 2);
  T* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
  const auto ys = nearest_index(oh, h);
  const auto xs = nearest_index(ow, w);
  const T* src = images.data();
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t i = 0; i < oh; ++i) {
      for (std::int64_t j = 0; j < ow; ++j) {
        const T* p =
            src +
            ((b * h + ys[static_cast<std::size_t>(i)]) * w + xs[static_cast<std::size_t>(j)]) * c;
        dst = std::copy(p, p + c, dst);
      }
    }
  }
}

template <class T, std::size_t R>
void resize_bilinear_kernel(const Tensor<T, R>& images, Tensor<float, R>& out) {
  const std::int64_t n = R == 4 ? images.dim(0) : 1;
  const std::int64_t h = images.dim(R - 3), w = images.dim(R - 2), c = images.dim(R - 1);
  const std::int64_t oh = out.dim(R - 3), ow = out.dim(R - 2);
  float* dst = ::tapeflow::detail::tensor_access::mutable_data(out);
  const auto ys = bilinear_weights(oh, h);
  const auto xs = bilinear_weights(ow, w);
  // Separable, in TensorFlow's operation order: first along x for the two input rows an output
  // row needs (each input row interpolated once and cached: upscaling reuses it), then along y.
  std::vector<float> row_a(static_cast<std::size_t>(ow * c)), row_b(row_a.size());
  const T* src = images.data();
  for (std::int64_t b = 0; b < n; ++b) {
    const T* img = src + b * h * w * c;
    std::int64_t id_a = -1, id_b = -1;
    const auto horizontal = [&](std::int64_t r, float* out_row) {
      const T* in = img + r * w * c;
      for (std::int64_t j = 0; j < ow; ++j) {
        const auto& x = xs[static_cast<std::size_t>(j)];
        const T* lo = in + x.lower * c;
        const T* up = in + x.upper * c;
        for (std::int64_t ch = 0; ch < c; ++ch) {
          const float l = static_cast<float>(lo[ch]);
          *out_row++ = l + (static_cast<float>(up[ch]) - l) * x.lerp;
        }
      }
    };
    const auto row_for = [&](std::int64_t r, std::int64_t keep) -> const float* {
      if (id_a == r) {
        return row_a.data();
      }
      if (id_b == r) {
        return row_b.data();
      }
      if (id_a == keep) {
        horizontal(r, row_b.data());
        id_b = r;
        return row_b.data();
      }
      horizontal(r, row_a.data());
      id_a = r;
      return row_a.data();
    };
    for (std::int64_t i = 0; i < oh; ++i) {
      const auto& y = ys[static_cast<std::size_t>(i)];
      const float* top = row_for(y.lower, y.upper);
      const float* bottom = row_for(y.upper, y.lower);
      const float yl = y.lerp;
      for (std::int64_t k = 0; k < ow * c; ++k) {
        dst[k] = top[k] + (bottom[k] - top[k]) * yl;
      }
      dst += ow * c;
    }
  }
}

/// Why a resize op on a rank-`rank` input does not export (TensorFlow's takes [N, H, W, C]
/// only; tf.image.resize adds the batch axis around it), or "" when it does.
inline std::string resize_export_error(std::string_view op, std::size_t rank) {
  if (rank == 4) {
    return {};
  }
  return std::string(op) + " of a rank-" + std::to_string(rank) +
         " image: TensorFlow's op takes a batch of images [N, H, W, C] only";
}

}  // namespace detail
}  // namespace image

namespace ops {

/// Nearest-neighbour resize keeping the dtype (TensorFlow op "ResizeNearestNeighbor",
/// half-pixel centers).
template <std::size_t R>
struct ResizeNearestNeighbor {
  static constexpr std::string_view name = "ResizeNearestNeighbor";
  static constexpr std::string_view type_attr = "T";                ///< TensorFlow's dtype attr
  static constexpr std::string_view output_arg = "resized_images";  ///< TensorFlow's output
  static constexpr bool differentiable = false;
  std::array<std::int64_t, 2> size{};
  /// TensorFlow's attributes.
  [[nodiscard]] OpAttributes attributes() const { return {{"half_pixel_centers", true}}; }
  /// TensorFlow's `size` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const { return {{"size", detail::int32_vector(size)}}; }
  /// TensorFlow's op takes a batch of images (rank 4) only.
  [[nodiscard]] std::string export_error() const {
    return image::detail::resize_export_error(name, R);
  }
  template <class T>
  OutSpec<T, R> infer(const Tensor<T, R>& images) const {
    return {image::detail::resized_dims<T>(images.dims(), size)};
  }
  template <class T>
  void compute(Tensor<T, R>& out, const Tensor<T, R>& images) const {
    image::detail::resize_nearest_kernel(images, out);
  }
};

/// Bilinear resize to float (TensorFlow op "ResizeBilinear", half-pixel centers).
template <std::size_t R>
struct ResizeBilinear {
  static constexpr std::string_view name = "ResizeBilinear";
  static constexpr std::string_view type_attr = "T";                ///< TensorFlow's dtype attr
  static constexpr std::string_view output_arg = "resized_images";  ///< TensorFlow's output
  static constexpr bool differentiable = false;
  std::array<std::int64_t, 2> size{};
  /// TensorFlow's attributes.
  [[nodiscard]] OpAttributes attributes() const { return {{"half_pixel_centers", true}}; }
  /// TensorFlow's `size` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const { return {{"size", detail::int32_vector(size)}}; }
  /// TensorFlow's op takes a batch of images (rank 4) only.
  [[nodiscard]] std::string export_error() const {
    return image::detail::resize_export_error(name, R);
  }
  template <class T>
  OutSpec<float, R> infer(const Tensor<T, R>& images) const {
    return {image::detail::resized_dims<T>(images.dims(), size)};
  }
  template <class T>
  void compute(Tensor<float, R>& out, const Tensor<T, R>& images) const {
    image::detail::resize_bilinear_kernel(images, out);
  }
};

}  // namespace ops

namespace image {

/// Nearest-neighbour resize keeping the dtype (`tf.image.resize(..., method="nearest")`).
template <class T, std::size_t R>
  requires(R == 3 || R == 4)
Tensor<T, R> resize_nearest_neighbor(const Tensor<T, R>& images, std::array<std::int64_t, 2> size) {
  return ::tapeflow::detail::execute(ops::ResizeNearestNeighbor<R>{size}, images);
}

/// Resizes to `size` = {height, width}; returns float (`tf.image.resize`).
template <class T, std::size_t R>
  requires(R == 3 || R == 4)
Tensor<float, R> resize(const Tensor<T, R>& images, std::array<std::int64_t, 2> size,
                        ResizeOptions o = {}) {
  if (o.method == ResizeMethod::nearest_neighbor) {
    return cast<float>(resize_nearest_neighbor(images, size));
  }
  return ::tapeflow::detail::execute(ops::ResizeBilinear<R>{size}, images);
}

}  // namespace image
TAPEFLOW_END_NAMESPACE
