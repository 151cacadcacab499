// Backends: tags that op kernels specialise on.
//
// Customization point: `tapeflow::kernel<Op, Backend>` (a trait struct). The CPU kernel of an
// op is its `compute` member; another backend adds `kernel<Op, backend::Cuda>` in its own
// header, never by editing the op.
#pragma once

#include <concepts>
#include <utility>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace backend {
/// The CPU backend: Eigen expressions and our GEMM on the intra-op thread pool.
struct Cpu {};
}  // namespace backend

/// The kernel of `Op` on `Backend`. The CPU one calls the op's own `compute`; other backends
/// specialise this template. An op with no kernel for a backend fails to compile naming
/// `no_kernel_for_backend`.
template <class Op, class Backend>
struct kernel {
  /// Runs `op` on `args` (its inputs and outputs) on this backend.
  template <class... Args>
  static void run(const Op& op, Args&&... args) {
    if constexpr (std::same_as<Backend, backend::Cpu>) {
      op.compute(std::forward<Args>(args)...);
    } else {
      static_assert(std::same_as<Backend, backend::Cpu>,
                    "no_kernel_for_backend: specialise tapeflow::kernel<Op, Backend>");
    }
  }
};

TAPEFLOW_END_NAMESPACE
