// CRC-32C (Castagnoli) and TensorFlow's masking, as used by TFRecord framing, event files,
// SSTable blocks and tensor bundles (docs/formats.md section 2).
//
// The hardware path (SSE4.2 `crc32` on x86-64, the ARMv8 CRC extension on AArch64) is chosen
// once at run time, so a binary built without `-msse4.2` still uses it where the CPU has it;
// on x86-64 CPUs with AVX-512 and VPCLMULQDQ a carry-less-multiply folding kernel is faster
// still; elsewhere a portable slicing-by-8 table does the work.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <tapeflow/detail/macros.hpp>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#include <nmmintrin.h>
#define TAPEFLOW_CRC32C_X86 1
#elif defined(__aarch64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#include <arm_acle.h>
#include <sys/auxv.h>
#define TAPEFLOW_CRC32C_ARM 1
#endif

TAPEFLOW_BEGIN_NAMESPACE

namespace detail::crc32c_impl {

inline constexpr std::uint32_t poly = 0x82F63B78U;  // reflected 0x1EDC6F41

// tables[k][b]: CRC of byte b followed by k zero bytes (slicing-by-8).
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_tables() noexcept {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int k = 0; k < 8; ++k) {
      c = (c & 1U) != 0 ? (c >> 1) ^ poly : c >> 1;
    }
    t[0][b] = c;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::size_t b = 0; b < 256; ++b) {
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFU];
    }
  }
  return t;
}
inline constexpr auto tables = make_tables();

