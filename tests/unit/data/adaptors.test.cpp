#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_data_adaptors {

namespace tf = tapeflow;
using I64 = std::vector<std::int64_t>;

namespace {
template <class D>
I64 ints(const D& ds) {
  I64 out;
  for (auto&& e : ds) {
    out.push_back(static_cast<std::int64_t>(e.item()));
  }
  return out;
}
template <class D>
std::vector<I64> batches(const D& ds) {
  std::vector<I64> out;
  for (auto&& b : ds) {
    out.emplace_back(b.values().begin(), b.values().end());
  }
  return out;
}
}  // namespace

TEST_CASE("map applies f, unpacking tuples, and filter keeps matches", "[data][adaptor]") {
  auto sq = tf::data::range(5) |
            tf::data::map([](auto x) { return tf::Tensor<std::int64_t, 0>(x.item() * x.item()); });
  CHECK(ints(sq) == I64{0, 1, 4, 9, 16});
  CHECK(sq.cardinality() == 5);
  auto pairs =
      tf::data::zip(tf::data::range(3), tf::data::range(3)) | tf::data::map([](auto a, auto b) {
        return tf::Tensor<std::int64_t, 0>(a.item() + b.item());
      });
  CHECK(ints(pairs) == I64{0, 2, 4});
  auto even = tf::data::range(10) | tf::data::filter([](auto x) { return x.item() % 2 == 0; });
  CHECK(ints(even) == I64{0, 2, 4, 6, 8});
  CHECK(even.cardinality() == tf::data::unknown_cardinality);
  // a scalar bool tensor works as the predicate result too
  auto odd = tf::data::range(5) |
             tf::data::filter([](auto x) { return tf::Tensor<bool, 0>(x.item() % 2 == 1); });
  CHECK(ints(odd) == I64{1, 3});
  // function-call spelling
  CHECK(ints(tf::data::filter(tf::data::range(3), [](auto x) { return x.item() > 0; })) ==
        I64{1, 2});
}

TEST_CASE("batch stacks on a new dim 0, with remainders and cardinality", "[data][adaptor]") {
  auto b = tf::data::range(7) | tf::data::batch(3);
  CHECK(batches(b) == std::vector<I64>{{0, 1, 2}, {3, 4, 5}, {6}});
  CHECK(b.cardinality() == 3);
  auto d = tf::data::range(7) | tf::data::batch(3, {.drop_remainder = true});
  CHECK(batches(d) == std::vector<I64>{{0, 1, 2}, {3, 4, 5}});
  CHECK(d.cardinality() == 2);
  CHECK_THROWS_AS(tf::data::range(3) | tf::data::batch(0), tf::invalid_argument);
  // tuples batch per component, with shapes [n, ...]
  auto x = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}, {7, 8}});
  auto y = tf::constant<std::int32_t>({0, 1, 0, 1});
  for (auto&& [xs, ys] : tf::data::from_tensor_slices(x, y) | tf::data::batch(4)) {
    CHECK(xs.shape().to_string() == "(4, 2)");
    CHECK(ys.shape().to_string() == "(4,)");
    CHECK(xs(3, 1) == 8.0f);
  }
  // different shapes cannot be stacked
  auto ragged = tf::data::range(1, 3) |
                tf::data::map([](auto n) { return tf::fill<float, 1>({n.item()}, 1.0f); }) |
                tf::data::batch(2);
  CHECK_THROWS_AS(batches(ragged), tf::invalid_argument);
}

TEST_CASE("padded_batch pads to the largest element or a given shape", "[data][adaptor]") {
  auto ds = tf::data::range(1, 5) |
            tf::data::map([](auto n) { return tf::fill<std::int64_t, 1>({n.item()}, n.item()); });
  auto pb = ds | tf::data::padded_batch(2);
  CHECK(batches(pb) == std::vector<I64>{{1, 0, 2, 2}, {3, 3, 3, 0, 4, 4, 4, 4}});
  auto shaped = tf::data::padded_batch(
      ds, 3,
      tf::data::PaddedBatchOptions<std::int64_t, 1>{.drop_remainder = true,
                                                    .padded_shapes = std::array<std::int64_t, 1>{5},
                                                    .padding_value = -1});
  CHECK(batches(shaped) ==
        std::vector<I64>{{1, -1, -1, -1, -1, 2, 2, -1, -1, -1, 3, 3, 3, -1, -1}});
  CHECK(shaped.cardinality() == 1);
}

