// tf::data::from_range: any input range becomes a dataset. Element conversion, ownership,
// re-iteration of forward ranges, the single-pass rules (a second epoch and checkpointing are
// failed_precondition, as for from_generator), cardinality, iterator state, threaded stages.
#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <ranges>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <range/v3/view/enumerate.hpp>
#include <range/v3/view/take.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_data_from_range {

namespace tf = tapeflow;
using I64 = std::vector<std::int64_t>;

namespace {
template <class D>
std::vector<double> values(const D& ds) {
  std::vector<double> out;
  for (auto&& e : ds) {
    out.push_back(static_cast<double>(e.item()));
  }
  return out;
}
}  // namespace

TEST_CASE("from_range of a vector: scalar tensors, re-iterable, sized", "[data][from_range]") {
  std::vector<float> xs{1.5f, 2.5f, 3.5f};
  auto ds = tf::data::from_range(xs);
  static_assert(std::same_as<tf::data::element_t<decltype(ds)>, tf::Tensor<float, 0>>);
  CHECK(ds.cardinality() == 3);
  CHECK(values(ds) == std::vector<double>{1.5, 2.5, 3.5});
  CHECK(values(ds) == std::vector<double>{1.5, 2.5, 3.5});  // a second epoch
  // an lvalue is referred to, as std::views::all does: later changes are seen
  xs[0] = 9.5f;
  CHECK(values(ds).front() == 9.5);
  // an rvalue is moved in and shared by the dataset's copies
  auto owned = tf::data::from_range(std::vector<std::int64_t>{4, 5, 6});
  auto copy = owned;
  CHECK(values(copy) == std::vector<double>{4, 5, 6});
  CHECK(values(owned | tf::data::batch(2) | tf::data::unbatch()) == std::vector<double>{4, 5, 6});
  // vectors of tensors pass through
  std::vector<tf::Tensor<float, 1>> rows{tf::constant<float>({1, 2}), tf::constant<float>({3, 4})};
  auto batched = tf::data::from_range(rows) | tf::data::batch(2);
  for (auto&& b : batched) {
    CHECK(b.shape().to_string() == "(2, 2)");
    CHECK(b(1, 0) == 3.0f);
  }
}

TEST_CASE("from_range of std::views::iota | transform, of a list, of a map", "[data][from_range]") {
  auto squares = tf::data::from_range(std::views::iota(0, 5) |
                                      std::views::transform([](int i) { return i * i; }));
  static_assert(std::same_as<tf::data::element_t<decltype(squares)>, tf::Tensor<std::int32_t, 0>>);
  CHECK(squares.cardinality() == 5);
  CHECK(values(squares) == std::vector<double>{0, 1, 4, 9, 16});
  CHECK(values(squares | tf::data::map([](const tf::Tensor<std::int32_t, 0>& x) {
                 return tf::Tensor<std::int32_t, 0>(x.item() + 1);
               })) == std::vector<double>{1, 2, 5, 10, 17});
  // unbounded iota: infinite, and take() ends it
  auto naturals = tf::data::from_range(std::views::iota(std::int64_t{0}));
  CHECK(naturals.cardinality() == tf::data::infinite_cardinality);
  CHECK(values(naturals | tf::data::take(3)) == std::vector<double>{0, 1, 2});
  // unknown when the range cannot tell
  auto evens = tf::data::from_range(std::views::iota(0, 10) |
                                    std::views::filter([](int i) { return i % 2 == 0; }));
  CHECK(evens.cardinality() == tf::data::unknown_cardinality);
  CHECK(values(evens) == std::vector<double>{0, 2, 4, 6, 8});
  CHECK(values(evens) == std::vector<double>{0, 2, 4, 6, 8});  // filter_view is not
                                                               // const-iterable: epochs copy it
  // a list of strings
  std::list<std::string> words{"a", "bb", "ccc"};
  std::vector<std::string> got;
  for (auto&& w : tf::data::from_range(words)) {
    got.push_back(w.item());
  }
  CHECK(got == std::vector<std::string>{"a", "bb", "ccc"});
  // pairs (a map's elements) and tuples become pairs and tuples of scalar tensors
  std::map<std::string, double> m{{"x", 1.0}, {"y", 2.0}};
  std::vector<std::string> keys;
  double sum = 0;
  for (auto&& [k, v] : tf::data::from_range(m)) {
    keys.push_back(k.item());
    sum += v.item();
  }
  CHECK(keys == std::vector<std::string>{"x", "y"});
  CHECK(sum == 3.0);
  std::vector<std::tuple<tf::Tensor<float, 1>, std::int64_t>> examples{
      {tf::constant<float>({1, 2}), 0}, {tf::constant<float>({3, 4}), 1}};
  for (auto&& [x, y] : tf::data::from_range(examples) | tf::data::batch(2)) {
    CHECK(x.shape().to_string() == "(2, 2)");
    CHECK(I64(y.values().begin(), y.values().end()) == I64{0, 1});
  }
}

TEST_CASE("from_range of Features", "[data][from_range]") {
  std::vector<tf::data::Features> rows;
  for (std::int64_t i = 0; i < 3; ++i) {
    rows.push_back(tf::data::Features{{"id", tf::Tensor<std::int64_t, 0>(i)}});
  }
  auto ds = tf::data::from_range(rows) | tf::data::batch(3);
  int n = 0;
  for (auto&& f : ds) {
    auto id = f.get<std::int64_t, 1>("id");
    CHECK(I64(id.values().begin(), id.values().end()) == I64{0, 1, 2});
    ++n;
  }
  CHECK(n == 1);
}

