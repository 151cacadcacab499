// Protocol-buffer wire format: a writer into std::string and a bounds-checked reader
// (docs/formats.md section 1). tapeflow does not depend on libprotobuf: Example, Event, tensor
// bundle and SavedModel messages are encoded field by field with these primitives.
//
// The writer emits exactly what it is told: proto3's "omit default scalars" rule is the
// caller's choice (use the `*_if_nonzero` helpers or test before writing). The reader never
// reads past its buffer; malformed input raises `tf::data_loss` naming what was being read
// (`what`) and the absolute byte offset.
// IWYU pragma: private, include <tapeflow/io.hpp>
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

namespace detail::wire {

/// Protobuf wire types (the low 3 bits of a tag).
enum class WireType : std::uint8_t {
  varint = 0,  ///< int32/int64/uint32/uint64/bool/enum
  i64 = 1,     ///< fixed64, sfixed64, double
  len = 2,     ///< string, bytes, embedded message, packed repeated scalars
  sgroup = 3,  ///< deprecated groups: rejected by the reader
  egroup = 4,
  i32 = 5,  ///< fixed32, sfixed32, float
};

inline constexpr std::uint32_t max_field_number = (1U << 29) - 1;

/// Bytes a varint encoding of `v` takes (1..10).
[[nodiscard]] constexpr std::size_t varint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

/// Appends the varint encoding of `v`.
inline void append_varint(std::string& out, std::uint64_t v) {
  char buf[10];
  std::size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}
/// Appends `v` as 4 little-endian bytes.
inline void append_fixed32(std::string& out, std::uint32_t v) {
  char buf[4];
  for (int i = 0; i < 4; ++i) {
    buf[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  out.append(buf, 4);
}
/// Appends `v` as 8 little-endian bytes.
inline void append_fixed64(std::string& out, std::uint64_t v) {
  char buf[8];
  for (int i = 0; i < 8; ++i) {
    buf[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  out.append(buf, 8);
}
/// Decodes 4 little-endian bytes (the caller guarantees they exist).
[[nodiscard]] inline std::uint32_t load_fixed32(const char* p) noexcept {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return v;
}
/// Decodes 8 little-endian bytes (the caller guarantees they exist).
[[nodiscard]] inline std::uint64_t load_fixed64(const char* p) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return v;
}

/// Appends protobuf fields to a std::string it does not own.
///
///     std::string s;
///     wire::Writer w(s);
///     w.string_field(1, "x");
///     w.message_field(2, [](wire::Writer& m) { m.int64_field(1, 7); });
class Writer {
 public:
  explicit Writer(std::string& out) noexcept : out_(&out) {}

  [[nodiscard]] std::string& buffer() noexcept { return *out_; }

  void tag(std::uint32_t field, WireType type) {
    append_varint(*out_, (static_cast<std::uint64_t>(field) << 3) | static_cast<unsigned>(type));
  }
  void varint(std::uint64_t v) { append_varint(*out_, v); }
  void fixed32(std::uint32_t v) { append_fixed32(*out_, v); }
  void fixed64(std::uint64_t v) { append_fixed64(*out_, v); }
  void raw(std::string_view bytes) { out_->append(bytes); }

  // --- single fields (always written) ---
  void uint64_field(std::uint32_t field, std::uint64_t v) {
    tag(field, WireType::varint);
    varint(v);
  }
  /// int64 and int32/enum fields: negatives are sign-extended to 10-byte varints.
  void int64_field(std::uint32_t field, std::int64_t v) {
    uint64_field(field, static_cast<std::uint64_t>(v));
  }
  void int32_field(std::uint32_t field, std::int32_t v) {
    uint64_field(field, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  }
  void bool_field(std::uint32_t field, bool v) { uint64_field(field, v ? 1 : 0); }
  void fixed32_field(std::uint32_t field, std::uint32_t v) {
    tag(field, WireType::i32);
    fixed32(v);
  }
  void fixed64_field(std::uint32_t field, std::uint64_t v) {
    tag(field, WireType::i64);
    fixed64(v);
  }
  void float_field(std::uint32_t field, float v) {
    fixed32_field(field, std::bit_cast<std::uint32_t>(v));
  }
  void double_field(std::uint32_t field, double v) {
    fixed64_field(field, std::bit_cast<std::uint64_t>(v));
  }
  /// string, bytes, or an already serialized embedded message.
  void bytes_field(std::uint32_t field, std::string_view v) {
    tag(field, WireType::len);
    varint(v.size());
    out_->append(v);
  }
  void string_field(std::uint32_t field, std::string_view v) { bytes_field(field, v); }
  /// An embedded message whose body `fill(Writer&)` writes (an empty body is still written:
  /// tag + 00, as protobuf does for a set message field).
  template <class Fill>
  void message_field(std::uint32_t field, Fill&& fill) {
    std::string body;
    Writer inner(body);
    std::forward<Fill>(fill)(inner);
    bytes_field(field, body);
  }

  // --- proto3 default omission ---
  void uint64_field_if_nonzero(std::uint32_t field, std::uint64_t v) {
    if (v != 0) {
      uint64_field(field, v);
    }
  }
  void int64_field_if_nonzero(std::uint32_t field, std::int64_t v) {
    if (v != 0) {
      int64_field(field, v);
    }
  }
  void int32_field_if_nonzero(std::uint32_t field, std::int32_t v) {
    if (v != 0) {
      int32_field(field, v);
    }
  }
  void bool_field_if_true(std::uint32_t field, bool v) {
    if (v) {
      bool_field(field, v);
    }
  }
  /// Omitted when +0.0 (a -0.0 has a nonzero bit pattern and is written, as protobuf does).
  void float_field_if_nonzero(std::uint32_t field, float v) {
    if (std::bit_cast<std::uint32_t>(v) != 0) {
      float_field(field, v);
    }
  }
  void double_field_if_nonzero(std::uint32_t field, double v) {
    if (std::bit_cast<std::uint64_t>(v) != 0) {
      double_field(field, v);
    }
  }
  void bytes_field_if_nonempty(std::uint32_t field, std::string_view v) {
    if (!v.empty()) {
      bytes_field(field, v);
    }
  }

  // --- packed repeated scalars (nothing written for an empty list) ---
  void packed_float(std::uint32_t field, std::span<const float> values) {
    if (values.empty()) {
      return;
    }
    tag(field, WireType::len);
    varint(values.size() * 4);
    for (float v : values) {
      fixed32(std::bit_cast<std::uint32_t>(v));
    }
  }
  void packed_double(std::uint32_t field, std::span<const double> values) {
    if (values.empty()) {
      return;
    }
    tag(field, WireType::len);
    varint(values.size() * 8);
    for (double v : values) {
      fixed64(std::bit_cast<std::uint64_t>(v));
    }
  }
  /// Packed int64/int32/enum values (negatives as 10-byte varints).
  template <class Int>
  void packed_varint(std::uint32_t field, std::span<const Int> values) {
    static_assert(std::is_integral_v<Int> || std::is_enum_v<Int>);
    if (values.empty()) {
      return;
    }
    std::size_t bytes = 0;
    for (auto v : values) {
      bytes += varint_size(to_u64(v));
    }
    tag(field, WireType::len);
    varint(bytes);
    for (auto v : values) {
      varint(to_u64(v));
    }
  }

 private:
  template <class Int>
  static std::uint64_t to_u64(Int v) noexcept {
    if constexpr (std::is_enum_v<Int>) {
      return to_u64(static_cast<std::underlying_type_t<Int>>(v));
    } else if constexpr (std::is_same_v<Int, bool>) {
      return v ? 1 : 0;
    } else if constexpr (std::is_signed_v<Int>) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    } else {
      return static_cast<std::uint64_t>(v);
    }
  }

  std::string* out_;
};

/// A field's tag as read.
struct Tag {
  std::uint32_t field = 0;
  WireType type = WireType::varint;
};

/// Bounds-checked reader over a byte buffer it does not own (`what` is kept as a view: pass
/// a string literal or something that outlives the reader).
///
///     wire::Reader r(bytes, "Example");
///     while (auto tag = r.next()) {
///       if (tag->field == 1 && tag->type == wire::WireType::len) { auto sub = r.message(); ... }
///       else r.skip(*tag);
///     }
///
/// Errors are `tf::data_loss("<what>: <problem> at byte offset <n>")`, where n counts from
/// `base_offset` (the position of this buffer inside the enclosing one or the file).
class Reader {
 public:
  explicit Reader(std::string_view data, std::string_view what = "protobuf message",
                  std::uint64_t base_offset = 0) noexcept
      : data_(data), what_(what), base_(base_offset) {}

  [[nodiscard]] bool done() const noexcept { return pos_ >= data_.size(); }
  [[nodiscard]] std::size_t remaining() const noexcept { return data_.size() - pos_; }
  /// Position inside this buffer.
  [[nodiscard]] std::size_t position() const noexcept { return pos_; }
  /// Absolute byte offset (base_offset + position).
  [[nodiscard]] std::uint64_t offset() const noexcept { return base_ + pos_; }
  [[nodiscard]] std::string_view what() const noexcept { return what_; }

  /// The next tag, or nothing at the end of the buffer. Rejects field number 0, groups and
  /// unknown wire types.
  [[nodiscard]] std::optional<Tag> next() {
    if (done()) {
      return std::nullopt;
    }
    const std::uint64_t at = offset();
    const std::uint64_t key = varint();
    const auto type = static_cast<unsigned>(key & 7);
    const std::uint64_t field = key >> 3;
    if (field == 0 || field > max_field_number) {
      fail_at(at, "invalid field number " + std::to_string(field));
    }
    if (type == 3 || type == 4) {
      fail_at(at, "group wire type (unsupported) for field " + std::to_string(field));
    }
    if (type > 5) {
      fail_at(at,
              "invalid wire type " + std::to_string(type) + " for field " + std::to_string(field));
    }
    return Tag{static_cast<std::uint32_t>(field), static_cast<WireType>(type)};
  }

  [[nodiscard]] std::uint64_t varint() {
    std::uint64_t v = 0;
    const std::size_t start = pos_;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) {
        fail_at(base_ + start, "truncated varint");
      }
      const auto b = static_cast<unsigned char>(data_[pos_++]);
      if (shift == 63 && b > 1) {
        fail_at(base_ + start, "varint overflows 64 bits");
      }
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
    fail_at(base_ + start, "varint longer than 10 bytes");
  }
  [[nodiscard]] std::int64_t int64() { return static_cast<std::int64_t>(varint()); }
  /// int32/enum: protobuf truncates the 64-bit varint to its low 32 bits.
  [[nodiscard]] std::int32_t int32() {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(varint()));
  }
  [[nodiscard]] bool boolean() { return varint() != 0; }
  [[nodiscard]] std::uint32_t fixed32() {
    need(4, "truncated fixed32");
    const std::uint32_t v = load_fixed32(data_.data() + pos_);
    pos_ += 4;
    return v;
  }
  [[nodiscard]] std::uint64_t fixed64() {
    need(8, "truncated fixed64");
    const std::uint64_t v = load_fixed64(data_.data() + pos_);
    pos_ += 8;
    return v;
  }
  [[nodiscard]] float float32() { return std::bit_cast<float>(fixed32()); }
  [[nodiscard]] double float64() { return std::bit_cast<double>(fixed64()); }
  /// A length-delimited payload (string, bytes, message, packed list), as a view.
  [[nodiscard]] std::string_view bytes() {
    const std::size_t start = pos_;
    const std::uint64_t n = varint();
    if (n > remaining()) {
      fail_at(base_ + start, "length " + std::to_string(n) + " exceeds the " +
                                 std::to_string(remaining()) + " bytes left");
    }
    std::string_view v = data_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  /// A reader over an embedded message (offsets stay absolute).
  [[nodiscard]] Reader message(std::string_view what) {
    std::string_view body = bytes();
    return Reader(body, what, base_ + pos_ - body.size());
  }
  [[nodiscard]] Reader message() { return message(what_); }

  /// Skips the value of a field with the given tag.
  void skip(const Tag& tag) {
    switch (tag.type) {
      case WireType::varint:
        (void)varint();
        return;
      case WireType::i64:
        need(8, "truncated fixed64");
        pos_ += 8;
        return;
      case WireType::i32:
        need(4, "truncated fixed32");
        pos_ += 4;
        return;
      case WireType::len:
        (void)bytes();
        return;
      default:
        fail("cannot skip wire type " + std::to_string(static_cast<unsigned>(tag.type)));
    }
  }

  /// Reads one occurrence of a repeated varint field, packed (LEN) or not, calling
  /// `sink(std::uint64_t)` per element.
  template <class Sink>
  void repeated_varint(const Tag& tag, Sink&& sink) {
    if (tag.type == WireType::varint) {
      sink(varint());
    } else if (tag.type == WireType::len) {
      Reader packed = message();
      while (!packed.done()) {
        sink(packed.varint());
      }
    } else {
      fail("field " + std::to_string(tag.field) + ": expected varint or packed varints");
    }
  }
  /// Same for a repeated fixed32/float field: `sink(std::uint32_t)`.
  template <class Sink>
  void repeated_fixed32(const Tag& tag, Sink&& sink) {
    if (tag.type == WireType::i32) {
      sink(fixed32());
    } else if (tag.type == WireType::len) {
      const std::size_t at = pos_;
      std::string_view body = bytes();
      if (body.size() % 4 != 0) {
        fail_at(base_ + at,
                "packed fixed32 length " + std::to_string(body.size()) + " is not a multiple of 4");
      }
      for (std::size_t i = 0; i < body.size(); i += 4) {
        sink(load_fixed32(body.data() + i));
      }
    } else {
      fail("field " + std::to_string(tag.field) + ": expected fixed32 or packed fixed32");
    }
  }
  /// Same for a repeated fixed64/double field: `sink(std::uint64_t)`.
  template <class Sink>
  void repeated_fixed64(const Tag& tag, Sink&& sink) {
    if (tag.type == WireType::i64) {
      sink(fixed64());
    } else if (tag.type == WireType::len) {
      const std::size_t at = pos_;
      std::string_view body = bytes();
      if (body.size() % 8 != 0) {
        fail_at(base_ + at,
                "packed fixed64 length " + std::to_string(body.size()) + " is not a multiple of 8");
      }
      for (std::size_t i = 0; i < body.size(); i += 8) {
        sink(load_fixed64(body.data() + i));
      }
    } else {
      fail("field " + std::to_string(tag.field) + ": expected fixed64 or packed fixed64");
    }
  }

  /// Throws data_loss at the current offset.
  [[noreturn]] void fail(const std::string& problem) const { fail_at(offset(), problem); }
  [[noreturn]] void fail_at(std::uint64_t at, const std::string& problem) const {
    throw data_loss(std::string(what_) + ": " + problem + " at byte offset " + std::to_string(at));
  }

 private:
  void need(std::size_t n, const char* problem) const {
    if (remaining() < n) {
      fail(problem);
    }
  }

  std::string_view data_;
  std::string_view what_;
  std::uint64_t base_ = 0;
  std::size_t pos_ = 0;
};

}  // namespace detail::wire

TAPEFLOW_END_NAMESPACE
