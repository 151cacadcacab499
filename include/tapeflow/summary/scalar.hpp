// tf::summary::scalar (TensorFlow: `tf.summary.scalar`).
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/summary/detail/encode.hpp>
#include <tapeflow/summary/writer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// Options of scalar().
struct ScalarOptions {
  /// Markdown shown in TensorBoard's tooltip (TensorFlow: `description`).
  std::string description{};
};

namespace detail {
template <class X>
float scalar_value(const X& x) {
  if constexpr (std::is_arithmetic_v<X>) {
    return static_cast<float>(x);
  } else if constexpr (!is_tensor<X>::value && requires { x.value(); }) {
    return scalar_value(x.value());  // a Variable: its current value
  } else {
    static_assert(is_tensor<X>::value && std::is_arithmetic_v<typename X::value_type>,
                  "tf::summary::scalar: the value must be a number or a numeric tensor");
    x.require_value("summary::scalar");
    if (x.num_elements() != 1) {
      throw invalid_argument("tf::summary::scalar: expected a scalar, got a tensor of shape " +
                             x.shape().to_string());
    }
    return static_cast<float>(x.data()[0]);
  }
}
}  // namespace detail

/// Writes a scalar to the default writer (TensorFlow: `tf.summary.scalar(name, data, step)`).
/// The value is stored as float32, the one scalar type TensorBoard keeps. Returns false when
/// no default writer is set. Costs well under a microsecond on the calling thread
/// (Note [Summary writer]).
///
///     { auto scope = writer.as_default(); tf::summary::scalar("loss", loss, step); }
template <class X>
bool scalar(std::string_view name, const X& data, std::optional<std::int64_t> step = {},
            const ScalarOptions& options = {}) {
  detail::WriterState* writer = detail::active_writer();
  if (writer == nullptr) {
    return false;
  }
  const float value = detail::scalar_value(data);
  const std::int64_t s = detail::resolve_step(step, "scalar");
  if (options.description.empty()) {
    writer->push_scalar(name, value, s);
  } else {
    detail::Item item;
    item.kind = detail::Item::Kind::value;
    item.step = s;
    item.wall_time = detail::wall_time_now();
    item.bytes.clear();
    detail::wire::Writer w(item.bytes);
    w.string_field(detail::field::value_tag, name);
    std::string tensor;
    detail::wire::Writer t(tensor);
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    std::string content(4, '\0');
    for (int i = 0; i < 4; ++i) {
      content[static_cast<std::size_t>(i)] = static_cast<char>((bits >> (8 * i)) & 0xFF);
    }
    detail::write_tensor_content(t, DType::float32, {}, content);
    w.bytes_field(detail::field::value_tensor, tensor);
    w.message_field(detail::field::value_metadata, [&](detail::wire::Writer& m) {
      detail::write_metadata(m, "scalars", {}, options.description);
    });
    writer->push(std::move(item));
  }
  return true;
}

}  // namespace summary
TAPEFLOW_END_NAMESPACE
