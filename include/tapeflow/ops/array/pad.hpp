// pad(x, paddings, constant_value): surrounds a tensor with a constant (TensorFlow: `tf.pad`,
// ops "Pad" and "PadV2"). Also the strided box copy that slice and strided_slice share.
//
// Pad's gradient is a Slice and Slice's gradient is a Pad: each header includes the other, and
// the ops refer to each other only inside templates (see the forward declarations below).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {
template <std::size_t R>
struct Slice;  // slice.hpp
}  // namespace ops

namespace detail {

/// "(1, 2, 3)" for an array of integers (error messages).
template <class I, std::size_t N>
std::string int_list_text(std::array<I, N> const& values) {
  std::string text = "(";
  for (std::size_t i = 0; i < N; ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(values[i]);
  }
  return text + (N == 1 ? ",)" : ")");
}

/// A box copy's geometry, rank-erased (each array's first `rank` entries are used).
struct StridedBox {
  std::size_t rank = 0;
  std::array<std::int64_t, max_rank> src_dims{}, src_begin{}, src_step{}, dst_dims{}, dst_begin{},
      dst_step{}, size{};
};

/// Moves `run` elements of `Size` bytes each (a trivially copyable type's elements as bytes).
template <std::size_t Size>
struct BytesMover {
  static void move(const void* src, std::int64_t from, void* dst, std::int64_t to,
                   std::int64_t run) {
    auto const* s = static_cast<const std::byte*>(src) + from * std::int64_t{Size};
    auto* d = static_cast<std::byte*>(dst) + to * std::int64_t{Size};
    if (run == 1) {
      std::memcpy(d, s, Size);  // a constant size: one load and store
    } else {
      std::memcpy(d, s, static_cast<std::size_t>(run) * Size);
    }
  }
};
/// Moves `run` elements of a type that is not trivially copyable (strings) by assignment.
template <class T>
struct TypedMover {
  static void move(const void* src, std::int64_t from, void* dst, std::int64_t to,
                   std::int64_t run) {
    std::copy_n(static_cast<const T*>(src) + from, run, static_cast<T*>(dst) + to);
  }
};

/// copy_strided_box's work, compiled once per element size rather than per dtype and rank.
template <class Mover>
void copy_strided_box_erased(const void* src, void* dst, const StridedBox& box) {
  std::size_t const R = box.rank;
  std::int64_t n = 1;
  for (std::size_t a = 0; a < R; ++a) {
    n *= box.size[a];
  }
  if (n == 0) {
    return;
  }
  if (R == 0) {
    Mover::move(src, 0, dst, 0, 1);
    return;
  }
  const auto& size = box.size;
  const auto& src_step = box.src_step;
  const auto& dst_step = box.dst_step;
  std::array<std::int64_t, max_rank> src_stride{};
  std::array<std::int64_t, max_rank> dst_stride{};
  src_stride[R - 1] = 1;
  dst_stride[R - 1] = 1;
  for (std::size_t a = R - 1; a-- > 0;) {
    src_stride[a] = src_stride[a + 1] * box.src_dims[a + 1];
    dst_stride[a] = dst_stride[a + 1] * box.dst_dims[a + 1];
  }
  // Trailing axes copied whole in both tensors merge into one contiguous run.
  std::size_t t = R - 1;
  std::int64_t inner = 1;
  while (t > 0 && size[t] == box.src_dims[t] && size[t] == box.dst_dims[t] && src_step[t] == 1 &&
         dst_step[t] == 1) {
    inner *= size[t];
    --t;
  }
  bool const contiguous = src_step[t] == 1 && dst_step[t] == 1;
  std::size_t const row_axes = contiguous ? t : t + 1;  // axes iterated one by one
  std::int64_t const run = contiguous ? size[t] * inner : inner;
  std::int64_t src_origin = 0;
  std::int64_t dst_origin = 0;
  for (std::size_t a = 0; a < R; ++a) {
    src_origin += box.src_begin[a] * src_stride[a];
    dst_origin += box.dst_begin[a] * dst_stride[a];
  }
  std::int64_t const rows = n / run;
  backend::cpu::parallel_for(
      rows, std::max<std::int64_t>(1, parallel_grain / run), [&](std::int64_t s, std::int64_t e) {
        if (row_axes == 1) {  // one axis of rows: fixed steps
          std::int64_t const src_row = src_step[0] * src_stride[0];
          std::int64_t const dst_row = dst_step[0] * dst_stride[0];
          for (std::int64_t r = s; r < e; ++r) {
            Mover::move(src, src_origin + r * src_row, dst, dst_origin + r * dst_row, run);
          }
          return;
        }
        std::array<std::int64_t, max_rank> idx{};
        std::int64_t rest = s;
        std::int64_t so = src_origin;
        std::int64_t d_o = dst_origin;
        for (std::size_t a = row_axes; a-- > 0;) {
          idx[a] = rest % size[a];
          rest /= size[a];
          so += idx[a] * src_step[a] * src_stride[a];
          d_o += idx[a] * dst_step[a] * dst_stride[a];
        }
        for (std::int64_t r = s; r < e; ++r) {
          Mover::move(src, so, dst, d_o, run);
          for (std::size_t a = row_axes; a-- > 0;) {
            so += src_step[a] * src_stride[a];
            d_o += dst_step[a] * dst_stride[a];
            if (++idx[a] < size[a]) {
              break;
            }
            so -= idx[a] * src_step[a] * src_stride[a];
            d_o -= idx[a] * dst_step[a] * dst_stride[a];
            idx[a] = 0;
          }
        }
      });
}

/// Copies a box of `size` elements: element idx goes from src at `src_begin + idx * src_step`
/// to dst at `dst_begin + idx * dst_step` (per axis; steps may be negative). Contiguous runs are
/// copied whole; elements of any type (strings included) work.
template <class T, std::size_t R>
void copy_strided_box(T const* src, std::array<std::int64_t, R> const& src_dims,
                      std::array<std::int64_t, R> const& src_begin,
                      std::array<std::int64_t, R> const& src_step, T* dst,
                      std::array<std::int64_t, R> const& dst_dims,
                      std::array<std::int64_t, R> const& dst_begin,
                      std::array<std::int64_t, R> const& dst_step,
                      std::array<std::int64_t, R> const& size) {
  static_assert(R <= max_rank);
  StridedBox box;
  box.rank = R;
  std::copy_n(src_dims.begin(), R, box.src_dims.begin());
  std::copy_n(src_begin.begin(), R, box.src_begin.begin());
  std::copy_n(src_step.begin(), R, box.src_step.begin());
  std::copy_n(dst_dims.begin(), R, box.dst_dims.begin());
  std::copy_n(dst_begin.begin(), R, box.dst_begin.begin());
  std::copy_n(dst_step.begin(), R, box.dst_step.begin());
  std::copy_n(size.begin(), R, box.size.begin());
  if constexpr (std::is_trivially_copyable_v<T>) {
    copy_strided_box_erased<BytesMover<sizeof(T)>>(src, dst, box);
  } else {
    copy_strided_box_erased<TypedMover<T>>(src, dst, box);
  }
}

/// Copies a box with unit steps (slice, pad, concat).
template <class T, std::size_t R>
void copy_box(T const* src, std::array<std::int64_t, R> const& src_dims,
              std::array<std::int64_t, R> const& src_begin, T* dst,
              std::array<std::int64_t, R> const& dst_dims,
              std::array<std::int64_t, R> const& dst_begin,
              std::array<std::int64_t, R> const& size) {
  std::array<std::int64_t, R> ones;
  ones.fill(1);
  copy_strided_box(src, src_dims, src_begin, ones, dst, dst_dims, dst_begin, ones, size);
}

/// A pad's geometry, rank-erased (each array's first `rank` entries are used).
struct PadBox {
  std::size_t rank = 0;
  std::array<std::int64_t, max_rank> src_dims{}, dst_dims{}, before{};
};

/// Pad's output in one parallel pass that writes each element once: a row along the last axis
/// is either all `value` or `value` around a row of `src`. (Filling the whole output and then
/// copying `src` over it wrote the interior twice, the fill on one thread: 4% of MobileNetV2's
/// inference at batch 32.) One instantiation per element type, for every rank.
template <class T>
void pad_rows(T const* src, T* dst, PadBox const& box, T const& value) {
  std::size_t const R = box.rank;
  if (R == 0) {
    dst[0] = src[0];
    return;
  }
  std::int64_t const row = box.dst_dims[R - 1];
  std::int64_t rows = 1;
  for (std::size_t a = 0; a + 1 < R; ++a) {
    rows *= box.dst_dims[a];
  }
  if (row == 0 || rows == 0) {
    return;
  }
  std::array<std::int64_t, max_rank> src_stride{};
  src_stride[R - 1] = 1;
  for (std::size_t a = R - 1; a-- > 0;) {
    src_stride[a] = src_stride[a + 1] * box.src_dims[a + 1];
  }
  std::int64_t const lead = box.before[R - 1];
  std::int64_t const width = box.src_dims[R - 1];
  auto write_rows = [&](std::int64_t s, std::int64_t e) {
    for (std::int64_t r = s; r < e; ++r) {
      T* d = dst + r * row;
      // The row's index along the leading axes, last axis first; outside src on any of them,
      // the row is all padding.
      std::int64_t rest = r;
      std::int64_t from = 0;
      bool inside = true;
      for (std::size_t a = R - 1; a-- > 0;) {
        std::int64_t const i = rest % box.dst_dims[a] - box.before[a];
        rest /= box.dst_dims[a];
        inside = inside && i >= 0 && i < box.src_dims[a];
        from += i * src_stride[a];
      }
      if (!inside) {
        std::fill_n(d, row, value);
        continue;
      }
      std::fill_n(d, lead, value);
      if (width > 0) {  // an empty src may have no data pointer to offset
        std::copy_n(src + from, width, d + lead);
      }
      std::fill_n(d + lead + width, row - lead - width, value);
    }
  };
  backend::cpu::parallel_for(rows, std::max<std::int64_t>(1, parallel_grain / row), write_rows);
}

/// Shared rules of Pad and PadV2.
template <std::size_t R>
struct PadRule {
  std::array<std::array<std::int64_t, 2>, R> paddings{};

