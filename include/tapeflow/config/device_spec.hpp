// tf::DeviceSpec: a (possibly partial) device name, parsed and printed as TensorFlow does.
//
// TensorFlow accepts "/GPU:0", "/gpu:1", "GPU:0", "/device:CPU:0", "/device:GPU:*" and the full
// "/job:localhost/replica:0/task:0/device:CPU:0"; each '/'-separated part is `job:`, `replica:`,
// `task:`, `<type>[:<index>]` or `device:<type>:<index>`, and anything else is a ValueError
// naming the part. Unset fields stay unset so nested tf::device scopes can merge them.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// A device name's parts; any of them may be unset (TensorFlow: `tf.DeviceSpec`).
struct DeviceSpec {
  std::optional<std::string> job;  ///< "localhost" for this process's devices
  std::optional<int> replica;      ///< replica index within the job
  std::optional<int> task;         ///< task index within the job
  /// Upper-case type ("CPU", "GPU"); unset means any.
  std::optional<std::string> device_type;
  /// Unset means any ("*").
  std::optional<int> device_index;

  /// Parses a TensorFlow device string; an unknown part or a bad number is invalid_argument
  /// naming the part and the whole string, as TensorFlow's ValueError does.
  static DeviceSpec from_string(std::string_view spec);

  /// TensorFlow's canonical form: "/job:J/replica:R/task:T/device:TYPE:INDEX", unset parts
  /// left out, an unset index with a set type printed as "*".
  [[nodiscard]] std::string to_string() const;

  /// This spec with each field `inner` sets replaced by `inner`'s, field by field (how nested
  /// tf::device scopes combine, as TensorFlow's `DeviceSpec.make_merged_spec`: "/gpu" inside
  /// "/cpu:1" is GPU 1).
  [[nodiscard]] DeviceSpec merged_with(const DeviceSpec& inner) const;

  /// Field by field.
  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
  /// Prints to_string().
  friend std::ostream& operator<<(std::ostream& os, const DeviceSpec& spec) {
    return os << spec.to_string();
  }
};

namespace detail::device_names {
inline std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    auto const end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

inline std::string upper(std::string_view text) {
  std::string out(text);
  for (auto& c : out) {
    if (c >= 'a' && c <= 'z') {
      c = static_cast<char>(c - 'a' + 'A');
    }
  }
  return out;
}

// TensorFlow's device types that may be written bare ("/gpu:0").
inline bool known_type(std::string_view upper_name) {
  return upper_name == "CPU" || upper_name == "GPU" || upper_name == "TPU";
}

inline int parse_number(std::string_view text, std::string_view what, std::string_view spec) {
  int value = 0;
  auto const* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) {
    throw invalid_argument("Invalid " + std::string(what) + " '" + std::string(text) +
                           "' while parsing the device spec: '" + std::string(spec) + "'.");
  }
  return value;
}
}  // namespace detail::device_names

inline DeviceSpec DeviceSpec::from_string(std::string_view spec) {
  namespace names = detail::device_names;
  DeviceSpec out;
  auto set_type = [&](std::string type) {
    if (out.device_type) {
      throw invalid_argument(
          "Multiple device types are not allowed while parsing the device "
          "spec: " +
          std::string(spec) + ".");
    }
    out.device_type = std::move(type);
  };
  for (auto part : names::split(spec, '/')) {
    if (part.empty()) {
      continue;
    }
    auto const fields = names::split(part, ':');
    auto const n = fields.size();
    if (n == 2 && fields[0] == "job") {
      out.job = std::string(fields[1]);
    } else if (n == 2 && fields[0] == "replica") {
      out.replica = names::parse_number(fields[1], "replica", spec);
    } else if (n == 2 && fields[0] == "task") {
      out.task = names::parse_number(fields[1], "task", spec);
    } else if ((n == 1 || n == 2) && names::known_type(names::upper(fields[0]))) {
      set_type(names::upper(fields[0]));
      if (n == 2 && fields[1] != "*") {
        out.device_index = names::parse_number(fields[1], "device index", spec);
      }
    } else if (n == 3 && fields[0] == "device") {
      set_type(std::string(fields[1]));
      if (fields[2] != "*") {
        out.device_index = names::parse_number(fields[2], "device index", spec);
      }
    } else {
      throw invalid_argument("Unknown attribute '" + std::string(fields[0]) +
                             "' is encountered while parsing the device spec: '" +
                             std::string(spec) + "'.");
    }
  }
  return out;
}

inline std::string DeviceSpec::to_string() const {
  std::string out;
  if (job) {
    out += "/job:" + *job;
  }
  if (replica) {
    out += "/replica:" + std::to_string(*replica);
  }
  if (task) {
    out += "/task:" + std::to_string(*task);
  }
  if (device_type) {
    out += "/device:" + *device_type + ":" +
           (device_index ? std::to_string(*device_index) : std::string("*"));
  }
  return out;
}

inline DeviceSpec DeviceSpec::merged_with(const DeviceSpec& inner) const {
  DeviceSpec out = *this;
  if (inner.job) {
    out.job = inner.job;
  }
  if (inner.replica) {
    out.replica = inner.replica;
  }
  if (inner.task) {
    out.task = inner.task;
  }
  if (inner.device_type) {
    out.device_type = inner.device_type;
  }
  if (inner.device_index) {
    out.device_index = inner.device_index;
  }
  return out;
}

TAPEFLOW_END_NAMESPACE
