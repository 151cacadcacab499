// Launchers of the CUDA elementwise kernels (backends/cuda/elementwise.cu), callable from host
// code compiled by the C++ compiler, and their index arithmetic, which host and device share
// (so tests/unit/backend/cuda_broadcast.test.cpp checks it on a CPU). Internal to
// tapeflow::cuda.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/math/detail/scalar_math.hpp>  // TAPEFLOW_HOST_DEVICE

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// Operands broadcast to the output (NumPy rules), for kernels that index them.
struct Broadcast {
  static constexpr int max_rank = 8;
  int rank = 0;
  std::int64_t out_dims[max_rank] = {};
  std::int64_t a_strides[max_rank] = {};  // 0 along axes `a` broadcasts
  std::int64_t b_strides[max_rank] = {};
};

/// NumPy broadcasting of an operand of dims `operand` to `out` (right-aligned): its stride
/// along each output axis, 0 where it lacks the axis or has it as 1.
inline void broadcast_strides(std::span<const std::int64_t> operand,
                              std::span<const std::int64_t> out, std::int64_t* strides) {
  std::size_t const offset = out.size() - operand.size();
  std::int64_t stride = 1;
  for (std::size_t axis = out.size(); axis-- > 0;) {
    std::int64_t const d = axis < offset ? 1 : operand[axis - offset];
    strides[axis] = d == 1 ? 0 : stride;
    stride *= d;
  }
}

/// The offsets in `a` and `b` of output element `i` (row-major).
TAPEFLOW_HOST_DEVICE inline void broadcast_offsets(const Broadcast& index, std::int64_t i,
                                                   std::int64_t& offset_a, std::int64_t& offset_b) {
  std::int64_t rest = i;
  offset_a = 0;
  offset_b = 0;
  for (int axis = index.rank - 1; axis >= 0; --axis) {
    std::int64_t const coordinate = rest % index.out_dims[axis];
    rest /= index.out_dims[axis];
    offset_a += coordinate * index.a_strides[axis];
    offset_b += coordinate * index.b_strides[axis];
  }
}

/// One binary elementwise launch: `out[i] = F(a[...], b[...])` over `n` outputs of type U
/// (bool for comparisons). Without `strided`, each operand is either the output's shape
/// (`*_vector`) or a single value.
template <class T, class U = T>
struct BinaryArgs {
  const T* a = nullptr;
  const T* b = nullptr;
  U* out = nullptr;
  std::int64_t n = 0;
  bool a_vector = true;
  bool b_vector = true;
  bool strided = false;
  Broadcast index;
};

/// Launches `F` (a functor of ops/math/detail/scalar_math.hpp) on `stream` (a cudaStream_t).
/// Instantiated in elementwise.cu for the functors and types the kernels register.
template <class F, class T, class U = T>
void launch_binary(const BinaryArgs<T, U>& args, void* stream);

/// `out[i] = F(x[i])` over `n` elements on `stream`; instantiated in elementwise.cu.
template <class F, class T>
void launch_unary(const T* x, T* out, std::int64_t n, void* stream);

/// `out[i] = CastTo<U>(x[i])` over `n` elements on `stream`; instantiated in elementwise.cu
/// for float, double, int32, int64 and bool each way.
template <class T, class U>
void launch_cast(const T* x, U* out, std::int64_t n, void* stream);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
