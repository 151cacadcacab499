// reverse(x, axes): reverses the order of elements along the given axes (TensorFlow:
// `tf.reverse`, op "ReverseV2"). tf::image's flips and rot90 are made of it, as in TensorFlow.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// Reverses the axes marked in `reversed` (TensorFlow op "ReverseV2"); its own gradient.
template <std::size_t R>
struct ReverseV2 {
  static constexpr std::string_view name = "ReverseV2";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  std::array<bool, R> reversed{};

  /// TensorFlow's attributes: the type of the `axis` input.
  [[nodiscard]] OpAttributes attributes() const { return {{"Tidx", DType::int32}}; }
  /// TensorFlow's `axis` input: the reversed axes, held here as `reversed`.
  [[nodiscard]] GraphInputs graph_inputs() const {
    std::vector<int> axes;
    for (std::size_t a = 0; a < R; ++a) {
      if (reversed[a]) {
        axes.push_back(static_cast<int>(a));
      }
    }
    return {{"axis", detail::int32_vector(axes.data(), axes.size())}};
  }

  template <class T>
  OutSpec<T, R> infer(Tensor<T, R> const& x) const {
    OutSpec<T, R> spec{};
    spec.dims = x.dims();
    return spec;
  }

  // Axis `last` is the last reversed axis of size > 1: each of its rows is copied backwards in
  // one tight loop (runs of the contiguous axes after it); an odometer walks the axes before it.
  template <class T>
  void compute(Tensor<T, R>& out, Tensor<T, R> const& x) const {
    T* dst = detail::tensor_access::mutable_data(out);
    T const* src = x.data();
    auto const& dims = x.dims();
    std::int64_t const n = x.num_elements();
    std::size_t outer_rank = 0;  // last + 1
    for (std::size_t a = 0; a < R; ++a) {
      if (reversed[a] && dims[a] > 1) {
        outer_rank = a + 1;
      }
    }
    if (n == 0 || outer_rank == 0) {
      std::copy_n(src, n, dst);
      return;
    }
    std::size_t const last = outer_rank - 1;
    std::int64_t run = 1;
    for (std::size_t a = outer_rank; a < R; ++a) {
      run *= dims[a];
    }
    std::int64_t const row = dims[last] * run;  // elements of one row of axis `last`
    std::array<std::int64_t, R> stride{};       // of the source, for the axes before `last`
    std::int64_t s = row;
    for (std::size_t a = last; a-- > 0;) {
      stride[a] = s;
      s *= dims[a];
    }
    std::array<std::int64_t, R> index{};
    std::int64_t from = 0;  // source offset of the current row
    for (std::size_t a = 0; a < last; ++a) {
      from += reversed[a] ? (dims[a] - 1) * stride[a] : 0;
    }
    for (std::int64_t r = 0; r < n / row; ++r, dst += row) {
      T const* back = src + from + row - run;  // the row's last run comes first
      if (run == 1) {
        for (std::int64_t j = 0; j < row; ++j) {
          dst[j] = back[-j];
        }
      } else {
        for (std::int64_t j = 0; j < row; j += run) {
          std::copy_n(back - j, run, dst + j);
        }
      }
      for (std::size_t a = last; a-- > 0;) {  // next row, axis last-1 fastest
        std::int64_t const step = reversed[a] ? -stride[a] : stride[a];
        if (++index[a] < dims[a]) {
          from += step;
          break;
        }
        index[a] = 0;
        from -= step * (dims[a] - 1);
      }
    }
  }

  template <class T>
  Tensor<T, R> gradient(Tensor<T, R> const& dy, Tensor<T, R> const&, Tensor<T, R> const&) const {
    return detail::execute(*this, dy);
  }
};

}  // namespace ops

/// Reverses the order of elements along each listed axis; negative axes count from the end
/// (TensorFlow: `tf.reverse(x, axis)`). A repeated or out-of-range axis throws invalid_argument.
///
///     auto y = tf::reverse(tf::constant<int>({{1, 2, 3}, {4, 5, 6}}), {1});  // [[3 2 1] [6 5 4]]
template <tensor_like X, std::size_t N>
tensor_type_of<X> reverse(X const& x, int const (&axes)[N]) {
  static_assert(rank_of<X> >= 1, "tf::reverse(x, axes): x must have at least one axis");
  constexpr int rank = static_cast<int>(rank_of<X>);
  ops::ReverseV2<rank_of<X>> op;
  for (int const axis : axes) {
    if (axis < -rank || axis >= rank ||
        op.reversed[static_cast<std::size_t>((axis + rank) % rank)]) {
      throw invalid_argument("ReverseV2: axis " + std::to_string(axis) +
                             " is out of range or repeated for a tensor of rank " +
                             std::to_string(rank));
    }
    op.reversed[static_cast<std::size_t>((axis + rank) % rank)] = true;
  }
  return detail::execute(op, detail::as_tensor(x));
}

TAPEFLOW_END_NAMESPACE
