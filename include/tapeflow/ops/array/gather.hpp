// gather(params, indices, axis): picks slices of `params` along `axis` by integer indices of any
// rank (TensorFlow: `tf.gather`, op "GatherV2"). The gradient with respect to params sums the
// output gradient back into place with math::unsorted_segment_sum.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/array/transpose.hpp>
#include <tapeflow/ops/array/where.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/compare.hpp>
#include <tapeflow/ops/math/segment.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// out[p..., i..., q...] = params[p..., indices[i...], q...] with p the axes before `axis`
/// (TensorFlow op "GatherV2", batch_dims 0). Out-of-range indices are an error, as on
/// TensorFlow's CPU.
struct GatherV2 {
  static constexpr std::string_view name = "GatherV2";
  static constexpr std::string_view type_attr = "Tparams";  ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  int axis = 0;

  /// TensorFlow's attributes: the types of `indices` and of the `axis` input (`batch_dims`
  /// stays 0, its default).
  template <class T, std::size_t R, class I, std::size_t S>
  [[nodiscard]] OpAttributes attributes(Tensor<T, R> const&, Tensor<I, S> const&) const {
    return {{"Tindices", dtype_v<I>}, {"Taxis", DType::int32}};
  }
  /// TensorFlow's `axis` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"axis", Tensor<std::int32_t, 0>(axis)}};
  }

  template <std::size_t R>
  [[nodiscard]] std::size_t resolved_axis() const {
    constexpr int rank = static_cast<int>(R);
    if (axis < -rank || axis >= rank) {
      throw invalid_argument("GatherV2: axis " + std::to_string(axis) +
                             " is out of range for params of rank " + std::to_string(R));
    }
    return static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
  }

  template <class T, std::size_t R, class I, std::size_t S>
  OutSpec<T, R + S - 1> infer(Tensor<T, R> const& params, Tensor<I, S> const& indices) const {
    static_assert(R >= 1, "tf::gather: params must have rank >= 1");
    static_assert(detail::index_element<I>, "tf::gather: indices must be int32 or int64");
    std::size_t const ax = resolved_axis<R>();
    std::int64_t const n = params.dims()[ax];
    // Symbolic indices (tracing) have no values yet: the check runs when the graph runs.
    I const* idx = indices.data();
    for (std::int64_t k = 0; !indices.is_symbolic() && k < indices.num_elements(); ++k) {
      if (idx[k] < 0 || static_cast<std::int64_t>(idx[k]) >= n) {
        throw invalid_argument("GatherV2: indices" + detail::multi_index_text(k, indices.dims()) +
                               " = " + std::to_string(idx[k]) + " is not in [0, " +
                               std::to_string(n) + ") (params shape " + params.shape().to_string() +
                               ", axis " + std::to_string(ax) + ")");
      }
    }
    OutSpec<T, R + S - 1> spec{};
    std::size_t j = 0;
    for (std::size_t a = 0; a < ax; ++a) {
      spec.dims[j++] = params.dims()[a];
    }
    for (std::size_t a = 0; a < S; ++a) {
      spec.dims[j++] = indices.dims()[a];
    }
    for (std::size_t a = ax + 1; a < R; ++a) {
      spec.dims[j++] = params.dims()[a];
    }
    return spec;
  }

  template <class T, std::size_t K, std::size_t R, class I, std::size_t S>
  void compute(Tensor<T, K>& out, Tensor<T, R> const& params, Tensor<I, S> const& indices) const {
    std::size_t const ax = resolved_axis<R>();
    std::int64_t outer = 1;
    std::int64_t inner = 1;
    for (std::size_t a = 0; a < ax; ++a) {
      outer *= params.dims()[a];
    }
    for (std::size_t a = ax + 1; a < R; ++a) {
      inner *= params.dims()[a];
    }
    std::int64_t const n = params.dims()[ax];
    std::int64_t const m = indices.num_elements();
    if (out.num_elements() == 0) {
      return;
    }
    T* o = detail::tensor_access::mutable_data(out);
    T const* p = params.data();
    I const* idx = indices.data();
    // One output row per (outer, index) pair.
    backend::cpu::parallel_for(outer * m, std::max<std::int64_t>(1, detail::parallel_grain / inner),
                               [&](std::int64_t s, std::int64_t e) {
                                 for (std::int64_t r = s; r < e; ++r) {
                                   std::int64_t const q = r / m;
                                   auto const i = static_cast<std::int64_t>(idx[r % m]);
                                   T const* src = p + (q * n + i) * inner;
                                   if (inner == 1) {
                                     o[r] = *src;
                                   } else {
                                     std::copy_n(src, inner, o + r * inner);
                                   }
                                 }
                               });
  }

  template <class T, std::size_t K, std::size_t R, class I, std::size_t S>
  auto gradient(Tensor<T, K> const& dy, Tensor<T, K> const&, Tensor<T, R> const& params,
                Tensor<I, S> const& indices) const {
    std::size_t const ax = resolved_axis<R>();
    auto grad = [=] {
      std::int64_t const m = indices.num_elements();
      auto values_dims = params.dims();
      values_dims[ax] = m;
      auto values = detail::execute(Reshape<R>{values_dims}, dy);
      auto flat = detail::execute(Reshape<1>{{m}}, indices);
      UnsortedSegmentSum const sum{params.dims()[ax]};
      if (ax == 0) {
        return detail::execute(sum, values, flat);
      }
      // Move the gathered axis to the front, sum into segments, move it back.
      Transpose<R> to_front;
      Transpose<R> back;
      to_front.perm[0] = static_cast<int>(ax);
      for (std::size_t a = 0, j = 1; a < R; ++a) {
        if (a != ax) {
          to_front.perm[j++] = static_cast<int>(a);
        }
        back.perm[a] = a < ax ? static_cast<int>(a + 1) : a == ax ? 0 : static_cast<int>(a);
      }
      return detail::execute(back, detail::execute(sum, detail::execute(to_front, values), flat));
    };
    return std::tuple{grad, no_gradient};
  }
};

}  // namespace ops

