// Datasets as ranges: std::ranges algorithms, std views and range-v3 views over datasets; range-v3
// closures composing with tf::data's; iterator copies sharing one epoch; threads stopping when a
// view's iterator dies; default-constructed datasets.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <optional>
#include <ranges>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <range/v3/algorithm/count_if.hpp>
#include <range/v3/numeric/accumulate.hpp>
#include <range/v3/range/conversion.hpp>
#include <range/v3/view/chunk.hpp>
#include <range/v3/view/enumerate.hpp>
#include <range/v3/view/take.hpp>
#include <range/v3/view/transform.hpp>
#include <range/v3/view/zip.hpp>

#include <tapeflow/data.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_data_ranges {

namespace tf = tapeflow;
using I64 = std::vector<std::int64_t>;
using T64 = tf::Tensor<std::int64_t, 0>;
using namespace std::chrono_literals;

namespace {
auto item = [](const auto& t) { return static_cast<std::int64_t>(t.item()); };

template <class R>
I64 items(R&& r) {
  I64 out;
  for (auto&& e : r) {
    out.push_back(item(e));
  }
  return out;
}
}  // namespace

// The code block of docs/how-to/tf_data_ranges.md, verbatim (CTest: docs/tf_data_ranges_snippet).
// clang-format off
// [readme]
std::vector<std::int64_t> guide_example() {
  std::vector<std::int64_t> seen;
  // A dataset is a C++20 view and a range-v3 view; one iteration is one epoch.
  auto ds = tf::data::range(10) | tf::data::batch(4) | tf::data::prefetch(2);
  for (std::int64_t n : ds | std::views::transform([](const auto& b) { return b.dim(0); })) {
    seen.push_back(n);                                                    // 4, 4, 2
  }
  for (auto&& [i, batch] : ds | ranges::views::enumerate) {
    seen.push_back(static_cast<std::int64_t>(i) * 100 + batch(0));        // 0, 104, 208
  }
  auto first_two = tf::data::batch(4) | ranges::views::take(2);           // closures compose
  seen.push_back(std::ranges::distance(tf::data::range(100) | first_two)); // 2

  // Any input range becomes a dataset; numbers become scalar tensors.
  std::vector<float> xs{0.5f, 1.5f, 2.5f};
  for (auto&& batch : tf::data::from_range(xs) | tf::data::batch(3)) {    // one Tensor<float, 1>
    seen.push_back(batch.dim(0));                                         // 3
  }
  auto squares = tf::data::from_range(std::views::iota(0, 4) |
                                      std::views::transform([](int i) { return i * i; }));
  seen.push_back(squares.cardinality());                                  // 4
  return seen;
}
// [readme]
// clang-format on

TEST_CASE("the guide's example runs", "[data][ranges]") {
  CHECK(guide_example() == I64{4, 4, 2, 0, 104, 208, 2, 3, 4});
}

TEST_CASE("std::ranges algorithms run one epoch of a dataset", "[data][ranges]") {
  auto ds = tf::data::range(10) | tf::data::map([](const T64& x) { return T64(x.item() * 2); });
  CHECK(std::ranges::count_if(ds, [](const T64& x) { return x.item() % 4 == 0; }) == 5);
  CHECK(std::ranges::distance(ds) == 10);
  CHECK(std::ranges::any_of(ds, [](const T64& x) { return x.item() == 18; }));
  CHECK(std::ranges::none_of(ds, [](const T64& x) { return x.item() == 3; }));
  I64 copied;
  std::ranges::transform(ds, std::back_inserter(copied), item);
  CHECK(copied == I64{0, 2, 4, 6, 8, 10, 12, 14, 16, 18});
  // find_if returns an iterator into a live epoch: it can still be read and advanced
  auto it = std::ranges::find_if(ds, [](const T64& x) { return x.item() > 9; });
  REQUIRE(it != std::default_sentinel);
  CHECK(it->item() == 10);
  ++it;
  CHECK((*it).item() == 12);
  CHECK(std::ranges::equal(ds, tf::data::range(0, 20, 2), {}, item, item));
  // a default-constructed iterator is the end, as std::istream_iterator's is
  std::vector<T64> v(ds.begin(), decltype(ds.begin()){});
  CHECK(v.size() == 10);
}

