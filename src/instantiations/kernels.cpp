// Part of tapeflow::instantiations (MAINTAINERS.md, "tapeflow::instantiations"): the Eigen
// kernels of every built-in elementwise op, reduction, softmax and optimizer update, for every
// dtype each op admits, the GEMM, the batch-norm and convolution kernels, and the tensor printer.
// Programs built with TAPEFLOW_PRECOMPILED see only their declarations (no Eigen or intrinsics to
// parse) and link these.
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
      keep(&gemm<E>);  // declared in ops/linalg/detail/gemm_fwd.hpp, for MatMul
      keep(&reduce_middle_run<ops::ReduceKind::sum, E>);
      keep(&reduce_middle_run<ops::ReduceKind::mean, E>);
      keep(&reduce_middle_run<ops::ReduceKind::max, E>);
      keep(&reduce_middle_run<ops::ReduceKind::min, E>);
    }
    if constexpr (floating_element<E>) {
      keep(&nn_impl::softmax_kernel<false, E>);
      keep(&nn_impl::softmax_kernel<true, E>);
      // declared in ops/nn/detail/{batch_norm,conv2d,depthwise}_kernels_fwd.hpp
      keep(&nn_impl::affine_run<E>);
      keep(&nn_impl::batch_norm_coefficients<E, E>);
      keep(&nn_impl::fused_batch_norm<E>);
      keep(&nn_impl::fused_batch_norm_grad<E>);
      keep(&nn_impl::fused_batch_norm_grad_given_sums<E>);
      keep(&nn_impl::fused_batch_norm_scale_grad<E>);
      keep(&nn_impl::conv2d_forward<E>);
      keep(&nn_impl::conv2d_backprop_input<E>);
      keep(&nn_impl::conv2d_backprop_filter<E>);
      keep(&nn_impl::depthwise_forward<E>);
      keep(&nn_impl::depthwise_backprop_input<E>);
      keep(&nn_impl::depthwise_backprop_filter<E>);
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