inline std::uint64_t load_le64(const unsigned char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

/// Portable update of a raw (un-inverted) CRC state.
inline std::uint32_t update_portable(std::uint32_t crc, const unsigned char* p,
                                     std::size_t n) noexcept {
  while (n >= 8) {
    const std::uint64_t v = load_le64(p) ^ crc;
    crc = tables[7][v & 0xFF] ^ tables[6][(v >> 8) & 0xFF] ^ tables[5][(v >> 16) & 0xFF] ^
          tables[4][(v >> 24) & 0xFF] ^ tables[3][(v >> 32) & 0xFF] ^ tables[2][(v >> 40) & 0xFF] ^
          tables[1][(v >> 48) & 0xFF] ^ tables[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) {
    crc = tables[0][(crc ^ *p++) & 0xFFU] ^ (crc >> 8);
  }
  return crc;
}

// Combining CRCs of adjacent blocks (Mark Adler's method, as in zlib's crc32_combine): a
// table that applies `len` zero bytes to a raw CRC state, so three blocks can be CRC'd in
// parallel and joined: crc(A B) = shift_|B|(crc(A)) ^ crc0(B).
struct gf2 {
  static constexpr std::uint32_t times(const std::array<std::uint32_t, 32>& mat,
                                       std::uint32_t vec) noexcept {
    std::uint32_t sum = 0;
    for (std::size_t i = 0; vec != 0; vec >>= 1, ++i) {
      if ((vec & 1U) != 0) {
        sum ^= mat[i];
      }
    }
    return sum;
  }
  static constexpr std::array<std::uint32_t, 32> square(
      const std::array<std::uint32_t, 32>& mat) noexcept {
    std::array<std::uint32_t, 32> sq{};
    for (std::size_t n = 0; n < 32; ++n) {
      sq[n] = times(mat, mat[n]);
    }
    return sq;
  }
};
using shift_table = std::array<std::array<std::uint32_t, 256>, 4>;
/// Table applying `len` (a power of two) zero bytes to a raw CRC state.
constexpr shift_table make_shift_table(std::size_t len) noexcept {
  std::array<std::uint32_t, 32> op{};  // one zero bit
  op[0] = poly;
  for (std::size_t n = 1; n < 32; ++n) {
    op[n] = std::uint32_t{1} << (n - 1);
  }
  op = gf2::square(gf2::square(gf2::square(op)));  // one zero byte
  for (std::size_t l = len; l > 1; l >>= 1) {
    op = gf2::square(op);
  }
  shift_table t{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    for (std::size_t k = 0; k < 4; ++k) {
      t[k][n] = gf2::times(op, n << (8 * k));
    }
  }
  return t;
}
inline constexpr std::size_t long_block = 8192;
inline constexpr std::size_t short_block = 256;
inline constexpr shift_table long_shift = make_shift_table(long_block);
inline constexpr shift_table short_shift = make_shift_table(short_block);
constexpr std::uint32_t shift(const shift_table& t, std::uint32_t crc) noexcept {
  return t[0][crc & 0xFF] ^ t[1][(crc >> 8) & 0xFF] ^ t[2][(crc >> 16) & 0xFF] ^ t[3][crc >> 24];
}

#if defined(TAPEFLOW_CRC32C_X86)
// The crc32 instruction has a latency of 3 cycles and a throughput of 1 per cycle: three
// independent streams over adjacent blocks keep it busy; the block CRCs are then combined.
__attribute__((target("sse4.2"))) inline std::uint32_t update_hardware(std::uint32_t crc,
                                                                       const unsigned char* p,
                                                                       std::size_t n) noexcept {
  std::uint64_t c0 = crc;
  for (int pass = 0; pass < 2; ++pass) {
    const std::size_t block = pass == 0 ? long_block : short_block;
    const shift_table& table = pass == 0 ? long_shift : short_shift;
    while (n >= 3 * block) {
      std::uint64_t c1 = 0;
      std::uint64_t c2 = 0;
      for (std::size_t i = 0; i < block; i += 8) {
        c0 = _mm_crc32_u64(c0, load_le64(p + i));
        c1 = _mm_crc32_u64(c1, load_le64(p + block + i));
        c2 = _mm_crc32_u64(c2, load_le64(p + 2 * block + i));
      }
      c0 = shift(table, static_cast<std::uint32_t>(c0)) ^ static_cast<std::uint32_t>(c1);
      c0 = shift(table, static_cast<std::uint32_t>(c0)) ^ static_cast<std::uint32_t>(c2);
      p += 3 * block;
      n -= 3 * block;
    }
  }
  while (n >= 8) {
    c0 = _mm_crc32_u64(c0, load_le64(p));
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c0);
  // The last 0-7 bytes in at most three steps (4, 2, 1), not one per byte.
  if ((n & 4) != 0) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    c32 = _mm_crc32_u32(c32, v);
    p += 4;
  }
  if ((n & 2) != 0) {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    c32 = _mm_crc32_u16(c32, v);
    p += 2;
  }
  if ((n & 1) != 0) {
    c32 = _mm_crc32_u8(c32, *p);
  }
  return c32;
}
inline bool hardware_supported() noexcept {
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) {
    return false;
  }
  return (ecx & bit_SSE4_2) != 0;
}
#elif defined(TAPEFLOW_CRC32C_ARM)
__attribute__((target("+crc"))) inline std::uint32_t update_hardware(std::uint32_t crc,
                                                                     const unsigned char* p,
                                                                     std::size_t n) noexcept {
  while (n >= 8) {
    crc = __crc32cd(crc, load_le64(p));
    p += 8;
    n -= 8;
  }
  while (n-- > 0) {
    crc = __crc32cb(crc, *p++);
  }
  return crc;
}
inline bool hardware_supported() noexcept {
#ifdef HWCAP_CRC32
  return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#else
  return false;
#endif
}
#else
inline std::uint32_t update_hardware(std::uint32_t crc, const unsigned char* p,
                                     std::size_t n) noexcept {
  return update_portable(crc, p, n);
}
inline bool hardware_supported() noexcept { return false; }
#endif

