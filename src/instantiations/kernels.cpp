// Part of tapeflow::instantiations (MAINTAINERS.md, "tapeflow::instantiations"): the Eigen
// kernels of every built-in elementwise op, reduction, softmax and optimizer update, for every
// dtype each op admits, the GEMM and the tensor printer. Programs built with TAPEFLOW_PRECOMPILED
// see only their declarations (no Eigen or intrinsics to parse) and link these.
#include <cstdint>

#include <tapeflow/ops.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {
namespace {

// Taking a kernel's address makes this file emit the specialization (templates are emitted
// where they are used); the asm keeps the use from being optimized away.
template <class F>
void keep(F* kernel) {
  asm volatile("" : : "g"(kernel));
}

template <class Op, class... T>
void keep_unary(type_list<T...>) {
  auto one = []<class E>() {
    if constexpr (Op::template admits<E>) {
      keep(&unary_run<E, E, typename Op::ElementRule>);
      if constexpr (std::is_floating_point_v<E>) {
        keep(&Op::template fused_kernel<E>);
      }
    }
  };
  (one.template operator()<T>(), ...);
}

template <class Op, class... T>
void keep_binary(type_list<T...>) {
  auto one = []<class E>() {
    if constexpr (Op::template admits<E>) {
      using U = typename Op::template result<E>;
      keep(&binary_run<U, E, typename Op::ElementRule>);
    }
  };
  (one.template operator()<T>(), ...);
}

template <class U, class... T>
void keep_casts_to(type_list<T...>) {
  auto one = []<class E>() {
    if constexpr (numeric_element<U> && (numeric_element<E> || std::same_as<E, bool>)) {
      keep(&unary_run<U, E, typename ops::Cast<U>::CastRule>);
    }
  };
  (one.template operator()<T>(), ...);
}

template <class... T>
void keep_numeric(type_list<T...> types) {
  (keep_casts_to<T>(types), ...);
  auto one = []<class E>() {
    if constexpr (numeric_element<E>) {
      keep(&reduce_middle_run<ops::ReduceKind::sum, E>);
      keep(&reduce_middle_run<ops::ReduceKind::mean, E>);
      keep(&reduce_middle_run<ops::ReduceKind::max, E>);
      keep(&reduce_middle_run<ops::ReduceKind::min, E>);
    }
    if constexpr (floating_element<E>) {
      keep(&nn_impl::softmax_kernel<false, E>);
      keep(&nn_impl::softmax_kernel<true, E>);
    }
  };
  (one.template operator()<T>(), ...);
}

template <class... Op>
struct op_list {};

template <class... Op>
void keep_unary_ops(op_list<Op...>) {
  (keep_unary<Op>(element_types{}), ...);
}
template <class... Op>
void keep_binary_ops(op_list<Op...>) {
  (keep_binary<Op>(element_types{}), ...);
}

}  // namespace

void emit_precompiled_kernels();

// Never called: its body only names the kernels.
void emit_precompiled_kernels() {
  using namespace ops;  // NOLINT(google-build-using-namespace): the op list reads as names
  keep_unary_ops(
      op_list<Neg, Exp, Log, Sqrt, Square, Sign, Abs, Tanh, Sigmoid, Relu>{});
  keep_binary_ops(op_list<Add, Sub, SquaredDifference, Mul, Div, Pow, Maximum, Minimum, Equal, NotEqual, Less,
                          LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr>{});
  // fused chains of binary ops run through binary_run<T, T, Rule> for floating T, kept above.
  keep_numeric(element_types{});
  keep(&gradient_descent_block<float>);
  keep(&keras_momentum_block<float>);
  keep(&adam_block<float>);
  keep(&rmsprop_block<float>);
}

// The CPU GEMM (declared in ops/linalg/detail/gemm_fwd.hpp), for MatMul of every numeric type.
#define TAPEFLOW_GEMM(T)                                                                   \
  template void gemm<T>(bool, bool, std::int64_t, std::int64_t, std::int64_t, T const*,    \
                        std::int64_t, T const*, std::int64_t, T*, std::int64_t, bool,      \
                        backend::cpu::ThreadPool&);
