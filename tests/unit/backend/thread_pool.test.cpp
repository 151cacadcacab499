#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>
#if defined(__linux__)
#include <sched.h>
#endif

#include <catch2/catch.hpp>

#include <tapeflow/backend/cpu/thread_pool.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_backend_thread_pool {

namespace cpu = tapeflow::backend::cpu;

TEST_CASE("parallel_for covers the range exactly once", "[backend][thread_pool]") {
  cpu::ThreadPool pool(3);
  for (std::int64_t n : {0, 1, 2, 7, 1000, 12345}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
    pool.parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        hits[static_cast<std::size_t>(i)].fetch_add(1);
      }
    });
    for (auto& h : hits) {
      REQUIRE(h.load() == 1);
    }
  }
}

TEST_CASE("parallel_for respects the minimum chunk and nests inline", "[backend][thread_pool]") {
  cpu::ThreadPool pool(4);
  std::atomic<int> chunks{0};
  pool.parallel_for(100, 60, [&](std::int64_t, std::int64_t) { chunks.fetch_add(1); });
  CHECK(chunks.load() == 2);  // ceil(100 / 60) chunks at most
  std::atomic<long> sum{0};
  pool.parallel_for(4, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      pool.parallel_for(10, 1, [&](std::int64_t ib, std::int64_t ie) { sum.fetch_add(ie - ib); });
    }
  });
  CHECK(sum.load() == 40);
}

// Each chunk waits until both have started, so it passes only when the worker really ran one:
// straight after the last job (the worker still spinning) and after a pause long enough for
// it to block on the condition variable.
TEST_CASE("a worker takes its chunk whether it was spinning or asleep", "[backend][thread_pool]") {
  using namespace std::chrono_literals;
  cpu::ThreadPool pool(2);
  for (auto gap : {0us, 3000us}) {
    for (int round = 0; round < 10; ++round) {
      std::this_thread::sleep_for(gap);
      std::atomic<int> started{0};
      std::atomic<int> saw_both{0};
      pool.parallel_for(2, 1, [&](std::int64_t, std::int64_t) {
        started.fetch_add(1);
        auto const deadline = std::chrono::steady_clock::now() + 10s;
        while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
        if (started.load() == 2) {
          saw_both.fetch_add(1);
        }
      });
      INFO("pause before the job: " << gap.count() << " us, round " << round);
      REQUIRE(saw_both.load() == 2);
    }
  }
}

#if defined(__linux__)
// Workers inherit the creating thread's affinity: all three threads share one CPU, where every
// spinner waits for a thread that can only run when the spinner gives the CPU up.
TEST_CASE("a pool confined to one CPU still runs every chunk", "[backend][thread_pool]") {
  cpu_set_t before;
  REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &before)) {
      CPU_SET(c, &one);
      break;
    }
  }
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  long total = 0;
  {
    cpu::ThreadPool pool(3);
    for (int round = 0; round < 2000; ++round) {
      std::atomic<long> sum{0};
      pool.parallel_for(300, 1, [&](std::int64_t b, std::int64_t e) { sum.fetch_add(e - b); });
      total += sum.load();
    }
  }
  REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);
  CHECK(total == 2000L * 300);
}
#endif

TEST_CASE("exceptions reach the caller - the pool stays usable", "[backend][thread_pool]") {
  cpu::ThreadPool pool(2);
  CHECK_THROWS_AS(pool.parallel_for(100, 1,
                                    [](std::int64_t b, std::int64_t) {
                                      if (b > 0) {
                                        throw std::runtime_error("chunk failed");
                                      }
                                    }),
                  std::runtime_error);
  std::atomic<int> ok{0};
  pool.parallel_for(10, 1,
                    [&](std::int64_t b, std::int64_t e) { ok.fetch_add(static_cast<int>(e - b)); });
  CHECK(ok.load() == 10);
}

TEST_CASE("several caller threads share the global pool", "[backend][thread_pool]") {
  std::atomic<long> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int r = 0; r < 50; ++r) {
        cpu::parallel_for(1000, 10,
                          [&](std::int64_t b, std::int64_t e) { total.fetch_add(e - b); });
      }
    });
  }
  for (auto& c : callers) {
    c.join();
  }
  CHECK(total.load() == 4 * 50 * 1000);
  CHECK(cpu::ThreadPool::global().num_threads() >= 1);
}

}  // namespace test_backend_thread_pool
