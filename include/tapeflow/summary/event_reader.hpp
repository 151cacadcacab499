// Reading event files back (TensorFlow: `tf.compat.v1.train.summary_iterator`).
//
// Decodes the Event fields summaries use (docs/formats.md 6.3, 6.4, 5.2); unknown fields are
// skipped. A bad CRC or a malformed message raises data_loss naming the file and byte offset;
// a truncated last record (a file still being written) ends the read, as TensorBoard does.
#pragma once

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/crc32c.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// A decoded TensorProto (only the fields summaries use).
struct TensorProtoData {
  int dtype = 0;  ///< TensorFlow DataType number (1 float, 2 double, 7 string, ...)
  std::vector<std::int64_t> shape;      ///< dimension sizes (empty: a scalar)
  std::string tensor_content;           ///< packed element bytes, when used instead of the lists
  std::vector<float> float_val;         ///< float32 elements (when not in tensor_content)
  std::vector<double> double_val;       ///< float64 elements
  std::vector<std::int32_t> int_val;    ///< int32 (and smaller integer) elements
  std::vector<std::int64_t> int64_val;  ///< int64 elements
  std::vector<std::string> string_val;  ///< string elements
};

/// A decoded Summary.Value.
struct SummaryValueData {
  std::string tag;                        ///< the summary's name
  std::optional<float> simple_value;      ///< a TF1-style scalar, when present
  std::optional<TensorProtoData> tensor;  ///< the value as a tensor (TF2 summaries)
  bool has_metadata = false;              ///< whether a SummaryMetadata was present
  std::string plugin_name;                ///< metadata's plugin ("scalars", "images", ...)
  std::string plugin_content;             ///< metadata's serialized plugin-specific data
  std::string summary_description;        ///< metadata's description (markdown)
};

/// A decoded Event.
struct EventData {
  double wall_time = 0.0;                ///< seconds since the Unix epoch
  std::int64_t step = 0;                 ///< the step it was written at
  std::string file_version;              ///< "brain.Event:2" in a file's first event, else empty
  std::optional<std::string> graph_def;  ///< serialized GraphDef
  bool has_summary = false;              ///< whether the event carries a Summary
  std::vector<SummaryValueData> values;  ///< the Summary's values
  /// SourceMetadata.writer of a file's first event ("tapeflow.summary" for ours).
  std::string source_writer;
  std::uint64_t offset = 0;  ///< byte offset of the record in its file
};

namespace detail {

namespace wire = tapeflow::detail::wire;

inline TensorProtoData parse_tensor(wire::Reader r) {
  TensorProtoData t;
  while (auto tag = r.next()) {
    switch (tag->field) {
      case 1:
        t.dtype = r.int32();
        break;
      case 2: {
        auto shape = r.message("TensorShapeProto");
        while (auto st = shape.next()) {
          if (st->field == 2 && st->type == wire::WireType::len) {
            auto dim = shape.message("TensorShapeProto.Dim");
            std::int64_t size = 0;
            while (auto dt = dim.next()) {
              if (dt->field == 1 && dt->type == wire::WireType::varint) {
                size = dim.int64();
              } else {
                dim.skip(*dt);
              }
            }
            t.shape.push_back(size);
          } else {
            shape.skip(*st);
          }
        }
        break;
      }
      case 4:
        t.tensor_content = std::string(r.bytes());
        break;
      case 5:
        r.repeated_fixed32(
            *tag, [&](std::uint32_t v) { t.float_val.push_back(std::bit_cast<float>(v)); });
        break;
      case 6:
        r.repeated_fixed64(
            *tag, [&](std::uint64_t v) { t.double_val.push_back(std::bit_cast<double>(v)); });
        break;
      case 7:
        r.repeated_varint(*tag, [&](std::uint64_t v) {
          t.int_val.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
        });
        break;
      case 8:
        t.string_val.emplace_back(r.bytes());
        break;
      case 10:
        r.repeated_varint(
            *tag, [&](std::uint64_t v) { t.int64_val.push_back(static_cast<std::int64_t>(v)); });
        break;
      default:
        r.skip(*tag);
    }
  }
  return t;
}

inline SummaryValueData parse_value(wire::Reader r) {
  SummaryValueData v;
  while (auto tag = r.next()) {
    if (tag->field == 1 && tag->type == wire::WireType::len) {
      v.tag = std::string(r.bytes());
    } else if (tag->field == 2 && tag->type == wire::WireType::i32) {
      v.simple_value = r.float32();
    } else if (tag->field == 8 && tag->type == wire::WireType::len) {
      v.tensor = parse_tensor(r.message("TensorProto"));
    } else if (tag->field == 9 && tag->type == wire::WireType::len) {
      v.has_metadata = true;
      auto m = r.message("SummaryMetadata");
      while (auto mt = m.next()) {
        if (mt->field == 1 && mt->type == wire::WireType::len) {
          auto p = m.message("PluginData");
          while (auto pt = p.next()) {
            if (pt->field == 1 && pt->type == wire::WireType::len) {
              v.plugin_name = std::string(p.bytes());
            } else if (pt->field == 2 && pt->type == wire::WireType::len) {
              v.plugin_content = std::string(p.bytes());
            } else {
              p.skip(*pt);
            }
          }
        } else if (mt->field == 3 && mt->type == wire::WireType::len) {
          v.summary_description = std::string(m.bytes());
        } else {
          m.skip(*mt);
        }
      }
    } else {
      r.skip(*tag);
    }
  }
  return v;
}

}  // namespace detail

