#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/ops/linalg/detail/gemm.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_linalg_gemm {

namespace {

using tapeflow::backend::cpu::ThreadPool;
using tapeflow::detail::gemm;

// A matrix stored inside a larger buffer: `rows` x `cols` at row stride `ld` > cols, starting
// at an offset, so strides and offsets are exercised and writes outside it can be detected.
template <class T>
struct Strided {
  static constexpr std::int64_t kOffset = 5;
  std::int64_t rows, cols, ld;
  std::vector<T> buf;

  Strided(std::int64_t r, std::int64_t c, std::int64_t pad, T fill)
      : rows(r),
        cols(c),
        ld(c + pad),
        buf(static_cast<std::size_t>(kOffset + r * ld + pad), fill) {}
  T* data() { return buf.data() + kOffset; }
  T const* data() const { return buf.data() + kOffset; }
  T& at(std::int64_t i, std::int64_t j) { return data()[i * ld + j]; }
  T at(std::int64_t i, std::int64_t j) const { return data()[i * ld + j]; }
  bool inside(std::size_t index) const {
    auto const e = static_cast<std::int64_t>(index) - kOffset;
    return e >= 0 && e / ld < rows && e % ld < cols;
  }
};

template <class T>
T random_value(std::mt19937& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::uniform_real_distribution<T>(-1, 1)(rng);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(std::uniform_int_distribution<int>(-8, 8)(rng));
  } else {
    return static_cast<T>(std::uniform_int_distribution<int>(0, 255)(rng));
  }
}

template <class T>
Strided<T> random_matrix(std::int64_t rows, std::int64_t cols, std::int64_t pad,
                         std::mt19937& rng) {
  Strided<T> m(rows, cols, pad, T{});
  for (auto& x : m.buf) {
    x = random_value<T>(rng);
  }
  return m;
}

// One gemm call checked against a naive triple loop. Floating-point results must agree within
// the standard accumulation bound k * eps * sum_p |a_ip * b_pj| (plus the added C value).
// `compact`: rows are packed with no gap (ld = columns), as tensors hand them over.
template <class T>
void check_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                bool accumulate, ThreadPool& pool, std::uint32_t seed, bool compact = false) {
  CAPTURE(trans_a, trans_b, m, n, k, accumulate, pool.num_threads(), compact);
  std::mt19937 rng(seed);
  std::int64_t const pad_a = compact ? 0 : 3;
  std::int64_t const pad_b = compact ? 0 : 7;
  std::int64_t const pad_c = compact ? 0 : 2;
  // Stored shapes: A is m x k (k x m when transposed), B is k x n (n x k when transposed).
  auto const a = trans_a ? random_matrix<T>(k, m, pad_a, rng) : random_matrix<T>(m, k, pad_a, rng);
  auto const b = trans_b ? random_matrix<T>(n, k, pad_b, rng) : random_matrix<T>(k, n, pad_b, rng);
  T const sentinel = static_cast<T>(77);
  Strided<T> c(m, n, pad_c, sentinel);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      c.at(i, j) = random_value<T>(rng);
    }
  }
  Strided<T> const c0 = c;

  gemm<T>(trans_a, trans_b, m, n, k, a.data(), a.ld, b.data(), b.ld, c.data(), c.ld, accumulate,
          pool);

  auto op_a = [&](std::int64_t i, std::int64_t p) { return trans_a ? a.at(p, i) : a.at(i, p); };
  auto op_b = [&](std::int64_t p, std::int64_t j) { return trans_b ? b.at(j, p) : b.at(p, j); };
  std::int64_t mismatches = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      T const got = c.at(i, j);
      if constexpr (std::is_floating_point_v<T>) {
        long double sum = accumulate ? c0.at(i, j) : 0;
        long double bound = accumulate ? std::abs(c0.at(i, j)) : 0;
        for (std::int64_t p = 0; p < k; ++p) {
          long double const prod = static_cast<long double>(op_a(i, p)) * op_b(p, j);
          sum += prod;
          bound += std::abs(prod);
        }
        long double const tol =
            static_cast<long double>(k + 2) * std::numeric_limits<T>::epsilon() * bound +
            std::numeric_limits<T>::min();
        if (std::abs(static_cast<long double>(got) - sum) > tol && mismatches++ < 5) {
          FAIL_CHECK("C(" << i << ", " << j << ") = " << got << ", expected " << double(sum)
                          << " +- " << double(tol));
        }
      } else {
        // Integer arithmetic wraps identically in any order for unsigned types, and the test
        // values keep signed sums far from overflow.
        T sum = accumulate ? c0.at(i, j) : T{};
        for (std::int64_t p = 0; p < k; ++p) {
          sum = static_cast<T>(sum + op_a(i, p) * op_b(p, j));
        }
        if (got != sum && mismatches++ < 5) {
          FAIL_CHECK("C(" << i << ", " << j << ") = " << +got << ", expected " << +sum);
        }
      }
    }
  }
  CHECK(mismatches == 0);
  // Nothing outside the m x n window of C may change.
  std::int64_t clobbered = 0;
  for (std::size_t e = 0; e < c.buf.size(); ++e) {
    if (!c.inside(e) && c.buf[e] != sentinel) {
      ++clobbered;
    }
  }
  CHECK(clobbered == 0);
}

