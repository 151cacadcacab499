// The CPU backend's SIMD layer: `VecFor<T>::type` wraps the widest vector this build targets,
// with load, store, broadcast, add, subtract and multiply-add. x86 float/double use intrinsics
// (guaranteed FMA); everything else uses the GCC/Clang vector extensions, which lower to whatever
// the target has (SSE2, NEON, ...). GEMM, convolution and batch-norm kernels share it; it
// includes no Eigen and no tensor types, so a kernel pays only for <immintrin.h>. Kernels that
// need no multiply-add use GenericVec alone (backend/cpu/generic_vec.hpp) and skip that header.
#pragma once

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#include <tapeflow/backend/cpu/generic_vec.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cpu {

#if defined(__AVX512F__)
/// The float SIMD vector operations on AVX-512: the GenericVec interface over `__m512` (16 lanes,
/// fused multiply-add).
struct VecF32 {
  using V = __m512;
  static constexpr int kLanes = 16;
  static TAPEFLOW_ALWAYS_INLINE V zero() { return _mm512_setzero_ps(); }
  static TAPEFLOW_ALWAYS_INLINE V load(float const* p) { return _mm512_loadu_ps(p); }
  static TAPEFLOW_ALWAYS_INLINE void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static TAPEFLOW_ALWAYS_INLINE V broadcast(float x) { return _mm512_set1_ps(x); }
  static TAPEFLOW_ALWAYS_INLINE V add(V a, V b) { return _mm512_add_ps(a, b); }
  static TAPEFLOW_ALWAYS_INLINE V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static TAPEFLOW_ALWAYS_INLINE V fma(V a, V b, V acc) { return _mm512_fmadd_ps(a, b, acc); }
};
/// The double SIMD vector operations on AVX-512: the GenericVec interface over `__m512d` (8 lanes,
/// fused multiply-add).
struct VecF64 {
  using V = __m512d;
  static constexpr int kLanes = 8;
  static TAPEFLOW_ALWAYS_INLINE V zero() { return _mm512_setzero_pd(); }
  static TAPEFLOW_ALWAYS_INLINE V load(double const* p) { return _mm512_loadu_pd(p); }
  static TAPEFLOW_ALWAYS_INLINE void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static TAPEFLOW_ALWAYS_INLINE V broadcast(double x) { return _mm512_set1_pd(x); }
  static TAPEFLOW_ALWAYS_INLINE V add(V a, V b) { return _mm512_add_pd(a, b); }
  static TAPEFLOW_ALWAYS_INLINE V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static TAPEFLOW_ALWAYS_INLINE V fma(V a, V b, V acc) { return _mm512_fmadd_pd(a, b, acc); }
};
#elif defined(__AVX2__) && defined(__FMA__)
/// The float SIMD vector operations on AVX2 + FMA: the GenericVec interface over `__m256` (8 lanes,
/// fused multiply-add).
struct VecF32 {
  using V = __m256;
  static constexpr int kLanes = 8;
  static TAPEFLOW_ALWAYS_INLINE V zero() { return _mm256_setzero_ps(); }
  static TAPEFLOW_ALWAYS_INLINE V load(float const* p) { return _mm256_loadu_ps(p); }
  static TAPEFLOW_ALWAYS_INLINE void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static TAPEFLOW_ALWAYS_INLINE V broadcast(float x) { return _mm256_set1_ps(x); }
  static TAPEFLOW_ALWAYS_INLINE V add(V a, V b) { return _mm256_add_ps(a, b); }
  static TAPEFLOW_ALWAYS_INLINE V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static TAPEFLOW_ALWAYS_INLINE V fma(V a, V b, V acc) { return _mm256_fmadd_ps(a, b, acc); }
};
/// The double SIMD vector operations on AVX2 + FMA: the GenericVec interface over `__m256d` (4
/// lanes, fused multiply-add).
struct VecF64 {
  using V = __m256d;
  static constexpr int kLanes = 4;
  static TAPEFLOW_ALWAYS_INLINE V zero() { return _mm256_setzero_pd(); }
  static TAPEFLOW_ALWAYS_INLINE V load(double const* p) { return _mm256_loadu_pd(p); }
  static TAPEFLOW_ALWAYS_INLINE void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static TAPEFLOW_ALWAYS_INLINE V broadcast(double x) { return _mm256_set1_pd(x); }
  static TAPEFLOW_ALWAYS_INLINE V add(V a, V b) { return _mm256_add_pd(a, b); }
  static TAPEFLOW_ALWAYS_INLINE V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static TAPEFLOW_ALWAYS_INLINE V fma(V a, V b, V acc) { return _mm256_fmadd_pd(a, b, acc); }
};
#else
/// The float SIMD vector operations: the generic vector-extension version on this target.
using VecF32 = GenericVec<float>;
/// The double SIMD vector operations: the generic vector-extension version on this target.
using VecF64 = GenericVec<double>;
#endif

/// The SIMD vector type kernels use for `T`: GenericVec unless specialised below.
template <class T>
struct VecFor {
  using type = GenericVec<T>;  ///< the vector operations for `T`
};
/// float: AVX-512 or AVX2+FMA intrinsics where the build targets them, else GenericVec.
template <>
struct VecFor<float> {
  using type = VecF32;  ///< the vector operations for float
};
/// double: AVX-512 or AVX2+FMA intrinsics where the build targets them, else GenericVec.
template <>
struct VecFor<double> {
  using type = VecF64;  ///< the vector operations for double
};

}  // namespace backend::cpu
TAPEFLOW_END_NAMESPACE
