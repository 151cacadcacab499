// slice(x, begin, size) and strided_slice(x, begin, end, strides): contiguous and strided boxes
// of a tensor (TensorFlow: `tf.slice`, `tf.strided_slice`; ops "Slice", "StridedSlice",
// "StridedSliceGrad").
//
// The rank is static, so begin/size are braced lists with one entry per axis:
// `tf::slice(x, {0, 1}, {2, -1})`.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/pad.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

/// The box of `size` elements starting at `begin` (TensorFlow op "Slice"); size -1 means "to the
/// end of the axis". Gradient: the gradient padded back to the input's shape (a Pad).
template <std::size_t R>
struct Slice {
  static constexpr std::string_view name = "Slice";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  std::array<std::int64_t, R> begin{};
  std::array<std::int64_t, R> size{};

  /// TensorFlow's attributes: the type of the `begin` and `size` inputs.
  [[nodiscard]] OpAttributes attributes() const { return {{"Index", DType::int32}}; }
  /// TensorFlow's `begin` and `size` inputs, held here as members.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"begin", detail::int32_vector(begin)}, {"size", detail::int32_vector(size)}};
  }

  /// The size with -1 resolved; throws invalid_argument for a box outside `dims` (on an unknown
  /// dim, -1 in a trace, the size stays as given).
  [[nodiscard]] std::array<std::int64_t, R> resolve(std::array<std::int64_t, R> const& dims) const {
    std::array<std::int64_t, R> out{};
    for (std::size_t a = 0; a < R; ++a) {
      auto fail = [&](std::string const& what) {
        throw invalid_argument("Slice: " + what + " for input shape " + Shape(dims).to_string() +
                               " (begin " + detail::int_list_text(begin) + ", size " +
                               detail::int_list_text(size) + ")");
      };
      if (dims[a] < 0) {
        // An unknown dim (a traced function's free batch): checked when the graph runs.
        if (begin[a] < 0 || size[a] < -1) {
          fail("begin[" + std::to_string(a) + "] and size[" + std::to_string(a) +
               "] must be >= 0 (size -1: to the end)");
        }
        out[a] = size[a];
        continue;
      }
      if (begin[a] < 0 || begin[a] > dims[a]) {
        fail("begin[" + std::to_string(a) + "] = " + std::to_string(begin[a]) + " is not in [0, " +
             std::to_string(dims[a]) + "]");
      }
      std::int64_t const s = size[a] == -1 ? dims[a] - begin[a] : size[a];
      if (s < 0 || s > dims[a] - begin[a]) {
        fail("size[" + std::to_string(a) + "] = " + std::to_string(size[a]) + " is not in [0, " +
             std::to_string(dims[a] - begin[a]) + "] (or -1)");
      }
      out[a] = s;
    }
    return out;
  }

  template <class T>
  OutSpec<T, R> infer(Tensor<T, R> const& x) const {
    return {resolve(x.dims())};
  }
  template <class T>
  void compute(Tensor<T, R>& out, Tensor<T, R> const& x) const {
    detail::copy_box(x.data(), x.dims(), begin, detail::tensor_access::mutable_data(out),
                     out.dims(), std::array<std::int64_t, R>{}, out.dims());
  }
  template <class T>
  Tensor<T, R> gradient(Tensor<T, R> const& dy, Tensor<T, R> const& y,
                        Tensor<T, R> const& x) const {
    Pad<R> pad;
    for (std::size_t a = 0; a < R; ++a) {
      pad.paddings[a] = {begin[a], x.dims()[a] - begin[a] - y.dims()[a]};
    }
    return detail::execute(pad, dy);
  }
};

/// Python-style slicing rules shared by StridedSlice and StridedSliceGrad: per axis
/// `begin:end:stride`, negative begin/end counting from the end, out-of-range values clamped,
/// bit a of begin_mask/end_mask meaning "from the first"/"to the last" along axis a.
template <std::size_t R>
struct StridedSliceRule {
  std::array<std::int64_t, R> begin{};
  std::array<std::int64_t, R> end{};
  std::array<std::int64_t, R> strides{};
  std::int64_t begin_mask = 0;
  std::int64_t end_mask = 0;

  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  /// TensorFlow's attributes: the masks and the type of `begin`, `end` and `strides` (no
  /// ellipsis, new-axis or shrink masks: they stay 0).
  [[nodiscard]] OpAttributes attributes() const {
    return {{"Index", DType::int32}, {"begin_mask", begin_mask}, {"end_mask", end_mask}};
  }
  /// TensorFlow's `begin`, `end` and `strides` inputs, held here as members.
  [[nodiscard]] GraphInputs strided_inputs() const {
    return {{"begin", detail::int32_vector(begin)},
            {"end", detail::int32_vector(end)},
            {"strides", detail::int32_vector(strides)}};
  }