constexpr std::int64_t kSizes[] = {1, 7, 13, 31, 64, 65, 100, 257};
constexpr int kNumSizes = static_cast<int>(std::size(kSizes));

}  // namespace

TEMPLATE_TEST_CASE("gemm matches a naive triple loop", "[ops][gemm]", float, double, std::int32_t,
                   std::int64_t, std::uint8_t) {
  ThreadPool& pool = ThreadPool::global();
  std::uint32_t seed = 1;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      SECTION("trans_a=" + std::to_string(ta) + " trans_b=" + std::to_string(tb)) {
        // Every size appears for m, n and k; k cycles so the pairs (m, n) see all k values.
        for (int im = 0; im < kNumSizes; ++im) {
          for (int in = 0; in < kNumSizes; ++in) {
            std::int64_t const k = kSizes[(im + 3 * in) % kNumSizes];
            bool const accumulate = (im + in) % 2 == 1;
            check_gemm<TestType>(ta, tb, kSizes[im], kSizes[in], k, accumulate, pool, seed++);
          }
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("gemm crosses cache-block boundaries", "[ops][gemm]", float, double,
                   std::int32_t, std::int64_t) {
  // k beyond one KC slice (C is accumulated across slices), n beyond one NC block, m beyond
  // one MC block, each with ragged edges.
  struct Shape {
    std::int64_t m, n, k;
  };
  Shape const shapes[] = {{37, 45, 1100}, {29, 900, 23}, {3100, 19, 11}, {130, 131, 520}};
  std::uint32_t seed = 100;
  for (auto const& s : shapes) {
    for (int t = 0; t < 4; ++t) {
      check_gemm<TestType>(t & 1, t & 2, s.m, s.n, s.k, t == 3, ThreadPool::global(), seed++);
    }
  }
}

TEMPLATE_TEST_CASE("gemm on matrix-vector shapes with compact strides", "[ops][gemm]", float,
                   double, std::int32_t, std::int64_t) {
  // These take the unpacked loops, whose choice depends on the strides (a contiguous column of
  // C, a contiguous row of B) as well as on the shape.
  struct Shape {
    std::int64_t m, n, k;
  };
  Shape const shapes[] = {{300, 1, 200}, {1, 300, 200}, {300, 2, 90}, {3, 1, 5000}, {1, 1, 777}};
  std::uint32_t seed = 300;
  for (auto const& s : shapes) {
    for (int t = 0; t < 8; ++t) {
      check_gemm<TestType>(t & 1, t & 2, s.m, s.n, s.k, t & 4, ThreadPool::global(), seed++,
                           /*compact=*/true);
    }
  }
}

TEST_CASE("gemm splits work over any number of threads", "[ops][gemm]") {
  // 1 thread, an odd count, and more threads than the work can use. Both schemes (Note [GEMM
  // threads]): a packed op(B) shared by tall products (from 256 rows of C per thread), and C
  // tiles split in m, in n (few rows: the MNIST MLP's 50 x 784 by 784 x 100), and in both.
  for (int threads : {1, 3, 4, 16}) {
    ThreadPool pool(threads);
    std::uint32_t seed = 200;
    check_gemm<float>(false, false, 1100, 40, 100, false, pool, seed++);  // shared op(B)
    check_gemm<float>(true, false, 1100, 64, 50, true, pool, seed++);
    check_gemm<float>(false, false, 300, 300, 150, false, pool, seed++);
    check_gemm<float>(false, false, 50, 100, 784, false, pool, seed++);
    check_gemm<float>(true, true, 600, 70, 300, true, pool, seed++);
    check_gemm<double>(false, true, 1000, 30, 400, false, pool, seed++);
    check_gemm<float>(false, true, 150, 700, 300, false, pool, seed++);
    check_gemm<float>(true, false, 90, 40, 5000, true, pool, seed++);
    check_gemm<double>(true, true, 64, 500, 400, true, pool, seed++);
  }
}

TEST_CASE("gemm results do not depend on the thread count", "[ops][gemm]") {
  // Every element's sum runs in the same k order and KC slices whatever scheme and tile hold it
  // (Note [GEMM threads]): bitwise equal results on 1, 2, 3 and 8 threads, the tall product
  // sharing its packed op(B) on 2 or more.
  struct Shape {
    bool trans_a, trans_b;
    std::int64_t m, n, k;
  };
  for (Shape const s : {Shape{false, false, 50, 100, 784}, Shape{true, false, 784, 100, 50},
                        Shape{false, true, 77, 333, 1100}, Shape{true, true, 130, 45, 700},
                        Shape{false, false, 2100, 100, 300}}) {
    CAPTURE(s.trans_a, s.trans_b, s.m, s.n, s.k);
    std::mt19937 rng(9);
    auto const a =
        s.trans_a ? random_matrix<float>(s.k, s.m, 1, rng) : random_matrix<float>(s.m, s.k, 1, rng);
    auto const b =
        s.trans_b ? random_matrix<float>(s.n, s.k, 2, rng) : random_matrix<float>(s.k, s.n, 2, rng);
    std::vector<float> first;
    for (int threads : {1, 2, 3, 8}) {
      ThreadPool pool(threads);
      std::vector<float> c(static_cast<std::size_t>(s.m * s.n));
      gemm<float>(s.trans_a, s.trans_b, s.m, s.n, s.k, a.data(), a.ld, b.data(), b.ld, c.data(),
                  s.n, false, pool);
      if (first.empty()) {
        first = c;
      } else {
        CAPTURE(threads);
        CHECK(std::memcmp(c.data(), first.data(), c.size() * sizeof(float)) == 0);
      }
    }
  }
}

TEMPLATE_TEST_CASE("gemm with an empty dimension", "[ops][gemm]", float, std::int64_t) {
  using T = TestType;
  std::vector<T> a(64, T{1});
  std::vector<T> b(64, T{1});
  std::vector<T> c(64, T{5});

  SECTION("k = 0 zeroes C without accumulate and keeps it with accumulate") {
    gemm<T>(false, false, 3, 4, 0, a.data(), 1, b.data(), 4, c.data(), 6, true);
    CHECK(c[0] == T{5});
    gemm<T>(false, false, 3, 4, 0, a.data(), 1, b.data(), 4, c.data(), 6, false);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 6; ++j) {
        CHECK(c[i * 6 + j] == (j < 4 ? T{0} : T{5}));
      }
    }
  }
  SECTION("m = 0 or n = 0 touches nothing, even through null pointers") {
    gemm<T>(false, false, 0, 4, 3, nullptr, 3, b.data(), 4, nullptr, 4);
    gemm<T>(true, true, 4, 0, 3, a.data(), 4, nullptr, 3, nullptr, 1);
    for (T x : c) {
      CHECK(x == T{5});
    }
  }
}

}  // namespace test_ops_linalg_gemm