TEST_CASE("padded_batch of tuples pads each component to its own shape and value",
          "[data][adaptor]") {
  // element n: (tokens [n] filled with n, matrix [n, 1] filled with n / 2, id n)
  auto ds = tf::data::range(1, 5) | tf::data::map([](auto n) {
              const auto k = n.item();
              return std::tuple{tf::fill<std::int64_t, 1>({k}, k),
                                tf::fill<float, 2>({k, 1}, static_cast<float>(k) / 2), n};
            });
  // default: every component to the largest in the batch, zeros
  auto plain = ds | tf::data::padded_batch(2);
  auto it = plain.iter();
  auto [t0, m0, id0] = it.get_next();
  CHECK(t0.numpy() == I64{1, 0, 2, 2});
  CHECK(m0.shape().to_string() == "(2, 2, 1)");
  CHECK(m0.numpy() == std::vector<float>{0.5f, 0, 1, 1});
  CHECK(id0.numpy() == I64{1, 2});
  // per component: tokens to 5 with -1, matrix to the batch max with 9, id unchanged
  using tf::data::Padding;
  auto spec = std::tuple{Padding<std::int64_t, 1>{.padded_shape = {5}, .padding_value = -1},
                         Padding<float, 2>{.padding_value = 9.0f}, Padding<std::int64_t, 0>{}};
  auto shaped = ds | tf::data::padded_batch(3, spec, {.drop_remainder = true});
  CHECK(shaped.cardinality() == 1);
  I64 tokens;
  std::vector<float> matrix;
  int count = 0;
  for (auto&& [t, m, id] : shaped) {
    tokens = t.numpy();
    matrix = m.numpy();
    CHECK(m.shape().to_string() == "(3, 3, 1)");
    CHECK(id.numpy() == I64{1, 2, 3});
    ++count;
  }
  CHECK(count == 1);
  CHECK(tokens == I64{1, -1, -1, -1, -1, 2, 2, -1, -1, -1, 3, 3, 3, -1, -1});
  CHECK(matrix == std::vector<float>{0.5f, 9, 9, 1, 1, 9, 1.5f, 1.5f, 1.5f});
  // function-call spelling and pairs
  auto pairs = tf::data::range(1, 3) | tf::data::map([](auto n) {
                 return std::pair{tf::fill<std::int64_t, 1>({n.item()}, 7), n};
               });
  auto pb = tf::data::padded_batch(
      pairs, 2,
      std::pair{Padding<std::int64_t, 1>{.padding_value = -7}, Padding<std::int64_t, 0>{}});
  auto [pt, pid] = pb.iter().get_next();
  CHECK(pt.numpy() == I64{7, -7, 7, 7});
  CHECK(pid.numpy() == I64{1, 2});
  // a too small padded_shape names the component
  auto small = ds | tf::data::padded_batch(4, std::tuple{Padding<std::int64_t, 1>{},
                                                         Padding<float, 2>{.padded_shape = {2, 1}},
                                                         Padding<std::int64_t, 0>{}});
  CHECK_THROWS_AS(small.iter().next(), tf::invalid_argument);
  CHECK_THROWS_WITH(small.iter().next(), Catch::Matchers::Contains("tuple component 1"));
  // a single tensor takes a Padding too; its state keys stay "padded_batch/..."
  auto single =
      tf::data::range(1, 4) |
      tf::data::map([](auto n) { return tf::fill<std::int64_t, 1>({n.item()}, n.item()); }) |
      tf::data::padded_batch(2, Padding<std::int64_t, 1>{.padding_value = -1});
  CHECK(batches(single) == std::vector<I64>{{1, -1, 2, 2}, {3, 3, 3}});
  auto sit = single.iter();
  (void)sit.next();
  CHECK(sit.save_state().contains("padded_batch/map/range/cur"));
}

