// The Eigen bodies of the optimizer updates' blocks declared in
// ops/training/resource_apply.hpp: whole-array expressions over flat buffers, which Eigen
// vectorizes (sqrt included) whatever the user's -fno-math-errno setting. Header-only programs
// get them through that header; with TAPEFLOW_PRECOMPILED they are compiled once in
// tapeflow::instantiations (src/instantiations/kernels.cpp).
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <cstdint>

#include <tapeflow/core/eigen.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

template <class T>
using FlatArray = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstFlatArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <class T>
void gradient_descent_block(std::int64_t n, const T* old, T* out, const T* g, T lr) {
  FlatArray<T>(out, n) = ConstFlatArray<T>(old, n) - lr * ConstFlatArray<T>(g, n);
}

template <class T>
void keras_momentum_block(std::int64_t n, const T* old, T* out, T* accum, const T* gp, T lr, T mu,
                          bool nesterov) {
  FlatArray<T> a(accum, n);
  const ConstFlatArray<T> g(gp, n);
  a = mu * a - lr * g;
  if (nesterov) {
    FlatArray<T>(out, n) = ConstFlatArray<T>(old, n) + mu * a - lr * g;
  } else {
    FlatArray<T>(out, n) = ConstFlatArray<T>(old, n) + a;
  }
}

template <class T>
void adam_block(std::int64_t n, const T* old, T* out, T* m, T* v, const T* gp, T beta1, T beta2,
                T alpha, T epsilon) {
  FlatArray<T> mean(m, n);
  FlatArray<T> second(v, n);
  const ConstFlatArray<T> g(gp, n);
  mean = beta1 * mean + (T(1) - beta1) * g;
  second = beta2 * second + (T(1) - beta2) * g.square();
  FlatArray<T>(out, n) = ConstFlatArray<T>(old, n) - alpha * mean / (second.sqrt() + epsilon);
}

template <class T>
void rmsprop_block(std::int64_t n, const T* old, T* out, T* ms, const T* gp, T lr, T rho,
                   T epsilon) {
  FlatArray<T> r(ms, n);
  const ConstFlatArray<T> g(gp, n);
  r = rho * r + (T(1) - rho) * g.square();
  FlatArray<T>(out, n) = ConstFlatArray<T>(old, n) - lr * g / (r + epsilon).sqrt();
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
