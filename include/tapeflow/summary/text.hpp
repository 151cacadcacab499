// tf::summary::text (TensorFlow: `tf.summary.text`).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/summary/detail/encode.hpp>
#include <tapeflow/summary/writer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// Options of text().
struct TextOptions {
  /// Markdown shown in TensorBoard's tooltip (TensorFlow: `description`).
  std::string description{};
};

namespace detail {
inline bool push_text(std::string_view name, std::span<const std::int64_t> dims,
                      std::span<const std::string> strings, std::optional<std::int64_t> step,
                      const TextOptions& options) {
  WriterState* writer = active_writer();
  if (writer == nullptr) {
    return false;
  }
  Item item;
  item.kind = Item::Kind::value;
  item.step = resolve_step(step, "text");
  item.wall_time = wall_time_now();
  item.bytes = summary_value(
      name, [&](wire::Writer& t) { write_tensor_strings(t, dims, strings); }, "text", {},
      options.description);
  writer->push(std::move(item));
  return true;
}
}  // namespace detail

/// Writes Markdown text (TensorFlow: `tf.summary.text`); returns false without a default
/// writer.
inline bool text(std::string_view name, std::string_view data,
                 std::optional<std::int64_t> step = {}, const TextOptions& options = {}) {
  const std::string s(data);
  return detail::push_text(name, {}, std::span<const std::string>(&s, 1), step, options);
}

/// Writes a string tensor of any shape (TensorBoard shows rank 1 and 2 as tables).
template <std::size_t R>
bool text(std::string_view name, const Tensor<std::string, R>& data,
          std::optional<std::int64_t> step = {}, const TextOptions& options = {}) {
  data.require_value("summary::text");
  return detail::push_text(name, data.dims(), data.values(), step, options);
}

}  // namespace summary
TAPEFLOW_END_NAMESPACE