TEST_CASE("unbatch, repeat, take, skip, enumerate", "[data][adaptor]") {
  CHECK(ints(tf::data::range(5) | tf::data::batch(2) | tf::data::unbatch()) == I64{0, 1, 2, 3, 4});
  auto r = tf::data::range(3) | tf::data::repeat(2);
  CHECK(ints(r) == I64{0, 1, 2, 0, 1, 2});
  CHECK(r.cardinality() == 6);
  CHECK((tf::data::range(3) | tf::data::repeat()).cardinality() == tf::data::infinite_cardinality);
  CHECK(ints(tf::data::range(3) | tf::data::repeat() | tf::data::take(7)) ==
        I64{0, 1, 2, 0, 1, 2, 0});
  CHECK((tf::data::range(3) | tf::data::repeat() | tf::data::take(7)).cardinality() == 7);
  CHECK(ints(tf::data::range(0) | tf::data::repeat()) == I64{});
  CHECK(ints(tf::data::range(5) | tf::data::skip(3)) == I64{3, 4});
  CHECK((tf::data::range(5) | tf::data::skip(3)).cardinality() == 2);
  CHECK((tf::data::range(5) | tf::data::skip(9)).cardinality() == 0);
  CHECK(ints(tf::data::range(5) | tf::data::take(-1)) == I64{0, 1, 2, 3, 4});
  I64 idx, vals;
  for (auto&& [i, v] : tf::data::range(10, 13) | tf::data::enumerate(5)) {
    idx.push_back(i.item());
    vals.push_back(v.item());
  }
  CHECK(idx == I64{5, 6, 7});
  CHECK(vals == I64{10, 11, 12});
}

