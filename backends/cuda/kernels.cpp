// The CUDA kernels of ops: `kernel<Op, cuda::Backend>` specializations, registered with the
// GPU platform (Note [Backends]). They receive their inputs on the op's GPU (the executor
// copies them there) and write their output in its memory; elementwise math comes from the
// functors the CPU kernels use (ops/math/detail/scalar_math.hpp), matrix products from cuBLAS.
#include "kernels.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <tapeflow/backend/cuda/platform.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/ops/array/one_hot.hpp>
#include <tapeflow/ops/kernel_registry.hpp>
#include <tapeflow/ops/linalg/matmul.hpp>
#include <tapeflow/ops/math/add_n.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/math/compare.hpp>
#include <tapeflow/ops/math/detail/scalar_math.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/cross_entropy.hpp>
#include <tapeflow/ops/nn/softmax.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

#include "device_memory.hpp"
#include "elementwise.hpp"
#include "nn.hpp"
#include "reduce.hpp"

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {
namespace {

[[noreturn]] void unsupported(std::string_view op, DType dtype) {
  throw unimplemented(std::string(op) + " has no GPU kernel for " + std::string(dtype_name(dtype)) +
                      " tensors");
}

template <class F, class T, class U = T>
void run_binary_typed(AnyTensor& out, std::span<const AnyTensor> in) {
  BinaryArgs<T, U> args;
  args.n = out.num_elements();
  if (args.n == 0) {
    return;
  }
  CudaMemory& device = current_device();
  args.a = static_cast<const T*>(in[0].device_data());
  args.b = static_cast<const T*>(in[1].device_data());
  args.out = static_cast<U*>(out.mutable_device_data());
  bool const a_full = in[0].shape() == out.shape();
  bool const b_full = in[1].shape() == out.shape();
  if ((a_full || in[0].num_elements() == 1) && (b_full || in[1].num_elements() == 1)) {
    args.a_vector = a_full && args.n != 1;
    args.b_vector = b_full && args.n != 1;
  } else {
    if (out.rank() > static_cast<std::size_t>(Broadcast::max_rank)) {
      throw unimplemented("GPU elementwise ops broadcast up to rank " +
                          std::to_string(Broadcast::max_rank) + ", not " + out.shape().to_string());
    }
    args.strided = true;
    args.index.rank = static_cast<int>(out.rank());
    std::copy(out.shape().dims().begin(), out.shape().dims().end(), args.index.out_dims);
    broadcast_strides(in[0].shape().dims(), out.shape().dims(), args.index.a_strides);
    broadcast_strides(in[1].shape().dims(), out.shape().dims(), args.index.b_strides);
  }
  device.activate();
  launch_binary<F, T, U>(args, device.stream());
  check(cudaGetLastError(), "elementwise kernel launch");
}

// float, double, int32 and int64 (the dtypes arithmetic ops meet in models). The kernels
// register these, so placement runs other dtypes on the CPU; a direct call with another is
// unimplemented, naming the op and dtype.
inline constexpr std::array elementwise_dtypes{DType::float32, DType::float64, DType::int32,
                                               DType::int64};
template <class F>
void run_binary(std::string_view op, AnyTensor& out, std::span<const AnyTensor> in) {
  switch (out.dtype()) {
    case DType::float32:
      return run_binary_typed<F, float>(out, in);
    case DType::float64:
      return run_binary_typed<F, double>(out, in);
    case DType::int32:
      return run_binary_typed<F, std::int32_t>(out, in);
    case DType::int64:
      return run_binary_typed<F, std::int64_t>(out, in);
    default:
      unsupported(op, out.dtype());
  }
}

// Comparisons: operands of one numeric dtype (the first input's), bool results.
template <class F>
void run_compare(std::string_view op, AnyTensor& out, std::span<const AnyTensor> in) {
  switch (in[0].dtype()) {
    case DType::float32:
      return run_binary_typed<F, float, bool>(out, in);
    case DType::float64:
      return run_binary_typed<F, double, bool>(out, in);
    case DType::int32:
      return run_binary_typed<F, std::int32_t, bool>(out, in);
    case DType::int64:
      return run_binary_typed<F, std::int64_t, bool>(out, in);
    default:
      unsupported(op, in[0].dtype());
  }
}

// Casts between float, double, int32, int64 and bool.
inline constexpr std::array cast_dtypes{DType::float32, DType::float64, DType::int32, DType::int64,
                                        DType::bool_};
template <class U>
void run_cast(AnyTensor& out, const AnyTensor& x) {
  std::int64_t const n = out.num_elements();
  if (n == 0) {
    return;
  }
  CudaMemory& device = current_device();
  auto* result = static_cast<U*>(out.mutable_device_data());
  const void* in = x.device_data();
  device.activate();
  switch (x.dtype()) {
    case DType::float32:
      launch_cast(static_cast<const float*>(in), result, n, device.stream());
      break;
    case DType::float64:
      launch_cast(static_cast<const double*>(in), result, n, device.stream());
      break;
    case DType::int32:
      launch_cast(static_cast<const std::int32_t*>(in), result, n, device.stream());
      break;
    case DType::int64:
      launch_cast(static_cast<const std::int64_t*>(in), result, n, device.stream());
      break;
    case DType::bool_:
      launch_cast(static_cast<const bool*>(in), result, n, device.stream());
      break;
    default:
      unsupported("Cast", x.dtype());
  }
  check(cudaGetLastError(), "cast kernel launch");
}

// Same-shape unary ops: the floating ones (exp, log, ...) take float and double; those
// integers also take (neg, abs, ...) take int32 and int64 too.
inline constexpr std::array floating_dtypes{DType::float32, DType::float64};
template <class F, class T>
void run_unary_typed(AnyTensor& out, const AnyTensor& x) {
  std::int64_t const n = out.num_elements();
  if (n == 0) {
    return;
  }
  CudaMemory& device = current_device();
  auto const* in = static_cast<const T*>(x.device_data());
  auto* result = static_cast<T*>(out.mutable_device_data());
  device.activate();
  launch_unary<F, T>(in, result, n, device.stream());
  check(cudaGetLastError(), "elementwise kernel launch");
}
template <class F, bool Integers>
void run_unary(std::string_view op, AnyTensor& out, std::span<const AnyTensor> in) {
  switch (out.dtype()) {
    case DType::float32:
      return run_unary_typed<F, float>(out, in[0]);
    case DType::float64:
      return run_unary_typed<F, double>(out, in[0]);
    case DType::int32:
      if constexpr (Integers) {
        return run_unary_typed<F, std::int32_t>(out, in[0]);
      }
      break;
    case DType::int64:
      if constexpr (Integers) {
        return run_unary_typed<F, std::int64_t>(out, in[0]);
      }
      break;
    default:
      break;
  }
  unsupported(op, out.dtype());
}

template <ReduceOp Op, class T>
void run_reduce_typed(AnyTensor& out, const AnyTensor& x, const ReduceIndex& index) {
  if (index.outputs == 0) {
    return;
  }
  CudaMemory& device = current_device();
  auto const* in = static_cast<const T*>(x.device_data());
  auto* result = static_cast<T*>(out.mutable_device_data());
  device.activate();
  ScratchMemory const scratch{[](void* context, std::size_t bytes) {
                                return static_cast<CudaMemory*>(context)->allocate(bytes);
                              },
                              [](void* context, void* pointer, std::size_t bytes) {
                                static_cast<CudaMemory*>(context)->deallocate(pointer, bytes);
                              },
                              &device};
  launch_reduce<Op, T>(in, result, index, scratch, device.stream());
  check(cudaGetLastError(), "reduction kernel launch");
}
template <ReduceOp Op>
void run_reduce(std::string_view op, std::span<const int> axes, AnyTensor& out,
                std::span<const AnyTensor> in) {
  const Shape& shape = in[0].shape();
  std::array<bool, max_rank> reduced{};
  for (int axis : axes) {
    reduced[static_cast<std::size_t>(axis)] = true;
  }
  ReduceIndex const index =
      make_reduce_index(shape.dims(), std::span<const bool>(reduced.data(), shape.rank()));
  switch (out.dtype()) {
    case DType::float32:
      return run_reduce_typed<Op, float>(out, in[0], index);
    case DType::float64:
      return run_reduce_typed<Op, double>(out, in[0], index);
    case DType::int32:
      return run_reduce_typed<Op, std::int32_t>(out, in[0], index);
    case DType::int64:
      return run_reduce_typed<Op, std::int64_t>(out, in[0], index);
    default:
      unsupported(op, out.dtype());
  }
}
constexpr ReduceOp reduce_op(ops::ReduceKind kind) {
  switch (kind) {
    case ops::ReduceKind::sum:
      return ReduceOp::sum;
    case ops::ReduceKind::mean:
      return ReduceOp::mean;
    case ops::ReduceKind::max:
      return ReduceOp::max;
    default:
      return ReduceOp::min;
  }
}
// [outer, n, inner] around `axis` of `shape`.
AxisSplit split_at(const Shape& shape, std::size_t axis) {
  AxisSplit split;
  for (std::size_t a = 0; a < shape.rank(); ++a) {
    std::int64_t const d = shape.dims()[a];
    (a < axis ? split.outer : a == axis ? split.n : split.inner) *= d;
  }
  return split;
}

template <class T>
void run_softmax_typed(std::size_t axis, bool log, AnyTensor& out, const AnyTensor& x) {
  if (out.num_elements() == 0) {
    return;
  }
  CudaMemory& device = current_device();
  auto const* in = static_cast<const T*>(x.device_data());
  auto* result = static_cast<T*>(out.mutable_device_data());
  device.activate();
  launch_softmax<T>(in, result, split_at(x.shape(), axis), log, device.stream());
  check(cudaGetLastError(), "softmax kernel launch");
}
void run_softmax(std::string_view op, int axis, bool log, AnyTensor& out,
                 std::span<const AnyTensor> in) {
  auto const a = static_cast<std::size_t>(axis < 0 ? axis + static_cast<int>(in[0].rank()) : axis);
  switch (out.dtype()) {
    case DType::float32:
      return run_softmax_typed<float>(a, log, out, in[0]);
    case DType::float64:
      return run_softmax_typed<double>(a, log, out, in[0]);
    default:
      unsupported(op, out.dtype());
  }
}

// Labels are checked on the host copy first (as the CPU kernel checks them before any work),
// so a bad label is the CPU's invalid_argument, naming it.
template <class T, class I>
void run_sparse_xent_typed(AnyTensor& loss, std::span<const AnyTensor> in) {
  std::int64_t const classes = in[0].shape().dims()[in[0].rank() - 1];
  std::int64_t const rows = in[1].num_elements();
  auto const* labels = static_cast<const I*>(in[1].raw_data());
  for (std::int64_t r = 0; r < rows; ++r) {
    if (labels[r] < 0 || static_cast<std::int64_t>(labels[r]) >= classes) {
      throw invalid_argument(
          std::string(ops::SparseSoftmaxCrossEntropyWithLogits::name) +
          ": received a label value of " + std::to_string(labels[r]) + " (at index " +
          std::to_string(r) + ") which is outside the valid range of [0, " +
          std::to_string(classes) + ") for logits of shape " + in[0].shape().to_string());
    }
  }
  if (rows == 0) {
    return;
  }
  CudaMemory& device = current_device();
  auto const* logits = static_cast<const T*>(in[0].device_data());
  auto const* device_labels = static_cast<const I*>(in[1].device_data());
  auto* out = static_cast<T*>(loss.mutable_device_data());
  device.activate();
  launch_sparse_xent<T, I>(logits, device_labels, out, rows, classes, device.stream());
  check(cudaGetLastError(), "cross-entropy kernel launch");
}
template <class T>
void run_sparse_xent(AnyTensor& loss, std::span<const AnyTensor> in) {
  if (in[1].dtype() == DType::int64) {
    return run_sparse_xent_typed<T, std::int64_t>(loss, in);
  }
  return run_sparse_xent_typed<T, std::int32_t>(loss, in);
}

template <class U, class I>
void run_one_hot_typed(const ops::OneHot<U>& op, AnyTensor& out, const AnyTensor& indices) {
  int const out_rank = static_cast<int>(out.rank());
  auto const axis = static_cast<std::size_t>(op.axis < 0 ? op.axis + out_rank : op.axis);
  if (out.num_elements() == 0) {
    return;
  }
  CudaMemory& device = current_device();
  auto const* in = static_cast<const I*>(indices.device_data());
  auto* result = static_cast<U*>(out.mutable_device_data());
  device.activate();
  launch_one_hot<U, I>(in, result, split_at(out.shape(), axis), op.on_value, op.off_value,
                       device.stream());
  check(cudaGetLastError(), "one-hot kernel launch");
}

// cuBLAS is column-major: the row-major product C = op(A) op(B) is, read column-major,
// C^T = op(B)^T op(A)^T, so operands swap and each keeps its own transpose flag.
template <class T>
cublasStatus_t gemm_batched(cublasHandle_t handle, bool transpose_a, bool transpose_b,
                            std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                            std::int64_t lda, std::int64_t stride_a, const T* b, std::int64_t ldb,
                            std::int64_t stride_b, T* c, std::int64_t batches) {
  T const one = 1;
  T const zero = 0;
  auto const op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto const op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  auto const cm = static_cast<int>(m);
  auto const cn = static_cast<int>(n);
  auto const ck = static_cast<int>(k);
  if constexpr (std::is_same_v<T, float>) {
    return cublasSgemmStridedBatched(handle, op_b, op_a, cn, cm, ck, &one, b, static_cast<int>(ldb),
                                     stride_b, a, static_cast<int>(lda), stride_a, &zero, c, cn,
                                     m * n, static_cast<int>(batches));
  } else {
    return cublasDgemmStridedBatched(handle, op_b, op_a, cn, cm, ck, &one, b, static_cast<int>(ldb),
                                     stride_b, a, static_cast<int>(lda), stride_a, &zero, c, cn,
                                     m * n, static_cast<int>(batches));
  }
}

template <class T>
void run_matmul_typed(const ops::MatMul& op, AnyTensor& out, std::span<const AnyTensor> in) {
  const Shape& sa = in[0].shape();
  const Shape& sb = in[1].shape();
  std::size_t const r = out.rank();
  std::int64_t const m = out.shape().dims()[r - 2];
  std::int64_t const n = out.shape().dims()[r - 1];
  std::int64_t const k = sa.dims()[sa.rank() - (op.transpose_a ? 2 : 1)];
  if (out.num_elements() == 0) {
    return;
  }
  std::int64_t const batches = out.num_elements() / (m * n);
  std::int64_t const size_a = sa.dims()[sa.rank() - 2] * sa.dims()[sa.rank() - 1];
  std::int64_t const size_b = sb.dims()[sb.rank() - 2] * sb.dims()[sb.rank() - 1];
  std::int64_t const batches_a = in[0].num_elements() / std::max<std::int64_t>(size_a, 1);
  std::int64_t const batches_b = in[1].num_elements() / std::max<std::int64_t>(size_b, 1);
  CudaMemory& device = current_device();
  auto const* a = static_cast<const T*>(in[0].device_data());
  auto const* b = static_cast<const T*>(in[1].device_data());
  auto* c = static_cast<T*>(out.mutable_device_data());
  if (k == 0) {
    device.activate();
    check(cudaMemsetAsync(c, 0, static_cast<std::size_t>(out.num_elements()) * sizeof(T),
                          static_cast<cudaStream_t>(device.stream())),
          "cudaMemsetAsync");
    return;
  }
  if (std::max({m, n, k, batches}) > std::int64_t{INT32_MAX}) {
    throw unimplemented("MatMul on a GPU: dimensions past 2^31 (" + out.shape().to_string() + ")");
  }
  auto* handle = static_cast<cublasHandle_t>(device.blas());
  device.activate();
  std::int64_t const lda = sa.dims()[sa.rank() - 1];
  std::int64_t const ldb = sb.dims()[sb.rank() - 1];
  // Each operand has every batch or one (stride 0): one strided-batched call. Mixed
  // broadcasting of leading axes ((2, 1, m, k) x (3, k, n)) goes one product at a time.
  bool const uniform = (batches_a == batches || batches_a == 1) &&
                       (batches_b == batches || batches_b == 1) &&
                       (sa.rank() == r || batches_a == 1) && (sb.rank() == r || batches_b == 1);
  if (uniform) {
    auto const status = gemm_batched<T>(handle, op.transpose_a, op.transpose_b, m, n, k, a, lda,
                                        batches_a == 1 ? 0 : size_a, b, ldb,
                                        batches_b == 1 ? 0 : size_b, c, batches);
    if (status != CUBLAS_STATUS_SUCCESS) {
      throw internal("cuBLAS gemm failed (status " + std::to_string(status) + ") for " +
                     sa.to_string() + " x " + sb.to_string());
    }
    return;
  }
  if (r - 2 > static_cast<std::size_t>(Broadcast::max_rank)) {
    throw unimplemented("MatMul on a GPU: more than 8 batch axes");
  }
  std::vector<std::int64_t> batch_out(out.shape().dims().begin(), out.shape().dims().end() - 2);
  std::vector<std::int64_t> batch_a(sa.dims().begin(), sa.dims().end() - 2);
  std::vector<std::int64_t> batch_b(sb.dims().begin(), sb.dims().end() - 2);
  Broadcast index;
  index.rank = static_cast<int>(batch_out.size());
  std::copy(batch_out.begin(), batch_out.end(), index.out_dims);
  broadcast_strides(batch_a, batch_out, index.a_strides);
  broadcast_strides(batch_b, batch_out, index.b_strides);
  for (std::int64_t i = 0; i < batches; ++i) {
    std::int64_t offset_a = 0;
    std::int64_t offset_b = 0;
    broadcast_offsets(index, i, offset_a, offset_b);
    auto const status =
        gemm_batched<T>(handle, op.transpose_a, op.transpose_b, m, n, k, a + offset_a * size_a, lda,
                        0, b + offset_b * size_b, ldb, 0, c + i * m * n, 1);
    if (status != CUBLAS_STATUS_SUCCESS) {
      throw internal("cuBLAS gemm failed (status " + std::to_string(status) + ")");
    }
  }
}

}  // namespace

}  // namespace backend::cuda