#if defined(TAPEFLOW_CRC32C_X86)
// x^n mod P in the reflected representation (bit 31 is x^0): the folding constants.
constexpr std::uint32_t xpow_mod(std::size_t n) noexcept {
  std::uint32_t v = 0x80000000U;
  for (; n > 0; --n) {
    v = (v & 1U) != 0 ? (v >> 1) ^ poly : v >> 1;
  }
  return v;
}
// Folding a 128-bit lane forward by `bytes`: a carry-less multiply of its low half (the
// higher-degree terms) by x^(8*bytes+31) and of its high half by x^(8*bytes-33); the extra
// x^33 comes from the 32-bit constant sitting in the low half of its lane and from the
// reflected product being one bit short of 128.
struct fold_constant {
  std::uint64_t lo;
  std::uint64_t hi;
};
constexpr fold_constant fold_by(std::size_t bytes) noexcept {
  return {xpow_mod(8 * bytes + 31), xpow_mod(8 * bytes - 33)};
}
inline constexpr fold_constant fold_256 = fold_by(256);
inline constexpr fold_constant fold_16 = fold_by(16);
// Folds by 64 * j and 16 * j bytes, j = 0..6 (entry 0 unused: a distance of 0 is no fold).
constexpr std::array<fold_constant, 7> fold_table(std::size_t unit) noexcept {
  std::array<fold_constant, 7> t{};
  for (std::size_t j = 1; j < 7; ++j) {
    t[j] = fold_by(unit * j);
  }
  return t;
}
inline constexpr std::array<fold_constant, 7> fold_16x = fold_table(16);
// A 512-bit multiplier, one constant per 128-bit lane, loaded whole (GCC 12 warns on the
// "undefined" operand of the broadcast intrinsics).
struct alignas(64) lane_constants {
  std::array<std::uint64_t, 8> k;
};
constexpr std::array<lane_constants, 7> make_fold_64x() noexcept {
  std::array<lane_constants, 7> t{};
  for (std::size_t j = 1; j < 7; ++j) {
    for (std::size_t lane = 0; lane < 4; ++lane) {
      t[j].k[2 * lane] = fold_by(64 * j).lo;
      t[j].k[2 * lane + 1] = fold_by(64 * j).hi;
    }
  }
  return t;
}
inline constexpr std::array<lane_constants, 7> fold_64x = make_fold_64x();
// For the 512 -> 128-bit step with m more 16-byte blocks to come: lane j of the register
// (16 bytes each) is folded forward by 16 * (3 - j + m) bytes; lane 3 with m = 0 is kept as is.
constexpr std::array<lane_constants, 4> make_lane_table() noexcept {
  std::array<lane_constants, 4> t{};
  for (std::size_t m = 0; m < 4; ++m) {
    for (std::size_t j = 0; j < 4; ++j) {
      const std::size_t d = 3 - j + m;
      t[m].k[2 * j] = d == 0 ? 0 : fold_16x[d].lo;
      t[m].k[2 * j + 1] = d == 0 ? 0 : fold_16x[d].hi;
    }
  }
  return t;
}
inline constexpr std::array<lane_constants, 4> lane_table = make_lane_table();

#define TAPEFLOW_CRC32C_AVX512 \
  __attribute__((target("sse4.2,pclmul,avx512f,avx512vl,avx512bw,vpclmulqdq")))

TAPEFLOW_CRC32C_AVX512 inline __m512i fold512(__m512i x, __m512i k, __m512i next) noexcept {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                   _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}
TAPEFLOW_CRC32C_AVX512 inline __m128i fold128(__m128i x, __m128i k, __m128i next) noexcept {
  return _mm_ternarylogic_epi64(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11),
                                next, 0x96);
}
TAPEFLOW_CRC32C_AVX512 inline __m512i k4(fold_constant c) noexcept {
  const auto lo = static_cast<long long>(c.lo);
  const auto hi = static_cast<long long>(c.hi);
  return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}
