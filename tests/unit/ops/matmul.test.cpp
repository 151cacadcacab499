#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/ops/linalg/matmul.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_matmul {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

TEST_CASE("matmul values, transposes and batches", "[ops][matmul]") {
  auto a = tf::constant<float>({{1, 2}, {3, 4}});
  CHECK(tf::matmul(a, a).numpy() == std::vector<float>{7, 10, 15, 22});
  CHECK(tf::matmul(a, a, {.transpose_a = true}).numpy() == std::vector<float>{10, 14, 14, 20});
  CHECK(tf::matmul(a, a, {.transpose_b = true}).numpy() == std::vector<float>{5, 11, 11, 25});
  auto i = tf::constant<std::int64_t>({{1, 2, 3}});
  CHECK(tf::matmul(i, i, {.transpose_a = true}).shape() == tf::Shape{3, 3});
  auto batch = tf::reshape(tf::range<double>(0, 12, 1), {2, 2, 3});
  auto w = tf::ones<double>({3, 1});
  auto out = tf::matmul(batch, w);
  CHECK(out.shape() == tf::Shape{2, 2, 1});
  CHECK(out.numpy() == std::vector<double>{3, 12, 21, 30});
  CHECK_THROWS_WITH(tf::matmul(a, tf::ones<float>({3, 2})),
                    Catch::Contains("MatMul") && Catch::Contains("(3, 2)"));
}

TEST_CASE("matmul agrees with a naive product on odd sizes", "[ops][matmul]") {
  auto a = test_data<2>({37, 29}, 1);
  auto b = test_data<2>({29, 41}, 2);
  auto c = tf::matmul(a, b);
  for (std::int64_t r = 0; r < 37; r += 5) {
    for (std::int64_t col = 0; col < 41; col += 7) {
      double s = 0;
      for (std::int64_t k = 0; k < 29; ++k) {
        s += a(r, k) * b(k, col);
      }
      CHECK(c(r, col) == Approx(s));
    }
  }
}

TEST_CASE("matmul gradients", "[ops][matmul]") {
  check_gradients([](const auto& x, const auto& y) { return tf::matmul(x, y); },
                  test_data<2>({3, 4}, 1), test_data<2>({4, 2}, 2));
  check_gradients(
      [](const auto& x, const auto& y) { return tf::matmul(x, y, {.transpose_a = true}); },
      test_data<2>({4, 3}, 1), test_data<2>({4, 2}, 2));
  check_gradients(
      [](const auto& x, const auto& y) { return tf::matmul(x, y, {.transpose_b = true}); },
      test_data<2>({3, 4}, 1), test_data<2>({2, 4}, 2));
  check_gradients(
      [](const auto& x, const auto& y) {
        return tf::matmul(x, y, {true, true});
      },
      test_data<2>({4, 3}, 1), test_data<2>({2, 4}, 2));
  check_gradients([](const auto& x, const auto& y) { return tf::matmul(x, y); },
                  test_data<3>({2, 3, 4}, 1), test_data<2>({4, 2}, 2));
  check_gradients([](const auto& x, const auto& y) { return tf::matmul(x, y); },
                  test_data<3>({2, 3, 4}, 1), test_data<3>({1, 4, 2}, 2));
}

}  // namespace test_ops_matmul
