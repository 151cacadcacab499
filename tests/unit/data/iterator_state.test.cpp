#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>

namespace tf = tapeflow;

TEST_CASE("save_state/restore_state resume from_tensor_slices | shuffle | batch exactly",
          "[data][state]") {
  auto x = tf::range<std::int64_t>(100);
  auto y = tf::range<float>(100);
  auto ds =
      tf::data::from_tensor_slices(x, y) | tf::data::shuffle(16, {.seed = 4}) | tf::data::batch(8);
  // reference: one uninterrupted epoch
  std::vector<std::vector<std::int64_t>> all;
  for (auto&& [a, b] : ds) {
    all.emplace_back(a.values().begin(), a.values().end());
  }
  // a fresh dataset object with the same seed (as after a program restart)
  auto ds2 =
      tf::data::from_tensor_slices(x, y) | tf::data::shuffle(16, {.seed = 4}) | tf::data::batch(8);
  auto it = ds2.iter();
  for (int i = 0; i < 5; ++i) {
    auto [a, b] = it.get_next();
    CHECK(std::vector<std::int64_t>(a.values().begin(), a.values().end()) ==
          all[static_cast<std::size_t>(i)]);
  }
  const tf::data::IteratorState state = it.save_state();
  CHECK(state.contains("batch/shuffle/rng"));
  CHECK(state.contains("batch/shuffle/tensor_slices/pos"));
  // continue the original, then restore into a new iterator and compare
  auto resumed = ds2.iter();
  resumed.restore_state(state);
  for (std::size_t i = 5; i < all.size(); ++i) {
    auto [a, b] = resumed.get_next();
    CHECK(std::vector<std::int64_t>(a.values().begin(), a.values().end()) == all[i]);
    // labels travel with their images through the saved buffer
    for (std::int64_t k = 0; k < a.dim(0); ++k) {
      CHECK(static_cast<float>(a(k)) == b(k));
    }
  }
  CHECK_FALSE(resumed.next().has_value());
}

TEST_CASE("state saves through parallel map and prefetch", "[data][state]") {
  auto make = [] {
    return tf::data::range(200) | tf::data::shuffle(32, {.seed = 9}) |
           tf::data::map(
               [](const tf::Tensor<std::int64_t, 0>& x) {
                 return tf::Tensor<std::int64_t, 0>(x.item() * 10);
               },
               {.num_parallel_calls = 2}) |
           tf::data::batch(4) | tf::data::prefetch(tf::data::autotune);
  };
  std::vector<std::vector<std::int64_t>> all;
  for (auto&& b : make()) {
    all.emplace_back(b.values().begin(), b.values().end());
  }
  auto ds = make();
  auto it = ds.iter();
  for (std::size_t i = 0; i < 7; ++i) {
    auto b = it.get_next();
    CHECK(std::vector<std::int64_t>(b.values().begin(), b.values().end()) == all[i]);
  }
  const auto state = it.save_state();  // workers are running ahead: their elements are saved
  CHECK(state.contains("prefetch/buffer"));
  CHECK(state.contains("prefetch/batch/map/buffer"));
  auto resumed = make().iter();
  resumed.restore_state(state);
  for (std::size_t i = 7; i < all.size(); ++i) {
    auto b = resumed.get_next();
    CHECK(std::vector<std::int64_t>(b.values().begin(), b.values().end()) == all[i]);
  }
  CHECK_FALSE(resumed.next().has_value());
  // the original goes on unaffected
  auto b = it.get_next();
  CHECK(std::vector<std::int64_t>(b.values().begin(), b.values().end()) == all[7]);
  CHECK_THROWS_AS(it.restore_state(state), tf::failed_precondition);  // already running
}

TEST_CASE("saving a stage without state support is unimplemented", "[data][state]") {
  auto ds = tf::data::range(4) | tf::data::batch(2) | tf::data::unbatch();
  auto it = ds.iter();
  (void)it.next();
  CHECK_THROWS_AS(it.save_state(), tf::unimplemented);
  auto r = tf::data::range(10) | tf::data::take(5) | tf::data::repeat(2) | tf::data::enumerate() |
           tf::data::concatenate(tf::data::range(3) | tf::data::enumerate(10));
  auto i1 = r.iter();
  for (int i = 0; i < 7; ++i) {
    (void)i1.next();
  }
  auto s = i1.save_state();
  auto i2 = r.iter();
  i2.restore_state(s);
  for (int i = 7; i < 10; ++i) {
    auto [k, v] = i2.get_next();
    CHECK(k.item() == i);
    CHECK(v.item() == i % 5);
  }
  (void)i2.next();  // into the second dataset
  auto i3 = r.iter();
  i3.restore_state(i2.save_state());
  auto [k, v] = i3.get_next();
  CHECK(k.item() == 11);
  CHECK(v.item() == 1);
}
