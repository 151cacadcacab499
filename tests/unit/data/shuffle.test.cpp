#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_data_shuffle {

namespace tf = tapeflow;
using I64 = std::vector<std::int64_t>;

namespace {
template <class D>
I64 ints(const D& ds) {
  I64 out;
  for (auto&& e : ds) {
    out.push_back(e.item());
  }
  return out;
}
// The chapter's algorithm written out directly: fill, sample, replace in the sampled slot.
I64 reference_shuffle(std::int64_t n, std::size_t buffer_size, std::mt19937_64 rng) {
  I64 buffer, out;
  std::int64_t next = 0;
  while (buffer.size() < buffer_size && next < n) {
    buffer.push_back(next++);
  }
  while (!buffer.empty()) {
    std::uniform_int_distribution<std::size_t> pick(0, buffer.size() - 1);
    const std::size_t j = pick(rng);
    out.push_back(buffer[j]);
    if (next < n) {
      buffer[j] = next++;
    } else {
      buffer[j] = buffer.back();
      buffer.pop_back();
    }
  }
  return out;
}
std::mt19937_64 epoch_rng(std::uint64_t seed, std::uint64_t epoch) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(epoch >> 32)};
  return std::mt19937_64(seq);
}
}  // namespace

TEST_CASE("shuffle follows the chapter's buffer algorithm exactly", "[data][shuffle]") {
  for (std::size_t b : {1u, 2u, 5u, 10u, 50u}) {
    auto ds = tf::data::range(37) | tf::data::shuffle(static_cast<std::int64_t>(b), {.seed = 99});
    CHECK(ints(ds) == reference_shuffle(37, b, epoch_rng(99, 0)));
    CHECK(ints(ds) == reference_shuffle(37, b, epoch_rng(99, 1)));  // second epoch
  }
}

TEST_CASE("a buffer of 1 is no shuffle", "[data][shuffle]") {
  CHECK(ints(tf::data::range(20) | tf::data::shuffle(1)) == ints(tf::data::range(20)));
}

TEST_CASE("a small buffer only moves elements forward by a bounded amount", "[data][shuffle]") {
  // element i can come out no earlier than position i - (buffer - 1)
  const auto out = ints(tf::data::range(200) | tf::data::shuffle(4, {.seed = 3}));
  for (std::size_t pos = 0; pos < out.size(); ++pos) {
    CHECK(out[pos] <= static_cast<std::int64_t>(pos) + 3);
  }
}

TEST_CASE("a full buffer gives a uniform permutation", "[data][shuffle]") {
  // chi-square test on where each of 6 elements lands, over 6000 epochs
  constexpr int n = 6, epochs = 6000;
  std::vector<std::vector<int>> counts(n, std::vector<int>(n, 0));
  auto ds = tf::data::range(n) | tf::data::shuffle(n, {.seed = 12345});
  for (int e = 0; e < epochs; ++e) {
    const auto out = ints(ds);
    REQUIRE(out.size() == static_cast<std::size_t>(n));
    for (int pos = 0; pos < n; ++pos) {
      ++counts[static_cast<std::size_t>(out[static_cast<std::size_t>(pos)])]
              [static_cast<std::size_t>(pos)];
    }
  }
  double chi2 = 0;
  const double expected = static_cast<double>(epochs) / n;
  for (const auto& row : counts) {
    for (int c : row) {
      chi2 += (c - expected) * (c - expected) / expected;
    }
  }
  // 25 degrees of freedom ((n-1)^2): p = 0.001 critical value is 52.6
  CHECK(chi2 < 52.6);
  // and whole permutations: all 720 occur
  std::set<I64> perms;
  for (int e = 0; e < 20000 && perms.size() < 720; ++e) {
    perms.insert(ints(ds));
  }
  CHECK(perms.size() == 720);
}

TEST_CASE("seeds reproduce, reshuffle_each_iteration changes epochs", "[data][shuffle]") {
  auto a = tf::data::range(50) | tf::data::shuffle(50, {.seed = 1});
  auto b = tf::data::range(50) | tf::data::shuffle(50, {.seed = 1});
  const auto a1 = ints(a), a2 = ints(a);
  CHECK(a1 == ints(b));
  CHECK(a2 == ints(b));
  CHECK(a1 != a2);
  auto fixed =
      tf::data::range(50) | tf::data::shuffle(50, {.seed = 1, .reshuffle_each_iteration = false});
  CHECK(ints(fixed) == ints(fixed));
  CHECK(ints(fixed) == a1);
  auto unseeded = tf::data::range(50) | tf::data::shuffle(50);
  const auto u = ints(unseeded);
  CHECK(std::set<std::int64_t>(u.begin(), u.end()).size() == 50);
  CHECK_THROWS_AS(tf::data::range(3) | tf::data::shuffle(0), tf::invalid_argument);
}

TEST_CASE("shuffle buffer as a byte budget", "[data][shuffle]") {
  // elements of 1000 floats = 4000 bytes: a 16000-byte budget holds 4 elements
  auto ds = tf::data::range(40) | tf::data::map([](auto x) {
              return tf::fill<float, 1>({1000}, static_cast<float>(x.item()));
            }) |
            tf::data::shuffle(tf::data::buffer_bytes(16000), {.seed = 5});
  I64 out;
  for (auto&& t : ds) {
    out.push_back(static_cast<std::int64_t>(t(0)));
  }
  CHECK(std::set<std::int64_t>(out.begin(), out.end()).size() == 40);
  CHECK(out != ints(tf::data::range(40)));
  for (std::size_t pos = 0; pos < out.size(); ++pos) {
    CHECK(out[pos] <= static_cast<std::int64_t>(pos) + 3);  // like a buffer of 4
  }
  // the same as a count buffer of 4 with the same seed
  auto by_count = tf::data::range(40) | tf::data::shuffle(4, {.seed = 5});
  CHECK(out == ints(by_count));
}

}  // namespace test_data_shuffle
