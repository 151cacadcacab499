#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <gradient_check.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/array/transpose.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_transpose {

namespace {

namespace tf = tapeflow;
using tapeflow_test::check_gradients;
using tapeflow_test::test_data;

// Reference: out[i0..] = x[j..] with j[perm[i]] = i.
template <class T, std::size_t R>
std::vector<T> naive_transpose(const std::vector<T>& x, const std::array<std::int64_t, R>& dims,
                               const std::array<int, R>& perm) {
  std::array<std::int64_t, R> out_dims{};
  for (std::size_t i = 0; i < R; ++i) {
    out_dims[i] = dims[static_cast<std::size_t>(perm[i])];
  }
  std::vector<T> out(x.size());
  std::array<std::int64_t, R> idx{};
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::array<std::int64_t, R> in_idx{};
    for (std::size_t i = 0; i < R; ++i) {
      in_idx[static_cast<std::size_t>(perm[i])] = idx[i];
    }
    std::int64_t off = 0;
    for (std::size_t a = 0; a < R; ++a) {
      off = off * dims[a] + in_idx[a];
    }
    out[k] = x[static_cast<std::size_t>(off)];
    for (std::size_t i = R; i-- > 0;) {
      if (++idx[i] < out_dims[i]) {
        break;
      }
      idx[i] = 0;
    }
  }
  return out;
}

template <class T, std::size_t R>
tf::Tensor<T, R> iota_tensor(const std::array<std::int64_t, R>& dims) {
  std::vector<T> v(static_cast<std::size_t>(tf::detail::product(dims)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<T>(i);
  }
  return tf::constant<T, R>(v, dims);
}

}  // namespace

TEST_CASE("transpose of a matrix reverses its axes", "[ops][transpose]") {
  auto x = tf::constant<float>({{1, 2, 3}, {4, 5, 6}});
  auto y = tf::transpose(x);
  CHECK(y.dims() == std::array<std::int64_t, 2>{3, 2});
  CHECK(y.numpy() == std::vector<float>{1, 4, 2, 5, 3, 6});
  auto z = tf::transpose(x, {1, 0});
  CHECK(z.numpy() == y.numpy());
  auto same = tf::transpose(x, {0, 1});
  CHECK(same.numpy() == x.numpy());
}

TEST_CASE("transpose handles rank 0, rank 1 and empty tensors", "[ops][transpose]") {
  auto s = tf::transpose(tf::constant(3.0f));
  CHECK(s.item() == 3.0f);
  auto v = tf::transpose(tf::constant<int32_t>({1, 2, 3}));
  CHECK(v.numpy() == std::vector<int32_t>{1, 2, 3});
  auto e = tf::transpose(tf::zeros<float>({0, 3}));
  CHECK(e.dims() == std::array<std::int64_t, 2>{3, 0});
}

