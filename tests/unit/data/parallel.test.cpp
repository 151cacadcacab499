// Threads in pipelines: order, exceptions at the right element, prompt stop, autotune.
// Also run under the tsan preset (build/h5tsan).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_data_parallel {

namespace tf = tapeflow;
using I64 = std::vector<std::int64_t>;
using namespace std::chrono_literals;

namespace {
template <class D>
I64 ints(const D& ds) {
  I64 out;
  for (auto&& e : ds) {
    out.push_back(e.item());
  }
  return out;
}
tf::Tensor<std::int64_t, 0> slow_square(const tf::Tensor<std::int64_t, 0>& x) {
  // uneven work so that later elements often finish first
  std::this_thread::sleep_for(std::chrono::microseconds((x.item() * 37) % 5 * 100));
  return {x.item() * x.item()};
}
}  // namespace

TEST_CASE("parallel map keeps input order", "[data][parallel]") {
  I64 expected;
  for (std::int64_t i = 0; i < 200; ++i) {
    expected.push_back(i * i);
  }
  for (int n : {1, 2, 4, tf::data::autotune}) {
    auto ds = tf::data::range(200) | tf::data::map(slow_square, {.num_parallel_calls = n});
    CHECK(ints(ds) == expected);
    CHECK(ints(ds) == expected);  // a second epoch starts new workers
  }
  // deterministic = false: the same elements, any order
  auto nd = tf::data::range(200) |
            tf::data::map(slow_square, {.num_parallel_calls = 4, .deterministic = false});
  const auto got = ints(nd);
  CHECK(std::multiset<std::int64_t>(got.begin(), got.end()) ==
        std::multiset<std::int64_t>(expected.begin(), expected.end()));
  CHECK_THROWS_AS(tf::data::range(3) | tf::data::map(slow_square, {.num_parallel_calls = 0}),
                  tf::invalid_argument);
}

TEST_CASE("prefetch delivers everything in order, also with autotune", "[data][parallel]") {
  for (int n : {1, 3, 0, tf::data::autotune}) {
    auto ds = tf::data::range(100) | tf::data::map(slow_square) | tf::data::prefetch(n);
    I64 expected;
    for (std::int64_t i = 0; i < 100; ++i) {
      expected.push_back(i * i);
    }
    CHECK(ints(ds) == expected);
  }
}

