// Kernels of registered backends: how a backend other than the CPU runs an op.
//
// The CPU kernel of an op is its own `compute`, called with typed tensors. A registered
// backend (a compiled GPU backend, or a test backend) cannot see every op's templates
// instantiated, so its kernels take the op's inputs and output type-erased, as AnyTensors, and
// switch on dtype and rank themselves. A backend specialises `kernel<Op, Backend>` with
// `static void run(const Op&, AnyTensor& out, std::span<const AnyTensor> inputs)` (and, when it
// takes only some dtypes, `static constexpr std::array dtypes{...}`) and calls
// `register_kernel<Op, Backend>(id)`; the executor then runs ops placed on its devices through
// it (Note [Backends] in MAINTAINERS.md). Ops stay untouched.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace detail {
/// A registered kernel: the op (as `const Op*`), its output (allocated on the op's device, of
/// the shape the op's `infer` gave) and its inputs (lists flattened in order).
using ErasedKernel = void (*)(const void* op, AnyTensor& out, std::span<const AnyTensor> inputs);

template <class Op>
struct registered_kernels {
  static inline std::array<std::atomic<ErasedKernel>, backend::max_backends> table{};
  /// Per backend, the dtypes its kernel takes: bit `DType` set (all bits: any dtype).
  static inline std::array<std::atomic<std::uint64_t>, backend::max_backends> dtypes{};
};

/// `Op`'s kernel on `backend`, or null.
template <class Op>
ErasedKernel registered_kernel(backend::BackendId backend) noexcept {
  return backend < backend::max_backends
             ? registered_kernels<Op>::table[backend].load(std::memory_order_acquire)
             : nullptr;
}

/// Whether `backend` runs `Op` on inputs of `dtype` (DType::invalid: any), the placement check
/// of core's device table: a dtype its kernel does not take falls back like a missing kernel.
template <class Op>
bool has_registered_kernel(backend::BackendId backend, DType dtype) noexcept {
  if (registered_kernel<Op>(backend) == nullptr) {
    return false;
  }
  const std::uint64_t mask =
      registered_kernels<Op>::dtypes[backend].load(std::memory_order_relaxed);
  return dtype == DType::invalid || ((mask >> static_cast<unsigned>(dtype)) & 1U) != 0;
}

/// The dtypes `kernel<Op, Backend>` takes: its `dtypes` list (e.g.
/// `static constexpr std::array dtypes{DType::float32, DType::float64};`), else all.
template <class Op, class Backend>
constexpr std::uint64_t kernel_dtype_mask() {
  if constexpr (requires { kernel<Op, Backend>::dtypes; }) {
    std::uint64_t mask = 0;
    for (DType d : kernel<Op, Backend>::dtypes) {
      mask |= std::uint64_t{1} << static_cast<unsigned>(d);
    }
    return mask;
  } else {
    return ~std::uint64_t{0};
  }
}
}  // namespace detail

/// Makes `kernel<Op, Backend>::run` the kernel of `Op` on the backend registered as `id`
/// (backend::register_backend), for the dtypes of the first tensor input that its optional
/// `dtypes` member lists (ops on others are placed as if the backend had no kernel: on CPU:0
/// under soft placement). Registering again replaces it.
template <class Op, class Backend>
void register_kernel(backend::BackendId id) {
  // Stored before the kernel, whose release store publishes it.
  detail::registered_kernels<Op>::dtypes.at(id).store(detail::kernel_dtype_mask<Op, Backend>(),
                                                      std::memory_order_relaxed);
  detail::registered_kernels<Op>::table.at(id).store(
      [](const void* op, AnyTensor& out, std::span<const AnyTensor> inputs) {
        kernel<Op, Backend>::run(*static_cast<const Op*>(op), out, inputs);
      },
      std::memory_order_release);
}

TAPEFLOW_END_NAMESPACE
