// The optimizer updates' element rules, written once for every backend: the CPU applies them
// to Eigen arrays of a block (ops/detail/resource_apply_kernels.hpp), the CUDA kernels to one
// element each (backends/cuda/training.cu). Each rule reads the old value and the gradient,
// updates its slots in place and writes the new value; the formulas are on the ops
// (ops/training/resource_apply.hpp). Kept free of other tapeflow headers so nvcc compiles it.
#pragma once

#include <cmath>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/math/detail/scalar_math.hpp>  // TAPEFLOW_HOST_DEVICE, is_number

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::update_rules {

template <class X>
TAPEFLOW_HOST_DEVICE auto square_of(const X& x) {
  if constexpr (scalar_math::is_number<X>) {
    return x * x;
  } else {
    return x.square();
  }
}
template <class X>
TAPEFLOW_HOST_DEVICE auto sqrt_of(const X& x) {
  if constexpr (scalar_math::is_number<X>) {
    using std::sqrt;
    return sqrt(x);
  } else {
    return x.sqrt();
  }
}

/// var = old - lr * g
template <class T>
struct GradientDescent {
  T lr;
  template <class Out, class Old, class G>
  TAPEFLOW_HOST_DEVICE void operator()(Out&& out, const Old& old, const G& g) const {
    out = old - lr * g;
  }
};

/// accum = mu * accum - lr * g; var = old + accum (nesterov: old + mu * accum - lr * g)
template <class T>
struct KerasMomentum {
  T lr;
  T mu;
  bool nesterov;
  template <class Out, class Old, class Accum, class G>
  TAPEFLOW_HOST_DEVICE void operator()(Out&& out, const Old& old, Accum&& accum, const G& g) const {
    accum = mu * accum - lr * g;
    if (nesterov) {
      out = old + mu * accum - lr * g;
    } else {
      out = old + accum;
    }
  }
};

/// m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
/// var = old - alpha m / (sqrt(v) + epsilon), alpha the bias-corrected rate.
template <class T>
struct Adam {
  T beta1;
  T beta2;
  T alpha;
  T epsilon;
  template <class Out, class Old, class M, class V, class G>
  TAPEFLOW_HOST_DEVICE void operator()(Out&& out, const Old& old, M&& m, V&& v, const G& g) const {
    m = beta1 * m + (T(1) - beta1) * g;
    v = beta2 * v + (T(1) - beta2) * square_of(g);
    out = old - alpha * m / (sqrt_of(v) + epsilon);
  }
};

/// ms = rho ms + (1 - rho) g^2; var = old - lr g / sqrt(ms + epsilon)
template <class T>
struct RmsProp {
  T lr;
  T rho;
  T epsilon;
  template <class Out, class Old, class Ms, class G>
  TAPEFLOW_HOST_DEVICE void operator()(Out&& out, const Old& old, Ms&& ms, const G& g) const {
    ms = rho * ms + (T(1) - rho) * square_of(g);
    out = old - lr * g / sqrt_of(ms + epsilon);
  }
};

}  // namespace detail::update_rules
TAPEFLOW_END_NAMESPACE
