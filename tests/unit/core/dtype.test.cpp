#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_core_dtype {

namespace tf = tapeflow;

TEST_CASE("dtypes carry TensorFlow's numbers and names", "[core][dtype]") {
  STATIC_REQUIRE(tf::dtype_v<float> == tf::DType::float32);
  STATIC_REQUIRE(static_cast<int>(tf::DType::float32) == 1);
  STATIC_REQUIRE(static_cast<int>(tf::DType::int64) == 9);
  STATIC_REQUIRE(static_cast<int>(tf::DType::string) == 7);
  STATIC_REQUIRE(static_cast<int>(tf::DType::bool_) == 10);
  CHECK(tf::dtype_name(tf::DType::uint8) == "uint8");
  CHECK(tf::dtype_size(tf::DType::float64) == 8);
  CHECK(tf::visit_dtype(tf::DType::int32, []<class T>() { return sizeof(T); }) == 4);
  CHECK_THROWS_AS(tf::visit_dtype(tf::DType::invalid, []<class T>() { return 0; }),
                  tf::invalid_argument);
  STATIC_REQUIRE(tf::element_type<std::string>);
  STATIC_REQUIRE_FALSE(tf::element_type<char>);
  STATIC_REQUIRE(tf::floating_element<double>);
  STATIC_REQUIRE_FALSE(tf::numeric_element<bool>);
}

TEST_CASE("shapes print and count like TensorFlow's", "[core][shape]") {
  CHECK(tf::Shape{}.to_string() == "()");
  CHECK(tf::Shape{3}.to_string() == "(3,)");
  CHECK(tf::Shape{2, -1}.to_string() == "(2, None)");
  CHECK(tf::Shape{2, 3}.num_elements() == 6);
  CHECK(tf::Shape{2, -1}.num_elements() == -1);
  CHECK_FALSE(tf::Shape{2, -1}.fully_defined());
  tf::Shape s;
  for (int i = 0; i < 8; ++i) {
    s.push_back(1);
  }
  CHECK_THROWS_AS(s.push_back(1), tf::invalid_argument);
}

TEST_CASE("errors derive from tf::error with TensorFlow's codes", "[core][errors]") {
  try {
    throw tf::data_loss("corrupt record at offset 12 in f.tfrecord");
  } catch (const tf::error& e) {
    CHECK(std::string(e.code()) == "DATA_LOSS");
    CHECK(std::string(e.what()).find("offset 12") != std::string::npos);
  }
  CHECK(std::string(tf::invalid_argument("x").code()) == "INVALID_ARGUMENT");
  CHECK(std::string(tf::unimplemented("x").code()) == "UNIMPLEMENTED");
}

}  // namespace test_core_dtype
