// UTF-8 to code points and back, for the text example: Python's `str` is a sequence of code
// points, so the handbook's character-level model sees "ä" as one character, not two bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>

namespace examples::utf8 {

/// The code points of UTF-8 `bytes` (Python: `bytes.decode("utf-8")`). Throws
/// tf::data_loss naming the byte offset of a malformed sequence.
inline std::u32string decode(std::string_view bytes) {
  std::u32string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const auto b0 = static_cast<unsigned char>(bytes[i]);
    const int len = b0 < 0x80           ? 1
                    : (b0 >> 5) == 0x6  ? 2
                    : (b0 >> 4) == 0xE  ? 3
                    : (b0 >> 3) == 0x1E ? 4
                                        : 0;
    if (len == 0 || i + std::size_t(len) > bytes.size()) {
      throw tapeflow::data_loss("invalid UTF-8 at byte " + std::to_string(i));
    }
    char32_t c = len == 1 ? b0 : b0 & (0x7F >> len);
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(bytes[i + std::size_t(k)]);
      if ((b >> 6) != 0x2) {
        throw tapeflow::data_loss("invalid UTF-8 at byte " + std::to_string(i + std::size_t(k)));
      }
      c = (c << 6) | (b & 0x3F);
    }
    const char32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
      throw tapeflow::data_loss("invalid UTF-8 (overlong or out of range) at byte " +
                                std::to_string(i));
    }
    out.push_back(c);
    i += std::size_t(len);
  }
  return out;
}

/// Code point `c` as UTF-8 (Python: `c.encode("utf-8")`).
inline std::string encode(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += char(c);
  } else if (c < 0x800) {
    out += char(0xC0 | (c >> 6));
    out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += char(0xE0 | (c >> 12));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  } else {
    out += char(0xF0 | (c >> 18));
    out += char(0x80 | ((c >> 12) & 0x3F));
    out += char(0x80 | ((c >> 6) & 0x3F));
    out += char(0x80 | (c & 0x3F));
  }
  return out;
}
inline std::string encode(std::u32string_view text) {
  std::string out;
  for (char32_t c : text) {
    out += encode(c);
  }
  return out;
}

/// `text` lowercased as Python's `str.lower()` does for ASCII and Latin-1 (A-Z, À-Þ but ×);
/// other letters are kept as they are.
inline std::u32string lower(std::u32string text) {
  for (char32_t& c : text) {
    if ((c >= U'A' && c <= U'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7)) {
      c += 0x20;
    }
  }
  return text;
}

}  // namespace examples::utf8
