#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_data_sources {

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {
template <class D>
std::vector<std::int64_t> ints(const D& ds) {
  std::vector<std::int64_t> out;
  for (auto&& e : ds) {
    out.push_back(static_cast<std::int64_t>(e.item()));
  }
  return out;
}
}  // namespace

TEST_CASE("from_tensor_slices slices dim 0 of one or several tensors", "[data][source]") {
  // [snippet:from_tensor_slices]
  auto x = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}});
  auto y = tf::constant<std::int32_t>({7, 8, 9});
  auto ds = tf::data::from_tensor_slices(x, y);
  STATIC_REQUIRE(tf::data::dataset<decltype(ds)>);
  STATIC_REQUIRE(std::ranges::input_range<decltype(ds)>);
  STATIC_REQUIRE(std::is_same_v<tf::data::element_t<decltype(ds)>,
                                std::tuple<tf::Tensor<float, 1>, tf::Tensor<std::int32_t, 0>>>);
  CHECK(ds.cardinality() == 3);
  int i = 0;
  for (auto&& [a, b] : ds) {
    CHECK(a.shape().to_string() == "(2,)");
    CHECK(a(0) == static_cast<float>(2 * i + 1));
    CHECK(a(1) == static_cast<float>(2 * i + 2));
    CHECK(b.item() == 7 + i);
    ++i;
  }
  CHECK(i == 3);
  // [snippet:from_tensor_slices]
  // re-iterable: a second epoch sees the same elements
  int j = 0;
  for (auto&& e : ds) {
    (void)e;
    ++j;
  }
  CHECK(j == 3);
  // [snippet:iterator]
  // explicit iterator with next()
  auto it = ds.iter();
  auto [a0, b0] = *it.next();
  CHECK(b0.item() == 7);
  auto [a1, b1] = it.get_next();
  CHECK(b1.item() == 8);
  CHECK(it.next().has_value());
  CHECK_FALSE(it.next().has_value());
  CHECK_THROWS_AS(it.get_next(), tf::out_of_range);
  // [snippet:iterator]
  // a single tensor gives tensor elements, scalars from a vector
  CHECK(ints(tf::data::from_tensor_slices(tf::constant<std::int64_t>({4, 5}))) ==
        std::vector<std::int64_t>{4, 5});
}

TEST_CASE("from_tensor_slices rejects mismatched first dims", "[data][source]") {
  auto x = tf::constant<float>({1, 2, 3});
  auto y = tf::constant<float>({1, 2});
  CHECK_THROWS_AS(tf::data::from_tensor_slices(x, y), tf::invalid_argument);
  CHECK_THROWS_WITH(tf::data::from_tensor_slices(x, y), Catch::Contains("same dim 0"));
}

TEST_CASE("from_tensors is one element and range counts", "[data][source]") {
  auto ds = tf::data::from_tensors(tf::constant<float>({1, 2, 3}));
  CHECK(ds.cardinality() == 1);
  int n = 0;
  for (auto&& t : ds) {
    CHECK(t.num_elements() == 3);
    ++n;
  }
  CHECK(n == 1);
  CHECK(ints(tf::data::range(4)) == std::vector<std::int64_t>{0, 1, 2, 3});
  CHECK(ints(tf::data::range(2, 9, 3)) == std::vector<std::int64_t>{2, 5, 8});
  CHECK(ints(tf::data::range(5, 1, -2)) == std::vector<std::int64_t>{5, 3});
  CHECK(tf::data::range(2, 9, 3).cardinality() == 3);
  CHECK(tf::data::range(5, 1, -2).cardinality() == 2);
  CHECK(tf::data::range(0).cardinality() == 0);
  CHECK_THROWS_AS(tf::data::range(0, 5, 0), tf::invalid_argument);
}

TEST_CASE("from_generator: callables, ranges, new generator per epoch", "[data][source]") {
  int epochs = 0;
  auto ds = tf::data::from_generator([&epochs] {
    ++epochs;
    return [i = 0]() mutable -> std::optional<tf::Tensor<std::int64_t, 0>> {
      if (i < 3) {
        return tf::Tensor<std::int64_t, 0>(i++);
      }
      return std::nullopt;
    };
  });
  CHECK(ds.cardinality() == tf::data::unknown_cardinality);
  CHECK(ints(ds) == std::vector<std::int64_t>{0, 1, 2});
  CHECK(ints(ds) == std::vector<std::int64_t>{0, 1, 2});
  CHECK(epochs == 2);
  auto from_vec = tf::data::from_generator(
      [] {
        return std::vector<tf::Tensor<std::int64_t, 0>>{tf::Tensor<std::int64_t, 0>(5),
                                                        tf::Tensor<std::int64_t, 0>(6)};
      },
      {.cardinality = 2});
  CHECK(ints(from_vec) == std::vector<std::int64_t>{5, 6});
  CHECK(from_vec.cardinality() == 2);
}

TEST_CASE("zip stops at the shortest and concatenate chains", "[data][source]") {
  auto z = tf::data::zip(tf::data::range(3), tf::data::range(10, 20));
  CHECK(z.cardinality() == 3);
  std::vector<std::int64_t> sums;
  for (auto&& [a, b] : z) {
    sums.push_back(a.item() + b.item());
  }
  CHECK(sums == std::vector<std::int64_t>{10, 12, 14});
  auto c = tf::data::range(2) | tf::data::concatenate(tf::data::range(5, 7));
  CHECK(ints(c) == std::vector<std::int64_t>{0, 1, 5, 6});
  CHECK(c.cardinality() == 4);
  CHECK(tf::data::concatenate(tf::data::range(1), tf::data::range(1) | tf::data::repeat())
            .cardinality() == tf::data::infinite_cardinality);
  CHECK(tf::data::zip(tf::data::range(3), tf::data::range(1) | tf::data::repeat()).cardinality() ==
        3);
}

TEST_CASE("list_files globs, shuffles reproducibly, reports no match", "[data][source]") {
  const fs::path dir = fs::current_path() / "list_files_dir";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int i = 0; i < 20; ++i) {
    std::ofstream(dir / ("f" + std::to_string(100 + i) + ".txt")) << i;
  }
  std::ofstream(dir / "other.bin") << "x";
  auto sorted = tf::data::list_files((dir / "*.txt").string(), {.shuffle = false});
  CHECK(sorted.cardinality() == 20);
  std::vector<std::string> names;
  for (auto&& f : sorted) {
    names.push_back(fs::path(f.item()).filename().string());
  }
  CHECK(names.front() == "f100.txt");
  CHECK(names.back() == "f119.txt");
  auto shuffled = tf::data::list_files((dir / "*.txt").string(), {.seed = 7});
  auto again = tf::data::list_files((dir / "*.txt").string(), {.seed = 7});
  std::vector<std::string> e1, e2, e3;
  for (auto&& f : shuffled) {
    e1.push_back(f.item());
  }
  for (auto&& f : shuffled) {  // next epoch: a different order
    e2.push_back(f.item());
  }
  for (auto&& f : again) {  // same seed, first epoch: same order
    e3.push_back(f.item());
  }
  CHECK(e1 == e3);
  CHECK(e1 != e2);
  CHECK(std::set<std::string>(e1.begin(), e1.end()).size() == 20);
  CHECK_THROWS_AS(tf::data::list_files((dir / "*.nothing").string()), tf::not_found);
}

}  // namespace test_data_sources
