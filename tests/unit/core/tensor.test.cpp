#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_core_tensor {

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
  // [snippet:accessors]
  auto m = tf::constant<float>({{1, 2, 3}, {4, 5, 6}});
  STATIC_REQUIRE(decltype(m)::rank() == 2);
  STATIC_REQUIRE(decltype(m)::dtype() == tf::DType::float32);
  CHECK(m.shape() == tf::Shape{2, 3});
  CHECK(m.shape().to_string() == "(2, 3)");
  CHECK(m.num_elements() == 6);
  CHECK(m(1, 2) == 6.0f);
  CHECK(m.numpy() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(tf::constant(7).item() == 7);
  // [snippet:accessors]
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

TEST_CASE("tensors from host data and back", "[core][constant]") {
  // constant copies a vector or span; the shape's rank is deduced from the braces
  std::vector<std::uint8_t> pixels{1, 2, 3, 4, 5, 6};
  auto img = tf::constant(pixels, {1, 2, 3});
  STATIC_REQUIRE(std::is_same_v<decltype(img), tf::Tensor<std::uint8_t, 3>>);
  CHECK(img(0, 1, 2) == 6);
  auto from_span = tf::constant(std::span<const std::uint8_t>(pixels), {3, 2});
  CHECK(from_span(2, 0) == 5);
  CHECK(img.to_vector() == pixels);
  pixels[0] = 9;  // a copy: the tensor does not follow the vector
  CHECK(img(0, 0, 0) == 1);

  // from_vector takes the vector (moving strings), checks the element count
  auto m = tf::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  STATIC_REQUIRE(std::is_same_v<decltype(m), tf::Tensor<float, 2>>);
  CHECK(m.shape() == tf::Shape{2, 3});
  CHECK(m(1, 0) == 4.0f);
  CHECK(m.to_vector() == std::vector<float>{1, 2, 3, 4, 5, 6});
  auto v = tf::from_vector(std::vector<std::int64_t>{7, 8, 9});
  CHECK(v.shape() == tf::Shape{3});
  auto s = tf::from_vector(std::vector<std::string>{"ab", "c"}, {2, 1});
  CHECK(s(1, 0) == "c");
  CHECK_THROWS_WITH(
      (tf::from_vector(std::vector<float>{1, 2, 3}, {2, 2})),
      Catch::Contains("3 values") && Catch::Contains("(2, 2)") && Catch::Contains("4 elements"));
  CHECK_THROWS_AS((tf::from_vector(std::vector<float>{}, {-1})), tf::invalid_argument);
  auto empty = tf::from_vector(std::vector<float>{}, {0, 5});
  CHECK(empty.num_elements() == 0);
  CHECK(empty.to_vector().empty());
}

TEST_CASE("mutable_data fills a fresh tensor and copies on write when shared", "[core][tensor]") {
  auto t = tf::Tensor<float, 2>::uninitialized({2, 2});
  const auto id0 = t.id();
  float* p = t.mutable_data();
  for (int i = 0; i < 4; ++i) {
    p[i] = float(i);
  }
  CHECK(p == t.data());  // the only handle: written in place
  CHECK(t.id() != id0);  // but it is a new value for tapes and caches
  CHECK(t.to_vector() == std::vector<float>{0, 1, 2, 3});

  auto shared = t;  // another handle to the same buffer
  auto span = t.mutable_values();
  CHECK(span.size() == 4);
  span[0] = 10;
  CHECK(t(0, 0) == 10.0f);
  CHECK(shared(0, 0) == 0.0f);  // the other handle never changes
  CHECK(shared.data() != t.data());
  CHECK(shared.id() != t.id());

  // a variable's value shares the variable's buffer: editing it leaves the variable alone
  tf::Variable<float, 1> var(tf::constant<float>({1, 2}));
  auto value = var.value();
  value.mutable_data()[1] = 5;
  CHECK(value.to_vector() == std::vector<float>{1, 5});
  CHECK(var.value().to_vector() == std::vector<float>{1, 2});

  auto strings = tf::constant({"a", "b"});
  auto strings_copy = strings;
  strings.mutable_data()[0] = "z";
  CHECK(strings(0) == "z");
  CHECK(strings_copy(0) == "a");
  CHECK_THROWS_AS((tf::Tensor<float, 1>().mutable_data()), tf::failed_precondition);
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

}  // namespace test_core_tensor
