#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/ops/random/random.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_random_random {

namespace tf = tapeflow;

namespace {
template <class T>
double mean_of(std::vector<T> const& v) {
  double s = 0;
  for (T x : v) {
    s += static_cast<double>(x);
  }
  return s / static_cast<double>(v.size());
}
template <class T>
double stddev_of(std::vector<T> const& v) {
  double const m = mean_of(v);
  double s = 0;
  for (T x : v) {
    s += (static_cast<double>(x) - m) * (static_cast<double>(x) - m);
  }
  return std::sqrt(s / static_cast<double>(v.size()));
}
}  // namespace

TEST_CASE("Philox4x32-10 known-answer vectors", "[ops][random]") {
  // Random123's kat_vectors for philox4x32_10.
  using P = tf::detail::random_impl::Philox4x32;
  CHECK(P::generate({0, 0, 0, 0}, {0, 0}) ==
        P::Counter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(P::generate({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                    {0xffffffffu, 0xffffffffu}) ==
        P::Counter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(P::generate({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                    {0xa4093822u, 0x299f31d0u}) ==
        P::Counter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("op seeds are reproducible and advance per call", "[ops][random]") {
  tf::random::set_seed(42);
  auto a1 = tf::random::normal<float>({5}, {.seed = 7});
  auto a2 = tf::random::normal<float>({5}, {.seed = 7});
  auto b1 = tf::random::uniform<double>({2, 3}, {.seed = 8});
  CHECK(a1.numpy() != a2.numpy());  // successive calls differ
  tf::random::set_seed(42);         // resets the counters: the same sequence again
  CHECK(tf::random::normal<float>({5}, {.seed = 7}).numpy() == a1.numpy());
  CHECK(tf::random::normal<float>({5}, {.seed = 7}).numpy() == a2.numpy());
  CHECK(tf::random::uniform<double>({2, 3}, {.seed = 8}).numpy() == b1.numpy());
  // A different global seed gives different values for the same op seed.
  tf::random::set_seed(43);
  CHECK(tf::random::normal<float>({5}, {.seed = 7}).numpy() != a1.numpy());
}

TEST_CASE("the global seed alone makes a program reproducible", "[ops][random]") {
  tf::random::set_seed(1234);
  auto x = tf::random::normal<double>({4});
  auto y = tf::random::uniform<float>({4});
  auto z = tf::random::truncated_normal<float>({4});
  CHECK(x.numpy() != tf::random::normal<double>({4}).numpy());
  tf::random::set_seed(1234);
  CHECK(tf::random::normal<double>({4}).numpy() == x.numpy());
  CHECK(tf::random::uniform<float>({4}).numpy() == y.numpy());
  CHECK(tf::random::truncated_normal<float>({4}).numpy() == z.numpy());
}

TEST_CASE("values do not depend on the tensor's size or the thread split", "[ops][random]") {
  tf::random::set_seed(5);
  auto small = tf::random::normal<float>({7}, {.seed = 3});
  tf::random::set_seed(5);
  auto large = tf::random::normal<float>({100001}, {.seed = 3});  // splits over the pool
  CHECK(std::equal(small.values().begin(), small.values().end(), large.values().begin()));
  tf::random::set_seed(5);
  auto large2 = tf::random::normal<float>({100001}, {.seed = 3});
  CHECK(large2.numpy() == large.numpy());
}

TEST_CASE("normal statistics", "[ops][random]") {
  tf::random::set_seed(11);
  auto f = tf::random::normal<float>({100000}).numpy();
  CHECK(mean_of(f) == Approx(0.0).margin(0.015));
  CHECK(stddev_of(f) == Approx(1.0).epsilon(0.015));
  auto d = tf::random::normal<double>({100, 1000}, {.mean = 3.0, .stddev = 0.5}).numpy();
  CHECK(mean_of(d) == Approx(3.0).margin(0.008));
  CHECK(stddev_of(d) == Approx(0.5).epsilon(0.015));
  // About 4.55% of normal samples lie beyond two standard deviations.
  auto beyond = std::count_if(f.begin(), f.end(), [](float v) { return std::abs(v) > 2; });
  CHECK(static_cast<double>(beyond) / 100000.0 == Approx(0.0455).margin(0.003));
}

TEST_CASE("truncated normal statistics and range", "[ops][random]") {
  auto t = tf::random::truncated_normal<float>({100000}, {.mean = 1.0, .stddev = 2.0}).numpy();
  CHECK(*std::min_element(t.begin(), t.end()) >= -3.0f);
  CHECK(*std::max_element(t.begin(), t.end()) <= 5.0f);
  CHECK(mean_of(t) == Approx(1.0).margin(0.03));
  // Standard deviation of N(0, 1) truncated to [-2, 2] is 0.8796, times stddev 2.
  CHECK(stddev_of(t) == Approx(2.0 * 0.87962566).epsilon(0.015));
  auto d = tf::random::truncated_normal<double>({100000}).numpy();
  CHECK(std::all_of(d.begin(), d.end(), [](double v) { return std::abs(v) <= 2.0; }));
}

TEST_CASE("uniform range and statistics", "[ops][random]") {
  auto u = tf::random::uniform<float>({100000}).numpy();
  CHECK(*std::min_element(u.begin(), u.end()) >= 0.0f);
  CHECK(*std::max_element(u.begin(), u.end()) < 1.0f);
  CHECK(mean_of(u) == Approx(0.5).margin(0.005));
  CHECK(stddev_of(u) == Approx(std::sqrt(1.0 / 12)).epsilon(0.01));
  auto r = tf::random::uniform<double>({100000}, {.minval = -2.0, .maxval = 6.0}).numpy();
  CHECK(*std::min_element(r.begin(), r.end()) >= -2.0);
  CHECK(*std::max_element(r.begin(), r.end()) < 6.0);
  CHECK(mean_of(r) == Approx(2.0).margin(0.04));
  auto k = tf::random::uniform<std::int32_t>({100000}, {.minval = -3, .maxval = 4}).numpy();
  std::set<std::int32_t> seen(k.begin(), k.end());
  CHECK(seen == std::set<std::int32_t>{-3, -2, -1, 0, 1, 2, 3});
  CHECK(mean_of(k) == Approx(0.0).margin(0.03));
  auto big = tf::random::uniform<std::int64_t>({1000}, {.minval = 0, .maxval = INT64_MAX}).numpy();
  CHECK(std::all_of(big.begin(), big.end(), [](std::int64_t v) { return v >= 0; }));
  CHECK(std::set<std::int64_t>(big.begin(), big.end()).size() == 1000);
}

TEST_CASE("without seeds values are fresh each call", "[ops][random]") {
  // No global seed is reset here, but set_seed cannot be unset: check op streams instead.
  auto a = tf::random::uniform<float>({8}).numpy();
  auto b = tf::random::uniform<float>({8}).numpy();
  CHECK(a != b);
  auto& state = tf::detail::random_impl::RandomState::instance();
  auto s1 = state.next_stream({0, 0});
  auto s2 = state.next_stream({0, 0});
  CHECK((s1.key != s2.key || s1.call != s2.call));
}

TEST_CASE("random errors", "[ops][random]") {
  CHECK_THROWS_AS(tf::random::uniform<std::int32_t>({3}), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::random::uniform<std::int64_t>({3}),
                    Catch::Contains("maxval") && Catch::Contains("int64"));
  CHECK_THROWS_WITH(tf::random::uniform<std::int32_t>({3}, {.minval = 5, .maxval = 5}),
                    Catch::Contains("RandomUniformInt") && Catch::Contains("minval < maxval"));
  CHECK_THROWS_WITH(tf::random::normal<float>({2, -1}),
                    Catch::Contains("RandomStandardNormal") && Catch::Contains("(2, -1)"));
  CHECK_THROWS_AS(tf::random::truncated_normal<double>({-3}), tf::invalid_argument);
  CHECK(tf::random::normal<float>({0, 4}).num_elements() == 0);
}

}  // namespace test_ops_random_random
