#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/constant.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_core_any_tensor {

namespace tf = tapeflow;

TEST_CASE("AnyTensor erases and recovers types", "[core][any_tensor]") {
  auto t = tf::constant<float>({{1, 2}, {3, 4}});
  tf::AnyTensor any = t;
  CHECK(any.dtype() == tf::DType::float32);
  CHECK(any.rank() == 2);
  CHECK(any.shape() == tf::Shape{2, 2});
  CHECK(any.holds<float, 2>());
  CHECK_FALSE(any.holds<double, 2>());
  auto back = any.as<float, 2>();
  CHECK(back.data() == t.data());
  CHECK(back.id() == t.id());
  CHECK_THROWS_WITH((any.as<std::int32_t, 2>()),
                    "AnyTensor::as<int32, 2>(): holds a float32 tensor of shape (2, 2)");
  CHECK_THROWS_AS((any.as<float, 1>()), tf::invalid_argument);
  std::ostringstream os;
  os << tf::AnyTensor(tf::constant<std::int64_t>({1, 2}));
  CHECK(os.str() == "tf.Tensor([1 2], shape=(2,), dtype=int64)");
}

TEST_CASE("unshared_raw_data writes in place only where no other handle sees it",
          "[core][any_tensor]") {
  tf::AnyTensor sole(tf::constant<float>({1, 2, 3}));
  const void* before = sole.raw_data();
  const auto id = sole.id();
  auto* p = static_cast<float*>(sole.unshared_raw_data());
  CHECK(p == before);  // nobody else holds the buffer: no copy
  CHECK(sole.id() != id);
  p[0] = 10;

  const auto kept = tf::constant<float>({1, 2, 3});
  tf::AnyTensor shared(kept);
  auto* q = static_cast<float*>(shared.unshared_raw_data());
  CHECK(q != static_cast<const void*>(kept.data()));
  q[0] = 10;
  CHECK(kept.numpy() == std::vector<float>{1, 2, 3});
  CHECK(shared.as<float, 1>().numpy() == std::vector<float>{10, 2, 3});

  const auto words = tf::constant<std::string>({"a", "bc"});
  tf::AnyTensor text(words);
  static_cast<std::string*>(text.unshared_raw_data())[1] = "z";
  CHECK(words.numpy() == std::vector<std::string>{"a", "bc"});
  CHECK(text.as<std::string, 1>().numpy() == std::vector<std::string>{"a", "z"});
  CHECK(tf::AnyTensor().unshared_raw_data() == nullptr);
}

TEST_CASE("uninitialized and with_shape make tensors of any rank without an op",
          "[core][any_tensor]") {
  const auto fresh = tf::AnyTensor::uninitialized(tf::DType::int32, tf::Shape{2, 3});
  CHECK(fresh.dtype() == tf::DType::int32);
  CHECK(fresh.shape() == tf::Shape{2, 3});
  CHECK(fresh.has_value());
  CHECK(fresh.holds<std::int32_t, 2>());
  const auto scalar = tf::AnyTensor::uninitialized(tf::DType::float64, tf::Shape{});
  CHECK(scalar.holds<double, 0>());
  CHECK(tf::AnyTensor::uninitialized(tf::DType::float32, tf::Shape{0, 4}).num_elements() == 0);
  const auto words = tf::AnyTensor::uninitialized(tf::DType::string, tf::Shape{2, 1, 1});
  CHECK(words.as<std::string, 3>().values()[1].empty());  // strings start empty
  CHECK_THROWS_WITH(tf::AnyTensor::uninitialized(tf::DType::float32, tf::Shape{2, -1}),
                    "AnyTensor::uninitialized: negative dimension in shape (2, None)");

  const tf::AnyTensor m(tf::constant<float>({{1, 2, 3}, {4, 5, 6}}));
  const auto v = m.with_shape(tf::Shape{3, 1, 2});
  CHECK(v.shape() == tf::Shape{3, 1, 2});
  CHECK(v.raw_data() == m.raw_data());  // the same elements, no copy
  CHECK(v.id() != m.id());              // a new tensor to a tape
  CHECK(m.shape() == tf::Shape{2, 3});
  CHECK_THROWS_WITH(m.with_shape(tf::Shape{4}),
                    "AnyTensor::with_shape: a float32 tensor of shape (2, 3) cannot be viewed as "
                    "(4,)");
  CHECK_THROWS_WITH(
      tf::AnyTensor::symbolic(tf::DType::float32, tf::Shape{2}).with_shape(tf::Shape{2, 1}),
      Catch::Contains("without a value cannot be viewed"));
}

TEST_CASE("reset drops the value and leaves other handles theirs", "[core][any_tensor]") {
  const auto kept = tf::constant<float>({1, 2, 3});
  tf::AnyTensor any(kept);
  any.reset();
  CHECK_FALSE(any.has_value());
  CHECK_FALSE(any.engaged());
  CHECK(any.dtype() == tf::DType::invalid);
  CHECK(any.rank() == 0);
  CHECK(kept.numpy() == std::vector<float>{1, 2, 3});
  tf::AnyTensor sole(tf::constant<float>({4}));
  sole.reset();  // the last handle: the buffer goes back (LeakSanitizer sees a leak otherwise)
  sole.reset();  // and again, on nothing
  CHECK_FALSE(sole.has_value());
}

}  // namespace test_core_any_tensor