namespace detail {
template <class T, std::size_t K, class I, std::size_t S>
Tensor<T, K + S - 1> gather_dropping_negatives(Tensor<T, K> const& params,
                                               Tensor<I, S> const& ids) {
  auto gathered = execute(ops::GatherV2{0}, params, maximum(ids, I(0)));
  std::array<std::int64_t, K + S - 1> mask_dims;
  mask_dims.fill(1);
  std::copy(ids.dims().begin(), ids.dims().end(), mask_dims.begin());
  auto keep = execute(ops::Reshape<K + S - 1>{mask_dims}, greater_equal(ids, I(0)));
  return where(keep, gathered, zeros_like(gathered));
}
}  // namespace detail

/// Slices of `params` along `axis` picked by `indices` (int32 or int64, any rank): the result
/// has shape params.shape[:axis] + indices.shape + params.shape[axis+1:] (TensorFlow:
/// `tf.gather(params, indices, axis=axis)`). An index outside [0, params.dim(axis)) throws
/// invalid_argument naming it. Differentiable with respect to `params`.
///
///     auto p = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}});
///     tf::gather(p, tf::constant<int32_t>({2, 0}));     // [[5, 6], [1, 2]]
///     tf::gather(p, tf::constant<int64_t>({1}), -1);    // [[2], [4], [6]]
template <tensor_like P, tensor_like I>
auto gather(P const& params, I const& indices, int axis = 0) {
  static_assert(rank_of<P> >= 1, "tf::gather(params, indices, axis): params must have rank >= 1");
  static_assert(detail::index_element<value_type_of<I>>,
                "tf::gather(params, indices, axis): indices must be int32 or int64");
  static_assert(rank_of<P> + rank_of<I> - 1 <= max_rank,
                "tf::gather(params, indices, axis): the result's rank would exceed tapeflow's "
                "maximum rank (8)");
  return detail::execute(ops::GatherV2{axis}, detail::as_tensor(params),
                         detail::as_tensor(indices));
}

TAPEFLOW_END_NAMESPACE
