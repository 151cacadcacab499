#include <sstream>

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
                    Catch::Contains("int32") && Catch::Contains("float32"));
  CHECK_THROWS_AS((any.as<float, 1>()), tf::invalid_argument);
  std::ostringstream os;
  os << tf::AnyTensor(tf::constant<std::int64_t>({1, 2}));
  CHECK(os.str() == "tf.Tensor([1 2], shape=(2,), dtype=int64)");
}

}  // namespace test_core_any_tensor
