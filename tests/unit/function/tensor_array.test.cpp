#include <array>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/function/tensor_array.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_function_tensor_array {

namespace {
namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

template <class X>
std::string printed(const X& x) {
  std::ostringstream out;
  out << x;
  return out.str();
}
}  // namespace

TEST_CASE("TensorArray writes and reads scalars (the chapter's example)",
          "[function][tensor_array]") {
  tf::TensorArray<float, 0> arr(3);
  arr = arr.write(0, tf::constant(0.0f));
  arr = arr.write(1, tf::constant(1.0f));
  arr = arr.write(2, tf::constant(2.0f));
  CHECK(arr.size() == 3);
  CHECK(printed(arr.read(0)) == "tf.Tensor(0.0, shape=(), dtype=float32)");
  CHECK(printed(arr.read(1)) == "tf.Tensor(1.0, shape=(), dtype=float32)");
  CHECK(printed(arr.read(2)) == "tf.Tensor(2.0, shape=(), dtype=float32)");
  CHECK(arr.stack().numpy() == std::vector<float>{0, 1, 2});
  CHECK(arr.element_shape() == tf::Shape{});
  CHECK(tf::TensorArray<float, 0>::dtype() == tf::DType::float32);
}

TEST_CASE("TensorArray writes are functional: the old array is unchanged",
          "[function][tensor_array]") {
  tf::TensorArray<int32_t, 1> a(2);
  auto b = a.write(0, tf::constant<int32_t>({1, 2}));
  auto c = b.write(1, tf::constant<int32_t>({3, 4}));
  // Branch from b after c was written from it: b and c must keep their own views.
  auto d = b.write(1, tf::constant<int32_t>({5, 6}));
  auto e = c.write(0, tf::constant<int32_t>({7, 8}));

  CHECK_FALSE(a.element_shape().has_value());
  CHECK_THROWS_AS(a.read(0), tf::failed_precondition);
  CHECK(b.read(0).numpy() == std::vector<int32_t>{1, 2});
  CHECK(b.read(1).numpy() == std::vector<int32_t>{0, 0});  // shape known from element 0
  CHECK(c.read(1).numpy() == std::vector<int32_t>{3, 4});
  CHECK(d.read(1).numpy() == std::vector<int32_t>{5, 6});
  CHECK(d.read(0).numpy() == std::vector<int32_t>{1, 2});
  CHECK(e.stack().numpy() == std::vector<int32_t>{7, 8, 3, 4});
  CHECK(c.stack().numpy() == std::vector<int32_t>{1, 2, 3, 4});
  CHECK(d.stack().numpy() == std::vector<int32_t>{1, 2, 5, 6});

  // Overwriting one slot again and again in the loop idiom keeps every intermediate intact
  // for whoever still holds it.
  tf::TensorArray<double, 0> acc(1);
  std::vector<tf::TensorArray<double, 0>> kept;
  for (int i = 0; i < 5; ++i) {
    acc = acc.write(0, static_cast<double>(i));
    if (i % 2 == 0) {
      kept.push_back(acc);
    }
  }
  CHECK(acc.read(0).item() == 4.0);
  REQUIRE(kept.size() == 3);
  CHECK(kept[0].read(0).item() == 0.0);
  CHECK(kept[1].read(0).item() == 2.0);
  CHECK(kept[2].read(0).item() == 4.0);

  // Without such holders, overwritten values are released rather than kept as history.
  auto first = tf::constant<double>(-1.0);
  tf::TensorArray<double, 0> loop(1);
  loop = loop.write(0, first);
  CHECK_FALSE(tf::detail::tensor_access::buffer(first)->unique());
  for (int i = 0; i < 3; ++i) {
    loop = loop.write(0, static_cast<double>(i));
  }
  CHECK(tf::detail::tensor_access::buffer(first)->unique());
}

