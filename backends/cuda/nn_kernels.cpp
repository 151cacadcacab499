// The CUDA kernels of the convolution and pooling ops: Conv2D and its backprops through
// cuDNN (conv.cpp), MaxPool, AvgPool and their gradients as element functors (pool.hpp).
// The ops' own geometry (ops/nn/conv_window.hpp, ops/nn/pooling.hpp) checks shapes and
// computes TensorFlow's padding, so a GPU kernel never re-derives it.
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include <cuda_runtime.h>

#if TAPEFLOW_HAS_CUDNN
#include "conv.hpp"
#endif
#include <tapeflow/backend/cuda/platform.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/ops/kernel_registry.hpp>
#include <tapeflow/ops/nn/conv2d.hpp>
#include <tapeflow/ops/nn/pooling.hpp>

#include "device_memory.hpp"
#include "kernels.hpp"
#include "pool.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {
namespace {

std::array<std::int64_t, 4> dims4(const AnyTensor& t) {
  std::array<std::int64_t, 4> d{};
  for (std::size_t i = 0; i < 4; ++i) {
    d[i] = t.shape().dims()[i];
  }
  return d;
}

#if TAPEFLOW_HAS_CUDNN
// A convolution's geometry for cuDNN from the op's (TensorFlow's) window: the padding after
// is what the last window needs beyond the input, at least 0 (VALID may leave rows unread).
ConvGeometry conv_geometry_for(ConvDirection direction, const ops::ConvWindow& op,
                               std::string_view name, const std::array<std::int64_t, 4>& input,
                               const std::array<std::int64_t, 4>& filter_hwio) {
  detail::nn_impl::Window2D const w = detail::nn_impl::conv_geometry(name, op, input, filter_hwio);
  ConvGeometry g;
  g.direction = direction;
  g.input = input;
  g.filter_krsc = {filter_hwio[3], filter_hwio[0], filter_hwio[1], filter_hwio[2]};
  g.output = {w.n, w.oh, w.ow, filter_hwio[3]};
  g.strides = {w.sh, w.sw};
  g.dilations = {w.dh, w.dw};
  g.pre_padding = {w.pad_top, w.pad_left};
  auto after = [](std::int64_t out, std::int64_t stride, std::int64_t k, std::int64_t dilation,
                  std::int64_t size, std::int64_t before) {
    std::int64_t const extra = (out - 1) * stride + (k - 1) * dilation + 1 - size - before;
    return extra > 0 ? extra : std::int64_t{0};
  };
  g.post_padding = {after(w.oh, w.sh, w.kh, w.dh, w.h, w.pad_top),
                    after(w.ow, w.sw, w.kw, w.dw, w.w, w.pad_left)};
  return g;
}

void run_conv(const ConvGeometry& g, const AnyTensor& a, const AnyTensor& b, AnyTensor& out) {
  CudaMemory& device = current_device();
  auto* result = static_cast<float*>(out.mutable_device_data());
  if (out.num_elements() == 0) {
    return;
  }
  if (a.num_elements() == 0 || b.num_elements() == 0) {  // nothing summed: zeros
    device.activate();
    check(cudaMemsetAsync(result, 0, static_cast<std::size_t>(out.num_elements()) * sizeof(float),
                          static_cast<cudaStream_t>(device.stream())),
          "cudaMemsetAsync");
    return;
  }
  run_convolution(device, g, static_cast<const float*>(a.device_data()),
                  static_cast<const float*>(b.device_data()), result);
}

#endif  // TAPEFLOW_HAS_CUDNN

PoolGeometry pool_geometry_for(const ops::PoolWindow& op, std::string_view name,
                               const std::array<std::int64_t, 4>& input) {
  detail::nn_impl::Window2D const w = detail::nn_impl::pool_geometry(name, op, input);
  PoolGeometry g;
  g.n = w.n;
  g.h = w.h;
  g.w = w.w;
  g.c = w.c;
  g.kh = w.kh;
  g.kw = w.kw;
  g.sh = w.sh;
  g.sw = w.sw;
  g.oh = w.oh;
  g.ow = w.ow;
  g.pad_top = w.pad_top;
  g.pad_left = w.pad_left;
  return g;
}

template <class T>
void run_pool_typed(PoolKernel kernel, const PoolGeometry& g, const AnyTensor* x,
                    const AnyTensor* dy, AnyTensor& out) {
  CudaMemory& device = current_device();
  const T* x_data = x != nullptr ? static_cast<const T*>(x->device_data()) : nullptr;
  const T* dy_data = dy != nullptr ? static_cast<const T*>(dy->device_data()) : nullptr;
  auto* result = static_cast<T*>(out.mutable_device_data());
  device.activate();
  launch_pool<T>(kernel, g, x_data, dy_data, result, device.stream());
  check(cudaGetLastError(), "pooling kernel launch");
}

void run_pool(std::string_view name, PoolKernel kernel, const PoolGeometry& g, const AnyTensor* x,
              const AnyTensor* dy, AnyTensor& out) {
  switch (out.dtype()) {
    case DType::float32:
      return run_pool_typed<float>(kernel, g, x, dy, out);
    case DType::float64:
      return run_pool_typed<double>(kernel, g, x, dy, out);
    default:
      throw unimplemented(std::string(name) + " has no GPU kernel for " +
                          std::string(dtype_name(out.dtype())) + " tensors");
  }
}

[[maybe_unused]] inline constexpr std::array float_only{DType::float32};
inline constexpr std::array floating{DType::float32, DType::float64};

}  // namespace
}  // namespace backend::cuda