  /// TensorFlow's `paddings` input: an int32 [R, 2] constant.
  [[nodiscard]] AnyTensor paddings_input() const {
    auto t = Tensor<std::int32_t, 2>::uninitialized({static_cast<std::int64_t>(R), 2});
    std::int32_t* out = tensor_access::mutable_data(t);
    for (std::size_t a = 0; a < R; ++a) {
      out[2 * a] = static_cast<std::int32_t>(paddings[a][0]);
      out[2 * a + 1] = static_cast<std::int32_t>(paddings[a][1]);
    }
    return t;
  }

  [[nodiscard]] std::string paddings_text() const {
    std::string text = "(";
    for (std::size_t a = 0; a < R; ++a) {
      text += (a > 0 ? ", " : "") + int_list_text(paddings[a]);
    }
    return text + ")";
  }
  template <class T>
  [[nodiscard]] std::array<std::int64_t, R> padded_dims(std::string_view op,
                                                        Tensor<T, R> const& x) const {
    std::array<std::int64_t, R> dims{};
    for (std::size_t a = 0; a < R; ++a) {
      if (paddings[a][0] < 0 || paddings[a][1] < 0) {
        throw invalid_argument(std::string(op) + ": paddings must be non-negative, got " +
                               paddings_text() + " for input shape " + x.shape().to_string());
      }
      dims[a] = x.dims()[a] + paddings[a][0] + paddings[a][1];
    }
    return dims;
  }
  template <class T>
  void fill_and_copy(Tensor<T, R>& out, Tensor<T, R> const& x, T const& value) const {
    PadBox box;
    box.rank = R;
    for (std::size_t a = 0; a < R; ++a) {
      box.src_dims[a] = x.dims()[a];
      box.dst_dims[a] = out.dims()[a];
      box.before[a] = paddings[a][0];
    }
    pad_rows(x.data(), tensor_access::mutable_data(out), box, value);
  }
  /// The gradient: the slice of dy where x was copied.
  template <class T>
  Tensor<T, R> unpad(Tensor<T, R> const& dy, Tensor<T, R> const& x) const {
    ops::Slice<R> slice;
    for (std::size_t a = 0; a < R; ++a) {
      slice.begin[a] = paddings[a][0];
    }
    slice.size = x.dims();
    return execute(slice, dy);
  }
};

}  // namespace detail