TEST_CASE("shard gives each worker every num_shards-th element, all elements once overall",
          "[data][adaptor]") {
  CHECK(ints(tf::data::range(10) | tf::data::shard(3, 0)) == I64{0, 3, 6, 9});
  CHECK(ints(tf::data::range(10) | tf::data::shard(3, 2)) == I64{2, 5, 8});
  I64 all;
  for (std::int64_t w = 0; w < 3; ++w) {
    auto part = tf::data::range(10) | tf::data::shard(3, w);
    CHECK(part.cardinality() == (w == 0 ? 4 : 3));
    const auto mine = ints(part);
    all.insert(all.end(), mine.begin(), mine.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(all == I64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK((tf::data::range(3) | tf::data::repeat() | tf::data::shard(2, 1)).cardinality() ==
        tf::data::infinite_cardinality);
  CHECK_THROWS_AS(tf::data::range(3) | tf::data::shard(0, 0), tf::invalid_argument);
  CHECK_THROWS_AS(tf::data::range(3) | tf::data::shard(2, 2), tf::invalid_argument);
  CHECK_THROWS_AS(tf::data::range(3) | tf::data::shard(2, -1), tf::invalid_argument);
  // Its position is iterator state: a restored iterator continues the same shard.
  auto ds = tf::data::range(20) | tf::data::shard(4, 1);
  auto it = ds.iter();
  CHECK(it.get_next().item() == 1);
  CHECK(it.get_next().item() == 5);
  const auto state = it.save_state();
  auto resumed = ds.iter();
  resumed.restore_state(state);
  CHECK(resumed.get_next().item() == 9);
  CHECK(resumed.get_next().item() == 13);
}

TEST_CASE("reduce folds an epoch", "[data][adaptor]") {
  auto sum = tf::data::range(5) |
             tf::data::reduce(std::int64_t{0}, [](std::int64_t s, auto x) { return s + x.item(); });
  CHECK(sum == 10);
  CHECK(tf::data::reduce(tf::data::range(4), std::int64_t{1},
                         [](std::int64_t s, auto x) { return s * (x.item() + 1); }) == 24);
}

TEST_CASE("closures compose and datasets stay re-iterable", "[data][adaptor]") {
  auto aug = tf::data::map([](auto x) { return tf::Tensor<std::int64_t, 0>(x.item() + 1); }) |
             tf::data::batch(2);
  auto ds = tf::data::range(4) | aug;
  CHECK(batches(ds) == std::vector<I64>{{1, 2}, {3, 4}});
  CHECK(batches(ds) == std::vector<I64>{{1, 2}, {3, 4}});
  CHECK(tf::data::cardinality(ds) == 2);
}

TEST_CASE("cache in memory replays the first complete epoch", "[data][adaptor]") {
  int calls = 0;
  auto ds = tf::data::range(4) | tf::data::map([&calls](auto x) {
              ++calls;
              return x;
            }) |
            tf::data::cache();
  {  // a partial epoch records nothing
    auto it = ds.iter();
    (void)it.next();
  }
  CHECK(calls == 1);
  CHECK(ints(ds) == I64{0, 1, 2, 3});
  CHECK(calls == 5);
  CHECK(ints(ds) == I64{0, 1, 2, 3});
  CHECK(calls == 5);  // replayed, map not run again
  auto copy = ds;     // copies share the cache
  CHECK(ints(copy) == I64{0, 1, 2, 3});
  CHECK(calls == 5);
}

TEST_CASE("cache to a file survives the dataset", "[data][adaptor]") {
  const std::string file = (std::filesystem::current_path() / "cache_test.bin").string();
  std::filesystem::remove(file);
  int calls = 0;
  auto make = [&] {
    auto x = tf::constant<float>({{1, 2}, {3, 4}, {5, 6}});
    auto s = tf::constant<std::string>({"a", "bb", "ccc"});
    return tf::data::from_tensor_slices(x, s) | tf::data::map([&calls](auto a, auto b) {
             ++calls;
             return std::tuple{a, b};
           }) |
           tf::data::cache(file);
  };
  std::vector<std::string> first;
  for (auto&& [a, b] : make()) {
    first.push_back(b.item() + std::to_string(a(1)));
  }
  CHECK(calls == 3);
  CHECK(std::filesystem::exists(file));
  std::vector<std::string> second;
  for (auto&& [a, b] : make()) {  // a new dataset object reads the file
    second.push_back(b.item() + std::to_string(a(1)));
  }
  CHECK(calls == 3);
  CHECK(first == second);
  // a corrupt cache file is data_loss, not a crash
  {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f << "TFDCACHE"
      << "\x10\x00";
  }
  auto bad = make();
  CHECK_THROWS_AS(ints(bad | tf::data::map([](auto a, auto) {
                         return tf::Tensor<std::int64_t, 0>(a.num_elements());
                       })),
                  tf::data_loss);
}

TEST_CASE("interleave visits cycle_length datasets block_length at a time", "[data][adaptor]") {
  // TensorFlow's documented example
  auto make = [](std::optional<int> par) {
    return tf::data::range(1, 6) |
           tf::data::interleave(
               [](auto x) { return tf::data::from_tensors(x) | tf::data::repeat(6); },
               {.cycle_length = 2, .block_length = 4, .num_parallel_calls = par});
  };
  const I64 expected{1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3,
                     3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5};
  CHECK(ints(make(std::nullopt)) == expected);
  CHECK(ints(make(2)) == expected);  // parallel: same order
  CHECK(ints(tf::data::range(3) |
             tf::data::interleave([](auto x) { return tf::data::range(x.item()); },
                                  {.cycle_length = 3})) == I64{0, 0, 1});
}

TEST_CASE("AnyDataset<E> erases the pipeline type", "[data][adaptor]") {
  const bool shuffle = true;
  tf::data::AnyDataset<tf::Tensor<std::int64_t, 0>> ds = tf::data::range(10);
  if (shuffle) {
    ds = ds | tf::data::shuffle(10, {.seed = 3});
  }
  ds = ds | tf::data::take(4);
  CHECK(ds.cardinality() == 4);
  const auto a = ints(ds);
  CHECK(a.size() == 4);
  CHECK(a != I64{0, 1, 2, 3});
  // state and stats go through the erasure
  tf::data::AnyDataset<tf::Tensor<std::int64_t, 0>> plain =
      tf::data::range(6) | tf::data::prefetch(2);
  auto it = plain.iter();
  CHECK(it.get_next().item() == 0);
  CHECK(it.stats().size() == 1);
  tf::data::AnyDataset<tf::Tensor<std::int64_t, 0>> saveable = tf::data::range(6);
  auto s1 = saveable.iter();
  (void)s1.next();
  auto s2 = saveable.iter();
  s2.restore_state(s1.save_state());
  CHECK(s2.get_next().item() == 1);
  tf::data::AnyDataset deduced = tf::data::range(3) | tf::data::batch(2);
  CHECK(batches(deduced) == std::vector<I64>{{0, 1}, {2}});
}

}  // namespace test_data_adaptors
