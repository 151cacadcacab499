// The `checkpoint` state file (docs/formats.md 10): `tf::train::latest_checkpoint(dir)`,
// `get_checkpoint_state(dir)` and the atomic writer Checkpoint and CheckpointManager use.
#pragma once

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/detail/errno_error.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace train {

/// Contents of a directory's `checkpoint` file (TensorFlow's CheckpointState proto).
struct CheckpointState {
  std::string model_checkpoint_path{};                    ///< newest prefix
  std::vector<std::string> all_model_checkpoint_paths{};  ///< oldest to newest
  std::vector<double> all_model_checkpoint_timestamps{};  ///< seconds since the epoch
  /// When the last checkpoint kept by keep_checkpoint_every_n_hours was made (seconds since the
  /// epoch); written by CheckpointManager.
  std::optional<double> last_preserved_timestamp{};
};

namespace detail_state {
inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
inline std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty() || std::filesystem::path(name).is_absolute()) {
    return name;
  }
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}
inline std::string dirname(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash == 0 ? 1 : slash);
}
inline std::string basename(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
/// A unique-enough suffix for temporary files (TF: ".tempstate<random>").
inline std::string temp_suffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^
                                          static_cast<std::uint64_t>(now_seconds() * 1e6)};
  return ".tempstate" + std::to_string(rng());
}
inline std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}
inline std::string number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}
/// Parses a text-format string literal starting at `s[i]` (a quote); nullopt if malformed.
inline std::optional<std::string> unquote(const std::string& s, std::size_t& i) {
  const char q = s[i++];
  std::string out;
  while (i < s.size() && s[i] != q) {
    char c = s[i++];
    if (c == '\\' && i < s.size()) {
      c = s[i++];
      if (c == 'n') {
        c = '\n';
      } else if (c == 't') {
        c = '\t';
      } else if (c >= '0' && c <= '7') {
        int v = c - '0';
        for (int k = 0; k < 2 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++k) {
          v = v * 8 + (s[i++] - '0');
        }
        c = static_cast<char>(v);
      }
    }
    out += c;
  }
  if (i >= s.size()) {
    return std::nullopt;
  }
  ++i;
  return out;
}
}  // namespace detail_state

/// Serializes a state in protobuf text format, as TensorFlow writes it.
inline std::string to_text(const CheckpointState& s) {
  using namespace detail_state;
  std::string out = "model_checkpoint_path: " + quote(s.model_checkpoint_path) + "\n";
  for (const auto& p : s.all_model_checkpoint_paths) {
    out += "all_model_checkpoint_paths: " + quote(p) + "\n";
  }
  for (double t : s.all_model_checkpoint_timestamps) {
    out += "all_model_checkpoint_timestamps: " + number(t) + "\n";
  }
  if (s.last_preserved_timestamp) {
    out += "last_preserved_timestamp: " + number(*s.last_preserved_timestamp) + "\n";
  }
  return out;
}

/// Parses the text format; nullopt when garbled or without model_checkpoint_path (TF then
/// treats the directory as having no checkpoint).
inline std::optional<CheckpointState> parse_checkpoint_state(const std::string& text) {
  CheckpointState st;
  bool has_model = false;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto colon = line.find(':');
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') {
      continue;
    }
    if (colon == std::string::npos) {
      return std::nullopt;
    }
    std::string name = line.substr(first, colon - first);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) {
      name.pop_back();
    }
    std::size_t i = line.find_first_not_of(" \t", colon + 1);
    if (i == std::string::npos) {
      return std::nullopt;
    }
    if (name == "model_checkpoint_path" || name == "all_model_checkpoint_paths") {
      if (line[i] != '"' && line[i] != '\'') {
        return std::nullopt;
      }
      auto v = detail_state::unquote(line, i);
      if (!v) {
        return std::nullopt;
      }
      if (name == "model_checkpoint_path") {
        st.model_checkpoint_path = *v;
        has_model = true;
      } else {
        st.all_model_checkpoint_paths.push_back(*v);
      }
    } else {
      std::string num = line.substr(i);
      while (!num.empty() && (num.back() == ' ' || num.back() == '\r')) {
        num.pop_back();
      }
      double v = 0;
      try {
        std::size_t used = 0;
        v = std::stod(num, &used);
        if (used != num.size()) {
          return std::nullopt;
        }
      } catch (const std::exception&) {
        return std::nullopt;
      }
      if (name == "all_model_checkpoint_timestamps") {
        st.all_model_checkpoint_timestamps.push_back(v);
      } else if (name == "last_preserved_timestamp") {
        st.last_preserved_timestamp = v;
      }  // unknown fields are ignored
    }
  }
  if (!has_model) {
    return std::nullopt;
  }
  return st;
}

/// Reads `<dir>/checkpoint` (TF: tf.train.get_checkpoint_state). Relative paths are joined onto
/// `dir`. nullopt when there is no file or it cannot be parsed.
inline std::optional<CheckpointState> get_checkpoint_state(const std::string& dir) {
  std::ifstream in(detail_state::join(dir, "checkpoint"), std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto st = parse_checkpoint_state(text.str());
  if (!st) {
    return std::nullopt;
  }
  st->model_checkpoint_path = detail_state::join(dir, st->model_checkpoint_path);
  for (auto& p : st->all_model_checkpoint_paths) {
    p = detail_state::join(dir, p);
  }
  return st;
}

/// The newest checkpoint prefix recorded in `dir` ("./save/model.ckpt-10"), or an empty string
/// when there is none or its index file is missing (TensorFlow returns None).
inline std::string latest_checkpoint(const std::string& dir) {
  auto st = get_checkpoint_state(dir);
  if (!st) {
    return {};
  }
  std::error_code ec;
  if (!std::filesystem::exists(st->model_checkpoint_path + ".index", ec)) {
    return {};
  }
  return st->model_checkpoint_path;
}

namespace detail_state {
/// Writes `contents` to `path` atomically: a temporary in the same directory, then rename.
inline void atomic_write(const std::string& path, const std::string& contents) {
  const std::string tmp = path + temp_suffix();
  {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr) {
      ::tapeflow::detail::throw_errno(errno != 0 ? errno : ENOENT, "tf::train: cannot create", tmp);
    }
    const bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
    if (std::fclose(f) != 0 || !ok) {
      std::remove(tmp.c_str());
      throw resource_exhausted("tf::train: short write to '" + tmp + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw internal("tf::train: cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
  }
}
/// Writes `<dir>/checkpoint` with paths made relative to `dir` when they lie inside it.
inline void write_state(const std::string& dir, CheckpointState st) {
  auto rel = [&](std::string& p) {
    const std::string d = dir.empty() ? std::string() : (dir.back() == '/' ? dir : dir + "/");
    if (!d.empty() && p.rfind(d, 0) == 0) {
      p = p.substr(d.size());
    } else if (d.empty()) {
      p = basename(p);
    }
  };
  rel(st.model_checkpoint_path);
  for (auto& p : st.all_model_checkpoint_paths) {
    rel(p);
  }
  atomic_write(join(dir.empty() ? "." : dir, "checkpoint"), to_text(st));
}
}  // namespace detail_state

}  // namespace train
TAPEFLOW_END_NAMESPACE