TAPEFLOW_CRC32C_AVX512 inline __m128i k1(fold_constant c) noexcept {
  return _mm_set_epi64x(static_cast<long long>(c.hi), static_cast<long long>(c.lo));
}
// Constants of a table picked at run time: one load each.
TAPEFLOW_CRC32C_AVX512 inline __m128i load_k1(const fold_constant& c) noexcept {
  static_assert(sizeof(fold_constant) == 16);
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(&c));  // lo in the low half
}
TAPEFLOW_CRC32C_AVX512 inline __m512i load_k4(const lane_constants& c) noexcept {
  return _mm512_load_si512(c.k.data());
}
/// `acc ^ x * x^(8 * 64 * j)` (j = 0: `acc ^ x`).
TAPEFLOW_CRC32C_AVX512 inline __m512i add_folded512(__m512i acc, __m512i x,
                                                    std::size_t j) noexcept {
  return j == 0 ? _mm512_xor_si512(acc, x) : fold512(x, load_k4(fold_64x[j]), acc);
}
TAPEFLOW_CRC32C_AVX512 inline __m128i add_folded128(__m128i acc, __m128i x,
                                                    std::size_t j) noexcept {
  return j == 0 ? _mm_xor_si128(acc, x) : fold128(x, load_k1(fold_16x[j]), acc);
}
template <bool Copy>
TAPEFLOW_CRC32C_AVX512 inline __m512i load512(const unsigned char* p, unsigned char* dst,
                                              std::size_t off) noexcept {
  const __m512i v = _mm512_loadu_si512(p + off);
  if constexpr (Copy) {
    _mm512_storeu_si512(dst + off, v);
  }
  return v;
}
template <bool Copy>
TAPEFLOW_CRC32C_AVX512 inline __m128i load128(const unsigned char* p, unsigned char* dst,
                                              std::size_t off) noexcept {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + off));
  if constexpr (Copy) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + off), v);
  }
  return v;
}
/// The last 0-15 bytes with the crc32 instruction (8, 4, 2, 1), inline.
template <bool Copy>
TAPEFLOW_CRC32C_AVX512 inline std::uint32_t tail_crc(std::uint32_t crc, const unsigned char* p,
                                                     unsigned char* dst, std::size_t n) noexcept {
  if constexpr (Copy) {  // a masked copy: no call for a handful of bytes
    const auto mask = static_cast<__mmask16>((1U << n) - 1);
    _mm_mask_storeu_epi8(dst, mask, _mm_maskz_loadu_epi8(mask, p));
  }
  std::uint64_t c = crc;
  if ((n & 8) != 0) {
    c = _mm_crc32_u64(c, load_le64(p));
    p += 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  if ((n & 4) != 0) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    c32 = _mm_crc32_u32(c32, v);
    p += 4;
  }
  if ((n & 2) != 0) {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    c32 = _mm_crc32_u16(c32, v);
    p += 2;
  }
  if ((n & 1) != 0) {
    c32 = _mm_crc32_u8(c32, *p);
  }
  return c32;
}