TEST_CASE("std views adapt datasets, rvalues included", "[data][ranges]") {
  auto ds = tf::data::range(6) | tf::data::batch(2);
  I64 firsts;
  for (std::int64_t x : ds | std::views::transform([](const auto& b) { return b(0); })) {
    firsts.push_back(x);
  }
  CHECK(firsts == I64{0, 2, 4});
  CHECK(items(tf::data::range(100) | std::views::take(3)) == I64{0, 1, 2});
  CHECK(items(tf::data::range(10) | std::views::filter([](const T64& x) { return x.item() & 1; }) |
              std::views::drop(2)) == I64{5, 7, 9});
  // std views of a dataset are re-iterable, like the dataset (each begin() is an epoch)
  auto odd = tf::data::range(5) | std::views::filter([](const T64& x) { return x.item() & 1; });
  CHECK(items(odd) == I64{1, 3});
  CHECK(items(odd) == I64{1, 3});
}

TEST_CASE("range-v3 views and algorithms work on datasets", "[data][ranges]") {
  auto ds = tf::data::range(3, 8);
  std::vector<std::pair<std::size_t, std::int64_t>> seen;
  for (auto&& [i, x] : ds | ranges::views::enumerate) {
    seen.emplace_back(i, x.item());
  }
  CHECK(seen ==
        std::vector<std::pair<std::size_t, std::int64_t>>{{0, 3}, {1, 4}, {2, 5}, {3, 6}, {4, 7}});
  CHECK(items(ds | ranges::views::take(3)) == I64{3, 4, 5});
  CHECK(items(tf::data::range(100) | tf::data::prefetch(2) | ranges::views::take(2)) == I64{0, 1});
  CHECK(ranges::accumulate(ds | ranges::views::transform(item), std::int64_t{0}) == 25);
  CHECK(ranges::count_if(ds, [](const T64& x) { return x.item() > 5; }) == 2);
  CHECK((ds | ranges::views::transform(item) | ranges::to<std::vector>()) == I64{3, 4, 5, 6, 7});
  // zip two datasets (TensorFlow's zip is tf::data::zip; this is range-v3's)
  I64 sums;
  for (auto&& [a, b] : ranges::views::zip(tf::data::range(3), tf::data::range(10, 20))) {
    sums.push_back(a.item() + b.item());
  }
  CHECK(sums == I64{10, 12, 14});
  // chunk of an input range: runs of consecutive elements
  std::vector<I64> chunks;
  for (auto&& c : tf::data::range(5) | ranges::views::chunk(2)) {
    chunks.push_back(items(c));
  }
  CHECK(chunks == std::vector<I64>{{0, 1}, {2, 3}, {4}});
}

TEST_CASE("tf::data closures are range-v3 closures: they compose with range-v3's",
          "[data][ranges]") {
  auto plus1 = tf::data::map([](const T64& x) { return T64(x.item() + 1); });
  auto first_two_batches = plus1 | tf::data::batch(2) | ranges::views::take(2);
  std::vector<I64> got;
  for (auto&& b : tf::data::range(10) | first_two_batches) {
    got.emplace_back(b.values().begin(), b.values().end());
  }
  CHECK(got == std::vector<I64>{{1, 2}, {3, 4}});
  // both spellings are one call
  auto piped = tf::data::range(4) | tf::data::take(2);
  auto called = tf::data::take(tf::data::range(4), 2);
  static_assert(std::same_as<decltype(piped), decltype(called)>);
  CHECK(items(piped) == items(called));
  // a user adaptor through make_closure
  auto twice = tf::data::make_closure([](auto ds) { return ds | tf::data::repeat(2); });
  CHECK(items(tf::data::range(2) | twice) == I64{0, 1, 0, 1});
}

