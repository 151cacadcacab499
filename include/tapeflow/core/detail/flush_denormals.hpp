// Flushing denormal floats to zero for the duration of a scope, as TensorFlow does around every
// kernel (port::ScopedFlushDenormal). Optimizer state decays geometrically where gradients are
// zero (MNIST's border pixels never light up), and once it reaches the denormal range each
// multiply costs a microcode assist of ~100 cycles: Adam's update became 70% of an MLP step.
// IWYU pragma: private
#pragma once

#include <tapeflow/detail/macros.hpp>

#if defined(__SSE__) || defined(_M_X64)
#include <xmmintrin.h>
#define TAPEFLOW_HAS_MXCSR 1
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// Sets flush-to-zero and denormals-are-zero on this thread while alive, restoring the previous
/// mode on exit (the caller's own floating-point environment is left as it was).
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals() noexcept {
#if defined(TAPEFLOW_HAS_MXCSR)
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
#elif defined(__aarch64__)
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(saved_));
    const unsigned long long flushed = saved_ | kArmFlushToZero;
    __asm__ __volatile__("msr fpcr, %0" : : "r"(flushed));
#endif
  }
  ~ScopedFlushDenormals() {
#if defined(TAPEFLOW_HAS_MXCSR)
    _mm_setcsr(saved_);
#elif defined(__aarch64__)
    __asm__ __volatile__("msr fpcr, %0" : : "r"(saved_));
#endif
  }
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
#if defined(TAPEFLOW_HAS_MXCSR)
  static constexpr unsigned kFlushToZero = 0x8000;     // MXCSR bit 15
  static constexpr unsigned kDenormalsAreZero = 0x40;  // MXCSR bit 6
  unsigned saved_ = 0;
#elif defined(__aarch64__)
  static constexpr unsigned long long kArmFlushToZero = 1ULL << 24;  // FPCR.FZ
  unsigned long long saved_ = 0;
#endif
};

}  // namespace detail
TAPEFLOW_END_NAMESPACE
