// where(condition, x, y): elementwise choice with broadcasting (TensorFlow: `tf.where`,
// op "SelectV2").
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>  // detail::unbroadcast (the gradient)
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace ops {

struct SelectV2 {
  static constexpr std::string_view name = "SelectV2";
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument

  /// TensorFlow's attributes: the dtype of `t` and `e` (the first input, the condition, is
  /// bool and has no attribute).
  template <std::size_t C, class T, std::size_t A, std::size_t B>
  [[nodiscard]] OpAttributes attributes(const Tensor<bool, C>&, const Tensor<T, A>&,
                                        const Tensor<T, B>&) const {
    return {{"T", dtype_v<T>}};
  }

  template <std::size_t C, class T, std::size_t A, std::size_t B>
  auto infer(const Tensor<bool, C>& c, const Tensor<T, A>& x, const Tensor<T, B>& y) const {
    auto xy = detail::broadcast_dims(name, x.dims(), y.dims());
    auto dims = detail::broadcast_dims(name, c.dims(), xy);
    return OutSpec<T, dims.size()>{dims};
  }
  template <class T, std::size_t R, std::size_t C, std::size_t A, std::size_t B>
  void compute(Tensor<T, R>& out, const Tensor<bool, C>& c, const Tensor<T, A>& x,
               const Tensor<T, B>& y) const {
    // Strided walk: each operand's stride is 0 along its broadcast axes.
    auto strides = [&](const auto& dims) {
      auto d = detail::align_dims<R>(dims);
      std::array<std::int64_t, R> s{};
      std::int64_t stride = 1;
      for (std::size_t i = R; i-- > 0;) {
        s[i] = d[i] == 1 ? 0 : stride;
        stride *= d[i];
      }
      return s;
    };
    const auto sc = strides(c.dims());
    const auto sx = strides(x.dims());
    const auto sy = strides(y.dims());
    T* o = detail::tensor_access::mutable_data(out);
    const bool* pc = c.data();
    const T* px = x.data();
    const T* py = y.data();
    std::array<std::int64_t, R> idx{};
    std::int64_t const n = out.num_elements();
    for (std::int64_t k = 0; k < n; ++k) {
      std::int64_t oc = 0;
      std::int64_t ox = 0;
      std::int64_t oy = 0;
      for (std::size_t i = 0; i < R; ++i) {
        oc += idx[i] * sc[i];
        ox += idx[i] * sx[i];
        oy += idx[i] * sy[i];
      }
      o[k] = pc[oc] ? px[ox] : py[oy];
      for (std::size_t i = R; i-- > 0;) {
        if (++idx[i] < out.dims()[i]) {
          break;
        }
        idx[i] = 0;
      }
    }
  }
  template <class T, std::size_t R, std::size_t C, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<bool, C>& c,
                const Tensor<T, A>& x, const Tensor<T, B>& y) const {
    return std::tuple{
        no_gradient,
        [=] {
          return detail::unbroadcast(detail::execute(SelectV2{}, c, dy, zeros_like(dy)), x.dims());
        },
        [=] {
          return detail::unbroadcast(detail::execute(SelectV2{}, c, zeros_like(dy), dy), y.dims());
        }};
  }
};

}  // namespace ops

/// Elementwise `condition ? x : y` with broadcasting (TensorFlow: `tf.where(c, x, y)`).
template <tensor_like C, tensor_like X, tensor_like Y>
  requires std::same_as<value_type_of<C>, bool>
auto where(const C& condition, const X& x, const Y& y) {
  static_assert(std::same_as<value_type_of<X>, value_type_of<Y>>,
                "tf::where(c, x, y): x and y must have the same dtype");
  return detail::execute(ops::SelectV2{}, detail::as_tensor(condition), detail::as_tensor(x),
                         detail::as_tensor(y));
}

TAPEFLOW_END_NAMESPACE