TEST_CASE("copies of a range iterator share the epoch", "[data][ranges]") {
  auto ds = tf::data::range(5) | tf::data::map([](T64 x) { return x; }, {.num_parallel_calls = 2});
  auto a = ds.begin();
  auto b = a;  // same epoch, like a copy of an std::istream_iterator
  CHECK(a == b);
  CHECK(a->item() == 0);
  ++b;
  CHECK(a->item() == 1);  // advancing one advances both
  b++;
  CHECK((*a).item() == 2);
  auto c = ds.begin();  // a new epoch
  CHECK(c != a);
  CHECK(c->item() == 0);
  auto moved = std::move(a);
  CHECK(moved == b);
  CHECK(moved->item() == 2);
  while (b != std::default_sentinel) {
    ++b;
  }
  CHECK(moved == std::default_sentinel);
  CHECK(moved == decltype(ds.begin()){});
  CHECK(c != decltype(ds.begin()){});
}

TEST_CASE("threads stop when a view's iterator over the dataset dies", "[data][ranges][parallel]") {
  std::atomic<int> started{0};
  auto work = [&started](const T64& x) {
    ++started;
    std::this_thread::sleep_for(1ms);
    return x;
  };
  auto endless = tf::data::range(1'000'000) | tf::data::repeat() |
                 tf::data::map(work, {.num_parallel_calls = 2}) |
                 tf::data::prefetch(tf::data::autotune);
  const auto check_stopped = [&started] {
    const int after = started.load();
    std::this_thread::sleep_for(20ms);
    CHECK(started.load() == after);  // nothing runs any more
    CHECK(after < 200);              // bounded by the buffers, not the endless input
  };
  SECTION("range-v3 enumerate, break") {
    int n = 0;
    for (auto&& [i, x] : endless | ranges::views::enumerate) {
      CHECK(static_cast<std::int64_t>(i) == x.item());
      if (++n == 3) {
        break;
      }
    }
    check_stopped();
  }
  SECTION("std::views::take runs to its end") {
    CHECK(items(endless | std::views::take(3)) == I64{0, 1, 2});
    check_stopped();
  }
  SECTION("range-v3 take over a composed closure") {
    CHECK(items(endless | (tf::data::take(1000) | ranges::views::take(4))) == I64{0, 1, 2, 3});
    check_stopped();
  }
  SECTION("copied and moved iterators") {
    {
      auto it = endless.begin();
      auto copy = it;
      auto moved = std::move(it);
      {
        auto other = copy;
        ++other;
      }
      CHECK(copy->item() == 1);
      std::this_thread::sleep_for(5ms);
      CHECK(started.load() > 1);  // still running: copies are alive
    }
    check_stopped();  // the last copy died: workers joined
  }
  SECTION("an iterator kept by std::ranges::find_if") {
    {
      auto it = std::ranges::find_if(endless, [](const T64& x) { return x.item() == 2; });
      CHECK(it->item() == 2);
    }
    check_stopped();
  }
}

TEST_CASE("default-constructed datasets are placeholders: empty, or a typed error",
          "[data][ranges]") {
  auto add1 = [k = 1](const T64& x) { return T64(x.item() + k); };
  // sources are empty
  CHECK(items(tf::data::RangeDataset{}).empty());
  CHECK(tf::data::RangeDataset{}.cardinality() == 0);
  CHECK(std::ranges::distance(tf::data::TFRecordDataset{}) == 0);
  CHECK(std::ranges::distance(tf::data::ListFilesDataset{}) == 0);
  CHECK(tf::data::AnyDataset<T64>{}.cardinality() == 0);
  CHECK(items(tf::data::AnyDataset<T64>{}).empty());
  using Cached = decltype(tf::data::range(3) | tf::data::shuffle(2) | tf::data::cache());
  CHECK(items(Cached{}).empty());
  // a stage holding a user function refuses to start
  using Mapped = decltype(tf::data::range(3) | tf::data::map(add1));
  CHECK_THROWS_AS(Mapped{}.begin(), tf::failed_precondition);
  CHECK_THROWS_WITH(Mapped{}.iter(), Catch::Matchers::Contains("tf::data::map") &&
                                         Catch::Matchers::Contains("default-constructed"));
  // ... until a pipeline is assigned to it
  Mapped m;
  m = tf::data::range(3) | tf::data::map(add1);
  CHECK(items(m) == I64{1, 2, 3});
  using Filtered = decltype(tf::data::range(3) |
                            tf::data::filter([k = 0](const T64& x) { return x.item() > k; }));
  CHECK_THROWS_AS(Filtered{}.begin(), tf::failed_precondition);
}

}  // namespace test_data_ranges
