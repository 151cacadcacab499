// The memory accounting every logical device's allocator charges (backend/memory_budget.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/backend/memory_budget.hpp>

namespace test_backend_memory_budget {
namespace tf = tapeflow;

TEST_CASE("a budget refuses past its limit and says why", "[backend]") {
  tf::backend::MemoryBudget budget("/device:GPU:1", 100);
  CHECK(budget.try_reserve(60));
  CHECK_FALSE(budget.try_reserve(41));
  CHECK(budget.refusal(41) ==
        "OOM when allocating 41 bytes on /device:GPU:1: 60 bytes in use of its 100-byte "
        "memory_limit");
  CHECK(budget.in_use() == 60);
  CHECK(budget.try_reserve(40));
  CHECK(budget.in_use() == 100);
  budget.release(70);
  CHECK(budget.in_use() == 30);
  CHECK(budget.peak() == 100);
  CHECK_FALSE(budget.try_reserve(-1));
  CHECK_FALSE(budget.try_reserve(INT64_MAX));  // no overflow
  CHECK(budget.in_use() == 30);
}

TEST_CASE("an unlimited budget only counts", "[backend]") {
  tf::backend::MemoryBudget budget("/device:CPU:0", std::nullopt);
  CHECK(budget.try_reserve(INT64_MAX / 2));
  CHECK(budget.in_use() == INT64_MAX / 2);
  CHECK(budget.refusal(1) == "OOM when allocating 1 bytes on /device:CPU:0: " +
                                 std::to_string(INT64_MAX / 2) + " bytes in use");
  CHECK_FALSE(budget.limit().has_value());
}

TEST_CASE("concurrent reservations never pass the limit", "[backend]") {
  tf::backend::MemoryBudget budget("/device:GPU:0", 1000);
  std::vector<std::thread> threads;
  std::vector<int> granted(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 1000; ++i) {
        if (budget.try_reserve(3)) {
          ++granted[static_cast<std::size_t>(t)];
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  CHECK(granted[0] + granted[1] + granted[2] + granted[3] == 333);
  CHECK(budget.in_use() == 999);
}

}  // namespace test_backend_memory_budget
