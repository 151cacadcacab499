// TF_CONFIG, the environment variable that tells a TensorFlow worker its cluster and its own
// task: `{"cluster": {"chief": ["host:port"], "worker": ["host:port", ...]}, "task": {"type":
// "worker", "index": 0}}`. A small JSON reader (objects, arrays, strings, numbers, literals),
// bounded in depth, with errors naming the offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute::detail {

/// What TF_CONFIG says: the cluster's jobs (name -> task addresses) and this task.
struct TfConfig {
  std::map<std::string, std::vector<std::string>> cluster;
  std::string task_type;
  std::int64_t task_index = 0;
};

class TfConfigReader {
 public:
  explicit TfConfigReader(std::string_view text) : text_(text) {}

  TfConfig read() {
    TfConfig out;
    bool has_task = false;
    object(0, [&](const std::string& key) {
      if (key == "cluster") {
        object(1, [&](const std::string& job) {
          auto& tasks = out.cluster[job];
          tasks.clear();
          array([&] { tasks.push_back(string()); });
        });
      } else if (key == "task") {
        has_task = true;
        object(1, [&](const std::string& field) {
          if (field == "type") {
            out.task_type = string();
          } else if (field == "index") {
            out.task_index = integer();
          } else {
            skip(2);
          }
        });
      } else {
        skip(1);
      }
    });
    space();
    if (pos_ != text_.size()) {
      fail("unexpected text after the JSON object");
    }
    if (!has_task || out.task_type.empty()) {
      fail("no \"task\": {\"type\": ..., \"index\": ...}");
    }
    return out;
  }

 private:
  static constexpr int max_depth = 32;

  [[noreturn]] void fail(const std::string& why) const {
    throw invalid_argument("TF_CONFIG: " + why + " (at offset " + std::to_string(pos_) + ")");
  }
  void space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  char peek() {
    space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) {
      fail(std::string("expected '") + c + "'");
    }
    ++pos_;
  }
  template <class Member>
  void object(int depth, Member&& member) {
    if (depth > max_depth) {
      fail("nested too deeply");
    }
    expect('{');
    if (peek() == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      const std::string key = string();
      expect(':');
      member(key);
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return;
    }
  }
  template <class Element>
  void array(Element&& element) {
    expect('[');
    if (peek() == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      element();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return;
    }
  }
  std::string string() {
    expect('"');
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) {
        fail("control character in a string");
      }
      if (c == '\\') {
        if (pos_ >= text_.size()) {
          break;
        }
        const char e = text_[pos_++];
        switch (e) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case 'b':
            c = '\b';
            break;
          case 'f':
            c = '\f';
            break;
          case '"':
          case '\\':
          case '/':
            c = e;
            break;
          default:
            fail(std::string("unsupported escape '\\") + e + "'");
        }
      }
      out.push_back(c);
    }
    if (pos_ >= text_.size()) {
      fail("unterminated string");
    }
    ++pos_;
    return out;
  }
  std::int64_t integer() {
    space();
    const std::size_t start = pos_;
    bool negative = false;
    if (pos_ < text_.size() && text_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    std::int64_t value = 0;
    std::size_t digits = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (++digits > 9) {
        pos_ = start;
        fail("task index out of range");
      }
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (digits == 0) {
      fail("expected an integer");
    }
    return negative ? -value : value;
  }
  // Any value, ignored.
  void skip(int depth) {
    if (depth > max_depth) {
      fail("nested too deeply");
    }
    const char c = peek();
    if (c == '{') {
      object(depth, [&](const std::string&) { skip(depth + 1); });
    } else if (c == '[') {
      if (depth + 1 > max_depth) {
        fail("nested too deeply");
      }
      array([&] { skip(depth + 1); });
    } else if (c == '"') {
      (void)string();
    } else {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             std::string_view("+-.eE0123456789truefalsn").find(text_[pos_]) !=
                 std::string_view::npos) {
        ++pos_;
      }
      if (pos_ == start) {
        fail("expected a value");
      }
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

/// Reads TF_CONFIG's JSON (invalid_argument naming the offset of what is wrong).
inline TfConfig parse_tf_config(std::string_view json) { return TfConfigReader(json).read(); }

}  // namespace distribute::detail
TAPEFLOW_END_NAMESPACE