TEST_CASE("transpose with every permutation of a rank-4 tensor matches a reference",
          "[ops][transpose]") {
  for (auto dims :
       {std::array<std::int64_t, 4>{2, 3, 4, 5}, std::array<std::int64_t, 4>{1, 3, 1, 5},
        std::array<std::int64_t, 4>{3, 1, 2, 1}, std::array<std::int64_t, 4>{40, 3, 35, 2}}) {
    auto x = iota_tensor<int32_t, 4>(dims);
    std::array<int, 4> perm{0, 1, 2, 3};
    do {
      auto y = tf::transpose(x, perm);
      INFO("dims " << tf::Shape(dims).to_string() << " perm " << perm[0] << perm[1] << perm[2]
                   << perm[3]);
      for (std::size_t i = 0; i < 4; ++i) {
        CHECK(y.dims()[i] == dims[static_cast<std::size_t>(perm[i])]);
      }
      CHECK(y.numpy() == naive_transpose<int32_t, 4>(x.numpy(), dims, perm));
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_CASE("transpose of large matrices uses tiles correctly", "[ops][transpose]") {
  for (auto dims : {std::array<std::int64_t, 2>{67, 131}, std::array<std::int64_t, 2>{512, 300},
                    std::array<std::int64_t, 2>{1, 1000}, std::array<std::int64_t, 2>{33, 32}}) {
    auto x = iota_tensor<double, 2>(dims);
    auto y = tf::transpose(x);
    CHECK(y.numpy() == naive_transpose<double, 2>(x.numpy(), dims, {1, 0}));
    auto back = tf::transpose(y);
    CHECK(back.numpy() == x.numpy());
  }
  // Batched planes: (batch, rows, cols) -> (batch, cols, rows).
  std::array<std::int64_t, 3> dims{7, 45, 70};
  auto x = iota_tensor<float, 3>(dims);
  CHECK(tf::transpose(x, {0, 2, 1}).numpy() ==
        naive_transpose<float, 3>(x.numpy(), dims, {0, 2, 1}));
  CHECK(tf::transpose(x, {2, 1, 0}).numpy() ==
        naive_transpose<float, 3>(x.numpy(), dims, {2, 1, 0}));
}

TEST_CASE("transpose accepts negative perm entries", "[ops][transpose]") {
  std::array<std::int64_t, 3> dims{2, 3, 4};
  auto x = iota_tensor<int64_t, 3>(dims);
  auto y = tf::transpose(x, {-1, 0, -2});
  CHECK(y.dims() == std::array<std::int64_t, 3>{4, 2, 3});
  CHECK(y.numpy() == naive_transpose<int64_t, 3>(x.numpy(), dims, {2, 0, 1}));
}

TEST_CASE("transpose works for string, bool, uint8 and variables", "[ops][transpose]") {
  auto s = tf::constant<std::string>({{"a", "b", "c"}, {"d", "e", "f"}});
  CHECK(tf::transpose(s).numpy() == std::vector<std::string>{"a", "d", "b", "e", "c", "f"});
  auto b = tf::constant<bool>({{true, false}, {false, false}});
  CHECK(tf::transpose(b).numpy() == std::vector<bool>{true, false, false, false});
  auto u = tf::constant<uint8_t>({{1, 2}, {3, 4}, {5, 6}});
  CHECK(tf::transpose(u).numpy() == std::vector<uint8_t>{1, 3, 5, 2, 4, 6});
  tf::Variable<float, 2> v(tf::constant<float>({{1, 2}, {3, 4}}));
  CHECK(tf::transpose(v).numpy() == std::vector<float>{1, 3, 2, 4});
  // A big string transpose exercises the tiled path with non-trivial elements.
  std::vector<std::string> words(40 * 50);
  for (std::size_t i = 0; i < words.size(); ++i) {
    words[i] = "w" + std::to_string(i);
  }
  auto big = tf::constant<std::string, 2>(words, {40, 50});
  CHECK(tf::transpose(big).numpy() == naive_transpose<std::string, 2>(words, {40, 50}, {1, 0}));
}

TEST_CASE("transpose rejects perms that are not permutations", "[ops][transpose]") {
  auto x = tf::zeros<float>({2, 3});
  CHECK_THROWS_AS(tf::transpose(x, {0, 0}), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::transpose(x, {0, 0}),
                    Catch::Contains("Transpose") && Catch::Contains("(0, 0)"));
  CHECK_THROWS_WITH(tf::transpose(x, {0, 2}), Catch::Contains("Transpose"));
  CHECK_THROWS_WITH(tf::transpose(x, {-3, 0}), Catch::Contains("Transpose"));
}

TEST_CASE("transpose gradients match numerical ones", "[ops][transpose][gradient]") {
  check_gradients([](const auto& x) { return tf::transpose(x); }, test_data<2>({3, 4}, 1));
  check_gradients(
      [](const auto& x) {
        return tf::transpose(x, {1, 2, 0});
      },
      test_data<3>({2, 3, 4}, 2));
  check_gradients(
      [](const auto& x) {
        return tf::transpose(x, {0, -1, 1}) * tf::transpose(x, {0, -1, 1});
      },
      test_data<3>({2, 3, 2}, 3));
}

TEST_CASE("transpose has a second-order gradient", "[ops][transpose][gradient]") {
  auto x = tf::constant<double>({{1, 2}, {3, 4}});
  tf::GradientTape outer;
  outer.watch(x);
  tf::Tensor<double, 2> g;
  {
    tf::GradientTape inner;
    inner.watch(x);
    auto y = tf::reduce_sum(tf::transpose(x) * tf::transpose(x) * tf::transpose(x));
    g = *inner.gradient(y, x);  // 3 x^2
  }
  CHECK(g.numpy() == std::vector<double>{3, 12, 27, 48});
  auto gg = outer.gradient(tf::reduce_sum(g), x);  // 6 x
  REQUIRE(gg.has_value());
  CHECK(gg->numpy() == std::vector<double>{6, 12, 18, 24});
}

}  // namespace test_ops_transpose
