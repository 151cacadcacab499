// matmul: (batched) matrix product with optional transposes (TensorFlow: `tf.linalg.matmul`,
// ops "MatMul" / "BatchMatMulV2"), on tapeflow's own GEMM.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/broadcast.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/linalg/detail/gemm_fwd.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>  // detail::unbroadcast (the gradient)

// The GEMM's body; with TAPEFLOW_PRECOMPILED it comes compiled from tapeflow::instantiations,
// and programs do not parse its micro-kernels and <immintrin.h>.
#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/ops/linalg/detail/gemm.hpp>
#endif

TAPEFLOW_BEGIN_NAMESPACE

/// Options of matmul (TensorFlow's keyword arguments).
struct MatMulOptions {
  bool transpose_a = false;  ///< use `a` with its last two axes swapped
  bool transpose_b = false;  ///< use `b` with its last two axes swapped
};

namespace ops {

/// Matrix product over the last two axes; leading (batch) axes broadcast as in NumPy.
struct MatMul {
  static constexpr std::string_view name = "BatchMatMulV2";
  static constexpr std::string_view type_attr = "T";        ///< TensorFlow's dtype attribute
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  bool transpose_a = false;
  bool transpose_b = false;
  /// TensorFlow's attributes: whether each operand is used transposed.
  [[nodiscard]] OpAttributes attributes() const {
    return {{"adj_x", transpose_a}, {"adj_y", transpose_b}};
  }

  template <class T, std::size_t A, std::size_t B>
  auto infer(const Tensor<T, A>& a, const Tensor<T, B>& b) const {
    constexpr std::size_t R = A > B ? A : B;
    std::int64_t const m = a.dims()[A - (transpose_a ? 1 : 2)];
    std::int64_t const ka = a.dims()[A - (transpose_a ? 2 : 1)];
    std::int64_t const kb = b.dims()[B - (transpose_b ? 1 : 2)];
    std::int64_t const n = b.dims()[B - (transpose_b ? 2 : 1)];
    if (ka != kb) {
      throw invalid_argument("MatMul: inner dimensions differ: a " + a.shape().to_string() +
                             (transpose_a ? " (transposed)" : "") + " and b " +
                             b.shape().to_string() + (transpose_b ? " (transposed)" : "") +
                             " give " + std::to_string(ka) + " vs " + std::to_string(kb));
    }
    std::array<std::int64_t, A - 2> ba{};
    std::array<std::int64_t, B - 2> bb{};
    std::copy_n(a.dims().begin(), A - 2, ba.begin());
    std::copy_n(b.dims().begin(), B - 2, bb.begin());
    auto batch = detail::broadcast_dims("MatMul (batch dimensions)", ba, bb);
    OutSpec<T, R> spec{};
    std::copy(batch.begin(), batch.end(), spec.dims.begin());
    spec.dims[R - 2] = m;
    spec.dims[R - 1] = n;
    return spec;
  }

