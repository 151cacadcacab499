#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_data_iterator_state {

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

namespace {
// A user dataset whose iterator has no save_state/restore_state.
struct Counter : tf::data::DatasetBase<Counter, tf::Tensor<std::int64_t, 0>> {
  struct iterator {
    using element_type = tf::Tensor<std::int64_t, 0>;
    std::int64_t i = 0;
    std::optional<element_type> next() {
      if (i < 4) {
        return element_type(i++);
      }
      return std::nullopt;
    }
  };
  [[nodiscard]] iterator make_iterator() const { return {}; }
  [[nodiscard]] std::int64_t cardinality() const { return 4; }
};

using I64 = std::vector<std::int64_t>;

// Every element of an epoch of `make()`, and for each k the elements after saving at k and
// restoring into an iterator of a freshly made pipeline.
template <class Make, class Get>
void check_resume_everywhere(Make make, Get get) {
  I64 all;
  for (auto&& e : make()) {
    all.push_back(get(e));
  }
  REQUIRE(!all.empty());
  for (std::size_t k = 0; k <= all.size(); ++k) {
    auto ds = make();
    auto it = ds.iter();
    for (std::size_t i = 0; i < k; ++i) {
      REQUIRE(get(it.get_next()) == all[i]);
    }
    const auto state = it.save_state();
    auto fresh = make();
    auto resumed = fresh.iter();
    resumed.restore_state(state);
    I64 rest;
    while (auto e = resumed.next()) {
      rest.push_back(get(*e));
    }
    INFO("saved after " << k << " elements");
    CHECK(rest == I64(all.begin() + static_cast<std::ptrdiff_t>(k), all.end()));
  }
}
std::int64_t item(const tf::Tensor<std::int64_t, 0>& t) { return t.item(); }
}  // namespace