namespace ops {

/// Pads with zeros (TensorFlow op "Pad"): axis a gets paddings[a][0] elements before and
/// paddings[a][1] after.
template <std::size_t R>
struct Pad : detail::PadRule<R> {
  static constexpr std::string_view name = "Pad";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument

  /// TensorFlow's attributes: the type of the `paddings` input.
  [[nodiscard]] OpAttributes attributes() const { return {{"Tpaddings", DType::int32}}; }
  /// TensorFlow's `paddings` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const { return {{"paddings", this->paddings_input()}}; }

  template <class T>
  OutSpec<T, R> infer(Tensor<T, R> const& x) const {
    return {this->padded_dims(name, x)};
  }
  template <class T>
  void compute(Tensor<T, R>& out, Tensor<T, R> const& x) const {
    this->fill_and_copy(out, x, T{});
  }
  template <class T>
  Tensor<T, R> gradient(Tensor<T, R> const& dy, Tensor<T, R> const&, Tensor<T, R> const& x) const {
    return this->unpad(dy, x);
  }
};

/// Pads with a scalar constant input (TensorFlow op "PadV2"); no gradient flows to the constant
/// (as in TensorFlow).
template <std::size_t R>
struct PadV2 : detail::PadRule<R> {
  static constexpr std::string_view name = "PadV2";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  static constexpr std::size_t graph_inputs_at = 1;  ///< TensorFlow's: input, paddings, value

