// The static memory plan (Note [Memory plan]): offsets never overlap for buffers alive at once,
// later calls place their buffers where planned and keep the block across calls, and calls
// that allocate otherwise (longer lives, other shapes, buffers kept outside, several threads)
// stay correct. Traced functions give the same values with and without a plan.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/config/optimizer.hpp>
#include <tapeflow/function/detail/memory_plan.hpp>  // MemoryPlan, PlannedBuffer, assign_offsets
#include <tapeflow/function/function.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_function_memory_plan {

namespace tf = tapeflow;
using tf::detail::MemoryPlan;
using tf::detail::PlannedBuffer;

namespace {

std::uintptr_t address(const tf::Tensor<float, 1>& t) {
  return reinterpret_cast<std::uintptr_t>(t.values().data());
}

// One buffer, no other allocation (tf::fill would make its scalar too).
tf::Tensor<float, 1> filled(std::int64_t n, float value) {
  auto t = tf::Tensor<float, 1>::uninitialized({n});
  std::ranges::fill(t.mutable_values(), value);
  return t;
}

bool all_equal(const tf::Tensor<float, 1>& t, float value) {
  return std::ranges::all_of(t.values(), [value](float v) { return v == value; });
}

// One "call" of a fixed allocation pattern: a and b live together, c comes after a is gone,
// d is returned. With `keep_a_longer`, a lives past c's allocation (a divergent call).
// `values_ok`: every tensor still held its values when the next was written (checked without
// Catch2, which threads may not call).
struct PatternAddresses {
  bool values_ok = true;
  std::uintptr_t a = 0;
  std::uintptr_t b = 0;
  std::uintptr_t c = 0;
  tf::Tensor<float, 1> d;
  tf::Tensor<float, 1> b_kept;
};
PatternAddresses run_pattern(MemoryPlan& plan, std::span<const tf::AnyTensor> args,
                             bool keep_a_longer = false, bool keep_b = false) {
  PatternAddresses out;
  MemoryPlan::CallScope scope(plan, args);
  std::optional<tf::Tensor<float, 1>> a = filled(1000, 1.0f);
  auto b = filled(1000, 2.0f);
  out.a = address(*a);
  out.b = address(b);
  std::optional<tf::Tensor<float, 1>> a_alive;
  if (keep_a_longer) {
    a_alive = *a;
  }
  a.reset();
  auto c = filled(1000, 3.0f);
  out.c = address(c);
  out.values_ok = (!a_alive || all_equal(*a_alive, 1.0f)) &&  // c did not take a's bytes
                  all_equal(b, 2.0f) && all_equal(c, 3.0f);
  out.d = filled(10, 4.0f);
  out.values_ok = out.values_ok && all_equal(b, 2.0f) && all_equal(c, 3.0f);
  if (keep_b) {
    out.b_kept = b;
  }
  return out;
}

PatternAddresses checked_pattern(MemoryPlan& plan, std::span<const tf::AnyTensor> args,
                                 bool keep_a_longer = false, bool keep_b = false) {
  auto out = run_pattern(plan, args, keep_a_longer, keep_b);
  CHECK(out.values_ok);
  return out;
}

}  // namespace

TEST_CASE("planned offsets never overlap for buffers alive at once", "[function][memory_plan]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<PlannedBuffer> buffers;
    std::int64_t clock = 0;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      PlannedBuffer b{.bytes = 64 + rng() % 5000, .begin = clock++};
      buffers.push_back(b);
    }
    for (auto& b : buffers) {  // each ends after it began, or outlives the call
      b.end = rng() % 8 == 0 ? -1 : b.begin + 1 + static_cast<std::int64_t>(rng() % 20);
    }
    const std::size_t block = tf::detail::assign_offsets(buffers);
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      const auto& p = buffers[i];
      REQUIRE((p.offset >= 0) == (p.end >= 0));
      if (p.offset < 0) {
        continue;
      }
      CHECK(p.offset % 64 == 0);
      CHECK(static_cast<std::size_t>(p.offset) + p.bytes <= block);
      for (std::size_t j = 0; j < i; ++j) {
        const auto& q = buffers[j];
        const bool same_time = q.offset >= 0 && p.begin < q.end && q.begin < p.end;
        const bool same_bytes = p.offset < q.offset + static_cast<std::int64_t>(q.bytes) &&
                                q.offset < p.offset + static_cast<std::int64_t>(p.bytes);
        CHECK_FALSE((same_time && same_bytes));
      }
    }
  }
  // Three equal buffers, each dying before the next is made, share one place.
  std::vector<PlannedBuffer> chain{{.bytes = 4096, .begin = 0, .end = 1},
                                   {.bytes = 4096, .begin = 2, .end = 3},
                                   {.bytes = 4096, .begin = 4, .end = 5}};
  CHECK(tf::detail::assign_offsets(chain) == 4096);
}