/// VPCLMULQDQ kernel: four 512-bit accumulators folded 256 bytes at a time (one register for
/// inputs under 256 bytes), reduced to 128 bits and finished with the crc32 instruction. With
/// `Copy`, the bytes are also stored to `dst` on their way through the registers (a copy fused
/// with the CRC). Records of a few hundred bytes to a few KiB (TFRecord's common case) are
/// bound by the latency of the reductions, so these are trees: every register and leftover
/// block is multiplied by x^(its distance to the end) at once, and the products XORed.
template <bool Copy>
TAPEFLOW_CRC32C_AVX512 inline std::uint32_t avx512_kernel(std::uint32_t crc, const unsigned char* p,
                                                          std::size_t n,
                                                          unsigned char* dst) noexcept {
  if (n < 64) {
    if constexpr (Copy) {
      const __mmask64 mask = n == 0 ? 0 : ~__mmask64{0} >> (64 - n);
      _mm512_mask_storeu_epi8(dst, mask, _mm512_maskz_loadu_epi8(mask, p));
    }
    return update_hardware(crc, p, n);
  }
  const __m512i seed = _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(crc)));
  __m512i x;
  std::size_t off = 0;
  if (n >= 256) {
    __m512i x0 = _mm512_xor_si512(load512<Copy>(p, dst, 0), seed);
    __m512i x1 = load512<Copy>(p, dst, 64);
    __m512i x2 = load512<Copy>(p, dst, 128);
    __m512i x3 = load512<Copy>(p, dst, 192);
    off = 256;
    const __m512i k256 = k4(fold_256);
    while (n - off >= 256) {
      x0 = fold512(x0, k256, load512<Copy>(p, dst, off));
      x1 = fold512(x1, k256, load512<Copy>(p, dst, off + 64));
      x2 = fold512(x2, k256, load512<Copy>(p, dst, off + 128));
      x3 = fold512(x3, k256, load512<Copy>(p, dst, off + 192));
      off += 256;
    }
    const std::size_t m = (n - off) / 64;  // whole 64-byte blocks left: 0..3
    x = m == 0 ? x3 : fold512(x3, load_k4(fold_64x[m]), _mm512_setzero_si512());
    x = fold512(x2, load_k4(fold_64x[1 + m]), x);
    x = fold512(x1, load_k4(fold_64x[2 + m]), x);
    x = fold512(x0, load_k4(fold_64x[3 + m]), x);
  } else {
    const std::size_t m = (n - 64) / 64;
    x = _mm512_xor_si512(load512<Copy>(p, dst, 0), seed);
    if (m != 0) {
      x = fold512(x, load_k4(fold_64x[m]), _mm512_setzero_si512());
    }
    off = 64;
  }
  for (std::size_t left = (n - off) / 64; left > 0; --left) {
    x = add_folded512(x, load512<Copy>(p, dst, off), left - 1);
    off += 64;
  }
  // 512 -> 128 bits, lanes and the 16-byte blocks left folded to the end at once.
  const std::size_t m16 = (n - off) / 16;  // 0..3
  const __m512i kl = load_k4(lane_table[m16]);
  __m512i y = _mm512_xor_si512(_mm512_clmulepi64_epi128(x, kl, 0x00),
                               _mm512_clmulepi64_epi128(x, kl, 0x11));
  if (m16 == 0) {
    y = _mm512_mask_blend_epi64(0xC0, y, x);  // lane 3 is not folded
  }
  // (maskz extracts: GCC 12 warns on the "undefined" operands of the plain ones and casts)
  const __m256i y2 = _mm256_xor_si256(_mm512_maskz_extracti64x4_epi64(0xFF, y, 0),
                                      _mm512_maskz_extracti64x4_epi64(0xFF, y, 1));
  __m128i a = _mm_xor_si128(_mm256_castsi256_si128(y2), _mm256_extracti128_si256(y2, 1));
  for (std::size_t left = m16; left > 0; --left) {
    a = add_folded128(a, load128<Copy>(p, dst, off), left - 1);
    off += 16;
  }
  // The 128 bits left, as a 16-byte message CRC'd from a zero state, carry the whole CRC.
  std::uint64_t c = _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(a)));
  c = _mm_crc32_u64(c, static_cast<std::uint64_t>(_mm_extract_epi64(a, 1)));
  return tail_crc<Copy>(static_cast<std::uint32_t>(c), p + off, Copy ? dst + off : nullptr,
                        n - off);
}
#undef TAPEFLOW_CRC32C_AVX512

