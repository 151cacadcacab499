// tf::AttrValue: each TensorFlow attribute kind keeps its type and shows as
// ConcreteFunction::to_string prints it.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/attr_value.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_core_attr_value {

namespace tf = tapeflow;

TEST_CASE("each kind keeps its type and prints as TensorFlow shows it") {
  const tf::AttrValue s = "SAME", i = 2, f = 0.5f, b = true, type = tf::DType::int32;
  const tf::AttrValue shape = tf::Shape{-1, 3};
  const tf::AttrValue ints = std::vector<std::int64_t>{1, 2, 2, 1};
  const tf::AttrValue types = std::vector<tf::DType>{tf::DType::float32, tf::DType::int32};
  const tf::AttrValue fn = tf::FunctionName{"branch_1"};
  CHECK(std::holds_alternative<std::string>(s.value()));
  CHECK(std::holds_alternative<std::int64_t>(i.value()));  // an int is TensorFlow's int64 `i`
  CHECK(std::holds_alternative<float>(f.value()));
  CHECK(std::holds_alternative<bool>(b.value()));  // not an int
  CHECK(std::holds_alternative<tf::DType>(type.value()));
  CHECK(s.to_string() == "SAME");
  CHECK(i.to_string() == "2");
  CHECK(f.to_string() == "0.5");
  CHECK(b.to_string() == "true");
  CHECK(type.to_string() == "int32");
  CHECK(shape.to_string() == tf::Shape{-1, 3}.to_string());
  CHECK(ints.to_string() == "[1, 2, 2, 1]");
  CHECK(types.to_string() == "[float32, int32]");
  CHECK(fn.to_string() == "branch_1");
}

TEST_CASE("equality compares kind and value") {
  CHECK(tf::AttrValue(2) == tf::AttrValue(std::int64_t{2}));
  CHECK_FALSE(tf::AttrValue(1) == tf::AttrValue(true));
  CHECK_FALSE(tf::AttrValue("2") == tf::AttrValue(2));
  CHECK(tf::AttrValue(tf::FunctionName{"f"}) == tf::AttrValue(tf::FunctionName{"f"}));
}

}  // namespace test_core_attr_value