TEST_CASE("later calls place their buffers where planned and keep the block",
          "[function][memory_plan]") {
  MemoryPlan plan;
  const std::vector<tf::AnyTensor> args{tf::zeros<float>({3})};
  auto first = checked_pattern(plan, args);  // on the heap
  CHECK_FALSE(plan.info().planned);
  auto recorded = checked_pattern(plan, args);  // recorded, on the heap
  auto info = plan.info();
  REQUIRE(info.planned);
  CHECK(info.placed_buffers == 3);  // a, b, c: d outlives the call
  CHECK(info.heap_buffers == 1);
  CHECK(info.live_bytes_peak == 2 * (64 + 4000));
  CHECK(info.block_bytes == 2 * 4096);  // c reuses a's bytes
  auto second = checked_pattern(plan, args);
  CHECK(second.c == second.a);
  CHECK(second.b != second.a);
  auto third = checked_pattern(plan, args);
  CHECK(third.a == second.a);  // the same block
  CHECK(third.b == second.b);
  // The returned tensors came from the heap and keep their values.
  for (const auto* call : {&first, &recorded, &second, &third}) {
    CHECK(call->d.values()[9] == 4.0f);
  }
  CHECK(plan.info().diverged_calls == 0);
}

TEST_CASE("a buffer kept past its call keeps its bytes", "[function][memory_plan]") {
  MemoryPlan plan;
  const std::vector<tf::AnyTensor> args{tf::zeros<float>({3})};
  checked_pattern(plan, args);
  checked_pattern(plan, args);
  auto kept = checked_pattern(plan, args, false, /*keep_b=*/true);  // b outlives the plan's call
  auto next = checked_pattern(plan, args);
  CHECK(next.a != kept.b);  // another block: the kept one is b's until b goes
  CHECK(kept.b_kept.values()[0] == 2.0f);
  CHECK(kept.b_kept.values()[999] == 2.0f);
  CHECK(plan.info().diverged_calls == 0);
}

TEST_CASE("a call whose buffers live longer than planned takes the heap for them",
          "[function][memory_plan]") {
  MemoryPlan plan;
  const std::vector<tf::AnyTensor> args{tf::zeros<float>({3})};
  checked_pattern(plan, args);
  checked_pattern(plan, args);
  auto diverging = checked_pattern(plan, args, /*keep_a_longer=*/true);
  CHECK(diverging.c != diverging.a);
  CHECK(plan.info().diverged_calls == 1);
  CHECK_FALSE(plan.info().planned);  // recorded anew by the next call
  checked_pattern(plan, args);
  CHECK(plan.info().planned);
  checked_pattern(plan, args, true);
  CHECK(plan.info().diverged_calls == MemoryPlan::max_diverged_calls);
  CHECK(plan.info().off);
  auto heap = checked_pattern(plan, args);
  CHECK(heap.d.values()[0] == 4.0f);
  CHECK_FALSE(plan.info().planned);
}

TEST_CASE("a recorded call that throws leaves no plan", "[function][memory_plan]") {
  MemoryPlan plan;
  const std::vector<tf::AnyTensor> args{tf::zeros<float>({3})};
  checked_pattern(plan, args);
  try {
    MemoryPlan::CallScope scope(plan, args);
    auto a = filled(1000, 1.0f);
    throw std::runtime_error("the step failed");
  } catch (const std::runtime_error&) {  // NOLINT(bugprone-empty-catch): expected
  }
  CHECK_FALSE(plan.info().planned);
  CHECK(tf::detail::active_buffer_arena() == nullptr);
  checked_pattern(plan, args);  // recorded now
  CHECK(plan.info().planned);
  auto placed = checked_pattern(plan, args);
  CHECK(placed.c == placed.a);
}

TEST_CASE("calls on other argument shapes take the heap", "[function][memory_plan]") {
  MemoryPlan plan;
  const std::vector<tf::AnyTensor> args{tf::zeros<float>({3})};
  const std::vector<tf::AnyTensor> other{tf::zeros<float>({5})};
  checked_pattern(plan, args);
  checked_pattern(plan, args);
  auto planned = checked_pattern(plan, args);
  checked_pattern(plan, other);
  auto again = checked_pattern(plan, args);  // and the plan is still there
  CHECK(again.a == planned.a);
  CHECK(plan.info().diverged_calls == 0);
}