template <>
struct kernel<ops::Add, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;
  static void run(const ops::Add&, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_binary<detail::scalar_math::Add>(ops::Add::name, out, in);
  }
};
template <>
struct kernel<ops::Sub, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;
  static void run(const ops::Sub&, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_binary<detail::scalar_math::Sub>(ops::Sub::name, out, in);
  }
};
template <>
struct kernel<ops::Mul, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;
  static void run(const ops::Mul&, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_binary<detail::scalar_math::Mul>(ops::Mul::name, out, in);
  }
};
// Integer division truncates as C++ does on either side; a zero divisor is the CPU kernel's
// error, found by reading the divisor's host copy first.
template <>
struct kernel<ops::Div, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;
  template <class T>
  static void require_nonzero(const AnyTensor& divisor) {
    auto const* values = static_cast<const T*>(divisor.raw_data());
    for (std::int64_t i = 0; i < divisor.num_elements(); ++i) {
      if (values[i] == T(0)) {
        throw invalid_argument("Div: integer division by zero");
      }
    }
  }
  static void run(const ops::Div&, AnyTensor& out, std::span<const AnyTensor> in) {
    if (out.dtype() == DType::int32) {
      require_nonzero<std::int32_t>(in[1]);
    } else if (out.dtype() == DType::int64) {
      require_nonzero<std::int64_t>(in[1]);
    }
    backend::cuda::run_binary<detail::scalar_math::Div>(ops::Div::name, out, in);
  }
};
#define TAPEFLOW_CUDA_UNARY_KERNEL(Op, Integers)                                                   \
  template <>                                                                                      \
  struct kernel<ops::Op, backend::cuda::Backend> {                                                 \
    static constexpr auto dtypes = Integers                                                        \
                                       ? std::span<const DType>(backend::cuda::elementwise_dtypes) \
                                       : std::span<const DType>(backend::cuda::floating_dtypes);   \
    static void run(const ops::Op&, AnyTensor& out, std::span<const AnyTensor> in) {               \
      backend::cuda::run_unary<detail::scalar_math::Op, Integers>(ops::Op::name, out, in);         \
    }                                                                                              \
  };