TEST_CASE("a single-pass range is read once and a second epoch is failed_precondition",
          "[data][from_range]") {
  std::istringstream in("4 5 6");
  auto ds = tf::data::from_range(std::views::istream<std::int64_t>(in));
  CHECK(ds.cardinality() == tf::data::unknown_cardinality);
  auto copy = ds;  // copies share the one pass
  CHECK(values(ds) == std::vector<double>{4, 5, 6});
  CHECK_THROWS_AS(values(ds), tf::failed_precondition);
  CHECK_THROWS_WITH(copy.begin(), Catch::Matchers::Contains("single-pass") &&
                                      Catch::Matchers::Contains("cache()"));
  // also through stages that start new epochs of their input
  std::istringstream in2("1 2");
  auto twice = tf::data::from_range(std::views::istream<std::int64_t>(in2)) | tf::data::repeat(2);
  auto it = twice.iter();
  CHECK(it.get_next().item() == 1);
  CHECK(it.get_next().item() == 2);
  CHECK_THROWS_AS(it.next(), tf::failed_precondition);
  // the remedy: cache() replays the first complete epoch
  std::istringstream in3("7 8");
  auto cached = tf::data::from_range(std::views::istream<std::int64_t>(in3)) | tf::data::cache();
  CHECK(values(cached) == std::vector<double>{7, 8});
  CHECK(values(cached) == std::vector<double>{7, 8});
}

TEST_CASE("from_range iterator state: forward ranges resume, single-pass ranges refuse",
          "[data][from_range][state]") {
  std::vector<std::int64_t> xs{10, 11, 12, 13, 14};
  for (std::int64_t k = 0; k <= 5; ++k) {
    auto ds = tf::data::from_range(xs) | tf::data::prefetch(2);
    auto it = ds.iter();
    for (std::int64_t i = 0; i < k; ++i) {
      CHECK(it.get_next().item() == xs[static_cast<std::size_t>(i)]);
    }
    auto resumed = ds.iter();
    resumed.restore_state(it.save_state());
    std::vector<double> rest;
    while (auto e = resumed.next()) {
      rest.push_back(static_cast<double>(e->item()));
    }
    CHECK(rest == std::vector<double>(xs.begin() + k, xs.end()));
  }
  // a position past the end of the range is data_loss, not a crash
  auto list = tf::data::from_range(std::list<std::int64_t>{1, 2});
  auto long_one = tf::data::from_range(std::vector<std::int64_t>{1, 2, 3, 4});
  auto li = long_one.iter();
  (void)li.next();
  (void)li.next();
  (void)li.next();
  auto short_it = list.iter();
  CHECK_THROWS_AS(short_it.restore_state(li.save_state()), tf::data_loss);
  // single-pass: failed_precondition naming from_range, as from_generator
  std::istringstream in("1 2 3");
  auto once = tf::data::from_range(std::views::istream<std::int64_t>(in));
  auto oi = once.iter();
  (void)oi.next();
  CHECK_THROWS_AS(oi.save_state(), tf::failed_precondition);
  CHECK_THROWS_WITH(oi.save_state(), Catch::Matchers::Contains("from_range"));
  CHECK_THROWS_AS(oi.restore_state(tf::data::range(3).iter().save_state()),
                  tf::failed_precondition);
}

TEST_CASE("from_range feeds threaded stages and round-trips through range-v3 views",
          "[data][from_range]") {
  std::vector<std::int64_t> xs(1000);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<std::int64_t>(i);
  }
  auto ds = tf::data::from_range(xs) |
            tf::data::map(
                [](const tf::Tensor<std::int64_t, 0>& x) {
                  return tf::Tensor<std::int64_t, 0>(x.item() * 2);
                },
                {.num_parallel_calls = 3}) |
            tf::data::prefetch(tf::data::autotune);
  double sum = 0;
  for (auto&& x : ds) {
    sum += static_cast<double>(x.item());
  }
  CHECK(sum == 999.0 * 1000.0);
  // dataset -> range-v3 view -> dataset: a view over a dataset is an input range only, so
  // from_range reads it once
  auto first3 = tf::data::from_range(tf::data::range(10) | ranges::views::take(3));
  CHECK(values(first3) == std::vector<double>{0, 1, 2});
  CHECK_THROWS_AS(values(first3), tf::failed_precondition);
  // a dataset itself is returned as it is, re-iterable
  auto same = tf::data::from_range(tf::data::range(2));
  CHECK(values(same) == std::vector<double>{0, 1});
  CHECK(values(same) == std::vector<double>{0, 1});
  // pairs from range-v3's enumerate of a vector: the std::size_t index becomes int64
  std::vector<float> fs{0.5f, 1.5f};
  static_assert(std::same_as<
                tf::data::element_t<decltype(tf::data::from_range(fs | ranges::views::enumerate))>,
                std::pair<tf::Tensor<std::int64_t, 0>, tf::Tensor<float, 0>>>);
  std::vector<std::pair<std::int64_t, double>> seen;
  for (auto&& [i, f] : tf::data::from_range(fs | ranges::views::enumerate)) {
    seen.emplace_back(static_cast<std::int64_t>(i.item()), f.item());
  }
  CHECK(seen == std::vector<std::pair<std::int64_t, double>>{{0, 0.5}, {1, 1.5}});
}

}  // namespace test_data_from_range