TEST_CASE("calls on several threads at once each get their own block", "[function][memory_plan]") {
  MemoryPlan plan;
  const std::vector<tf::AnyTensor> args{tf::zeros<float>({3})};
  checked_pattern(plan, args);
  checked_pattern(plan, args);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      std::vector<tf::Tensor<float, 1>> returned;
      for (int i = 0; i < 200; ++i) {
        auto call = run_pattern(plan, args);
        wrong += call.values_ok ? 0 : 1;
        returned.push_back(call.d);
      }
      for (const auto& d : returned) {
        wrong += all_equal(d, 4.0f) ? 0 : 1;
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  CHECK(wrong == 0);
  CHECK(plan.info().diverged_calls == 0);
}

TEST_CASE("an arena sees the buffers its thread allocates and their release",
          "[function][memory_plan]") {
  struct Counting final : tf::detail::BufferArena {
    void* place(std::size_t bytes, std::int32_t& slot) override {
      slot = placed++;
      return tf::backend::cpu::host_memory::allocate(bytes);
    }
    void released(void* memory, std::size_t bytes, std::int32_t) noexcept override {
      ++freed;
      tf::backend::cpu::host_memory::deallocate(memory, bytes);
    }
    int placed = 0;
    int freed = 0;
  };
  auto* arena = new Counting;
  auto& active = tf::detail::active_buffer_arena();
  active = arena;
  {
    auto x = filled(100, 1.0f);
    auto y = x * x;
    auto strings = tf::Tensor<std::string, 1>::uninitialized({2});  // not trivial: the heap's
    active = nullptr;
    CHECK(arena->placed == 2);
    CHECK(y.values()[99] == 1.0f);
  }
  CHECK(arena->freed == 2);
  arena->release();
}

TEST_CASE("traced steps with a memory plan give the values without one",
          "[function][memory_plan]") {
  auto make_step = [](tf::Variable<float, 2>& w1, tf::Variable<float, 1>& b1,
                      tf::Variable<float, 2>& w2) {
    return tf::function([&](const tf::Tensor<float, 2>& x, const tf::Tensor<std::int32_t, 1>& y) {
      tf::GradientTape tape;
      auto h = tf::nn::relu(tf::matmul(x, w1) + b1);
      auto logits = tf::matmul(h, w2);
      auto loss = tf::reduce_mean(tf::nn::sparse_softmax_cross_entropy_with_logits(y, logits));
      auto [g1, gb1, g2] = tape.gradient(loss, w1, b1, w2);
      w1.assign_sub(0.1f * *g1);
      b1.assign_sub(0.1f * *gb1);
      w2.assign_sub(0.1f * *g2);
      return std::tuple{loss, tf::nn::softmax(logits)};
    });
  };
  tf::Variable<float, 2> w1(tf::random::normal<float>({20, 16}, {.seed = 1}));
  tf::Variable<float, 1> b1(tf::zeros<float>({16}));
  tf::Variable<float, 2> w2(tf::random::normal<float>({16, 5}, {.seed = 2}));
  tf::Variable<float, 2> v1(w1.value());  // the same starting values
  tf::Variable<float, 1> c1(b1.value());
  tf::Variable<float, 2> v2(w2.value());
  auto planned = make_step(w1, b1, w2);
  auto unplanned = make_step(v1, c1, v2);
  // Options are read when a function is traced: at its first call.
  const auto saved = tf::config::optimizer::get_experimental_options();
  auto without_plan = saved;
  without_plan.memory_optimization = false;

  std::vector<tf::Tensor<float, 2>> kept;  // outputs held across calls keep their values
  std::vector<tf::Tensor<float, 2>> expected;
  for (int i = 0; i < 6; ++i) {
    auto x = tf::random::uniform<float>({8, 20}, {.seed = static_cast<std::uint64_t>(10 + i)});
    auto y = tf::random::uniform<std::int32_t>({8}, {.minval = 0, .maxval = 5, .seed = 3});
    auto [loss, probs] = planned(x, y);
    tf::config::optimizer::set_experimental_options(without_plan);
    auto [loss_u, probs_u] = unplanned(x, y);
    tf::config::optimizer::set_experimental_options(saved);
    CHECK(loss.item() == loss_u.item());
    kept.push_back(probs);
    expected.push_back(probs_u);
  }
  for (std::size_t i = 0; i < kept.size(); ++i) {
    CHECK(std::memcmp(kept[i].values().data(), expected[i].values().data(),
                      expected[i].values().size() * sizeof(float)) == 0);
  }
  CHECK(std::memcmp(w1.value().values().data(), v1.value().values().data(),
                    20 * 16 * sizeof(float)) == 0);
  const auto info = planned.concrete_functions()[0]->memory_plan();
  CHECK(info.planned);
  CHECK(info.placed_buffers > 3);
  CHECK(info.block_bytes >= info.live_bytes_peak);
  CHECK(info.diverged_calls == 0);
  CHECK_FALSE(unplanned.concrete_functions()[0]->memory_plan().planned);
}

}  // namespace test_function_memory_plan