TAPEFLOW_CUDA_UNARY_KERNEL(Neg, true)
TAPEFLOW_CUDA_UNARY_KERNEL(Square, true)
TAPEFLOW_CUDA_UNARY_KERNEL(Abs, true)
TAPEFLOW_CUDA_UNARY_KERNEL(Sign, true)
TAPEFLOW_CUDA_UNARY_KERNEL(Relu, true)
TAPEFLOW_CUDA_UNARY_KERNEL(Exp, false)
TAPEFLOW_CUDA_UNARY_KERNEL(Log, false)
TAPEFLOW_CUDA_UNARY_KERNEL(Sqrt, false)
TAPEFLOW_CUDA_UNARY_KERNEL(Tanh, false)
TAPEFLOW_CUDA_UNARY_KERNEL(Sigmoid, false)
#undef TAPEFLOW_CUDA_UNARY_KERNEL

template <>
struct kernel<ops::Pow, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::floating_dtypes;
  static void run(const ops::Pow&, AnyTensor& out, std::span<const AnyTensor> in) {
    switch (out.dtype()) {
      case DType::float32:
        return backend::cuda::run_binary_typed<detail::scalar_math::Pow, float>(out, in);
      case DType::float64:
        return backend::cuda::run_binary_typed<detail::scalar_math::Pow, double>(out, in);
      default:
        backend::cuda::unsupported(ops::Pow::name, out.dtype());
    }
  }
};
template <>
struct kernel<ops::SquaredDifference, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;
  static void run(const ops::SquaredDifference&, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_binary<detail::scalar_math::SquaredDifference>(ops::SquaredDifference::name,
                                                                       out, in);
  }
};
template <>
struct kernel<ops::Maximum, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;
  static void run(const ops::Maximum&, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_binary<detail::scalar_math::Maximum>(ops::Maximum::name, out, in);
  }
};
template <>
struct kernel<ops::Minimum, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;
  static void run(const ops::Minimum&, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_binary<detail::scalar_math::Minimum>(ops::Minimum::name, out, in);
  }
};
#define TAPEFLOW_CUDA_COMPARE_KERNEL(Op)                                             \
  template <>                                                                        \
  struct kernel<ops::Op, backend::cuda::Backend> {                                   \
    static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;          \
    static void run(const ops::Op&, AnyTensor& out, std::span<const AnyTensor> in) { \
      backend::cuda::run_compare<detail::scalar_math::Op>(ops::Op::name, out, in);   \
    }                                                                                \
  };
