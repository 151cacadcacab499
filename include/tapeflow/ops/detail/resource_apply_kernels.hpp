// The Eigen bodies of the optimizer updates' blocks declared in
// ops/training/resource_apply.hpp: the rules of ops/training/detail/update_rules.hpp applied
// as whole-array expressions over flat buffers, which Eigen vectorizes (sqrt included)
// whatever the user's -fno-math-errno setting. Header-only programs
// get them through that header; with TAPEFLOW_PRECOMPILED they are compiled once in
// tapeflow::instantiations (src/instantiations/kernels.cpp).
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <cstdint>

#include <tapeflow/core/eigen.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/training/detail/update_rules.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

template <class T>
using FlatArray = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstFlatArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <class T>
void gradient_descent_block(std::int64_t n, const T* old, T* out, const T* g, T lr) {
  update_rules::GradientDescent<T>{lr}(FlatArray<T>(out, n), ConstFlatArray<T>(old, n),
                                       ConstFlatArray<T>(g, n));
}

template <class T>
void keras_momentum_block(std::int64_t n, const T* old, T* out, T* accum, const T* g, T lr, T mu,
                          bool nesterov) {
  update_rules::KerasMomentum<T>{lr, mu, nesterov}(FlatArray<T>(out, n), ConstFlatArray<T>(old, n),
                                                   FlatArray<T>(accum, n), ConstFlatArray<T>(g, n));
}

template <class T>
void adam_block(std::int64_t n, const T* old, T* out, T* m, T* v, const T* g, T beta1, T beta2,
                T alpha, T epsilon) {
  update_rules::Adam<T>{beta1, beta2, alpha, epsilon}(FlatArray<T>(out, n),
                                                      ConstFlatArray<T>(old, n), FlatArray<T>(m, n),
                                                      FlatArray<T>(v, n), ConstFlatArray<T>(g, n));
}

template <class T>
void rmsprop_block(std::int64_t n, const T* old, T* out, T* ms, const T* g, T lr, T rho,
                   T epsilon) {
  update_rules::RmsProp<T>{lr, rho, epsilon}(FlatArray<T>(out, n), ConstFlatArray<T>(old, n),
                                             FlatArray<T>(ms, n), ConstFlatArray<T>(g, n));
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
