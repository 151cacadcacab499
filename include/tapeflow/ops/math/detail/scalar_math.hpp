// The element math of elementwise ops, written once for every backend: the CPU kernels apply
// these functors to Eigen tensor expressions (ops/math/arithmetic.hpp, ops/math/unary.hpp),
// the CUDA kernels to single values in device code (backends/cuda/elementwise.cu). Where
// Eigen spells a rule as a member (its vectorized exp, tanh, ...), a functor holds both
// spellings side by side, chosen by whether it is given a number. Kept free of other tapeflow
// headers so nvcc compiles it alone.
#pragma once

#if defined(__CUDACC__)
#define TAPEFLOW_HOST_DEVICE __host__ __device__
#else
#define TAPEFLOW_HOST_DEVICE
#endif

#include <cmath>
#include <type_traits>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::scalar_math {

/// True for a single value (device code, CPU scalar loops); false for an Eigen expression.
template <class X>
inline constexpr bool is_number = std::is_arithmetic_v<X>;

/// x + y
struct Add {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    return x + y;
  }
};
/// x - y
struct Sub {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    return x - y;
  }
};
/// (x - y) * (x - y)
struct SquaredDifference {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    return (x - y) * (x - y);
  }
};
/// x * y
struct Mul {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    return x * y;
  }
};
/// x / y
struct Div {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    return x / y;
  }
};

/// x ** y, elementwise (Eigen applies it one element at a time on the CPU); integers go
/// through double, as std::pow takes them.
struct Pow {
  template <class X>
  TAPEFLOW_HOST_DEVICE X operator()(const X& x, const X& y) const {
    using std::pow;
    if constexpr (std::is_integral_v<X>) {
      return static_cast<X>(pow(static_cast<double>(x), static_cast<double>(y)));
    } else {
      return static_cast<X>(pow(x, y));
    }
  }
};
/// max(x, y) (x for ties and unordered pairs, as Eigen's cwiseMax on the CPU)
struct Maximum {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    if constexpr (is_number<X>) {
      return x < y ? y : x;
    } else {
      return x.cwiseMax(y);
    }
  }
};
/// min(x, y) (x for ties and unordered pairs, as Eigen's cwiseMin on the CPU)
struct Minimum {
  template <class X, class Y>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const {
    if constexpr (is_number<X>) {
      return y < x ? y : x;
    } else {
      return x.cwiseMin(y);
    }
  }
};

// Comparisons: bool results; the same spelling for numbers and Eigen expressions.
#define TAPEFLOW_SCALAR_COMPARISON(Name, op)                                       \
  struct Name {                                                                    \
    template <class X, class Y>                                                    \
    TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x, const Y& y) const { \
      return x op y;                                                               \
    }                                                                              \
  };
TAPEFLOW_SCALAR_COMPARISON(Equal, ==)
TAPEFLOW_SCALAR_COMPARISON(NotEqual, !=)
TAPEFLOW_SCALAR_COMPARISON(Less, <)
TAPEFLOW_SCALAR_COMPARISON(LessEqual, <=)
TAPEFLOW_SCALAR_COMPARISON(Greater, >)
TAPEFLOW_SCALAR_COMPARISON(GreaterEqual, >=)
#undef TAPEFLOW_SCALAR_COMPARISON

/// Conversion to U: floats to integers truncate toward zero; to bool, nonzero is true.
template <class U>
struct CastTo {
  template <class X>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x) const {
    if constexpr (!is_number<X>) {
      return x.template cast<U>();
    } else if constexpr (std::is_same_v<U, bool>) {
      return x != X(0);
    } else {
      return static_cast<U>(x);
    }
  }
};

/// -x
struct Neg {
  template <class X>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x) const {
    return -x;
  }
};
/// x * x
struct Square {
  template <class X>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x) const {
    if constexpr (is_number<X>) {
      return x * x;
    } else {
      return x.square();
    }
  }
};
/// e^x
struct Exp {
  template <class X>
  TAPEFLOW_HOST_DEVICE auto operator()(const X& x) const {
    if constexpr (is_number<X>) {
      using std::exp;
      return exp(x);
    } else {
      return x.exp();
    }
  }
};
/// Natural logarithm.
struct Log {
  template <class X>
  TAPEFLOW_HOST_DEVICE auto operator()(const X& x) const {
    if constexpr (is_number<X>) {
      using std::log;
      return log(x);
    } else {
      return x.log();
    }
  }
};
/// Square root.
struct Sqrt {
  template <class X>
  TAPEFLOW_HOST_DEVICE auto operator()(const X& x) const {
    if constexpr (is_number<X>) {
      using std::sqrt;
      return sqrt(x);
    } else {
      return x.sqrt();
    }
  }
};
/// Hyperbolic tangent.
struct Tanh {
  template <class X>
  TAPEFLOW_HOST_DEVICE auto operator()(const X& x) const {
    if constexpr (is_number<X>) {
      using std::tanh;
      return tanh(x);
    } else {
      return x.tanh();
    }
  }
};
/// 1 / (1 + e^-x)
struct Sigmoid {
  template <class X>
  TAPEFLOW_HOST_DEVICE auto operator()(const X& x) const {
    if constexpr (is_number<X>) {
      using std::exp;
      return X(1) / (X(1) + exp(-x));
    } else {
      return x.sigmoid();
    }
  }
};
/// |x|
struct Abs {
  template <class X>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x) const {
    if constexpr (is_number<X>) {
      return x < X(0) ? X(-x) : x;
    } else {
      return x.abs();
    }
  }
};
/// -1, 0 or 1 (0 for NaN, as Eigen's sign gives on the CPU).
struct Sign {
  template <class X>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x) const {
    if constexpr (is_number<X>) {
      return x > X(0) ? X(1) : (x < X(0) ? X(-1) : X(0));
    } else {
      return x.sign();
    }
  }
};
/// max(x, 0)
struct Relu {
  template <class X>
  TAPEFLOW_HOST_DEVICE constexpr auto operator()(const X& x) const {
    if constexpr (is_number<X>) {
      return x > X(0) ? x : X(0);
    } else {
      using T = typename X::Scalar;
      return x.cwiseMax(T(0));
    }
  }
};
/// Relu's gradient: `gradient` where `feature` > 0, else 0 (also for a NaN feature).
struct ReluGrad {
  template <class X>
  TAPEFLOW_HOST_DEVICE constexpr X operator()(const X& gradient, const X& feature) const {
    return feature > X(0) ? gradient : X(0);
  }
};

}  // namespace detail::scalar_math
TAPEFLOW_END_NAMESPACE
