// Event, Summary and TensorProto encoders and TFRecord framing for event files
// (docs/formats.md sections 3, 5, 6, 7). Field order and default omission follow TensorFlow's
// serializer, so our event payloads equal TensorFlow's byte for byte (tests/data/summary).
// IWYU pragma: private, include <tapeflow/summary.hpp>
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/crc32c.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary::detail {

namespace wire = tapeflow::detail::wire;

/// Field numbers (docs/formats.md 6.3, 6.4, 5.2).
namespace field {
inline constexpr std::uint32_t event_wall_time = 1, event_step = 2, event_file_version = 3,
                               event_graph_def = 4, event_summary = 5, event_source_metadata = 10;
inline constexpr std::uint32_t summary_value = 1;
inline constexpr std::uint32_t value_tag = 1, value_simple_value = 2, value_tensor = 8,
                               value_metadata = 9;
inline constexpr std::uint32_t metadata_plugin_data = 1, metadata_description = 3;
inline constexpr std::uint32_t plugin_name = 1, plugin_content = 2;
inline constexpr std::uint32_t tensor_dtype = 1, tensor_shape = 2, tensor_content = 4,
                               tensor_string_val = 8;
inline constexpr std::uint32_t shape_dim = 2, dim_size = 1;
}  // namespace field

/// The writer name in our files' first event (TensorFlow's C++ writer says
/// "tensorflow.core.util.events_writer").
inline constexpr std::string_view source_writer = "tapeflow.summary";
inline constexpr std::string_view file_version = "brain.Event:2";

/// TensorShapeProto body for `dims` (a scalar is empty).
inline void write_shape(wire::Writer& w, std::span<const std::int64_t> dims) {
  for (auto d : dims) {
    w.message_field(field::shape_dim,
                    [&](wire::Writer& dim) { dim.int64_field_if_nonzero(field::dim_size, d); });
  }
}

/// TensorProto with raw `tensor_content` (numeric tensors, as TF2 summaries write them).
inline void write_tensor_content(wire::Writer& w, DType dtype, std::span<const std::int64_t> dims,
                                 std::string_view content) {
  w.int32_field(field::tensor_dtype, static_cast<std::int32_t>(dtype));
  w.message_field(field::tensor_shape, [&](wire::Writer& s) { write_shape(s, dims); });
  w.bytes_field_if_nonempty(field::tensor_content, content);
}

/// TensorProto of DT_STRING elements in `string_val`.
template <class Strings>
void write_tensor_strings(wire::Writer& w, std::span<const std::int64_t> dims,
                          const Strings& values) {
  w.int32_field(field::tensor_dtype, static_cast<std::int32_t>(DType::string));
  w.message_field(field::tensor_shape, [&](wire::Writer& s) { write_shape(s, dims); });
  for (const auto& v : values) {
    w.bytes_field(field::tensor_string_val, v);
  }
}

/// SummaryMetadata{plugin_data{name, content}, summary_description}.
inline void write_metadata(wire::Writer& w, std::string_view plugin, std::string_view content,
                           std::string_view description) {
  w.message_field(field::metadata_plugin_data, [&](wire::Writer& p) {
    p.string_field(field::plugin_name, plugin);
    p.bytes_field_if_nonempty(field::plugin_content, content);
  });
  w.bytes_field_if_nonempty(field::metadata_description, description);
}

/// A serialized Summary.Value: tag, tensor (written by `fill_tensor`), metadata.
template <class FillTensor>
std::string summary_value(std::string_view tag, FillTensor&& fill_tensor, std::string_view plugin,
                          std::string_view content = {}, std::string_view description = {}) {
  std::string out;
  wire::Writer w(out);
  w.string_field(field::value_tag, tag);
  w.message_field(field::value_tensor, fill_tensor);
  w.message_field(field::value_metadata,
                  [&](wire::Writer& m) { write_metadata(m, plugin, content, description); });
  return out;
}

/// The Summary.Value of a TF2 scalar: a rank-0 DT_FLOAT tensor, plugin "scalars".
inline void append_scalar_value(std::string& out, std::string_view tag, float value,
                                std::string_view description = {}) {
  wire::Writer w(out);
  w.string_field(field::value_tag, tag);
  // tensor { dtype: DT_FLOAT, tensor_shape {}, tensor_content: 4 bytes }, written flat: the
  // hot path of summary::scalar avoids message_field's temporary strings.
  w.tag(field::value_tensor, wire::WireType::len);
  w.varint(10);
  w.int32_field(field::tensor_dtype, static_cast<std::int32_t>(DType::float32));
  w.bytes_field(field::tensor_shape, {});
  w.tag(field::tensor_content, wire::WireType::len);
  w.varint(4);
  w.fixed32(std::bit_cast<std::uint32_t>(value));
  w.message_field(field::value_metadata,
                  [&](wire::Writer& m) { write_metadata(m, "scalars", {}, description); });
}

/// Event{wall_time, step, summary{value: <serialized Value>}}.
inline std::string summary_event(double wall_time, std::int64_t step, std::string_view value) {
  std::string out;
  wire::Writer w(out);
  w.double_field(field::event_wall_time, wall_time);
  w.int64_field_if_nonzero(field::event_step, step);
  w.message_field(field::event_summary,
                  [&](wire::Writer& s) { s.bytes_field(field::summary_value, value); });
  return out;
}

/// The first event of every file: Event{wall_time, file_version, source_metadata{writer}}.
inline std::string version_event(double wall_time, std::string_view writer = source_writer) {
  std::string out;
  wire::Writer w(out);
  w.double_field(field::event_wall_time, wall_time);
  w.string_field(field::event_file_version, file_version);
  w.message_field(field::event_source_metadata,
                  [&](wire::Writer& m) { m.string_field(1, writer); });
  return out;
}

/// Event{wall_time, step, graph_def: <serialized GraphDef>} (what tf.summary.graph writes).
inline std::string graph_event(double wall_time, std::int64_t step, std::string_view graph_def) {
  std::string out;
  wire::Writer w(out);
  w.double_field(field::event_wall_time, wall_time);
  w.int64_field_if_nonzero(field::event_step, step);
  w.bytes_field(field::event_graph_def, graph_def);
  return out;
}

/// Appends one TFRecord: length, masked CRC of the length, payload, masked CRC of the payload.
inline void append_record(std::string& out, std::string_view payload) {
  const std::size_t at = out.size();
  wire::append_fixed64(out, payload.size());
  wire::append_fixed32(out, io::masked_crc32c(out.data() + at, 8));
  out.append(payload);
  wire::append_fixed32(out, io::masked_crc32c(payload));
}

/// TF2 histogram buckets (docs/formats.md 7.2): rows (left, right, count) as k*3 doubles.
inline std::vector<double> histogram_buckets(std::span<const double> data, std::int64_t k) {
  std::vector<double> out(static_cast<std::size_t>(k) * 3, 0.0);
  if (k <= 0 || data.empty()) {
    return out;
  }
  double lo = data[0];
  double hi = data[0];
  for (double x : data) {
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  const auto uk = static_cast<std::size_t>(k);
  if (lo == hi) {
    for (std::size_t i = 0; i < uk; ++i) {
      out[3 * i] = lo;
      out[3 * i + 1] = hi;
    }
    out[3 * (uk - 1) + 2] = static_cast<double>(data.size());
    return out;
  }
  const double width = (hi - lo) / static_cast<double>(k);
  for (double x : data) {
    double index = std::floor((x - lo) / width);
    auto i = static_cast<std::int64_t>(index);
    i = i > k - 1 ? k - 1 : i;
    i = i < 0 ? 0 : i;
    out[3 * static_cast<std::size_t>(i) + 2] += 1.0;
  }
  // tf.linspace(min, max, k + 1) with the last edge forced to exactly max.
  const double step = (hi - lo) / static_cast<double>(k);
  // volatile: a fused multiply-add (-march=native) would round differently from TensorFlow.
  for (std::size_t i = 0; i < uk; ++i) {
    volatile double left = step * static_cast<double>(i);
    volatile double right = step * static_cast<double>(i + 1);
    out[3 * i] = lo + left;
    out[3 * i + 1] = i + 1 == uk ? hi : lo + right;
  }
  return out;
}

/// 16-bit PCM WAV of `frames` x `channels` float samples (clipped to [-1, 1]), as
/// TensorFlow's `encode_wav`: sample = round(x * 32768) clamped to int16.
inline std::string encode_wav(const float* samples, std::int64_t frames, std::int64_t channels,
                              std::uint32_t sample_rate) {
  const auto data_bytes = static_cast<std::uint32_t>(frames * channels * 2);
  std::string out;
  out.reserve(44 + data_bytes);
  auto u32 = [&](std::uint32_t v) { wire::append_fixed32(out, v); };
  auto u16 = [&](std::uint16_t v) {
    out.push_back(static_cast<char>(v & 0xFF));
    out.push_back(static_cast<char>(v >> 8));
  };
  out += "RIFF";
  u32(36 + data_bytes);
  out += "WAVEfmt ";
  u32(16);
  u16(1);  // PCM
  u16(static_cast<std::uint16_t>(channels));
  u32(sample_rate);
  u32(sample_rate * static_cast<std::uint32_t>(channels) * 2);
  u16(static_cast<std::uint16_t>(channels * 2));
  u16(16);
  out += "data";
  u32(data_bytes);
  for (std::int64_t i = 0; i < frames * channels; ++i) {
    float v = std::round(samples[i] * 32768.0f);
    v = std::isnan(v) ? 0.0f : (v < -32768.0f ? -32768.0f : (v > 32767.0f ? 32767.0f : v));
    u16(static_cast<std::uint16_t>(static_cast<std::int16_t>(v)));
  }
  return out;
}

}  // namespace summary::detail
TAPEFLOW_END_NAMESPACE
