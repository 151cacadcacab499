// The in-process Collective: reductions equal a single replica's arithmetic in rank order,
// broadcast and all_gather hand out the right replica's tensors, and every failure (a replica
// that never comes, one that aborts, mismatched calls or tensors) is a typed error for all
// replicas within the timeout, never a hang. Also run under TSan.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/distribute/in_process_collective.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_distribute_in_process_collective {

namespace tf = tapeflow;
namespace dist = tf::distribute;
using namespace std::chrono_literals;

namespace {
// Runs `body(collective)` on one thread per replica; returns what each threw (empty: nothing).
std::vector<std::string> on_replicas(const dist::InProcessGroup& group,
                                     const std::function<void(dist::InProcessCollective&)>& body) {
  std::vector<std::string> errors(static_cast<std::size_t>(group.num_replicas()));
  std::vector<std::thread> threads;
  for (int r = 0; r < group.num_replicas(); ++r) {
    threads.emplace_back([&, r] {
      auto c = group.replica(r);
      try {
        body(c);
      } catch (const tf::error& e) {
        errors[static_cast<std::size_t>(r)] = std::string(e.code()) + ": " + e.what();
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  return errors;
}

std::vector<float> floats(const tf::AnyTensor& t) {
  auto v = t.as<float, 1>().values();
  return {v.begin(), v.end()};
}
}  // namespace

TEST_CASE("all_reduce sums and averages several tensors over the replicas", "[distribute]") {
  static_assert(dist::Collective<dist::InProcessCollective>);
  dist::InProcessGroup group(4);
  std::vector<std::vector<float>> sums(4), means(4);
  std::vector<std::int64_t> counts(4);
  auto errors = on_replicas(group, [&](dist::InProcessCollective& c) {
    const auto r = static_cast<float>(c.rank());
    std::vector<tf::AnyTensor> grads{tf::constant<float>({r, 10 * r, 0.1f}),
                                     tf::constant<std::int64_t>(c.rank() + 1)};
    c.all_reduce(grads, dist::ReduceOp::sum);
    sums[static_cast<std::size_t>(c.rank())] = floats(grads[0]);
    counts[static_cast<std::size_t>(c.rank())] = grads[1].as<std::int64_t, 0>().item();
    std::vector<tf::AnyTensor> again{tf::constant<float>({r, 1, 2})};
    c.all_reduce(again, dist::ReduceOp::mean);
    means[static_cast<std::size_t>(c.rank())] = floats(again[0]);
  });
  CHECK(errors == std::vector<std::string>(4));
  // Added in rank order: the same bits a loop over the replicas gives.
  const float tenth = ((0.1f + 0.1f) + 0.1f) + 0.1f;
  for (int r = 0; r < 4; ++r) {
    CHECK(sums[static_cast<std::size_t>(r)] == std::vector<float>{6, 60, tenth});
    CHECK(counts[static_cast<std::size_t>(r)] == 10);
    CHECK(means[static_cast<std::size_t>(r)] == std::vector<float>{1.5f, 1, 2});
  }
}

TEST_CASE("broadcast, all_gather and barrier", "[distribute]") {
  dist::InProcessGroup group(3);
  std::vector<std::vector<float>> got(3);
  std::vector<std::vector<float>> gathered(3);
  auto errors = on_replicas(group, [&](dist::InProcessCollective& c) {
    const auto r = static_cast<float>(c.rank());
    std::vector<tf::AnyTensor> weights{tf::constant<float>({r, r})};
    c.broadcast(weights, 2);
    got[static_cast<std::size_t>(c.rank())] = floats(weights[0]);
    for (const auto& t : c.all_gather(tf::constant<float>({r}))) {
      gathered[static_cast<std::size_t>(c.rank())].push_back(floats(t)[0]);
    }
    c.barrier();
  });
  CHECK(errors == std::vector<std::string>(3));
  for (int r = 0; r < 3; ++r) {
    CHECK(got[static_cast<std::size_t>(r)] == std::vector<float>{2, 2});
    CHECK(gathered[static_cast<std::size_t>(r)] == std::vector<float>{0, 1, 2});
  }
}

TEST_CASE("many operations in a row keep their order", "[distribute]") {
  dist::InProcessGroup group(3);
  std::vector<float> last(3);
  auto errors = on_replicas(group, [&](dist::InProcessCollective& c) {
    std::vector<tf::AnyTensor> x{tf::constant<float>({1})};
    for (int step = 0; step < 200; ++step) {
      c.all_reduce(x, dist::ReduceOp::mean);  // stays 1: every replica holds the same value
      std::vector<tf::AnyTensor> y{tf::constant<float>({static_cast<float>(step)})};
      c.all_reduce(y, dist::ReduceOp::sum);
      last[static_cast<std::size_t>(c.rank())] = floats(y[0])[0] + floats(x[0])[0];
    }
  });
  CHECK(errors == std::vector<std::string>(3));
  CHECK(last == std::vector<float>(3, 3 * 199 + 1));
}

TEST_CASE("a replica that never comes is deadline_exceeded for all, naming it", "[distribute]") {
  dist::InProcessGroup group(3, {.timeout = 300ms});
  const auto start = std::chrono::steady_clock::now();
  auto errors = on_replicas(group, [&](dist::InProcessCollective& c) {
    if (c.rank() == 1) {
      return;  // a dead replica
    }
    std::vector<tf::AnyTensor> x{tf::constant<float>({1})};
    c.all_reduce(x, dist::ReduceOp::sum);
  });
  CHECK(std::chrono::steady_clock::now() - start < 30s);  // bounded: no hang
  CHECK(errors[1].empty());
  for (int r : {0, 2}) {
    INFO(errors[static_cast<std::size_t>(r)]);
    CHECK(errors[static_cast<std::size_t>(r)].starts_with("DEADLINE_EXCEEDED: all_reduce: "));
    CHECK(errors[static_cast<std::size_t>(r)].find("replica(s) 1 to arrive") != std::string::npos);
  }
  // The group stays broken: a late call fails at once.
  auto late = group.replica(1);
  CHECK_THROWS_AS(late.barrier(), tf::deadline_exceeded);
}

TEST_CASE("an aborted replica makes the others fail with unavailable", "[distribute]") {
  dist::InProcessGroup group(3, {.timeout = 60s});
  auto errors = on_replicas(group, [&](dist::InProcessCollective& c) {
    if (c.rank() == 2) {
      group.abort(2, "its step threw");
      return;
    }
    c.barrier();
  });
  for (int r : {0, 1}) {
    CHECK(errors[static_cast<std::size_t>(r)] == "UNAVAILABLE: replica 2 failed: its step threw");
  }
}

TEST_CASE("mismatched calls or tensors are invalid_argument for every replica", "[distribute]") {
  SECTION("shapes") {
    dist::InProcessGroup group(2);
    auto errors = on_replicas(group, [&](dist::InProcessCollective& c) {
      std::vector<tf::AnyTensor> w{c.rank() == 0 ? tf::AnyTensor(tf::zeros<float>({3, 4}))
                                                 : tf::AnyTensor(tf::zeros<float>({4, 3}))};
      c.all_reduce(w, dist::ReduceOp::sum);
    });
    for (const auto& e : errors) {
      CHECK(e ==
            "INVALID_ARGUMENT: all_reduce: tensor 0 of replica 1 is float32(4, 3), replica "
            "0's is float32(3, 4)");
    }
  }
  SECTION("operations") {
    dist::InProcessGroup group(2, {.timeout = 10s});
    auto errors = on_replicas(group, [&](dist::InProcessCollective& c) {
      if (c.rank() == 0) {
        std::this_thread::sleep_for(20ms);  // replica 1 arrives first
        c.barrier();
      } else {
        std::vector<tf::AnyTensor> x{tf::constant<float>({1})};
        c.all_reduce(x, dist::ReduceOp::sum);
      }
    });
    CHECK(errors[0] ==
          "INVALID_ARGUMENT: replica 0 called barrier while the others called all_reduce (with "
          "other arguments)");
    CHECK(errors[1] == errors[0]);
  }
  CHECK_THROWS_AS(dist::InProcessGroup(0), tf::invalid_argument);
  CHECK_THROWS_AS(dist::InProcessGroup(2).replica(2), tf::invalid_argument);
}

}  // namespace test_distribute_in_process_collective