/// Decodes one serialized Event; `base_offset` only labels error messages.
inline EventData parse_event(std::string_view payload, std::uint64_t base_offset = 0) {
  namespace wire = tapeflow::detail::wire;
  EventData e;
  wire::Reader r(payload, "Event", base_offset);
  while (auto tag = r.next()) {
    if (tag->field == 1 && tag->type == wire::WireType::i64) {
      e.wall_time = r.float64();
    } else if (tag->field == 2 && tag->type == wire::WireType::varint) {
      e.step = r.int64();
    } else if (tag->field == 3 && tag->type == wire::WireType::len) {
      e.file_version = std::string(r.bytes());
    } else if (tag->field == 4 && tag->type == wire::WireType::len) {
      e.graph_def = std::string(r.bytes());
    } else if (tag->field == 5 && tag->type == wire::WireType::len) {
      e.has_summary = true;
      auto s = r.message("Summary");
      while (auto st = s.next()) {
        if (st->field == 1 && st->type == wire::WireType::len) {
          e.values.push_back(detail::parse_value(s.message("Summary.Value")));
        } else {
          s.skip(*st);
        }
      }
    } else if (tag->field == 10 && tag->type == wire::WireType::len) {
      auto m = r.message("SourceMetadata");
      while (auto mt = m.next()) {
        if (mt->field == 1 && mt->type == wire::WireType::len) {
          e.source_writer = std::string(m.bytes());
        } else {
          m.skip(*mt);
        }
      }
    } else {
      r.skip(*tag);
    }
  }
  return e;
}

/// The raw record payloads of an event file's bytes, CRC-checked; `name` labels errors. A
/// truncated final record is dropped (it may still be being written). Only the bytes present
/// are ever copied, whatever length a record claims.
inline std::vector<std::pair<std::uint64_t, std::string>> split_records(std::string_view bytes,
                                                                        const std::string& name) {
  namespace wire = tapeflow::detail::wire;
  std::vector<std::pair<std::uint64_t, std::string>> records;
  std::size_t pos = 0;
  while (bytes.size() - pos >= 12) {
    const std::uint64_t n = wire::load_fixed64(bytes.data() + pos);
    if (io::masked_crc32c(bytes.data() + pos, 8) != wire::load_fixed32(bytes.data() + pos + 8)) {
      throw data_loss("tf::summary: '" + name + "': corrupted record length at byte offset " +
                      std::to_string(pos));
    }
    if (n > bytes.size() - pos - 12 || bytes.size() - pos - 12 - n < 4) {
      break;  // truncated: not written yet
    }
    const std::string_view payload = bytes.substr(pos + 12, static_cast<std::size_t>(n));
    if (io::masked_crc32c(payload) != wire::load_fixed32(bytes.data() + pos + 12 + n)) {
      throw data_loss("tf::summary: '" + name + "': corrupted record payload at byte offset " +
                      std::to_string(pos));
    }
    records.emplace_back(pos, std::string(payload));
    pos += 16 + static_cast<std::size_t>(n);
  }
  return records;
}

namespace detail {
inline std::string read_event_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw not_found("tf::summary: cannot open event file '" + path.string() + "'");
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace detail

/// The raw record payloads of a TFRecord file (see split_records).
inline std::vector<std::pair<std::uint64_t, std::string>> read_records(
    const std::filesystem::path& path) {
  return split_records(detail::read_event_file(path), path.string());
}

/// Every event in an event file's bytes, in order; `name` labels errors.
inline std::vector<EventData> parse_events(std::string_view bytes, const std::string& name) {
  std::vector<EventData> events;
  for (auto& [offset, payload] : split_records(bytes, name)) {
    try {
      events.push_back(parse_event(payload, offset + 12));
    } catch (const data_loss& e) {
      throw data_loss("tf::summary: '" + name + "': " + e.what());
    }
    events.back().offset = offset;
  }
  return events;
}

/// Every event of an event file, in order (TensorFlow:
/// `tf.compat.v1.train.summary_iterator(path)`).
inline std::vector<EventData> summary_iterator(const std::filesystem::path& path) {
  return parse_events(detail::read_event_file(path), path.string());
}

}  // namespace summary
TAPEFLOW_END_NAMESPACE
