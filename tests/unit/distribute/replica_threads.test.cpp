// The threads kept for a strategy's replicas: each step runs every replica once, replica r on
// the same thread step after step (so its thread-local caches last), a nested call is refused
// so the caller can use fresh threads, and the strategy's own steps run on those threads.
#include <atomic>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/config/config.hpp>
#include <tapeflow/distribute/detail/replica_threads.hpp>
#include <tapeflow/distribute/mirrored_strategy.hpp>
#include <tapeflow/distribute/replica_context.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_distribute_replica_threads {

namespace tf = tapeflow;
namespace dist = tf::distribute;

TEST_CASE("kept replica threads run each replica once per step on the same thread",
          "[distribute]") {
  constexpr int n = 3;
  constexpr int steps = 200;
  dist::detail::ReplicaThreads threads;
  std::vector<std::thread::id> first(n);
  std::vector<std::atomic<int>> runs(n);
  std::atomic<int> moved{0};
  std::atomic<int> wrong_step{0};
  std::atomic<int> step_now{-1};
  for (int step = 0; step < steps; ++step) {
    step_now = step;
    const std::function<void(int)> task = [&](int r) {
      if (step_now.load() != step) {
        ++wrong_step;  // a thread saw an old or a later step
      }
      if (step == 0) {
        first[std::size_t(r)] = std::this_thread::get_id();
      } else if (first[std::size_t(r)] != std::this_thread::get_id()) {
        ++moved;
      }
      ++runs[std::size_t(r)];
    };
    REQUIRE(threads.run(n, task));
  }
  for (const auto& count : runs) {
    CHECK(count.load() == steps);
  }
  CHECK(moved.load() == 0);
  CHECK(wrong_step.load() == 0);
  CHECK(first[0] == std::this_thread::get_id());  // replica 0 runs on the caller
  CHECK(std::set<std::thread::id>(first.begin(), first.end()).size() == n);
}

TEST_CASE("a call from inside a step is refused and the kept threads stay usable", "[distribute]") {
  dist::detail::ReplicaThreads threads;
  std::atomic<int> refused{0};
  std::atomic<int> ran{0};
  const std::function<void(int)> inner = [&](int) { ++ran; };
  const std::function<void(int)> outer = [&](int r) {
    if (r == 1 && !threads.run(2, inner)) {
      ++refused;
    }
  };
  REQUIRE(threads.run(2, outer));
  CHECK(refused.load() == 1);
  CHECK(ran.load() == 0);
  REQUIRE(threads.run(2, inner));
  CHECK(ran.load() == 2);
}

TEST_CASE("MirroredStrategy runs each replica on the same thread every step", "[distribute]") {
  tf::config::set_logical_device_configuration(
      tf::config::list_physical_devices("CPU").at(0),
      std::vector<tf::config::LogicalDeviceConfiguration>(2));
  dist::MirroredStrategy strategy;
  REQUIRE(strategy.num_replicas_in_sync() == 2);
  std::vector<std::thread::id> seen;
  for (int step = 0; step < 5; ++step) {
    std::vector<std::thread::id> ids(2);
    strategy.run([&] {
      ids[std::size_t(dist::get_replica_context()->replica_id_in_sync_group())] =
          std::this_thread::get_id();
    });
    if (step == 0) {
      seen = ids;
    }
    CHECK(ids == seen);
  }
  CHECK(seen[0] == std::this_thread::get_id());
  CHECK(seen[1] != seen[0]);
}

}  // namespace test_distribute_replica_threads
