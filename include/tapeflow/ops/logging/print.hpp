// tf::print: prints tensor values as an op, so inside a tf::function it prints on every call
// (TensorFlow: `tf.print`; std::cout prints only while tracing).
#pragma once

#include <charconv>
#include <cstdint>
#include <iostream>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// tf.print's spelling of one element: shortest round-trip numbers ("1", "0.1", "2.5").
template <class T>
std::string print_element(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
  } else {
    return std::to_string(static_cast<std::int64_t>(v));
  }
}

/// tf.print's text of a tensor: "1", "[1 2 3]", "[[1 2]\n [3 4]]", "..." past 1000 elements.
template <class T, std::size_t R>
std::string print_text(const Tensor<T, R>& t) {
  const T* data = t.data();
  if constexpr (R == 0) {
    return print_element(data[0]);
  } else {
    const bool summarize = t.num_elements() > 1000;
    std::string out;
    auto emit = [&](auto&& self, std::size_t axis, std::int64_t offset,
                    std::int64_t stride) -> void {
      out += '[';
      const std::int64_t n = t.dims()[axis];
      const std::int64_t inner = stride / std::max<std::int64_t>(n, 1);
      for (std::int64_t i = 0; i < n; ++i) {
        if (summarize && n > 6 && i == 3) {
          out += axis + 1 == R ? "... " : "...\n" + std::string(axis + 1, ' ');
          i = n - 4;
          continue;
        }
        if (axis + 1 == R) {
          out += print_element(data[offset + i]);
          if (i + 1 < n) {
            out += ' ';
          }
        } else {
          self(self, axis + 1, offset + i * inner, inner);
          if (i + 1 < n) {
            out += '\n';
            out.append(axis + 1, ' ');
          }
        }
      }
      out += ']';
    };
    emit(emit, 0, 0, t.num_elements());
    return out;
  }
}

}  // namespace detail

namespace ops {

/// Prints one tensor followed by a newline (TensorFlow op "PrintV2"). Its output is a dummy
/// bool; the op exists for its effect, which the executor keeps in program order.
struct PrintV2 {
  static constexpr std::string_view name = "PrintV2";
  static constexpr std::string_view output_arg = no_output_arg;  ///< TensorFlow's has none
  static constexpr bool stateful = true;                         // writes to a stream
  static constexpr bool differentiable = false;
  std::ostream* stream = &std::cout;

  /// TensorFlow's attributes: the stream ("stdout" or "stderr").
  [[nodiscard]] OpAttributes attributes() const {
    return {{"output_stream", stream == &std::cerr ? "stderr" : "stdout"}};
  }
  /// TensorFlow's PrintV2 prints a string scalar to stdout or stderr; other tensors are
  /// formatted by a StringFormat op first, which this op does itself.
  template <class T, std::size_t R>
  [[nodiscard]] std::string export_error(const Tensor<T, R>&) const {
    if (stream != &std::cout && stream != &std::cerr) {
      return "PrintV2 to a stream other than std::cout or std::cerr: TensorFlow's op writes to "
             "stdout, stderr or the log only";
    }
    if constexpr (!std::is_same_v<T, std::string> || R != 0) {
      return "PrintV2 of a " + std::string(dtype_traits<T>::name) + " tensor of rank " +
             std::to_string(R) +
             ": TensorFlow's op prints a string scalar (tf.print formats tensors with "
             "StringFormat first)";
    } else {
      return {};
    }
  }

  template <class T, std::size_t R>
  OutSpec<bool, 0> infer(const Tensor<T, R>&) const {
    return {};
  }
  template <class T, std::size_t R>
  void compute(Tensor<bool, 0>& out, const Tensor<T, R>& x) const {
    *stream << detail::print_text(x) << '\n';
    detail::tensor_access::mutable_data(out)[0] = true;
  }
};

}  // namespace ops

/// Prints a tensor (or a plain number or string) as TensorFlow's `tf.print` does. Eagerly it
/// prints now; inside a tf::function it becomes a graph op that prints on every call.
/// Output goes to std::cout (TensorFlow's default is stderr; pass `&std::cerr` to match it).
template <class X>
void print(const X& x, std::ostream& stream = std::cout) {
  if constexpr (tensor_like<X>) {
    detail::execute(ops::PrintV2{&stream}, detail::as_tensor(x));
  } else if constexpr (std::is_convertible_v<const X&, std::string_view>) {
    detail::execute(ops::PrintV2{&stream},
                    Tensor<std::string, 0>(std::string(std::string_view(x))));
  } else {
    static_assert(std::is_arithmetic_v<X>,
                  "tf::print(x): x must be a tensor, a variable, a number or a string");
    detail::execute(ops::PrintV2{&stream}, Tensor<X, 0>(x));
  }
}

TAPEFLOW_END_NAMESPACE