TEST_CASE("saving a stage without state support is unimplemented", "[data][state]") {
  auto ds = Counter{} | tf::data::batch(2) | tf::data::unbatch();
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

TEST_CASE("from_generator refuses to save its state, as TensorFlow does", "[data][state]") {
  auto gen = [] {
    return tf::data::from_generator([] {
      return [i = 0]() mutable -> std::optional<tf::Tensor<std::int64_t, 0>> {
        if (i < 5) {
          return tf::Tensor<std::int64_t, 0>(i++);
        }
        return std::nullopt;
      };
    });
  };
  auto it = gen().iter();
  (void)it.next();
  CHECK_THROWS_AS(it.save_state(), tf::failed_precondition);
  CHECK_THROWS_WITH(it.save_state(), Catch::Matchers::Contains("from_generator"));
  // also behind other stages, threaded ones included
  auto deep = gen() | tf::data::map([](auto x) { return x; }, {.num_parallel_calls = 2}) |
              tf::data::batch(2) | tf::data::prefetch(2);
  auto dit = deep.iter();
  (void)dit.next();
  CHECK_THROWS_AS(dit.save_state(), tf::failed_precondition);
  auto plain = tf::data::range(3).iter();
  auto foreign = plain.save_state();
  auto git = gen().iter();
  CHECK_THROWS_AS(git.restore_state(foreign), tf::failed_precondition);
  // once a cache has recorded the generator, a replaying epoch saves fine
  auto cached = gen() | tf::data::cache();
  for (auto&& e : cached) {
    (void)e;
  }
  auto cit = cached.iter();
  (void)cit.next();
  auto restored = cached.iter();
  restored.restore_state(cit.save_state());
  CHECK(restored.get_next().item() == 1);
}

TEST_CASE("unbatch saves its position inside the current element", "[data][state]") {
  check_resume_everywhere(
      [] { return tf::data::range(10) | tf::data::batch(4) | tf::data::unbatch(); }, item);
  check_resume_everywhere(
      [] {
        return tf::data::range(20) | tf::data::shuffle(8, {.seed = 5}) | tf::data::batch(3) |
               tf::data::unbatch();
      },
      item);
  // tuples: both components of the current batch are kept
  auto pairs = [] {
    return tf::data::from_tensor_slices(tf::range<std::int64_t>(7), tf::range<std::int64_t>(7)) |
           tf::data::batch(3) | tf::data::unbatch();
  };
  check_resume_everywhere(pairs, [](const auto& e) {
    CHECK(std::get<0>(e).item() == std::get<1>(e).item());
    return std::get<0>(e).item();
  });
}

TEST_CASE("cache in memory saves while recording and while replaying", "[data][state]") {
  int calls = 0;
  auto make = [&calls] {
    return tf::data::range(10) | tf::data::shuffle(10, {.seed = 2}) |
           tf::data::map([&calls](auto x) {
             ++calls;
             return x;
           }) |
           tf::data::cache();
  };
  I64 all;
  for (auto&& e : make()) {
    all.push_back(e.item());
  }
  // recording epoch: save after 4, restore into a new pipeline (as after a restart)
  auto first = make();
  auto it = first.iter();
  for (int i = 0; i < 4; ++i) {
    CHECK(it.get_next().item() == all[static_cast<std::size_t>(i)]);
  }
  const auto recording = it.save_state();
  CHECK(recording.contains("cache/elements"));
  auto second = make();
  auto resumed = second.iter();
  resumed.restore_state(recording);
  I64 rest;
  while (auto e = resumed.next()) {
    rest.push_back(e->item());
  }
  CHECK(rest == I64(all.begin() + 4, all.end()));
  // the resumed epoch completed the cache with all 10 elements, the 4 restored ones included
  calls = 0;
  I64 replay;
  for (auto&& e : second) {
    replay.push_back(e.item());
  }
  CHECK(replay == all);
  CHECK(calls == 0);
  // replaying epoch: the state holds the cached elements, so a new pipeline replays them
  auto rit = second.iter();
  for (int i = 0; i < 3; ++i) {
    (void)rit.next();
  }
  const auto replaying = rit.save_state();
  auto third = make();
  auto r2 = third.iter();
  r2.restore_state(replaying);
  I64 rest2;
  while (auto e = r2.next()) {
    rest2.push_back(e->item());
  }
  CHECK(rest2 == I64(all.begin() + 3, all.end()));
  I64 third_epoch;
  for (auto&& e : third) {
    third_epoch.push_back(e.item());
  }
  CHECK(third_epoch == all);
  CHECK(calls == 0);  // third never ran its input
  // a state saved at the end of the recording epoch restores as "ended"
  auto fourth = make();
  auto e4 = fourth.iter();
  while (e4.next()) {
  }
  auto ended = make().iter();
  ended.restore_state(e4.save_state());
  CHECK_FALSE(ended.next().has_value());
  // a memory state does not fit a file cache
  auto file_cache = tf::data::range(3) | tf::data::cache("never_written.cache");
  auto fit = file_cache.iter();
  CHECK_THROWS_AS(fit.restore_state(replaying), tf::invalid_argument);
}

TEST_CASE("cache to a file saves while recording and while replaying", "[data][state]") {
  const std::string file = (std::filesystem::current_path() / "state_cache.bin").string();
  std::filesystem::remove(file);
  std::filesystem::remove(file + ".tmp");
  int calls = 0;
  auto make = [&] {
    return tf::data::range(10) | tf::data::map([&calls](auto x) {
             ++calls;
             return x;
           }) |
           tf::data::cache(file);
  };
  tf::data::IteratorState recording;
  {
    auto ds = make();
    auto it = ds.iter();
    for (int i = 0; i < 4; ++i) {
      CHECK(it.get_next().item() == i);
    }
    recording = it.save_state();
  }  // the interrupted epoch removes its temporary file
  CHECK_FALSE(std::filesystem::exists(file + ".tmp"));
  CHECK_FALSE(std::filesystem::exists(file));
  {
    auto ds = make();
    auto it = ds.iter();
    it.restore_state(recording);
    I64 rest;
    while (auto e = it.next()) {
      rest.push_back(e->item());
    }
    CHECK(rest == I64{4, 5, 6, 7, 8, 9});
  }
  CHECK(std::filesystem::exists(file));
  calls = 0;
  I64 replay;
  for (auto&& e : make()) {
    replay.push_back(e.item());
  }
  CHECK(replay == I64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});  // the restored part reached the file
  CHECK(calls == 0);
  // replaying: only the offset is saved
  check_resume_everywhere(make, item);
  CHECK(calls == 0);
  auto rit = make().iter();
  (void)rit.next();
  const auto replaying = rit.save_state();
  CHECK(replaying.contains("cache/offset"));
  std::filesystem::remove(file);
  auto gone = make().iter();  // records anew, but the state says replay: the file is missing
  CHECK_THROWS_AS(gone.restore_state(replaying), tf::not_found);
}

TEST_CASE("interleave saves the open datasets and the cycle position", "[data][state]") {
  for (std::optional<int> par : {std::optional<int>{}, std::optional<int>{2}}) {
    INFO("num_parallel_calls " << (par ? *par : 0));
    check_resume_everywhere(
        [par] {
          return tf::data::range(1, 6) |
                 tf::data::interleave(
                     [](auto x) {
                       return tf::data::range(x.item() * 10, x.item() * 10 + x.item());
                     },
                     {.cycle_length = 2, .block_length = 2, .num_parallel_calls = par});
        },
        item);
    check_resume_everywhere(
        [par] {
          return tf::data::range(1, 6) | tf::data::shuffle(3, {.seed = 1}) |
                 tf::data::interleave(
                     [](auto x) { return tf::data::from_tensors(x) | tf::data::repeat(3); },
                     {.cycle_length = 3, .block_length = 1, .num_parallel_calls = par});
        },
        item);
  }
  // a state of another cycle_length does not fit
  auto two =
      tf::data::range(4) |
      tf::data::interleave([](auto x) { return tf::data::from_tensors(x); }, {.cycle_length = 2});
  auto it = two.iter();
  (void)it.next();
  auto three =
      tf::data::range(4) |
      tf::data::interleave([](auto x) { return tf::data::from_tensors(x); }, {.cycle_length = 3});
  auto other = three.iter();
  CHECK_THROWS_AS(other.restore_state(it.save_state()), tf::invalid_argument);
}

}  // namespace test_data_iterator_state