  struct Resolved {
    std::array<std::int64_t, R> start{};
    std::array<std::int64_t, R> count{};
  };
  [[nodiscard]] Resolved resolve(std::string_view op,
                                 std::array<std::int64_t, R> const& dims) const {
    Resolved r;
    for (std::size_t a = 0; a < R; ++a) {
      std::int64_t const d = dims[a];
      std::int64_t const s = strides[a];
      if (s == 0) {
        throw invalid_argument(std::string(op) + ": strides[" + std::to_string(a) +
                               "] must be non-zero (strides " + detail::int_list_text(strides) +
                               ")");
      }
      std::int64_t const lo = s > 0 ? 0 : -1;
      std::int64_t const hi = s > 0 ? d : d - 1;
      auto canonical = [&](std::int64_t v, bool masked, bool is_begin) {
        if (masked) {
          return (s > 0) == is_begin ? lo : hi;
        }
        return std::clamp(v < 0 ? v + d : v, lo, hi);
      };
      std::int64_t const b = canonical(begin[a], ((begin_mask >> a) & 1) != 0, true);
      std::int64_t const e = canonical(end[a], ((end_mask >> a) & 1) != 0, false);
      std::int64_t const span = s > 0 ? e - b : b - e;
      std::int64_t const step = s > 0 ? s : -s;
      r.start[a] = b;
      r.count[a] = span <= 0 ? 0 : (span + step - 1) / step;
    }
    return r;
  }
};

/// Elements begin, begin + stride, ... before end along every axis (TensorFlow op
/// "StridedSlice" without ellipsis/new-axis/shrink masks: the rank is kept).
template <std::size_t R>
struct StridedSlice : StridedSliceRule<R> {
  static constexpr std::string_view name = "StridedSlice";

  /// TensorFlow's `begin`, `end` and `strides` inputs.
  [[nodiscard]] GraphInputs graph_inputs() const { return this->strided_inputs(); }

  template <class T>
  OutSpec<T, R> infer(Tensor<T, R> const& x) const {
    return {this->resolve(name, x.dims()).count};
  }
  template <class T>
  void compute(Tensor<T, R>& out, Tensor<T, R> const& x) const {
    auto const r = this->resolve(name, x.dims());
    std::array<std::int64_t, R> ones;
    ones.fill(1);
    detail::copy_strided_box(x.data(), x.dims(), r.start, this->strides,
                             detail::tensor_access::mutable_data(out), out.dims(),
                             std::array<std::int64_t, R>{}, ones, r.count);
  }
  template <class T>
  auto gradient(Tensor<T, R> const& dy, Tensor<T, R> const&, Tensor<T, R> const& x) const;
};

/// The gradient of StridedSlice (TensorFlow op "StridedSliceGrad"): zeros of the input's
/// shape with dy scattered to the sliced positions. Its own gradient is a StridedSlice.
template <std::size_t R>
struct StridedSliceGrad : StridedSliceRule<R> {
  static constexpr std::string_view name = "StridedSliceGrad";
  static constexpr std::size_t graph_inputs_at = 0;  ///< TensorFlow's: shape, ..., dy
  std::array<std::int64_t, R> shape{};               // the forward input's shape

  /// TensorFlow's `shape`, `begin`, `end` and `strides` inputs, held here as members.
  [[nodiscard]] GraphInputs graph_inputs() const {
    GraphInputs inputs = this->strided_inputs();
    inputs.insert(inputs.begin(), {"shape", detail::int32_vector(shape)});
    return inputs;
  }

  template <class T>
  OutSpec<T, R> infer(Tensor<T, R> const& dy) const {
    auto const r = this->resolve(name, shape);
    if (r.count != dy.dims()) {
      throw invalid_argument("StridedSliceGrad: gradient of shape " + dy.shape().to_string() +
                             " does not match the slice's shape " + Shape(r.count).to_string());
    }
    return {shape};
  }
  template <class T>
  void compute(Tensor<T, R>& out, Tensor<T, R> const& dy) const {
    auto const r = this->resolve(name, shape);
    T* o = detail::tensor_access::mutable_data(out);
    std::fill_n(o, out.num_elements(), T{});
    std::array<std::int64_t, R> ones;
    ones.fill(1);
    detail::copy_strided_box(dy.data(), dy.dims(), std::array<std::int64_t, R>{}, ones, o, shape,
                             r.start, this->strides, r.count);
  }
  template <class T>
  Tensor<T, R> gradient(Tensor<T, R> const& ddx, Tensor<T, R> const&, Tensor<T, R> const&) const {
    StridedSlice<R> forward;
    static_cast<StridedSliceRule<R>&>(forward) = *this;
    return detail::execute(forward, ddx);
  }
};

