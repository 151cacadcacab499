// argmax(x, axis) and argmin(x, axis): index of the largest/smallest element along an axis
// (TensorFlow: `tf.math.argmax`, `tf.math.argmin`; ops "ArgMax", "ArgMin"). Not
// differentiable.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// Index (of type Index: int64 or int32) of the extreme element along `axis`; the first one on
/// ties, and the first NaN if there is one (as NumPy). Ops "ArgMax" (IsMax) and "ArgMin".
template <bool IsMax, class Index>
struct ArgExtremum {
  static constexpr std::string_view name = IsMax ? "ArgMax" : "ArgMin";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  static constexpr bool differentiable = false;
  int axis = 0;

  /// TensorFlow's attributes: the index types of `dimension` and of the output.
  [[nodiscard]] OpAttributes attributes() const {
    return {{"Tidx", DType::int32}, {"output_type", dtype_v<Index>}};
  }
  /// TensorFlow's `dimension` input, held here as `axis`.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"dimension", Tensor<std::int32_t, 0>(axis)}};
  }

  template <std::size_t R>
  [[nodiscard]] std::size_t resolved_axis() const {
    constexpr int rank = static_cast<int>(R);
    if (axis < -rank || axis >= rank) {
      throw invalid_argument(std::string(name) + ": axis " + std::to_string(axis) +
                             " is out of range for a tensor of rank " + std::to_string(R));
    }
    return static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
  }

  template <class T, std::size_t R>
  OutSpec<Index, R - 1> infer(Tensor<T, R> const& x) const {
    static_assert(R >= 1, "tf::argmax/argmin: the input must have rank >= 1");
    static_assert(numeric_element<T> || std::same_as<T, bool>,
                  "tf::argmax/argmin: the input must be numeric or bool (not string)");
    static_assert(std::same_as<Index, std::int64_t> || std::same_as<Index, std::int32_t>,
                  "tf::argmax/argmin: the output type must be int64 or int32");
    std::size_t const ax = resolved_axis<R>();
    if (x.dims()[ax] == 0) {
      throw invalid_argument(std::string(name) + ": reduction axis " + std::to_string(ax) +
                             " is empty in shape " + x.shape().to_string());
    }
    OutSpec<Index, R - 1> spec{};
    for (std::size_t a = 0, j = 0; a < R; ++a) {
      if (a != ax) {
        spec.dims[j++] = x.dims()[a];
      }
    }
    return spec;
  }

  template <class T, std::size_t K, std::size_t R>
  void compute(Tensor<Index, K>& out, Tensor<T, R> const& x) const {
    std::size_t const ax = resolved_axis<R>();
    std::int64_t outer = 1;
    std::int64_t inner = 1;
    for (std::size_t a = 0; a < ax; ++a) {
      outer *= x.dims()[a];
    }
    for (std::size_t a = ax + 1; a < R; ++a) {
      inner *= x.dims()[a];
    }
    std::int64_t const n = x.dims()[ax];
    if (outer * inner == 0) {
      return;
    }
    Index* o = detail::tensor_access::mutable_data(out);
    T const* v = x.data();
    backend::cpu::parallel_for(outer,
                               std::max<std::int64_t>(1, detail::parallel_grain / (n * inner)),
                               [&](std::int64_t s, std::int64_t e) {
                                 auto best = std::make_unique<T[]>(static_cast<std::size_t>(inner));
                                 for (std::int64_t q = s; q < e; ++q) {
                                   T const* block = v + q * n * inner;
                                   Index* dst = o + q * inner;
                                   std::copy_n(block, inner, best.get());
                                   std::fill_n(dst, inner, Index{0});
                                   for (std::int64_t k = 1; k < n; ++k) {
                                     T const* row = block + k * inner;
                                     for (std::int64_t i = 0; i < inner; ++i) {
                                       auto& b = best[static_cast<std::size_t>(i)];
                                       if (better(row[i], b)) {
                                         b = row[i];
                                         dst[i] = static_cast<Index>(k);
                                       }
                                     }
                                   }
                                 }
                               });
  }

 private:
  template <class T>
  static bool better(T candidate, T best) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(best)) {
        return false;
      }
      if (std::isnan(candidate)) {
        return true;
      }
    }
    if constexpr (IsMax) {
      return candidate > best;
    } else {
      return candidate < best;
    }
  }
};

template <class Index>
using ArgMax = ArgExtremum<true, Index>;
template <class Index>
using ArgMin = ArgExtremum<false, Index>;

}  // namespace ops

/// Index of the largest element along `axis` (negative counts from the end), as int64 (or
/// `tf::argmax<int32_t>(x, axis)`); the first one on ties (TensorFlow: `tf.math.argmax`).
/// Throws invalid_argument for a bad axis or an empty one. Not differentiable.
///
///     auto logits = tf::constant<float>({{0.1f, 2.0f, 0.3f}, {5.0f, 1.0f, 5.0f}});
///     tf::argmax(logits, 1);  // [1, 0]
template <element_type Index = std::int64_t, tensor_like X>
auto argmax(X const& x, int axis = 0) {
  static_assert(rank_of<X> >= 1, "tf::argmax(x, axis): x must have rank >= 1");
  return detail::execute(ops::ArgMax<Index>{axis}, detail::as_tensor(x));
}

/// Index of the smallest element along `axis`, as int64 (or int32); the first one on ties
/// (TensorFlow: `tf.math.argmin`). Not differentiable.
///
///     tf::argmin(tf::constant<int32_t>({3, 1, 1}));  // 1
template <element_type Index = std::int64_t, tensor_like X>
auto argmin(X const& x, int axis = 0) {
  static_assert(rank_of<X> >= 1, "tf::argmin(x, axis): x must have rank >= 1");
  return detail::execute(ops::ArgMin<Index>{axis}, detail::as_tensor(x));
}

namespace math {
using ::tapeflow::argmax;
using ::tapeflow::argmin;
}  // namespace math

TAPEFLOW_END_NAMESPACE
