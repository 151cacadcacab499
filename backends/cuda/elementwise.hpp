// Launchers of the CUDA elementwise kernels (backends/cuda/elementwise.cu), callable from host
// code compiled by the C++ compiler. Internal to tapeflow::cuda.
#pragma once

#include <cstdint>

#include <tapeflow/detail/macros.hpp>

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

/// One binary elementwise launch: `out[i] = F(a[...], b[...])` over `n` outputs. Without
/// `strided`, each operand is either the output's shape (`*_vector`) or a single value.
template <class T>
struct BinaryArgs {
  const T* a = nullptr;
  const T* b = nullptr;
  T* out = nullptr;
  std::int64_t n = 0;
  bool a_vector = true;
  bool b_vector = true;
  bool strided = false;
  Broadcast index;
};

/// Launches `F` (a functor of ops/math/detail/scalar_math.hpp) on `stream` (a cudaStream_t).
/// Instantiated in elementwise.cu for the functors and types the kernels register.
template <class F, class T>
void launch_binary(const BinaryArgs<T>& args, void* stream);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