template <std::size_t R>
template <class T>
auto StridedSlice<R>::gradient(Tensor<T, R> const& dy, Tensor<T, R> const&,
                               Tensor<T, R> const& x) const {
  StridedSliceGrad<R> backward;
  static_cast<StridedSliceRule<R>&>(backward) = *this;
  backward.shape = x.dims();
  return detail::execute(backward, dy);
}

}  // namespace ops

/// The box of `size` elements starting at `begin`, one entry per axis; size -1 takes the rest
/// of the axis (TensorFlow: `tf.slice`). Throws invalid_argument when the box leaves the tensor.
///
///     auto x = tf::constant<int32_t>({{1, 2, 3}, {4, 5, 6}});
///     auto y = tf::slice(x, {0, 1}, {2, -1});  // [[2, 3], [5, 6]]
template <tensor_like X, std::size_t N, std::size_t M>
tensor_type_of<X> slice(X const& x, std::int64_t const (&begin)[N], std::int64_t const (&size)[M]) {
  static_assert(N == rank_of<X> && M == rank_of<X>,
                "tf::slice(x, begin, size): begin and size need one entry per axis of x");
  ops::Slice<N> op;
  std::copy(begin, begin + N, op.begin.begin());
  std::copy(size, size + N, op.size.begin());
  return detail::execute(op, detail::as_tensor(x));
}
/// The same with `begin` and `size` as `std::array`s.
template <tensor_like X>
tensor_type_of<X> slice(X const& x, std::array<std::int64_t, rank_of<X>> const& begin,
                        std::array<std::int64_t, rank_of<X>> const& size) {
  return detail::execute(ops::Slice<rank_of<X>>{begin, size}, detail::as_tensor(x));
}

/// Masks of strided_slice (TensorFlow's `begin_mask`/`end_mask`): bit a set means begin (end)
/// of axis a is ignored and the slice starts at the first (ends past the last) element in the
/// stride's direction.
struct StridedSliceOptions {
  std::int64_t begin_mask = 0;  ///< bit a: ignore `begin` of axis a
  std::int64_t end_mask = 0;    ///< bit a: ignore `end` of axis a
};

/// Python-style `x[b0:e0:s0, b1:e1:s1, ...]` (TensorFlow: `tf.strided_slice`; the rank is kept,
/// so there are no ellipsis/new-axis/shrink masks). Negative begin/end count from the end and
/// out-of-range values are clamped as in Python; a zero stride throws invalid_argument.
///
///     auto v = tf::constant<int32_t>({0, 1, 2, 3, 4, 5});
///     tf::strided_slice(v, {1}, {5}, {2});                       // [1, 3]
///     tf::strided_slice(v, {-1}, {0}, {-1}, {.end_mask = 1});     // [5, 4, 3, 2, 1, 0]
template <tensor_like X, std::size_t N, std::size_t M, std::size_t K>
tensor_type_of<X> strided_slice(X const& x, std::int64_t const (&begin)[N],
                                std::int64_t const (&end)[M], std::int64_t const (&strides)[K],
                                StridedSliceOptions options = {}) {
  static_assert(N == rank_of<X> && M == rank_of<X> && K == rank_of<X>,
                "tf::strided_slice(x, begin, end, strides): begin, end and strides need one entry "
                "per axis of x");
  ops::StridedSlice<N> op;
  std::copy(begin, begin + N, op.begin.begin());
  std::copy(end, end + N, op.end.begin());
  std::copy(strides, strides + N, op.strides.begin());
  op.begin_mask = options.begin_mask;
  op.end_mask = options.end_mask;
  return detail::execute(op, detail::as_tensor(x));
}
/// strided_slice with unit strides: `tf::strided_slice(x, {0, -2}, {2, 100})`.
template <tensor_like X, std::size_t N, std::size_t M>
tensor_type_of<X> strided_slice(X const& x, std::int64_t const (&begin)[N],
                                std::int64_t const (&end)[M], StridedSliceOptions options = {}) {
  static_assert(N == rank_of<X> && M == rank_of<X>,
                "tf::strided_slice(x, begin, end): begin and end need one entry per axis of x");
  std::int64_t strides[N];
  std::fill_n(strides, N, std::int64_t{1});
  return strided_slice(x, begin, end, strides, options);
}

TAPEFLOW_END_NAMESPACE
