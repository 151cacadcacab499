#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/tensor.hpp>

namespace tf = tapeflow;

namespace {
template <class X>
std::string str(const X& x) {
  std::ostringstream os;
  os << x;
  return os.str();
}
}  // namespace

TEST_CASE("tensors print like TensorFlow", "[core][tensor]") {
  CHECK(str(tf::constant(1.0f)) == "tf.Tensor(1.0, shape=(), dtype=float32)");
  CHECK(str(tf::constant(0.1f)) == "tf.Tensor(0.1, shape=(), dtype=float32)");
  CHECK(str(tf::constant<std::int32_t>(2)) == "tf.Tensor(2, shape=(), dtype=int32)");
  CHECK(str(tf::constant<float>({{1, 2}, {3, 4}})) ==
        "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)");
  CHECK(str(tf::constant<std::int32_t>({1, 2, 30})) ==
        "tf.Tensor([ 1  2 30], shape=(3,), dtype=int32)");
  CHECK(str(tf::constant<double>({1.5, 10.25})) ==
        "tf.Tensor([ 1.5  10.25], shape=(2,), dtype=float64)");
  CHECK(str(tf::constant<bool>({true, false})) ==
        "tf.Tensor([ True False], shape=(2,), dtype=bool)");
  CHECK(str(tf::constant({"a", "bc"})) == "tf.Tensor([b'a' b'bc'], shape=(2,), dtype=string)");
  CHECK(str(tf::constant<float>({1.f / 3, 2.f})) ==
        "tf.Tensor([0.33333334 2.        ], shape=(2,), dtype=float32)");
  CHECK(str(tf::constant<float>({1e-5f, 1.5f})) ==
        "tf.Tensor([1.0e-05 1.5e+00], shape=(2,), dtype=float32)");
  CHECK(str(tf::range<std::int32_t>(2000)) ==
        "tf.Tensor([   0    1    2 ... 1997 1998 1999], shape=(2000,), dtype=int32)");
  CHECK(str(tf::zeros<float>({2, 1, 2})) ==
        "tf.Tensor(\n[[[0. 0.]]\n\n [[0. 0.]]], shape=(2, 1, 2), dtype=float32)");
  CHECK(str(tf::Tensor<float, 1>()) == "tf.Tensor(<no value>, shape=(0,), dtype=float32)");
}

TEST_CASE("tensor accessors", "[core][tensor]") {
  auto m = tf::constant<float>({{1, 2, 3}, {4, 5, 6}});
  STATIC_REQUIRE(decltype(m)::rank() == 2);
  STATIC_REQUIRE(decltype(m)::dtype() == tf::DType::float32);
  CHECK(m.shape() == tf::Shape{2, 3});
  CHECK(m.shape().to_string() == "(2, 3)");
  CHECK(m.num_elements() == 6);
  CHECK(m(1, 2) == 6.0f);
  CHECK(m.numpy() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(tf::constant(7).item() == 7);
  CHECK_THROWS_AS(m.item(), tf::invalid_argument);
  CHECK_THROWS_AS(m(2, 0), tf::out_of_range);
  CHECK_THROWS_AS((tf::Tensor<float, 0>().item()), tf::failed_precondition);
}

TEST_CASE("copies share the buffer and the identity", "[core][tensor]") {
  auto a = tf::constant<float>({1, 2});
  auto b = a;
  CHECK(a.data() == b.data());
  CHECK(a.id() == b.id());
  auto c = tf::constant<float>({1, 2});
  CHECK(c.id() != a.id());
}

TEST_CASE("constant checks shapes", "[core][constant]") {
  CHECK_THROWS_WITH((tf::constant<float>({{1, 2}, {3}})), Catch::Contains("ragged"));
  std::vector<float> v{1, 2, 3};
  CHECK_THROWS_AS((tf::constant<float, 2>(v, std::array<std::int64_t, 2>{2, 2})),
                  tf::invalid_argument);
  auto t = tf::constant<float, 2>(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(t(2, 1) == 6.0f);
}

TEST_CASE("zeros, ones, fill, range", "[core][constant]") {
  CHECK(tf::zeros<float>({2, 3}).numpy() == std::vector<float>(6, 0.0f));
  CHECK(tf::ones<std::int64_t>({4}).numpy() == std::vector<std::int64_t>(4, 1));
  CHECK(tf::fill<double>({2}, 2.5).numpy() == std::vector<double>{2.5, 2.5});
  CHECK(tf::range<std::int32_t>(0, 10, 3).numpy() == std::vector<std::int32_t>{0, 3, 6, 9});
  CHECK(tf::range<float>(1, 0, -0.25f).numpy() == std::vector<float>{1, 0.75f, 0.5f, 0.25f});
  CHECK_THROWS_AS(tf::range<std::int32_t>(0, 10, 0), tf::invalid_argument);
  CHECK(tf::zeros_like(tf::constant<float>({{1, 2}})).shape() == tf::Shape{1, 2});
  CHECK_THROWS_AS((tf::zeros<float>({-1, 2})), tf::invalid_argument);
}

namespace {
// Destroyed after the main thread's thread_locals, including the buffer cache: its buffer must
// then be freed directly (a use-after-free at exit under AddressSanitizer otherwise).
tf::Tensor<float, 1> static_lifetime_tensor;
}  // namespace

TEST_CASE("a tensor with static lifetime outlives the per-thread buffer cache", "[core][tensor]") {
  {
    auto scratch = tf::fill<float>({1000}, 1.0f);  // its block goes to this thread's cache
  }
  static_lifetime_tensor = tf::fill<float>({1000}, 2.0f);
  { auto other = tf::fill<float>({1000}, 3.0f); }  // the cache's list for this size is in use
  CHECK(static_lifetime_tensor.values()[999] == 2.0f);
}
