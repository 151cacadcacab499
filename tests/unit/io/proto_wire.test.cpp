#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_io_proto_wire {

namespace tf = tapeflow;
namespace wire = tf::detail::wire;
using namespace std::string_literals;

namespace {
std::string hex(std::string_view s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) {
      out += ' ';
    }
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}
}  // namespace

TEST_CASE("varints encode like protobuf", "[io][proto_wire]") {
  auto enc = [](std::uint64_t v) {
    std::string s;
    wire::append_varint(s, v);
    CHECK(s.size() == wire::varint_size(v));
    return hex(s);
  };
  CHECK(enc(0) == "00");
  CHECK(enc(1) == "01");
  CHECK(enc(127) == "7f");
  CHECK(enc(128) == "80 01");
  CHECK(enc(300) == "ac 02");
  CHECK(enc(~std::uint64_t{0}) == "ff ff ff ff ff ff ff ff ff 01");
  std::string s;
  wire::Writer(s).int64_field(1, -1);
  CHECK(hex(s) == "08 ff ff ff ff ff ff ff ff ff 01");
  s.clear();
  wire::Writer(s).int32_field(1, -1);  // int32 negatives are sign-extended too
  CHECK(hex(s) == "08 ff ff ff ff ff ff ff ff ff 01");
}

TEST_CASE("writer produces docs/formats.md's Example test vector", "[io][proto_wire]") {
  std::string out;
  wire::Writer w(out);
  w.message_field(1, [](wire::Writer& features) {
    features.message_field(1, [](wire::Writer& entry) {
      entry.string_field(1, "x");
      entry.message_field(2, [](wire::Writer& feature) {
        feature.message_field(2, [](wire::Writer& list) {
          const std::vector<float> v{1.0f, 2.0f};
          list.packed_float(1, v);
        });
      });
    });
  });
  CHECK(hex(out) == "0a 13 0a 11 0a 01 78 12 0c 12 0a 0a 08 00 00 80 3f 00 00 00 40");
}

TEST_CASE("writer field kinds and default omission", "[io][proto_wire]") {
  std::string out;
  wire::Writer w(out);
  w.fixed32_field(1, 0x01020304);
  w.fixed64_field(2, 1);
  w.double_field(3, 1.0);
  w.bool_field(4, true);
  w.message_field(5, [](wire::Writer&) {});
  w.int64_field_if_nonzero(6, 0);
  w.float_field_if_nonzero(7, 0.0f);
  w.float_field_if_nonzero(8, -0.0f);
  w.bytes_field_if_nonempty(9, "");
  const std::vector<std::int64_t> ints{1, -1, 300};
  w.packed_varint<std::int64_t>(10, ints);
  w.packed_varint<std::int64_t>(11, {});
  CHECK(hex(out) ==
        "0d 04 03 02 01 11 01 00 00 00 00 00 00 00 19 00 00 00 00 00 00 f0 3f 20 01 2a 00 "
        "45 00 00 00 80 52 0d 01 ff ff ff ff ff ff ff ff ff 01 ac 02");
}

TEST_CASE("reader round-trips every field kind", "[io][proto_wire]") {
  std::string out;
  wire::Writer w(out);
  w.uint64_field(1, 123456789012345ULL);
  w.int64_field(2, -5);
  w.float_field(3, 2.5f);
  w.double_field(4, -0.25);
  w.string_field(5, "hello");
  w.message_field(6, [](wire::Writer& m) { m.int32_field(1, -7); });
  const std::vector<float> f{1.5f, 2.5f};
  w.packed_float(7, f);
  w.float_field(7, 3.5f);  // unpacked element of the same repeated field
  w.int64_field(8, 9);     // unpacked
  const std::vector<std::int64_t> ints{10, -11};
  w.packed_varint<std::int64_t>(8, ints);
  w.uint64_field(99, 1);  // unknown to the loop below: skipped

  wire::Reader r(out, "Test");
  std::vector<float> floats;
  std::vector<std::int64_t> int64s;
  int seen = 0;
  while (auto tag = r.next()) {
    switch (tag->field) {
      case 1:
        CHECK(r.varint() == 123456789012345ULL);
        break;
      case 2:
        CHECK(r.int64() == -5);
        break;
      case 3:
        CHECK(r.float32() == 2.5f);
        break;
      case 4:
        CHECK(r.float64() == -0.25);
        break;
      case 5:
        CHECK(r.bytes() == "hello");
        break;
      case 6: {
        auto m = r.message("Inner");
        auto t = m.next();
        REQUIRE(t);
        CHECK(t->field == 1);
        CHECK(m.int32() == -7);
        CHECK_FALSE(m.next());
        break;
      }
      case 7:
        r.repeated_fixed32(*tag,
                           [&](std::uint32_t v) { floats.push_back(std::bit_cast<float>(v)); });
        break;
      case 8:
        r.repeated_varint(*tag,
                          [&](std::uint64_t v) { int64s.push_back(static_cast<std::int64_t>(v)); });
        break;
      default:
        r.skip(*tag);
        break;
    }
    ++seen;
  }
  CHECK(seen == 11);
  CHECK(floats == std::vector<float>{1.5f, 2.5f, 3.5f});
  CHECK(int64s == std::vector<std::int64_t>{9, 10, -11});
}

TEST_CASE("reader rejects malformed input with data_loss and offsets", "[io][proto_wire]") {
  using Catch::Matchers::Contains;
  auto read_all = [](std::string_view bytes) {
    wire::Reader r(bytes, "Msg", 100);
    while (auto tag = r.next()) {
      if (tag->type == wire::WireType::len) {
        auto m = r.message("Inner");
        while (auto t = m.next()) {
          m.skip(*t);
        }
      } else {
        r.skip(*tag);
      }
    }
  };
  CHECK_THROWS_WITH(read_all("\x08"s), Contains("Msg: truncated varint at byte offset 101"));
  CHECK_THROWS_WITH(read_all("\x0a\x05\x01"s),
                    Contains("length 5 exceeds the 1 bytes left at byte offset 101"));
  CHECK_THROWS_WITH(read_all("\x00"s), Contains("invalid field number 0 at byte offset 100"));
  CHECK_THROWS_WITH(read_all("\x0b"s), Contains("group wire type"));
  CHECK_THROWS_WITH(read_all("\x0e"s), Contains("invalid wire type 6"));
  CHECK_THROWS_WITH(read_all("\x0d\x01\x02"s), Contains("truncated fixed32 at byte offset 101"));
  CHECK_THROWS_WITH(read_all("\x09\x01"s), Contains("truncated fixed64"));
  CHECK_THROWS_WITH(read_all("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f"s),
                    Contains("overflows 64 bits"));
  CHECK_THROWS_WITH(read_all("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"s),
                    Contains("overflow"));
  // inner offsets are absolute: the inner tag 08 is at 100 + 2, its missing value at 103
  CHECK_THROWS_WITH(read_all("\x0a\x01\x08"s),
                    Contains("Inner: truncated varint at byte offset 103"));
  CHECK_THROWS_AS(read_all("\x0a\x01\x08"s), tf::data_loss);
  const std::string packed = "\x0a\x03\x01\x02\x03"s;
  wire::Reader r(packed, "Packed");
  auto tag = r.next();
  REQUIRE(tag);
  CHECK_THROWS_WITH(r.repeated_fixed32(*tag, [](std::uint32_t) {}),
                    Contains("not a multiple of 4"));
}

}  // namespace test_io_proto_wire