inline std::uint32_t update_avx512(std::uint32_t crc, const unsigned char* p,
                                   std::size_t n) noexcept {
  return avx512_kernel<false>(crc, p, n, nullptr);
}
inline std::uint32_t copy_update_avx512(std::uint32_t crc, unsigned char* dst,
                                        const unsigned char* p, std::size_t n) noexcept {
  return avx512_kernel<true>(crc, p, n, dst);
}
inline bool avx512_supported() noexcept {
  unsigned eax = 0;
  unsigned ebx = 0;
  unsigned ecx = 0;
  unsigned edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) {
    return false;
  }
  constexpr unsigned osxsave = 1U << 27;
  if ((ecx & bit_SSE4_2) == 0 || (ecx & bit_PCLMUL) == 0 || (ecx & osxsave) == 0) {
    return false;
  }
  unsigned xcr0 = 0;
  unsigned xcr0_hi = 0;
  __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0 & 0xE6U) != 0xE6U) {  // the OS saves SSE, AVX and all AVX-512 state
    return false;
  }
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) {
    return false;
  }
  constexpr unsigned avx512f = 1U << 16;
  constexpr unsigned avx512bw = 1U << 30;
  constexpr unsigned avx512vl = 1U << 31;
  constexpr unsigned vpclmulqdq = 1U << 10;
  return (ebx & avx512f) != 0 && (ebx & avx512bw) != 0 && (ebx & avx512vl) != 0 &&
         (ecx & vpclmulqdq) != 0;
}
#else
inline bool avx512_supported() noexcept { return false; }
inline std::uint32_t update_avx512(std::uint32_t crc, const unsigned char* p,
                                   std::size_t n) noexcept {
  return update_hardware(crc, p, n);
}
#endif

/// The kernels, for tests and benchmarks; `kernel_supported` says which this CPU runs.
enum class kernel { portable, hardware, avx512 };
inline bool kernel_supported(kernel k) noexcept {
  switch (k) {
    case kernel::portable:
      return true;
    case kernel::hardware:
      return hardware_supported();
    case kernel::avx512:
      return avx512_supported();
  }
  return false;
}

using update_fn = std::uint32_t (*)(std::uint32_t, const unsigned char*, std::size_t) noexcept;
using copy_update_fn = std::uint32_t (*)(std::uint32_t, unsigned char*, const unsigned char*,
                                         std::size_t) noexcept;

inline update_fn kernel_fn(kernel k) noexcept {
  switch (k) {
    case kernel::avx512:
      return &update_avx512;
    case kernel::hardware:
      return &update_hardware;
    case kernel::portable:
      break;
  }
  return &update_portable;
}
template <kernel K>
std::uint32_t copy_update_generic(std::uint32_t crc, unsigned char* dst, const unsigned char* p,
                                  std::size_t n) noexcept {
  if (n != 0) {
    std::memcpy(dst, p, n);
  }
  return kernel_fn(K)(crc, dst, n);  // CRC the copy: it is the one still in cache
}
inline copy_update_fn copy_kernel_fn(kernel k) noexcept {
  switch (k) {
    case kernel::avx512:
#if defined(TAPEFLOW_CRC32C_X86)
      return &copy_update_avx512;
#else
      break;
#endif
    case kernel::hardware:
      return &copy_update_generic<kernel::hardware>;
    case kernel::portable:
      break;
  }
  return &copy_update_generic<kernel::portable>;
}

// The best kernel, chosen once per process (function-local statics: thread-safe).
inline kernel best_kernel() noexcept {
  static const kernel k = avx512_supported()     ? kernel::avx512
                          : hardware_supported() ? kernel::hardware
                                                 : kernel::portable;
  return k;
}
inline update_fn dispatch() noexcept {
  static const update_fn fn = kernel_fn(best_kernel());
  return fn;
}
inline copy_update_fn copy_dispatch() noexcept {
  static const copy_update_fn fn = copy_kernel_fn(best_kernel());
  return fn;
}