#if TAPEFLOW_HAS_CUDNN
template <>
struct kernel<ops::Conv2D, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::float_only;
  static void run(const ops::Conv2D& op, AnyTensor& out, std::span<const AnyTensor> in) {
    auto const g = backend::cuda::conv_geometry_for(backend::cuda::ConvDirection::forward, op,
                                                    ops::Conv2D::name, backend::cuda::dims4(in[0]),
                                                    backend::cuda::dims4(in[1]));
    backend::cuda::run_conv(g, in[0], in[1], out);
  }
};
template <>
struct kernel<ops::Conv2DBackpropInput, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::float_only;
  static void run(const ops::Conv2DBackpropInput& op, AnyTensor& out,
                  std::span<const AnyTensor> in) {
    auto const g = backend::cuda::conv_geometry_for(backend::cuda::ConvDirection::backward_data, op,
                                                    ops::Conv2DBackpropInput::name, op.input_sizes,
                                                    backend::cuda::dims4(in[0]));
    backend::cuda::run_conv(g, in[0], in[1], out);
  }
};
template <>
struct kernel<ops::Conv2DBackpropFilter, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::float_only;
  static void run(const ops::Conv2DBackpropFilter& op, AnyTensor& out,
                  std::span<const AnyTensor> in) {
    auto const g = backend::cuda::conv_geometry_for(backend::cuda::ConvDirection::backward_filter,
                                                    op, ops::Conv2DBackpropFilter::name,
                                                    backend::cuda::dims4(in[0]), op.filter_sizes);
    backend::cuda::run_conv(g, in[0], in[1], out);
  }
};
#endif  // TAPEFLOW_HAS_CUDNN
template <>
struct kernel<ops::MaxPool, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::floating;
  static void run(const ops::MaxPool& op, AnyTensor& out, std::span<const AnyTensor> in) {
    auto const g =
        backend::cuda::pool_geometry_for(op, ops::MaxPool::name, backend::cuda::dims4(in[0]));
    backend::cuda::run_pool(ops::MaxPool::name, backend::cuda::PoolKernel::max, g, &in[0], nullptr,
                            out);
  }
};
// Inputs: the forward input, the forward output (unused: the maxima are found again), dy.
template <>
struct kernel<ops::MaxPoolGrad, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::floating;
  static void run(const ops::MaxPoolGrad& op, AnyTensor& out, std::span<const AnyTensor> in) {
    auto const g =
        backend::cuda::pool_geometry_for(op, ops::MaxPoolGrad::name, backend::cuda::dims4(in[0]));
    backend::cuda::run_pool(ops::MaxPoolGrad::name, backend::cuda::PoolKernel::max_grad, g, &in[0],
                            &in[2], out);
  }
};
template <>
struct kernel<ops::AvgPool, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::floating;
  static void run(const ops::AvgPool& op, AnyTensor& out, std::span<const AnyTensor> in) {
    auto const g =
        backend::cuda::pool_geometry_for(op, ops::AvgPool::name, backend::cuda::dims4(in[0]));
    backend::cuda::run_pool(ops::AvgPool::name, backend::cuda::PoolKernel::avg, g, &in[0], nullptr,
                            out);
  }
};
template <>
struct kernel<ops::AvgPoolGrad, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::floating;
  static void run(const ops::AvgPoolGrad& op, AnyTensor& out, std::span<const AnyTensor> in) {
    auto const g =
        backend::cuda::pool_geometry_for(op, ops::AvgPoolGrad::name, op.orig_input_shape);
    backend::cuda::run_pool(ops::AvgPoolGrad::name, backend::cuda::PoolKernel::avg_grad, g, nullptr,
                            &in[0], out);
  }
};

namespace backend::cuda {

void register_nn_kernels(BackendId id) {
#if TAPEFLOW_HAS_CUDNN
  register_kernel<ops::Conv2D, Backend>(id);
  register_kernel<ops::Conv2DBackpropInput, Backend>(id);
  register_kernel<ops::Conv2DBackpropFilter, Backend>(id);
#endif
  register_kernel<ops::MaxPool, Backend>(id);
  register_kernel<ops::MaxPoolGrad, Backend>(id);
  register_kernel<ops::AvgPool, Backend>(id);
  register_kernel<ops::AvgPoolGrad, Backend>(id);
}

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