TEST_CASE("TensorArray write keeps the written tensor and accepts variables",
          "[function][tensor_array]") {
  auto x = tf::constant<float>({1, 2, 3});
  tf::Variable<float, 1> v(tf::constant<float>({4, 5, 6}));
  tf::TensorArray<float, 1> arr(2);
  arr = arr.write(0, x).write(1, v);
  CHECK(arr.read(0).id() == x.id());
  v.assign(tf::constant<float>({0, 0, 0}));  // the array holds the value read at write time
  CHECK(arr.read(1).numpy() == std::vector<float>{4, 5, 6});
}

TEST_CASE("TensorArray with dynamic_size grows on writes past the end",
          "[function][tensor_array]") {
  tf::TensorArray<float, 0> arr(0, {.dynamic_size = true});
  CHECK(arr.size() == 0);
  CHECK(arr.dynamic_size());
  for (int i = 0; i < 4; ++i) {
    arr = arr.write(i, static_cast<float>(i * i));
  }
  CHECK(arr.size() == 4);
  CHECK(arr.stack().numpy() == std::vector<float>{0, 1, 4, 9});

  // A gap is filled with zeros of the known element shape.
  auto gap = arr.write(6, 36.0f);
  CHECK(gap.size() == 7);
  CHECK(arr.size() == 4);
  CHECK(gap.read(5).item() == 0.0f);
  CHECK(gap.stack().numpy() == std::vector<float>{0, 1, 4, 9, 0, 0, 36});
}

TEST_CASE("TensorArray reports bad indices, shapes and unwritten elements",
          "[function][tensor_array]") {
  tf::TensorArray<float, 1> arr(2);
  auto x = tf::constant<float>({1, 2, 3});
  CHECK_THROWS_AS(arr.write(2, x), tf::out_of_range);
  CHECK_THROWS_WITH(arr.write(2, x), Catch::Contains("TensorArray") && Catch::Contains("index 2") &&
                                         Catch::Contains("size 2"));
  CHECK_THROWS_AS(arr.write(-1, x), tf::invalid_argument);
  CHECK_THROWS_AS(arr.read(2), tf::out_of_range);
  CHECK_THROWS_AS(arr.read(-1), tf::out_of_range);
  CHECK_THROWS_WITH(arr.read(5), Catch::Contains("TensorArray") && Catch::Contains("index 5"));

  // Unwritten elements of unknown shape cannot be read or stacked.
  CHECK_THROWS_AS(arr.read(0), tf::failed_precondition);
  CHECK_THROWS_WITH(arr.read(0), Catch::Contains("TensorArray"));
  CHECK_THROWS_AS(arr.stack(), tf::failed_precondition);

  auto one = arr.write(0, x);
  CHECK(one.element_shape() == tf::Shape{3});
  CHECK_THROWS_AS(one.write(1, tf::constant<float>({1, 2})), tf::invalid_argument);
  CHECK_THROWS_WITH(one.write(1, tf::constant<float>({1, 2})), Catch::Contains("TensorArray") &&
                                                                   Catch::Contains("(2,)") &&
                                                                   Catch::Contains("(3,)"));

  tf::TensorArray<float, 1> shaped(2, {.element_shape = tf::Shape{2}});
  CHECK_THROWS_AS(shaped.write(0, x), tf::invalid_argument);
  CHECK(shaped.read(1).numpy() == std::vector<float>{0, 0});
  CHECK(shaped.stack().dims() == std::array<std::int64_t, 2>{2, 2});

  CHECK_THROWS_AS((tf::TensorArray<float, 0>(-1)), tf::invalid_argument);
  CHECK_THROWS_WITH((tf::TensorArray<float, 1>(1, {.element_shape = tf::Shape{2, 2}})),
                    Catch::Contains("TensorArray") && Catch::Contains("(2, 2)"));
}