/// CRC-32C (un-inverted result, as `crc32c`) of the 8 bytes of `v` in little-endian order,
/// e.g. a TFRecord length field: a single instruction where the build targets SSE4.2 or the
/// ARMv8 CRC extension, so the per-record header check costs no call.
inline std::uint32_t crc32c_u64(std::uint64_t v) noexcept {
#if defined(TAPEFLOW_CRC32C_X86) && defined(__SSE4_2__)
  return ~static_cast<std::uint32_t>(_mm_crc32_u64(0xFFFFFFFFU, v));
#elif defined(TAPEFLOW_CRC32C_ARM) && defined(__ARM_FEATURE_CRC32)
  return ~__crc32cd(0xFFFFFFFFU, v);
#else
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<unsigned char>(v >> (8 * i));
  }
  return ~(best_kernel() == kernel::portable ? update_portable(0xFFFFFFFFU, b, 8)
                                             : update_hardware(0xFFFFFFFFU, b, 8));
#endif
}

}  // namespace detail::crc32c_impl

namespace io {

/// Whether CRC-32C runs on the CPU's CRC instruction (SSE4.2 / ARMv8 CRC) in this process.
[[nodiscard]] inline bool crc32c_hardware_accelerated() noexcept {
  return detail::crc32c_impl::dispatch() != &detail::crc32c_impl::update_portable;
}

/// Extends `crc` (the CRC-32C of some prefix A) to the CRC-32C of A followed by `data`
/// (TensorFlow: `crc32c::Extend`). `crc32c_extend(0, d)` is `crc32c(d)`.
[[nodiscard]] inline std::uint32_t crc32c_extend(std::uint32_t crc, const void* data,
                                                 std::size_t n) noexcept {
  return ~detail::crc32c_impl::dispatch()(~crc, static_cast<const unsigned char*>(data), n);
}
/// Extends `crc` by the bytes of `data`.
[[nodiscard]] inline std::uint32_t crc32c_extend(std::uint32_t crc,
                                                 std::string_view data) noexcept {
  return crc32c_extend(crc, data.data(), data.size());
}

/// Copies `n` bytes from `src` to `dst` (not overlapping) and returns
/// `crc32c_extend(crc, src, n)`; on CPUs with VPCLMULQDQ the copy rides along with the CRC.
inline std::uint32_t crc32c_extend_copy(std::uint32_t crc, void* dst, const void* src,
                                        std::size_t n) noexcept {
  return ~detail::crc32c_impl::copy_dispatch()(~crc, static_cast<unsigned char*>(dst),
                                               static_cast<const unsigned char*>(src), n);
}

/// CRC-32C of `n` bytes: `crc32c("123456789") == 0xE3069283`.
[[nodiscard]] inline std::uint32_t crc32c(const void* data, std::size_t n) noexcept {
  return crc32c_extend(0, data, n);
}
/// CRC-32C of the bytes of `data`.
[[nodiscard]] inline std::uint32_t crc32c(std::string_view data) noexcept {
  return crc32c_extend(0, data.data(), data.size());
}

/// The constant `mask_crc32c` adds after rotating (TensorFlow's `kMaskDelta`).
inline constexpr std::uint32_t crc32c_mask_delta = 0xA282EAD8U;

/// TensorFlow's CRC masking (rotate right 15, add 0xA282EAD8): stored CRCs are masked so a
/// CRC of data that itself embeds CRCs stays well distributed.
[[nodiscard]] constexpr std::uint32_t mask_crc32c(std::uint32_t crc) noexcept {
  return ((crc >> 15) | (crc << 17)) + crc32c_mask_delta;
}
/// Inverse of `mask_crc32c`.
[[nodiscard]] constexpr std::uint32_t unmask_crc32c(std::uint32_t masked) noexcept {
  const std::uint32_t rot = masked - crc32c_mask_delta;
  return (rot >> 17) | (rot << 15);
}

/// Masked CRC-32C of `data`, the value TFRecord and friends store.
[[nodiscard]] inline std::uint32_t masked_crc32c(const void* data, std::size_t n) noexcept {
  return mask_crc32c(crc32c(data, n));
}
/// Masked CRC-32C of the bytes of `data`.
[[nodiscard]] inline std::uint32_t masked_crc32c(std::string_view data) noexcept {
  return mask_crc32c(crc32c(data));
}

}  // namespace io

TAPEFLOW_END_NAMESPACE
