// The Eigen body of softmax and log_softmax's kernel declared in ops/nn/softmax.hpp.
// Header-only programs get it through that header; with TAPEFLOW_PRECOMPILED it is compiled
// once in tapeflow::instantiations (src/instantiations/kernels.cpp).
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/elementwise_kernels.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::nn_impl {

template <bool Log, class T>
void softmax_kernel(T const* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner) {
  using tapeflow::detail::ConstVecMap;
  using tapeflow::detail::VecMap;
  if (outer * n * inner == 0) {
    return;
  }
  std::int64_t const slab = n * inner;
  std::int64_t const grain =
      std::max<std::int64_t>(1, tapeflow::detail::parallel_grain / std::max<std::int64_t>(slab, 1));
  backend::cpu::parallel_for(outer, grain, [&](std::int64_t begin, std::int64_t end) {
    if (inner == 1) {
      // Rows are contiguous: one vector expression per row.
      for (std::int64_t r = begin; r < end; ++r) {
        T const* xr = x + r * n;
        T* yr = y + r * n;
        T const m = *std::max_element(xr, xr + n);
        ConstVecMap<T> in(xr, n);
        VecMap<T> out(yr, n);
        out = (in - in.constant(m)).exp();
        T sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          sum += yr[j];
        }
        if constexpr (Log) {
          // (x - m) - log(sum), not x - (m + log(sum)): m + log(sum) would round away log(sum).
          out = (in - in.constant(m)) - in.constant(std::log(sum));
        } else {
          out = out * out.constant(T(1) / sum);
        }
      }
      return;
    }
    // Strided axis: work on whole `inner`-long rows, keeping a running max and sum per column.
    std::vector<T> m(static_cast<std::size_t>(inner));
    std::vector<T> s(static_cast<std::size_t>(inner));
    for (std::int64_t r = begin; r < end; ++r) {
      T const* xs = x + r * slab;
      T* ys = y + r * slab;
      std::copy_n(xs, inner, m.data());
      for (std::int64_t j = 1; j < n; ++j) {
        T const* row = xs + j * inner;
        for (std::int64_t i = 0; i < inner; ++i) {
          m[static_cast<std::size_t>(i)] = std::max(m[static_cast<std::size_t>(i)], row[i]);
        }
      }
      ConstVecMap<T> mv(m.data(), inner);
      std::fill(s.begin(), s.end(), T(0));
      for (std::int64_t j = 0; j < n; ++j) {
        VecMap<T> out(ys + j * inner, inner);
        out = (ConstVecMap<T>(xs + j * inner, inner) - mv).exp();
        for (std::int64_t i = 0; i < inner; ++i) {
          s[static_cast<std::size_t>(i)] += ys[j * inner + i];
        }
      }
      if constexpr (Log) {
        for (std::int64_t i = 0; i < inner; ++i) {
          s[static_cast<std::size_t>(i)] = std::log(s[static_cast<std::size_t>(i)]);
        }
        ConstVecMap<T> log_sum(s.data(), inner);
        for (std::int64_t j = 0; j < n; ++j) {
          VecMap<T>(ys + j * inner, inner) = (ConstVecMap<T>(xs + j * inner, inner) - mv) - log_sum;
        }
      } else {
        for (std::int64_t i = 0; i < inner; ++i) {
          s[static_cast<std::size_t>(i)] = T(1) / s[static_cast<std::size_t>(i)];
        }
        ConstVecMap<T> inv(s.data(), inner);
        for (std::int64_t j = 0; j < n; ++j) {
          VecMap<T> out(ys + j * inner, inner);
          out = out * inv;
        }
      }
    }
  });
}

}  // namespace detail::nn_impl
TAPEFLOW_END_NAMESPACE