  /// TensorFlow's attributes: the type of the `paddings` input.
  [[nodiscard]] OpAttributes attributes() const { return {{"Tpaddings", DType::int32}}; }
  /// TensorFlow's `paddings` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const { return {{"paddings", this->paddings_input()}}; }

  template <class T>
  OutSpec<T, R> infer(Tensor<T, R> const& x, Tensor<T, 0> const&) const {
    return {this->padded_dims(name, x)};
  }
  template <class T>
  void compute(Tensor<T, R>& out, Tensor<T, R> const& x, Tensor<T, 0> const& value) const {
    this->fill_and_copy(out, x, value.data()[0]);
  }
  template <class T>
  auto gradient(Tensor<T, R> const& dy, Tensor<T, R> const&, Tensor<T, R> const& x,
                Tensor<T, 0> const&) const {
    detail::PadRule<R> const rule = *this;
    return std::tuple{[=] { return rule.unpad(dy, x); }, no_gradient};
  }
};

}  // namespace ops

/// Pads `x` with `constant_value` (default zero or ""): axis a gets paddings[a][0] elements
/// before and paddings[a][1] after (TensorFlow: `tf.pad(x, paddings, constant_values=c)`, mode
/// "CONSTANT"). Throws invalid_argument for negative paddings.
///
///     auto y = tf::pad(tf::constant<float>({{1, 2}}), {{1, 1}, {0, 2}});  // shape (3, 4)
///     auto z = tf::pad(x, {{2, 0}}, -1.0f);                              // padded with -1
template <tensor_like X, std::size_t N>
tensor_type_of<X> pad(X const& x, std::int64_t const (&paddings)[N][2],
                      value_type_of<X> const& constant_value = value_type_of<X>{}) {
  static_assert(N == rank_of<X>,
                "tf::pad(x, paddings): paddings needs one {before, after} pair per axis of x");
  std::array<std::array<std::int64_t, 2>, N> p{};
  for (std::size_t a = 0; a < N; ++a) {
    p[a] = {paddings[a][0], paddings[a][1]};
  }
  return pad(x, p, constant_value);
}
/// The same with the paddings as a `std::array` of {before, after} pairs, one per axis.
template <tensor_like X>
tensor_type_of<X> pad(X const& x,
                      std::array<std::array<std::int64_t, 2>, rank_of<X>> const& paddings,
                      value_type_of<X> const& constant_value = value_type_of<X>{}) {
  using T = value_type_of<X>;
  constexpr std::size_t R = rank_of<X>;
  if (constant_value == T{}) {
    ops::Pad<R> op;
    op.paddings = paddings;
    return detail::execute(op, detail::as_tensor(x));
  }
  ops::PadV2<R> op;
  op.paddings = paddings;
  return detail::execute(op, detail::as_tensor(x), Tensor<T, 0>(constant_value));
}

TAPEFLOW_END_NAMESPACE

#include <tapeflow/ops/array/slice.hpp>