TAPEFLOW_CUDA_COMPARE_KERNEL(Equal)
TAPEFLOW_CUDA_COMPARE_KERNEL(NotEqual)
TAPEFLOW_CUDA_COMPARE_KERNEL(Less)
TAPEFLOW_CUDA_COMPARE_KERNEL(LessEqual)
TAPEFLOW_CUDA_COMPARE_KERNEL(Greater)
TAPEFLOW_CUDA_COMPARE_KERNEL(GreaterEqual)
#undef TAPEFLOW_CUDA_COMPARE_KERNEL
template <class U>
  requires(std::same_as<U, float> || std::same_as<U, double> || std::same_as<U, std::int32_t> ||
           std::same_as<U, std::int64_t> || std::same_as<U, bool>)
struct kernel<ops::Cast<U>, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::cast_dtypes;
  static void run(const ops::Cast<U>&, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_cast<U>(out, in[0]);
  }
};

// Relu's backprop: two operands of one shape.
template <>
struct kernel<ops::ReluGrad, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::floating_dtypes;
  static void run(const ops::ReluGrad&, AnyTensor& out, std::span<const AnyTensor> in) {
    switch (out.dtype()) {
      case DType::float32:
        return backend::cuda::run_binary_typed<detail::scalar_math::ReluGrad, float>(out, in);
      case DType::float64:
        return backend::cuda::run_binary_typed<detail::scalar_math::ReluGrad, double>(out, in);
      default:
        backend::cuda::unsupported(ops::ReluGrad::name, out.dtype());
    }
  }
};
// Sum, Mean, Max, Min over any axes, for every output rank.
template <ops::ReduceKind Kind, std::size_t OutRank>
struct kernel<ops::Reduce<Kind, OutRank>, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;
  static void run(const ops::Reduce<Kind, OutRank>& op, AnyTensor& out,
                  std::span<const AnyTensor> in) {
    backend::cuda::run_reduce<backend::cuda::reduce_op(Kind)>(
        ops::Reduce<Kind, OutRank>::name, std::span<const int>(op.axes.data(), op.num_axes), out,
        in);
  }
};
template <>
struct kernel<ops::Softmax, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::floating_dtypes;
  static void run(const ops::Softmax& op, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_softmax(ops::Softmax::name, op.axis, false, out, in);
  }
};
template <>
struct kernel<ops::LogSoftmax, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::floating_dtypes;
  static void run(const ops::LogSoftmax& op, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_softmax(ops::LogSoftmax::name, op.axis, true, out, in);
  }
};
template <>
struct kernel<ops::SparseSoftmaxCrossEntropyWithLogits, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::floating_dtypes;
  static void run(const ops::SparseSoftmaxCrossEntropyWithLogits&, AnyTensor& out,
                  std::span<const AnyTensor> in) {
    switch (out.dtype()) {
      case DType::float32:
        return backend::cuda::run_sparse_xent<float>(out, in);
      case DType::float64:
        return backend::cuda::run_sparse_xent<double>(out, in);
      default:
        backend::cuda::unsupported(ops::SparseSoftmaxCrossEntropyWithLogits::name, out.dtype());
    }
  }
};
// Placement checks the first input's dtype: the indices'. uint8 indices run on the CPU.
template <class U>
  requires std::same_as<U, float> || std::same_as<U, double>