TEST_CASE("exceptions reach the consumer at their element", "[data][parallel]") {
  auto throws_at_5 = [](const tf::Tensor<std::int64_t, 0>& x) {
    if (x.item() == 5) {
      throw std::runtime_error("bad element 5");
    }
    return x;
  };
  for (std::optional<int> par : {std::optional<int>{}, std::optional<int>{1}, std::optional<int>{3},
                                 std::optional<int>{tf::data::autotune}}) {
    auto ds = tf::data::range(10) | tf::data::map(throws_at_5, {.num_parallel_calls = par}) |
              tf::data::prefetch(2);
    auto it = ds.iter();
    for (std::int64_t i = 0; i < 5; ++i) {
      CHECK(it.get_next().item() == i);
    }
    // the message names the stage and the element; the user's exception is nested inside
    try {
      (void)it.next();
      FAIL("no exception at element 5");
    } catch (const tf::invalid_argument& e) {
      CHECK(std::string(e.what()) == "tf::data::map: element 5: bad element 5");
      CHECK_THROWS_WITH(std::rethrow_if_nested(e), "bad element 5");
    }
    // iteration may go on after an error, like TensorFlow's iterators
    CHECK(it.get_next().item() == 6);
  }
  // a tapeflow error keeps its type; the position counts from the iterator's start, also when
  // elements come out as they finish
  auto not_found_at = [](std::int64_t bad) {
    return [bad](const tf::Tensor<std::int64_t, 0>& x) {
      if (x.item() == bad) {
        throw tf::not_found("no file for " + std::to_string(bad));
      }
      return x;
    };
  };
  for (bool deterministic : {true, false}) {
    auto nf =
        tf::data::range(100, 200) |
        tf::data::map(not_found_at(137), {.num_parallel_calls = 3, .deterministic = deterministic});
    int errors = 0;
    for (auto it = nf.iter();;) {
      try {
        if (!it.next()) {
          break;
        }
      } catch (const tf::not_found& e) {
        CHECK(std::string(e.what()) == "tf::data::map: element 37: no file for 137");
        ++errors;
      }
    }
    CHECK(errors == 1);
  }
  // something that is not a std::exception passes unchanged
  auto odd = tf::data::range(3) | tf::data::map(
                                      [](const tf::Tensor<std::int64_t, 0>& x) {
                                        if (x.item() == 1) {
                                          throw 42;
                                        }
                                        return x;
                                      },
                                      {.num_parallel_calls = 2});
  auto oi = odd.iter();
  CHECK(oi.get_next().item() == 0);
  CHECK_THROWS_AS(oi.next(), int);
  // filter
  auto f = tf::data::range(10) | tf::data::filter([](auto x) {
             if (x.item() == 3) {
               throw tf::invalid_argument("filter failed at 3");
             }
             return true;
           }) |
           tf::data::prefetch(tf::data::autotune);
  auto fi = f.iter();
  CHECK(fi.get_next().item() == 0);
  CHECK(fi.get_next().item() == 1);
  CHECK(fi.get_next().item() == 2);
  CHECK_THROWS_AS(fi.next(), tf::invalid_argument);
  // generator, through a parallel map and a prefetch
  auto g = tf::data::from_generator([] {
             return [i = std::int64_t{0}]() mutable -> std::optional<tf::Tensor<std::int64_t, 0>> {
               if (i == 4) {
                 ++i;
                 throw std::out_of_range("generator broke at 4");
               }
               if (i < 8) {
                 return tf::Tensor<std::int64_t, 0>(i++);
               }
               return std::nullopt;
             };
           }) |
           tf::data::map(slow_square, {.num_parallel_calls = 2}) | tf::data::prefetch(4);
  I64 seen;
  bool thrown = false;
  auto gi = g.iter();
  for (;;) {
    try {
      auto e = gi.next();
      if (!e) {
        break;
      }
      seen.push_back(e->item());
    } catch (const std::out_of_range& e) {
      CHECK(std::string(e.what()) == "generator broke at 4");
      CHECK(seen.size() == 4);
      thrown = true;
    }
  }
  CHECK(thrown);
  CHECK(seen == I64{0, 1, 4, 9, 25, 36, 49});
}

TEST_CASE("breaking out mid-epoch stops the workers promptly", "[data][parallel]") {
  std::atomic<int> started{0};
  auto work = [&started](const tf::Tensor<std::int64_t, 0>& x) {
    ++started;
    std::this_thread::sleep_for(2ms);
    return x;
  };
  {
    auto ds = tf::data::range(1'000'000) | tf::data::repeat() |
              tf::data::map(work, {.num_parallel_calls = 4}) | tf::data::shuffle(8) |
              tf::data::batch(4) | tf::data::prefetch(tf::data::autotune);
    int n = 0;
    for (auto&& b : ds) {
      (void)b;
      if (++n == 3) {
        break;  // the range-for's iterator dies here and joins all threads
      }
    }
  }
  // The iterator's destructor has joined every thread: nothing runs any more.
  const int after_break = started.load();
  std::this_thread::sleep_for(20ms);
  CHECK(started.load() == after_break);
  // work done is bounded by the buffers, not the (endless) input
  CHECK(after_break < 200);
  // destroying an explicit iterator that never ran, or ran once, is fine too
  auto ds =
      tf::data::range(10) | tf::data::map(work, {.num_parallel_calls = 2}) | tf::data::prefetch(2);
  { auto it = ds.iter(); }
  {
    auto it = ds.iter();
    (void)it.next();
  }
}