TAPEFLOW_GEMM(float)
TAPEFLOW_GEMM(double)
TAPEFLOW_GEMM(std::int32_t)
TAPEFLOW_GEMM(std::uint8_t)
TAPEFLOW_GEMM(std::int64_t)
#undef TAPEFLOW_GEMM

// The batch-norm kernels (declared in ops/nn/detail/batch_norm_kernels_fwd.hpp).
#define TAPEFLOW_BATCH_NORM(T)                                                                  \
  template void nn_impl::affine_run<T>(T const*, T const*, T const*, T*, std::int64_t);         \
  template void nn_impl::batch_norm_coefficients<T, T>(std::int64_t, T const*, T const*,        \
                                                       T const*, T const*, double, T*, T*);     \
  template void nn_impl::fused_batch_norm<T>(T const*, std::int64_t, std::int64_t, T const*,    \
                                             T const*, T const*, T const*, double, bool, T*);   \
  template void nn_impl::fused_batch_norm_grad<T>(T const*, T const*, std::int64_t,            \
                                                  std::int64_t, T const*, T const*, T const*,   \
                                                  double, bool, T*);                            \
  template void nn_impl::fused_batch_norm_grad_given_sums<T>(                                   \
      T const*, T const*, std::int64_t, std::int64_t, T const*, T const*, T const*, T const*,   \
      T const*, double, T*);                                                                    \
  template void nn_impl::fused_batch_norm_scale_grad<T>(T const*, T const*, std::int64_t,      \
                                                        std::int64_t, T const*, T const*,       \
                                                        double, T*);
TAPEFLOW_BATCH_NORM(float)
TAPEFLOW_BATCH_NORM(double)
#undef TAPEFLOW_BATCH_NORM

// The convolution kernels (ops/nn/detail/conv2d_kernels_fwd.hpp, depthwise_kernels_fwd.hpp).
#define TAPEFLOW_CONV(T)                                                                        \
  template void nn_impl::conv2d_forward<T>(nn_impl::Window2D const&, std::int64_t, T const*, T const*,   \
                                           T*);                                                 \
  template void nn_impl::conv2d_backprop_input<T>(nn_impl::Window2D const&, std::int64_t, T const*,      \
                                                  T const*, T*);                                \
  template void nn_impl::conv2d_backprop_filter<T>(nn_impl::Window2D const&, std::int64_t, T const*,     \
                                                   T const*, T*);                               \
  template void nn_impl::depthwise_forward<T>(nn_impl::Window2D const&, std::int64_t, T const*, T const*, \
                                              T*);                                              \
  template void nn_impl::depthwise_backprop_input<T>(nn_impl::Window2D const&, std::int64_t, T const*,   \
                                                     T const*, T*);                             \
  template void nn_impl::depthwise_backprop_filter<T>(nn_impl::Window2D const&, std::int64_t, T const*,  \
                                                      T const*, T*);
TAPEFLOW_CONV(float)
TAPEFLOW_CONV(double)
#undef TAPEFLOW_CONV

// The tensor printer (extern under TAPEFLOW_PRECOMPILED in core/detail/format.hpp).
#define TAPEFLOW_PRINTING(T) \
  template std::string format::array_text<T>(std::span<const T>, const Shape&);
TAPEFLOW_PRINTING(float)
TAPEFLOW_PRINTING(double)
TAPEFLOW_PRINTING(std::int32_t)
TAPEFLOW_PRINTING(std::uint8_t)
TAPEFLOW_PRINTING(std::string)
TAPEFLOW_PRINTING(std::int64_t)
TAPEFLOW_PRINTING(bool)
#undef TAPEFLOW_PRINTING

}  // namespace detail
TAPEFLOW_END_NAMESPACE