  template <class T, std::size_t R, std::size_t A, std::size_t B>
  void compute(Tensor<T, R>& out, const Tensor<T, A>& a, const Tensor<T, B>& b) const {
    std::int64_t const m = out.dims()[R - 2];
    std::int64_t const n = out.dims()[R - 1];
    std::int64_t const k = a.dims()[A - (transpose_a ? 2 : 1)];
    std::int64_t const batches = out.num_elements() / std::max<std::int64_t>(m * n, 1);
    if (out.num_elements() == 0) {
      return;
    }
    std::int64_t const lda = a.dims()[A - 1];
    std::int64_t const ldb = b.dims()[B - 1];
    std::int64_t const size_a = a.dims()[A - 2] * a.dims()[A - 1];
    std::int64_t const size_b = b.dims()[B - 2] * b.dims()[B - 1];
    T* o = detail::tensor_access::mutable_data(out);
    const T* pa = a.data();
    const T* pb = b.data();
    // Batch offsets with broadcasting (stride 0 along axes an operand lacks or has as 1).
    constexpr std::size_t NB = R - 2;
    auto batch_strides = [&](const auto& dims, std::size_t rank, std::int64_t matrix) {
      std::array<std::int64_t, NB + 1> s{};
      std::int64_t stride = matrix;
      for (std::size_t i = NB; i-- > 0;) {
        std::size_t const offset = NB - (rank - 2);
        std::int64_t const d = i < offset ? 1 : dims[i - offset];
        s[i] = d == 1 ? 0 : stride;
        stride *= d;
      }
      return s;
    };
    const auto sa = batch_strides(a.dims(), A, size_a);
    const auto sb = batch_strides(b.dims(), B, size_b);
    auto run = [&](std::int64_t batch) {
      std::int64_t rem = batch;
      std::int64_t off_a = 0;
      std::int64_t off_b = 0;
      for (std::size_t i = NB; i-- > 0;) {
        std::int64_t const idx = rem % out.dims()[i];
        rem /= out.dims()[i];
        off_a += idx * sa[i];
        off_b += idx * sb[i];
      }
      detail::gemm<T>(transpose_a, transpose_b, m, n, k, pa + off_a, lda, pb + off_b, ldb,
                      o + batch * m * n, n);
    };
    if (batches > 1 && m * n * k < 128 * 128 * 128) {
      // Many small products: one per thread; the GEMM then runs inline.
      backend::cpu::parallel_for(batches, 1, [&](std::int64_t s, std::int64_t e) {
        for (std::int64_t i = s; i < e; ++i) {
          run(i);
        }
      });
    } else {
      for (std::int64_t i = 0; i < batches; ++i) {
        run(i);
      }
    }
  }

  template <class T, std::size_t R, std::size_t A, std::size_t B>
  auto gradient(const Tensor<T, R>& dy, const Tensor<T, R>&, const Tensor<T, A>& a,
                const Tensor<T, B>& b) const {
    // TensorFlow's MatMul gradient, one case per transpose pair; batch axes an input was
    // broadcast along are summed away by unbroadcast.
    const bool ta = transpose_a;
    const bool tb = transpose_b;
    auto mm = [](const auto& x, const auto& y, bool tx, bool ty) {
      return detail::execute(MatMul{tx, ty}, x, y);
    };
    return std::tuple{[=] {
                        auto g = !ta ? (!tb ? mm(dy, b, false, true) : mm(dy, b, false, false))
                                     : (!tb ? mm(b, dy, false, true) : mm(b, dy, true, true));
                        return detail::unbroadcast(g, a.dims());
                      },
                      [=] {
                        auto g = !tb ? (!ta ? mm(a, dy, true, false) : mm(a, dy, false, false))
                                     : (!ta ? mm(dy, a, true, false) : mm(dy, a, true, true));
                        return detail::unbroadcast(g, b.dims());
                      }};
  }
};

}  // namespace ops

/// Matrix product of the last two axes, batched over the leading axes with broadcasting
/// (TensorFlow: `tf.matmul(a, b, transpose_a=..., transpose_b=...)`).
///
///     auto c = tf::matmul(x, w);                           // [n, k] x [k, m] -> [n, m]
///     auto d = tf::matmul(x, x, {.transpose_b = true});    // x x^T
///
/// Throws invalid_argument naming both shapes when the inner dimensions differ.
template <tensor_like X, tensor_like Y>
auto matmul(const X& a, const Y& b, MatMulOptions options = {}) {
  static_assert(rank_of<X> >= 2 && rank_of<Y> >= 2,
                "tf::matmul(a, b): both operands must have rank >= 2 (use tf::expand_dims or "
                "tf::reshape for vectors)");
  static_assert(
      std::same_as<value_type_of<X>, value_type_of<Y>>,
      "tf::matmul(a, b): a and b must have the same dtype (convert one with tf::cast<T>)");
  static_assert(numeric_element<value_type_of<X>> && !std::same_as<value_type_of<X>, std::uint8_t>,
                "tf::matmul(a, b): requires float, double, int32 or int64 tensors");
  return detail::execute(ops::MatMul{options.transpose_a, options.transpose_b},
                         detail::as_tensor(a), detail::as_tensor(b));
}

TAPEFLOW_END_NAMESPACE