struct kernel<ops::OneHot<U>, backend::cuda::Backend> {
  static constexpr std::array dtypes{DType::int32, DType::int64};
  static void run(const ops::OneHot<U>& op, AnyTensor& out, std::span<const AnyTensor> in) {
    if (in[0].dtype() == DType::int64) {
      return backend::cuda::run_one_hot_typed<U, std::int64_t>(op, out, in[0]);
    }
    if (in[0].dtype() == DType::int32) {
      return backend::cuda::run_one_hot_typed<U, std::int32_t>(op, out, in[0]);
    }
    backend::cuda::unsupported(ops::OneHot<U>::name, in[0].dtype());
  }
};
// The tape's gradient accumulation: two operands of one shape, summed as AddV2 sums.
template <>
struct kernel<ops::AddN, backend::cuda::Backend> {
  static constexpr std::array dtypes = backend::cuda::elementwise_dtypes;
  static void run(const ops::AddN&, AnyTensor& out, std::span<const AnyTensor> in) {
    backend::cuda::run_binary<detail::scalar_math::Add>(ops::AddN::name, out, in);
  }
};
template <>
struct kernel<ops::MatMul, backend::cuda::Backend> {
  static constexpr std::array dtypes{DType::float32, DType::float64};  // cuBLAS S/D gemm
  static void run(const ops::MatMul& op, AnyTensor& out, std::span<const AnyTensor> in) {
    switch (out.dtype()) {
      case DType::float32:
        return backend::cuda::run_matmul_typed<float>(op, out, in);
      case DType::float64:
        return backend::cuda::run_matmul_typed<double>(op, out, in);
      default:
        backend::cuda::unsupported(ops::MatMul::name, out.dtype());
    }
  }
};

