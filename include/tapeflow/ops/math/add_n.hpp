// AddN of two same-shaped tensors: how a GradientTape sums the gradient contributions that meet
// at one tensor (TensorFlow's tape aggregates with AddN too). It is an op, so an outer tape
// records the sum and second-order gradients flow through it; its gradient passes dy to both
// inputs, so it needs no other op.
//
// Why not ops::Add: every op's tape node may accumulate, so whatever sums lives in every op's
// include closure. Add brings broadcasting, its gradient (reductions, reshapes) and Eigen's
// Tensor module; this header brings a vector loop, so reshape.hpp and other ops that only move
// bytes compile without Eigen (see MAINTAINERS.md, "Compile time").
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <tapeflow/backend/cpu/generic_vec.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// out[i] = a[i] + b[i] for i < n; `a` or `b` may be a single value (step 0) when the executor
/// fuses a chain (see function/graph.hpp).
template <class T>
void add_n_run(T* out, const T* a, bool a_vec, const T* b, bool b_vec, std::int64_t n) {
  std::int64_t i = 0;
  if constexpr (backend::cpu::kVectorizable<T>) {
    using Ops = backend::cpu::GenericVec<T>;
    constexpr int L = Ops::kLanes;
    if (a_vec && b_vec) {
      for (; i + L <= n; i += L) {
        Ops::store(out + i, Ops::add(Ops::load(a + i), Ops::load(b + i)));
      }
    }
  }
  for (; i < n; ++i) {
    out[i] = (a_vec ? a[i] : *a) + (b_vec ? b[i] : *b);
  }
}

}  // namespace detail

namespace ops {

/// Elementwise sum of two tensors of one shape (TensorFlow op "AddN", N = 2).
struct AddN {
  static constexpr std::string_view name = "AddN";

  template <class T>
  static void fused_kernel(void* out, const void* a, bool a_vec, const void* b, bool b_vec,
                           std::int64_t n) {
    detail::add_n_run(static_cast<T*>(out), static_cast<const T*>(a), a_vec,
                      static_cast<const T*>(b), b_vec, n);
  }

  static constexpr std::string_view type_attr = "T";     ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "sum";  ///< TensorFlow's output argument
  /// TensorFlow's attributes: the number of inputs.
  [[nodiscard]] OpAttributes attributes() const { return {{"N", 2}}; }

  template <class T, std::size_t R>
  OutSpec<T, R> infer(const Tensor<T, R>& a, const Tensor<T, R>& b) const {
    if (a.dims() != b.dims()) {
      throw invalid_argument(std::string(name) + ": inputs must have one shape, got " +
                             Shape(a.dims()).to_string() + " and " + Shape(b.dims()).to_string());
    }
    return {a.dims()};
  }
  template <class T, std::size_t R>
  void compute(Tensor<T, R>& out, const Tensor<T, R>& a, const Tensor<T, R>& b) const {
    T* o = detail::tensor_access::mutable_data(out);
    const T* pa = a.data();
    const T* pb = b.data();
    backend::cpu::parallel_for(a.num_elements(), detail::parallel_grain,
                               [&](std::int64_t s, std::int64_t e) {
                                 detail::add_n_run(o + s, pa + s, true, pb + s, true, e - s);
                               });
  }
  template <class T, std::size_t R>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, R>&,
                const Tensor<T, R>&) const {
    return std::tuple{dy, dy};
  }
};

}  // namespace ops
TAPEFLOW_END_NAMESPACE
