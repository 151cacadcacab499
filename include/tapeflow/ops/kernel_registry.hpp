// Kernels of registered backends: how a backend other than the CPU runs an op.
//
// The CPU kernel of an op is its own `compute`, called with typed tensors. A registered
// backend (a compiled GPU backend, or a test backend) cannot see every op's templates
// instantiated, so its kernels take the op's inputs and output type-erased, as AnyTensors, and
// switch on dtype and rank themselves. A backend specialises `kernel<Op, Backend>` with
// `static void run(const Op&, AnyTensor& out, std::span<const AnyTensor> inputs)` and calls
// `register_kernel<Op, Backend>(id)`; the executor then runs ops placed on its devices through
// it (Note [Backends] in MAINTAINERS.md). Ops stay untouched.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <span>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace detail {
/// A registered kernel: the op (as `const Op*`), its output (allocated on the op's device, of
/// the shape the op's `infer` gave) and its inputs (lists flattened in order).
using ErasedKernel = void (*)(const void* op, AnyTensor& out, std::span<const AnyTensor> inputs);

template <class Op>
struct registered_kernels {
  static inline std::array<std::atomic<ErasedKernel>, backend::max_backends> table{};
};

/// `Op`'s kernel on `backend`, or null.
template <class Op>
ErasedKernel registered_kernel(backend::BackendId backend) noexcept {
  return backend < backend::max_backends
             ? registered_kernels<Op>::table[backend].load(std::memory_order_acquire)
             : nullptr;
}

/// Whether `backend` runs `Op` (the placement check of core's device table).
template <class Op>
bool has_registered_kernel(backend::BackendId backend) noexcept {
  return registered_kernel<Op>(backend) != nullptr;
}
}  // namespace detail

/// Makes `kernel<Op, Backend>::run` the kernel of `Op` on the backend registered as `id`
/// (backend::register_backend). Registering again replaces it.
template <class Op, class Backend>
void register_kernel(backend::BackendId id) {
  detail::registered_kernels<Op>::table.at(id).store(
      [](const void* op, AnyTensor& out, std::span<const AnyTensor> inputs) {
        kernel<Op, Backend>::run(*static_cast<const Op*>(op), out, inputs);
      },
      std::memory_order_release);
}

TAPEFLOW_END_NAMESPACE
