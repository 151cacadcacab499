#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/keras/initializers.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_initializers {

namespace tf = tapeflow;
namespace init = tf::keras::initializers;
using Catch::Detail::Approx;

namespace {
double mean(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) {
    s += x;
  }
  return s / double(v.size());
}
double stddev(const std::vector<float>& v) {
  const double m = mean(v);
  double s = 0;
  for (float x : v) {
    s += (x - m) * (x - m);
  }
  return std::sqrt(s / double(v.size()));
}
}  // namespace

TEST_CASE("fans follow Keras: dense [in, out], conv [h, w, in, out]") {
  auto [i2, o2] = init::compute_fans(tf::Shape({784, 100}));
  CHECK(i2 == 784);
  CHECK(o2 == 100);
  auto [i4, o4] = init::compute_fans(tf::Shape({5, 5, 32, 64}));
  CHECK(i4 == 25 * 32);
  CHECK(o4 == 25 * 64);
}

TEST_CASE("glorot_uniform, he_normal, zeros, constant: ranges, moments, seeds") {
  const tf::Shape s({400, 200});
  tf::random::set_seed(7);
  auto g = init::GlorotUniform({.seed = 1})(s);
  REQUIRE(g.size() == 80000);
  const double limit = std::sqrt(6.0 / 600.0);
  for (float v : g) {
    CHECK((v >= -limit && v <= limit));
  }
  CHECK(stddev(g) == Approx(limit / std::sqrt(3.0)).epsilon(0.02));
  tf::random::set_seed(7);  // seeds reproduce runs as tf.random's do (Note [Random seeds])
  CHECK(init::GlorotUniform({.seed = 1})(s) == g);
  tf::random::set_seed(7);
  CHECK(init::GlorotUniform({.seed = 2})(s) != g);

  auto h = init::HeNormal({.seed = 3})(s);
  // truncated at 2 sigma of the untruncated normal, whose stddev is sqrt(2 / fan_in) / 0.8796
  const double target = std::sqrt(2.0 / 400.0);
  CHECK(stddev(h) == Approx(target).epsilon(0.03));
  CHECK(mean(h) == Approx(0.0).margin(0.002));
  for (float v : h) {
    CHECK(std::abs(v) <= 2.0 * target / 0.87962566103423978 + 1e-6);
  }

  CHECK(init::Zeros()(tf::Shape({3})) == std::vector<float>{0, 0, 0});
  CHECK(init::Constant(2.5f)(tf::Shape({2})) == std::vector<float>{2.5f, 2.5f});
  CHECK(init::get("he_normal")(tf::Shape({4, 4})).size() == 16);
  CHECK_THROWS_AS(init::get("nope"), tf::invalid_argument);
}

TEST_CASE("orthogonal gives orthonormal columns (or rows when wide)") {
  for (auto shape : {tf::Shape({6, 3}), tf::Shape({3, 6})}) {
    auto q = init::Orthogonal({.seed = 4})(shape);
    const std::int64_t r = shape[0], c = shape[1];
    const bool tall = r >= c;
    const std::int64_t k = tall ? c : r, len = tall ? r : c;
    for (std::int64_t a = 0; a < k; ++a) {
      for (std::int64_t b = 0; b < k; ++b) {
        double dot = 0;
        for (std::int64_t i = 0; i < len; ++i) {
          dot += tall ? double(q[i * c + a]) * q[i * c + b] : double(q[a * c + i]) * q[b * c + i];
        }
        CHECK(dot == Approx(a == b ? 1.0 : 0.0).margin(1e-5));
      }
    }
  }
}

}  // namespace test_keras_initializers