TEST_CASE("prefetch overlaps producer and consumer", "[data][parallel]") {
  // Counted, not timed: while the consumer holds an element, a prefetching producer makes the
  // next one; without prefetch the producer has made exactly the elements consumed so far.
  // (The time it saves is bench/data_pipeline.bench.cpp's business.)
  constexpr int n = 20;
  std::atomic<int> produced{0};
  auto produce = [&produced](const tf::Tensor<std::int64_t, 0>& x) {
    ++produced;
    return x;
  };
  auto base = tf::data::range(n) | tf::data::map(produce);
  int consumed = 0;
  for (auto&& e : base) {
    (void)e;
    ++consumed;
    CHECK(produced.load() == consumed);
  }
  produced = 0;
  consumed = 0;
  int ran_ahead = 0;
  for (auto&& e : base | tf::data::prefetch(2)) {
    (void)e;
    ++consumed;
    // Wait (boundedly) for the background thread to make the next element while this one is
    // held: it cannot happen without overlap, and it must happen with it.
    for (int spins = 0; produced.load() <= consumed && consumed < n && spins < 10'000; ++spins) {
      std::this_thread::sleep_for(1ms);
    }
    ran_ahead += produced.load() > consumed ? 1 : 0;
  }
  CHECK(consumed == n);
  CHECK(ran_ahead == n - 1);  // every element but the last found its successor already made
}

TEST_CASE("autotune reports its choices and the input-bound fraction", "[data][parallel]") {
  // a slow producer (1 ms) and a fast consumer: input-bound, parallelism goes up
  auto slow = [](const tf::Tensor<std::int64_t, 0>& x) {
    std::this_thread::sleep_for(1ms);
    return x;
  };
  auto ds = tf::data::range(300) | tf::data::map(slow, {.num_parallel_calls = tf::data::autotune}) |
            tf::data::prefetch(tf::data::autotune);
  auto it = ds.iter();
  while (it.next()) {
  }
  const auto stats = it.stats();
  REQUIRE(stats.size() == 2);
  CHECK(stats[0].stage == "prefetch");
  CHECK(stats[1].stage == "map");
  CHECK(stats[0].autotuned);
  CHECK(stats[1].autotuned);
  CHECK(stats[1].elements == 300);
  CHECK(stats[1].parallelism >= 2);  // sleeping workers: more of them help even on 2 cores
  CHECK(stats[1].producer_rate > 0);
  CHECK(stats[0].input_bound_fraction > 0.3);  // the consumer mostly waited
  CHECK(stats[0].buffer_size >= 1);
  CHECK(stats[0].memory_budget == (std::int64_t{256} << 20));

  // a slow consumer: not input-bound
  auto fast = tf::data::range(100) | tf::data::prefetch(tf::data::autotune);
  auto fit = fast.iter();
  while (fit.next()) {
    std::this_thread::sleep_for(1ms);
  }
  const auto fs = fit.stats();
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].input_bound_fraction < 0.2);
  CHECK(fs[0].consumer_rate > 0);
  CHECK(fs[0].consumer_rate < 1500);
}

TEST_CASE("autotune stays within the memory budget", "[data][parallel]") {
  // 1 MB elements, 3 MB budget, jittery producer: the buffer may grow but not past 3
  auto big = [](const tf::Tensor<std::int64_t, 0>& x) {
    if (x.item() % 10 == 0) {
      std::this_thread::sleep_for(5ms);
    }
    return tf::fill<std::uint8_t, 1>({1 << 20}, 1);
  };
  auto ds = tf::data::range(200) | tf::data::map(big) |
            tf::data::prefetch(tf::data::autotune, {.memory_budget = 3 << 20});
  auto it = ds.iter();
  int max_buffer = 0;
  while (it.next()) {
    std::this_thread::sleep_for(200us);
    max_buffer = std::max(max_buffer, it.stats()[0].buffer_size);
  }
  CHECK(max_buffer <= 3);
  CHECK(max_buffer >= 1);
}

}  // namespace test_data_parallel
