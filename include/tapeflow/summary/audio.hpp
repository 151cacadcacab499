// tf::summary::audio (TensorFlow: `tf.summary.audio`).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/summary/detail/encode.hpp>
#include <tapeflow/summary/writer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// Options of audio().
struct AudioOptions {
  /// At most this many clips of the batch are written.
  std::int64_t max_outputs = 3;
  /// Markdown shown in TensorBoard's tooltip (TensorFlow: `description`).
  std::string description{};
};

namespace detail {
/// The serialized Summary.Value of an audio summary: DT_STRING [k, 2] = (wav, "") rows.
inline std::string audio_value(std::string_view name, const Tensor<float, 3>& data,
                               std::int64_t sample_rate, const AudioOptions& options) {
  data.require_value("summary::audio");
  if (sample_rate <= 0 || sample_rate > 0xFFFFFFF) {
    throw invalid_argument("tf::summary::audio: sample_rate must be positive, got " +
                           std::to_string(sample_rate));
  }
  const auto& d = data.dims();
  if (d[2] < 1 || d[2] > 0xFFFF) {
    throw invalid_argument("tf::summary::audio: '" + std::string(name) +
                           "': expected [k, frames, channels] with channels >= 1, got " +
                           data.shape().to_string());
  }
  const std::int64_t k = std::min(d[0], std::max<std::int64_t>(options.max_outputs, 0));
  std::vector<std::string> strings;
  for (std::int64_t i = 0; i < k; ++i) {
    strings.push_back(encode_wav(data.data() + i * d[1] * d[2], d[1], d[2],
                                 static_cast<std::uint32_t>(sample_rate)));
    strings.emplace_back();  // the (empty) label column
  }
  const std::int64_t dims[2] = {k, 2};
  return summary_value(
      name, [&](wire::Writer& t) { write_tensor_strings(t, dims, strings); }, "audio",
      std::string_view("\x10\x0b", 2), options.description);  // AudioPluginData{encoding: WAV}
}
}  // namespace detail

/// Writes up to `max_outputs` clips of a `[k, frames, channels]` batch of samples in
/// [-1, 1] as 16-bit WAV (TensorFlow: `tf.summary.audio`).
inline bool audio(std::string_view name, const Tensor<float, 3>& data, std::int64_t sample_rate,
                  std::optional<std::int64_t> step = {}, const AudioOptions& options = {}) {
  detail::WriterState* writer = detail::active_writer();
  if (writer == nullptr) {
    return false;
  }
  detail::Item item;
  item.kind = detail::Item::Kind::value;
  item.step = detail::resolve_step(step, "audio");
  item.wall_time = detail::wall_time_now();
  item.bytes = detail::audio_value(name, data, sample_rate, options);
  writer->push(std::move(item));
  return true;
}

}  // namespace summary
TAPEFLOW_END_NAMESPACE
