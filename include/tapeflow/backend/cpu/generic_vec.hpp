// The CPU backend's portable SIMD vector: `GenericVec<T>`, built on the GCC/Clang vector
// extensions, which lower to the widest vectors the build targets (AVX-512, AVX, SSE2, NEON, ...).
// Kernels that only load, store, add and subtract use it: those operations round exactly, so
// the results are those of the intrinsics in backend/cpu/simd.hpp (same width), and a header
// that needs nothing more does not pay for <immintrin.h> (about 0.3 s of every compile with
// -march=native). Kernels that need a guaranteed fused multiply-add use simd.hpp's VecFor.
#pragma once

#include <cstring>
#include <type_traits>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cpu {

#if defined(__AVX512F__)
/// Width in bytes of the widest SIMD vector this build targets (64: AVX-512).
inline constexpr int kVectorBytes = 64;
#elif defined(__AVX__)
/// Width in bytes of the widest SIMD vector this build targets (32: AVX).
inline constexpr int kVectorBytes = 32;
#else
/// Width in bytes of the widest SIMD vector this build targets (16: SSE2, NEON or similar).
inline constexpr int kVectorBytes = 16;
#endif

/// Whether the generic vector-extension kernel can hold `T` (bool and long double cannot).
template <class T>
inline constexpr bool kVectorizable =
    std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && sizeof(T) <= 8;

/// A SIMD vector of `T` built on the GCC/Clang vector extensions (`kVectorBytes` wide); the
/// portable fallback of VecFor.
template <class T>
struct GenericVec {
  /// The vector register type.
  typedef T V __attribute__((vector_size(kVectorBytes)));
  /// Elements of `T` per vector.
  static constexpr int kLanes = kVectorBytes / static_cast<int>(sizeof(T));
  /// All lanes zero.
  static TAPEFLOW_ALWAYS_INLINE V zero() { return V{}; }
  /// Loads `kLanes` elements from `p` (no alignment required).
  static TAPEFLOW_ALWAYS_INLINE V load(T const* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  /// Stores the `kLanes` elements of `v` to `p` (no alignment required).
  static TAPEFLOW_ALWAYS_INLINE void store(T* p, V v) { std::memcpy(p, &v, sizeof v); }
  /// Every lane set to `x`.
  static TAPEFLOW_ALWAYS_INLINE V broadcast(T x) { return V{} + x; }
  /// Lane-wise `a + b`.
  static TAPEFLOW_ALWAYS_INLINE V add(V a, V b) { return a + b; }
  /// Lane-wise `a - b`.
  static TAPEFLOW_ALWAYS_INLINE V sub(V a, V b) { return a - b; }
  /// Lane-wise `acc + a * b` (not necessarily fused in this generic version).
  static TAPEFLOW_ALWAYS_INLINE V fma(V a, V b, V acc) { return acc + a * b; }
};

}  // namespace backend::cpu
TAPEFLOW_END_NAMESPACE