namespace backend::cuda {

template <ops::ReduceKind Kind, std::size_t... OutRanks>
void register_reductions(BackendId id, std::index_sequence<OutRanks...>) {
  (register_kernel<ops::Reduce<Kind, OutRanks>, Backend>(id), ...);
}

void register_kernels(BackendId id) {
  register_kernel<ops::Add, Backend>(id);
  register_kernel<ops::Sub, Backend>(id);
  register_kernel<ops::Mul, Backend>(id);
  register_kernel<ops::Div, Backend>(id);
  register_kernel<ops::AddN, Backend>(id);
  register_kernel<ops::MatMul, Backend>(id);
  register_kernel<ops::Neg, Backend>(id);
  register_kernel<ops::Square, Backend>(id);
  register_kernel<ops::Abs, Backend>(id);
  register_kernel<ops::Sign, Backend>(id);
  register_kernel<ops::Relu, Backend>(id);
  register_kernel<ops::Exp, Backend>(id);
  register_kernel<ops::Log, Backend>(id);
  register_kernel<ops::Sqrt, Backend>(id);
  register_kernel<ops::Tanh, Backend>(id);
  register_kernel<ops::Sigmoid, Backend>(id);
  register_kernel<ops::ReluGrad, Backend>(id);
  register_kernel<ops::Pow, Backend>(id);
  register_kernel<ops::SquaredDifference, Backend>(id);
  register_kernel<ops::Maximum, Backend>(id);
  register_kernel<ops::Minimum, Backend>(id);
  register_kernel<ops::Equal, Backend>(id);
  register_kernel<ops::NotEqual, Backend>(id);
  register_kernel<ops::Less, Backend>(id);
  register_kernel<ops::LessEqual, Backend>(id);
  register_kernel<ops::Greater, Backend>(id);
  register_kernel<ops::GreaterEqual, Backend>(id);
  register_kernel<ops::Cast<float>, Backend>(id);
  register_kernel<ops::Cast<double>, Backend>(id);
  register_kernel<ops::Cast<std::int32_t>, Backend>(id);
  register_kernel<ops::Cast<std::int64_t>, Backend>(id);
  register_kernel<ops::Cast<bool>, Backend>(id);
  register_kernel<ops::Softmax, Backend>(id);
  register_kernel<ops::LogSoftmax, Backend>(id);
  register_kernel<ops::SparseSoftmaxCrossEntropyWithLogits, Backend>(id);
  register_kernel<ops::OneHot<float>, Backend>(id);
  register_kernel<ops::OneHot<double>, Backend>(id);
  register_nn_kernels(id);
  register_training_kernels(id);
  using Ranks = std::make_index_sequence<max_rank + 1>;
  register_reductions<ops::ReduceKind::sum>(id, Ranks{});
  register_reductions<ops::ReduceKind::mean>(id, Ranks{});
  register_reductions<ops::ReduceKind::max>(id, Ranks{});
  register_reductions<ops::ReduceKind::min>(id, Ranks{});
}

std::unique_ptr<DeviceMemory> make_device_memory(const DeviceMemoryRequest& request) {
  return std::make_unique<CudaMemory>(request);
}

}  // namespace backend::cuda

TAPEFLOW_END_NAMESPACE
