#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/io/crc32c.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_io_crc32c {

namespace tf = tapeflow;

namespace {
// Bit-at-a-time reference, independent of both fast paths.
std::uint32_t reference_crc32c(std::string_view s) {
  std::uint32_t crc = 0xFFFFFFFFU;
  for (unsigned char c : s) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) {
      crc = (crc & 1U) != 0 ? (crc >> 1) ^ 0x82F63B78U : crc >> 1;
    }
  }
  return ~crc;
}
}  // namespace

TEST_CASE("crc32c matches the standard check values", "[io][crc32c]") {
  CHECK(tf::io::crc32c("123456789") == 0xE3069283U);
  CHECK(tf::io::crc32c("") == 0U);
  CHECK(tf::io::masked_crc32c("123456789") == 0xC78AB0E5U);
  CHECK(tf::io::masked_crc32c("") == 0xA282EAD8U);
  CHECK(tf::io::mask_crc32c(0) == 0xA282EAD8U);
  // RFC 3720 B.4 vectors: 32 zero bytes, 32 0xFF bytes.
  CHECK(tf::io::crc32c(std::string(32, '\0')) == 0x8A9136AAU);
  CHECK(tf::io::crc32c(std::string(32, '\xff')) == 0x62A8AB43U);
}

TEST_CASE("crc32c hardware, portable and reference agree on all lengths and alignments",
          "[io][crc32c]") {
  std::mt19937 rng(42);
  std::string buf(60000 + 16, '\0');
  for (auto& c : buf) {
    c = static_cast<char>(rng());
  }
  for (std::size_t len : {0,  1,   2,   3,   7,   8,    9,    15,    16,    17,    63,    64,
                          65, 255, 767, 768, 769, 1000, 4096, 24575, 24576, 24577, 30000, 60000}) {
    for (std::size_t off = 0; off < 9; ++off) {
      std::string_view s(buf.data() + off, len);
      const auto* p = reinterpret_cast<const unsigned char*>(s.data());
      const std::uint32_t want = reference_crc32c(s);
      CHECK(tf::io::crc32c(s) == want);
      CHECK(~tf::detail::crc32c_impl::update_portable(0xFFFFFFFFU, p, len) == want);
      CHECK(~tf::detail::crc32c_impl::update_hardware(0xFFFFFFFFU, p, len) == want);
    }
  }
}

TEST_CASE("every crc32c kernel agrees with the portable one: lengths 0..4096, misalignments",
          "[io][crc32c]") {
  namespace impl = tf::detail::crc32c_impl;
  std::mt19937 rng(7);
  std::vector<unsigned char> buf(4096 + 64 + 64);
  for (auto& c : buf) {
    c = static_cast<unsigned char>(rng());
  }
  std::vector<unsigned char> dst(buf.size());
  for (auto k : {impl::kernel::portable, impl::kernel::hardware, impl::kernel::avx512}) {
    CAPTURE(static_cast<int>(k));
    if (!impl::kernel_supported(k)) {
      WARN("crc32c kernel " << static_cast<int>(k) << " not supported by this CPU; skipped");
      continue;
    }
    const auto update = impl::kernel_fn(k);
    const auto copy_update = impl::copy_kernel_fn(k);
    std::size_t failures = 0;
    for (std::size_t len = 0; len <= 4096; ++len) {
      // every misalignment for short lengths, a few for the rest (keeps the test fast)
      const std::size_t offsets = len <= 600 ? 64 : 5;
      for (std::size_t i = 0; i < offsets; ++i) {
        const std::size_t off = len <= 600 ? i : i * 13 % 64;
        const std::uint32_t seed = len % 3 == 0 ? 0xFFFFFFFFU : static_cast<std::uint32_t>(rng());
        const std::uint32_t want = impl::update_portable(seed, buf.data() + off, len);
        if (update(seed, buf.data() + off, len) != want) {
          ++failures;
        }
        const std::size_t doff = (off * 7 + 3) % 64;
        std::fill(dst.begin(), dst.end(), 0xA5);
        if (copy_update(seed, dst.data() + doff, buf.data() + off, len) != want ||
            !std::equal(buf.begin() + static_cast<std::ptrdiff_t>(off),
                        buf.begin() + static_cast<std::ptrdiff_t>(off + len),
                        dst.begin() + static_cast<std::ptrdiff_t>(doff)) ||
            (doff > 0 && dst[doff - 1] != 0xA5) || dst[doff + len] != 0xA5) {
          ++failures;
        }
      }
    }
    CHECK(failures == 0);
  }
  // The big-block paths (3 x 8 KiB streams, 256-byte folds) on long inputs.
  std::vector<unsigned char> big(300000 + 64);
  for (auto& c : big) {
    c = static_cast<unsigned char>(rng());
  }
  for (std::size_t len : {24575UL, 24576UL, 24577UL, 65536UL + 17, 300000UL}) {
    const std::uint32_t want = impl::update_portable(0xFFFFFFFFU, big.data() + 3, len);
    for (auto k : {impl::kernel::hardware, impl::kernel::avx512}) {
      if (impl::kernel_supported(k)) {
        CHECK(impl::kernel_fn(k)(0xFFFFFFFFU, big.data() + 3, len) == want);
      }
    }
  }
}

TEST_CASE("crc32c_extend_copy copies and extends", "[io][crc32c]") {
  std::string src(10000, '\0');
  std::mt19937 rng(3);
  for (auto& c : src) {
    c = static_cast<char>(rng());
  }
  for (std::size_t len : {0UL, 1UL, 255UL, 256UL, 9999UL}) {
    std::string dst(len, '\0');
    const std::uint32_t prefix = tf::io::crc32c("prefix");
    CHECK(tf::io::crc32c_extend_copy(prefix, dst.data(), src.data() + 1, len) ==
          tf::io::crc32c_extend(prefix, src.data() + 1, len));
    CHECK(dst == src.substr(1, len));
  }
}

TEST_CASE("crc32c_extend continues a CRC", "[io][crc32c]") {
  const std::string a = "hello, ";
  const std::string b = "world and more bytes";
  CHECK(tf::io::crc32c_extend(tf::io::crc32c(a), b) == tf::io::crc32c(a + b));
  CHECK(tf::io::crc32c_extend(0, a) == tf::io::crc32c(a));
}

TEST_CASE("mask and unmask are inverse", "[io][crc32c]") {
  for (std::uint32_t v : {0U, 1U, 0xE3069283U, 0xFFFFFFFFU, 0x80000000U, 0x12345678U}) {
    CHECK(tf::io::unmask_crc32c(tf::io::mask_crc32c(v)) == v);
  }
  STATIC_REQUIRE(tf::io::mask_crc32c(0xE3069283U) == 0xC78AB0E5U);
}

TEST_CASE("crc32c reports whether the CPU instruction is used", "[io][crc32c]") {
#if defined(__x86_64__)
  CHECK(tf::io::crc32c_hardware_accelerated() == (__builtin_cpu_supports("sse4.2") != 0));
#else
  SUCCEED();
#endif
}

TEST_CASE("crc32c_u64 is the CRC of 8 little-endian bytes (TFRecord length fields)",
          "[io][crc32c]") {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t v = i < 3 ? std::uint64_t{0} - static_cast<std::uint64_t>(i) : rng();
    char bytes[8];
    for (int b = 0; b < 8; ++b) {
      bytes[b] = static_cast<char>(v >> (8 * b));
    }
    CHECK(tf::detail::crc32c_impl::crc32c_u64(v) == reference_crc32c(std::string_view(bytes, 8)));
  }
}

}  // namespace test_io_crc32c
