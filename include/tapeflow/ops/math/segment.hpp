// math::unsorted_segment_sum(data, segment_ids, num_segments): sums rows of `data` into the
// segments named by `segment_ids` (TensorFlow: `tf.math.unsorted_segment_sum`, op
// "UnsortedSegmentSum"). It is the gradient of gather, and its own gradient is a gather.
//
// The gradient gathers through a function defined in <tapeflow/ops/array/gather.hpp>; the two
// headers include each other.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// Index element types of gather and segment ops.
template <class I>
concept index_element = std::same_as<I, std::int32_t> || std::same_as<I, std::int64_t>;

/// "[1, 2]": the multi-index of flat element `flat` of a tensor of shape `dims`.
template <std::size_t S>
std::string multi_index_text(std::int64_t flat, std::array<std::int64_t, S> const& dims) {
  std::array<std::int64_t, S> idx{};
  for (std::size_t a = S; a-- > 0;) {
    idx[a] = flat % dims[a];
    flat /= dims[a];
  }
  std::string text = "[";
  for (std::size_t a = 0; a < S; ++a) {
    text += (a > 0 ? ", " : "") + std::to_string(idx[a]);
  }
  return text + "]";
}

/// gather(params, max(ids, 0)) along axis 0 with the rows of negative ids zeroed, written in
/// ops (defined in gather.hpp): the gradient of UnsortedSegmentSum.
template <class T, std::size_t K, class I, std::size_t S>
Tensor<T, K + S - 1> gather_dropping_negatives(Tensor<T, K> const& params, Tensor<I, S> const& ids);

}  // namespace detail

namespace ops {

/// out[s, ...] = sum of data[i..., ...] over the i with segment_ids[i...] == s (TensorFlow op
/// "UnsortedSegmentSum"). segment_ids' shape is a prefix of data's; negative ids are dropped,
/// ids >= num_segments are an error (as on TensorFlow's CPU).
struct UnsortedSegmentSum {
  static constexpr std::string_view name = "UnsortedSegmentSum";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  std::int64_t num_segments = 0;

  /// TensorFlow's attributes: the types of `segment_ids` and `num_segments`.
  template <class T, std::size_t R, class I, std::size_t S>
  [[nodiscard]] OpAttributes attributes(Tensor<T, R> const&, Tensor<I, S> const&) const {
    return {{"Tindices", dtype_v<I>}, {"Tnumsegments", DType::int32}};
  }
  /// TensorFlow's `num_segments` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"num_segments", Tensor<std::int32_t, 0>(static_cast<std::int32_t>(num_segments))}};
  }

  template <class T, std::size_t R, class I, std::size_t S>
  OutSpec<T, R - S + 1> infer(Tensor<T, R> const& data, Tensor<I, S> const& ids) const {
    static_assert(numeric_element<T>,
                  "tf::math::unsorted_segment_sum: data must be numeric (not bool or string)");
    static_assert(detail::index_element<I>,
                  "tf::math::unsorted_segment_sum: segment_ids must be int32 or int64");
    static_assert(S <= R, "tf::math::unsorted_segment_sum: segment_ids' rank exceeds data's rank");
    if (num_segments < 0) {
      throw invalid_argument("UnsortedSegmentSum: num_segments must be non-negative, got " +
                             std::to_string(num_segments));
    }
    for (std::size_t a = 0; a < S; ++a) {
      if (ids.dims()[a] != data.dims()[a]) {
        throw invalid_argument("UnsortedSegmentSum: segment_ids shape " + ids.shape().to_string() +
                               " is not a prefix of data shape " + data.shape().to_string());
      }
    }
    // Symbolic ids (tracing) have no values yet: the check runs when the graph runs.
    I const* id = ids.data();
    for (std::int64_t i = 0; !ids.is_symbolic() && i < ids.num_elements(); ++i) {
      if (static_cast<std::int64_t>(id[i]) >= num_segments) {
        throw invalid_argument(
            "UnsortedSegmentSum: segment_ids" + detail::multi_index_text(i, ids.dims()) + " = " +
            std::to_string(id[i]) + " is out of range [0, " + std::to_string(num_segments) + ")");
      }
    }
    OutSpec<T, R - S + 1> spec{};
    spec.dims[0] = num_segments;
    for (std::size_t a = S; a < R; ++a) {
      spec.dims[a - S + 1] = data.dims()[a];
    }
    return spec;
  }

  template <class T, std::size_t K, std::size_t R, class I, std::size_t S>
  void compute(Tensor<T, K>& out, Tensor<T, R> const& data, Tensor<I, S> const& ids) const {
    T* o = detail::tensor_access::mutable_data(out);
    std::fill_n(o, out.num_elements(), T(0));
    std::int64_t const rows = ids.num_elements();
    std::int64_t const inner = num_segments == 0 ? 0 : out.num_elements() / num_segments;
    if (rows == 0 || inner == 0) {
      return;
    }
    I const* id = ids.data();
    T const* d = data.data();
    // Threads split the columns, so no two add into the same element.
    backend::cpu::parallel_for(inner, std::max<std::int64_t>(1, detail::parallel_grain / rows),
                               [&](std::int64_t s, std::int64_t e) {
                                 for (std::int64_t i = 0; i < rows; ++i) {
                                   auto const seg = static_cast<std::int64_t>(id[i]);
                                   if (seg < 0) {
                                     continue;
                                   }
                                   T* dst = o + seg * inner;
                                   T const* src = d + i * inner;
                                   for (std::int64_t c = s; c < e; ++c) {
                                     dst[c] = static_cast<T>(dst[c] + src[c]);
                                   }
                                 }
                               });
  }

  template <class T, std::size_t K, std::size_t R, class I, std::size_t S>
  auto gradient(Tensor<T, K> const& dy, Tensor<T, K> const&, Tensor<T, R> const&,
                Tensor<I, S> const& ids) const {
    return std::tuple{[=] { return detail::gather_dropping_negatives(dy, ids); }, no_gradient};
  }
};

}  // namespace ops

namespace math {

/// Sums the rows of `data` into `num_segments` segments: out[s] = sum of data[i...] over the i
/// with segment_ids[i...] == s (TensorFlow: `tf.math.unsorted_segment_sum`). segment_ids
/// (int32 or int64) has a prefix of data's shape; the result has shape
/// (num_segments,) + data.shape[rank(segment_ids):]. Negative ids are dropped; ids >=
/// num_segments throw invalid_argument. Differentiable with respect to `data`.
///
///     auto data = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}});
///     auto ids = tf::constant<int32_t>({1, 0, 1});
///     tf::math::unsorted_segment_sum(data, ids, 2);  // [[3, 4], [6, 8]]
template <tensor_like D, tensor_like S>
auto unsorted_segment_sum(D const& data, S const& segment_ids, std::int64_t num_segments) {
  static_assert(rank_of<S> <= rank_of<D>,
                "tf::math::unsorted_segment_sum(data, segment_ids, n): segment_ids' rank exceeds "
                "data's rank");
  static_assert(
      detail::index_element<value_type_of<S>>,
      "tf::math::unsorted_segment_sum(data, segment_ids, n): segment_ids must be int32 or int64");
  return detail::execute(ops::UnsortedSegmentSum{num_segments}, detail::as_tensor(data),
                         detail::as_tensor(segment_ids));
}

}  // namespace math

TAPEFLOW_END_NAMESPACE

#include <tapeflow/ops/array/gather.hpp>