TEST_CASE("TensorArray without infer_shape accepts differently shaped elements",
          "[function][tensor_array]") {
  tf::TensorArray<float, 1> arr(2, {.infer_shape = false});
  arr = arr.write(0, tf::constant<float>({1})).write(1, tf::constant<float>({2, 3}));
  CHECK_FALSE(arr.element_shape().has_value());
  CHECK(arr.concat().numpy() == std::vector<float>{1, 2, 3});
  CHECK_THROWS_AS(arr.stack(), tf::invalid_argument);  // Pack needs equal shapes
}

TEST_CASE("TensorArray stack and unstack round-trip rank-1 elements", "[function][tensor_array]") {
  auto m = tf::constant<float>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}});
  tf::TensorArray<float, 1> empty(4);
  auto arr = empty.unstack(m);
  CHECK(empty.size() == 4);
  CHECK_THROWS_AS(empty.read(0), tf::failed_precondition);
  CHECK(arr.size() == 4);
  CHECK(arr.element_shape() == tf::Shape{3});
  CHECK(arr.read(2).numpy() == std::vector<float>{7, 8, 9});
  auto back = arr.stack();
  CHECK(back.dims() == m.dims());
  CHECK(back.numpy() == m.numpy());

  CHECK(arr.gather({3, 0}).numpy() == std::vector<float>{10, 11, 12, 1, 2, 3});
  CHECK(arr.gather({}).dims() == std::array<std::int64_t, 2>{0, 3});
  CHECK_THROWS_AS(arr.gather({4}), tf::out_of_range);
  CHECK(arr.concat().numpy() == m.numpy());

  auto scattered =
      tf::TensorArray<float, 1>(3).scatter({2, 0}, tf::constant<float>({{1, 1, 1}, {2, 2, 2}}));
  CHECK(scattered.stack().numpy() == std::vector<float>{2, 2, 2, 0, 0, 0, 1, 1, 1});
  CHECK_THROWS_AS((tf::TensorArray<float, 1>(3).scatter({0}, m)), tf::invalid_argument);

  // A static array cannot take more pieces than its size; a dynamic one takes any number.
  CHECK_THROWS_AS((tf::TensorArray<float, 1>(3).unstack(m)), tf::invalid_argument);
  CHECK(tf::TensorArray<float, 1>(0, {.dynamic_size = true}).unstack(m).size() == 4);
  CHECK_THROWS_AS((tf::TensorArray<float, 1>(4, {.element_shape = tf::Shape{2}}).unstack(m)),
                  tf::invalid_argument);

  tf::Variable<float, 2> v(m);
  CHECK(tf::TensorArray<float, 1>(4).unstack(v).read(3).numpy() == std::vector<float>{10, 11, 12});

  // An empty array with a known element shape stacks to an empty tensor.
  tf::TensorArray<float, 1> none(0, {.element_shape = tf::Shape{3}});
  CHECK(none.stack().dims() == std::array<std::int64_t, 2>{0, 3});
  CHECK(none.concat().dims() == std::array<std::int64_t, 1>{0});
}

TEST_CASE("TensorArray gradients flow through write+stack and unstack+read",
          "[function][tensor_array][gradient]") {
  check_gradients(
      [](const auto& a, const auto& b) {
        tf::TensorArray<double, 1> arr(3);
        arr = arr.write(0, a);
        arr = arr.write(2, a * b);  // element 1 stays unwritten: zeros
        return arr.stack();
      },
      test_data<1>({4}, 1), test_data<1>({4}, 2));
  check_gradients(
      [](const auto& x) {
        auto arr = tf::TensorArray<double, 1>(3).unstack(x);
        return arr.read(0) * arr.read(2) + arr.read(1);
      },
      test_data<2>({3, 2}, 3));
  check_gradients(
      [](const auto& x) {
        auto arr = tf::TensorArray<double, 0>(0, {.dynamic_size = true});
        auto parts = tf::TensorArray<double, 0>(2).unstack(x);
        arr = arr.write(0, parts.read(1) * parts.read(1)).write(1, parts.read(0));
        return arr.gather({1, 0});
      },
      test_data<1>({2}, 4));
}

}  // namespace test_function_tensor_array
