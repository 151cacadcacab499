#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/image/flip_left_right.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_data_features {

namespace tf = tapeflow;
using I64 = std::vector<std::int64_t>;
using Catch::Matchers::Contains;

namespace {
// 6 examples: image i is a 2x2 image filled with i, label i is 10 * i, name i is "n<i>"
tf::data::Features examples() {
  std::vector<float> px;
  for (int i = 0; i < 6; ++i) {
    px.insert(px.end(), 4, static_cast<float>(i));
  }
  return {{"image", tf::constant<float, 3>(px, {6, 2, 2})},
          {"label", tf::constant<std::int64_t>({0, 10, 20, 30, 40, 50})},
          {"name", tf::constant({"n0", "n1", "n2", "n3", "n4", "n5"})}};
}
// checks that the components of one example belong together; returns its index
std::int64_t check_example(const tf::data::Features& x) {
  const auto label = x.get<std::int64_t, 0>("label").item();
  const auto image = x.get<float, 2>("image");
  CHECK(image.shape().to_string() == "(2, 2)");
  CHECK(image(1, 1) == static_cast<float>(label / 10));
  CHECK(x.get<std::string, 0>("name").item() == "n" + std::to_string(label / 10));
  return label / 10;
}
template <class D>
I64 indices(const D& ds) {
  I64 out;
  for (auto&& x : ds) {
    out.push_back(check_example(x));
  }
  return out;
}
}  // namespace

TEST_CASE("Features: construction, typed and type-erased access, errors naming the key",
          "[data][features]") {
  tf::data::Features x{{"image", tf::zeros<float>({28, 28})}, {"label", tf::constant(3)}};
  CHECK(x.size() == 2);
  CHECK(x.keys() == std::vector<std::string>{"image", "label"});
  CHECK(x.contains("label"));
  CHECK_FALSE(x.contains("weight"));
  CHECK(x.get<float, 2>("image").shape().to_string() == "(28, 28)");
  CHECK(x["label"].dtype() == tf::DType::int32);
  static constexpr tf::data::FeatureKey<std::int32_t, 0> label{"label"};
  CHECK(x[label].item() == 3);
  // unknown key: not_found naming it and the keys present
  CHECK_THROWS_AS(x["lable"], tf::not_found);
  CHECK_THROWS_WITH(x["lable"], Contains("'lable'") && Contains("'image', 'label'"));
  CHECK_THROWS_AS((x.get<float, 2>("imagee")), tf::not_found);
  // wrong dtype or rank: invalid_argument naming the key and both types
  CHECK_THROWS_AS((x.get<float, 3>("image")), tf::invalid_argument);
  CHECK_THROWS_WITH((x.get<std::int64_t, 0>("label")),
                    Contains("'label'") && Contains("int32") && Contains("int64"));
  static constexpr tf::data::FeatureKey<float, 0> wrong{"label"};
  CHECK_THROWS_AS(x[wrong], tf::invalid_argument);
  // set adds at the end or replaces; erase removes
  x.set("weight", tf::constant(0.5f)).set("label", tf::constant(4));
  CHECK(x.keys() == std::vector<std::string>{"image", "label", "weight"});
  CHECK(x[label].item() == 4);
  CHECK(x.erase("image"));
  CHECK_FALSE(x.erase("image"));
  CHECK(x.keys() == std::vector<std::string>{"label", "weight"});
  // a key given twice is an error, like a duplicate in a dict literal would be a bug
  CHECK_THROWS_AS((tf::data::Features{{"a", tf::constant(1)}, {"a", tf::constant(2)}}),
                  tf::invalid_argument);
  // printing mirrors Python's dict
  std::ostringstream os;
  os << tf::data::Features{{"b", tf::constant(1)}, {"a", tf::constant(2.5f)}};
  CHECK(os.str() ==
        "{'b': tf.Tensor(1, shape=(), dtype=int32), "
        "'a': tf.Tensor(2.5, shape=(), dtype=float32)}");
}

TEST_CASE("from_tensor_slices of Features slices every key, mismatched dim 0 names the keys",
          "[data][features]") {
  auto ds = tf::data::from_tensor_slices(examples());
  CHECK(ds.cardinality() == 6);
  CHECK(indices(ds) == I64{0, 1, 2, 3, 4, 5});
  // the dict-literal spelling
  auto lit = tf::data::from_tensor_slices(
      {{"x", tf::constant<float>({1, 2, 3})}, {"y", tf::constant<std::int32_t>({4, 5, 6})}});
  std::vector<float> xs;
  for (auto&& e : lit) {
    xs.push_back(e.get<float, 0>("x").item() +
                 static_cast<float>(e.get<std::int32_t, 0>("y").item()));
  }
  CHECK(xs == std::vector<float>{5, 7, 9});
  // mismatched first dims: invalid_argument naming both keys and the dims
  const auto bad = [] {
    return tf::data::from_tensor_slices(
        {{"image", tf::zeros<float>({4, 2})}, {"label", tf::constant<std::int32_t>({1, 2, 3})}});
  };
  CHECK_THROWS_AS(bad(), tf::invalid_argument);
  CHECK_THROWS_WITH(bad(), Contains("'label' has 3") && Contains("'image' has 4"));
  // a scalar cannot be sliced
  CHECK_THROWS_WITH(tf::data::from_tensor_slices(
                        {{"image", tf::zeros<float>({4, 2})}, {"label", tf::constant(1)}}),
                    Contains("'label'") && Contains("scalar"));
  CHECK_THROWS_AS(tf::data::from_tensor_slices(tf::data::Features{}), tf::invalid_argument);
  // a Features beside a plain tensor: a tuple element
  auto mixed = tf::data::from_tensor_slices(examples(), tf::constant<float>({1, 1, 1, 2, 2, 2}));
  float w = 0;
  for (auto&& [x, weight] : mixed) {
    check_example(x);
    w += weight.item();
  }
  CHECK(w == 9.0f);
  // from_tensors: one element, the whole structure
  auto one = tf::data::from_tensors({{"a", tf::constant<float>({1, 2})}});
  CHECK(one.cardinality() == 1);
  for (auto&& e : one) {
    CHECK(e.get<float, 1>("a").numpy() == std::vector<float>{1, 2});
  }
}

TEST_CASE("map receives and returns Features, filter, take, skip, prefetch pass them",
          "[data][features]") {
  auto ds =
      tf::data::from_tensor_slices(examples()) | tf::data::map([](tf::data::Features x) {
        const auto label = x.get<std::int64_t, 0>("label").item();
        return x.set("odd", tf::constant(label % 20 != 0));
      }) |
      tf::data::filter([](const tf::data::Features& x) { return x.get<bool, 0>("odd").item(); });
  CHECK(indices(ds) == I64{1, 3, 5});
  // parallel map, take/skip and prefetch keep order and structure
  auto par = tf::data::from_tensor_slices(examples()) |
             tf::data::map([](tf::data::Features x) { return x; }, {.num_parallel_calls = 2}) |
             tf::data::skip(1) | tf::data::take(4) | tf::data::prefetch(2);
  CHECK(indices(par) == I64{1, 2, 3, 4});
  // a map from Features to a tuple (the usual last step before a model)
  auto xy = tf::data::from_tensor_slices(examples()) | tf::data::map([](tf::data::Features x) {
              return std::tuple{x.get<float, 2>("image"), x.get<std::int64_t, 0>("label")};
            });
  for (auto&& [image, label] : xy) {
    CHECK(image(0, 0) * 10 == static_cast<float>(label.item()));
  }
  // and from a tuple to Features
  auto named = tf::data::range(3) | tf::data::map([](auto i) {
                 return tf::data::Features{{"i", i}, {"sq", tf::constant(i.item() * i.item())}};
               });
  I64 sq;
  for (auto&& e : named) {
    sq.push_back(e.get<std::int64_t, 0>("sq").item());
  }
  CHECK(sq == I64{0, 1, 4});
  // a typo in a map function surfaces as not_found naming the key
  auto typo = tf::data::from_tensor_slices(examples()) |
              tf::data::map([](tf::data::Features x) { return x.get<float, 2>("imag"); });
  CHECK_THROWS_AS(typo.iter().next(), tf::not_found);
  CHECK_THROWS_WITH(typo.iter().next(), Contains("'imag'"));
}

TEST_CASE("batch stacks Features per key, unbatch undoes it", "[data][features]") {
  auto b = tf::data::from_tensor_slices(examples()) | tf::data::batch(4);
  std::vector<std::string> shapes;
  for (auto&& x : b) {
    shapes.push_back(x["image"].shape().to_string() + x["label"].shape().to_string() +
                     x["name"].shape().to_string());
  }
  CHECK(shapes == std::vector<std::string>{"(4, 2, 2)(4,)(4,)", "(2, 2, 2)(2,)(2,)"});
  auto first = b.iter().get_next();
  CHECK(first.keys() == std::vector<std::string>{"image", "label", "name"});
  CHECK(first.get<std::int64_t, 1>("label").numpy() == I64{0, 10, 20, 30});
  CHECK(first.get<std::string, 1>("name").numpy() ==
        std::vector<std::string>{"n0", "n1", "n2", "n3"});
  CHECK(first.get<float, 3>("image")(3, 1, 0) == 3.0f);
  CHECK(indices(b | tf::data::unbatch()) == I64{0, 1, 2, 3, 4, 5});
  // different keys or shapes in one batch: invalid_argument naming them
  auto keys = tf::data::range(2) | tf::data::map([](auto i) {
                return i.item() == 0 ? tf::data::Features{{"a", i}} : tf::data::Features{{"b", i}};
              }) |
              tf::data::batch(2);
  CHECK_THROWS_WITH(keys.iter().next(), Contains("{'a'}") && Contains("{'b'}"));
  auto ragged = tf::data::range(1, 3) | tf::data::map([](auto n) {
                  return tf::data::Features{{"seq", tf::fill<float, 1>({n.item()}, 1.0f)}};
                }) |
                tf::data::batch(2);
  CHECK_THROWS_AS(ragged.iter().next(), tf::invalid_argument);
  CHECK_THROWS_WITH(ragged.iter().next(), Contains("feature 'seq'") && Contains("padded_batch"));
}

TEST_CASE("padded_batch pads each feature to its own shape and value", "[data][features]") {
  // element n: tokens = [n, n, ..] (n of them), mask = n x 2 of true, id = n
  auto ds = tf::data::range(1, 5) | tf::data::map([](auto n) {
              const auto k = n.item();
              return tf::data::Features{
                  {"tokens", tf::fill<std::int32_t, 1>({k}, static_cast<std::int32_t>(k))},
                  {"mask", tf::fill<bool, 2>({k, 2}, true)},
                  {"id", n}};
            });
  // zeros, to the largest in the batch
  auto plain = ds | tf::data::padded_batch(2);
  auto it = plain.iter();
  auto b0 = it.get_next();
  CHECK(b0.get<std::int32_t, 2>("tokens").numpy() == std::vector<std::int32_t>{1, 0, 2, 2});
  CHECK(b0["mask"].shape().to_string() == "(2, 2, 2)");
  CHECK(b0.get<std::int64_t, 1>("id").numpy() == I64{1, 2});
  // per-key shapes and values; keys not listed pad to the batch maximum with zeros
  auto shaped = ds | tf::data::padded_batch(
                         3,
                         tf::data::FeaturesPadding{
                             {"tokens", {.padded_shape = {5}, .padding_value = tf::constant(-1)}},
                             {"mask", {.padded_shape = {-1, 3}}}},
                         {.drop_remainder = true});
  CHECK(shaped.cardinality() == 1);
  auto s = shaped.iter().get_next();
  CHECK(s.get<std::int32_t, 2>("tokens").numpy() ==
        std::vector<std::int32_t>{1, -1, -1, -1, -1, 2, 2, -1, -1, -1, 3, 3, 3, -1, -1});
  const auto mask = s.get<bool, 3>("mask");
  CHECK(mask.shape().to_string() == "(3, 3, 3)");
  CHECK(mask(0, 0, 1));
  CHECK_FALSE(mask(0, 0, 2));
  CHECK_FALSE(mask(0, 1, 0));
  CHECK(mask(2, 2, 1));
  CHECK(shaped.iter().next().has_value());
  // errors name the feature
  auto small =
      ds | tf::data::padded_batch(4, tf::data::FeaturesPadding{{"tokens", {.padded_shape = {2}}}});
  CHECK_THROWS_WITH(small.iter().next(), Contains("feature 'tokens'") && Contains("smaller"));
  auto wrong_value =
      ds | tf::data::padded_batch(
               2, tf::data::FeaturesPadding{{"tokens", {.padding_value = tf::constant(-1.0f)}}});
  CHECK_THROWS_AS(wrong_value.iter().next(), tf::invalid_argument);
  CHECK_THROWS_WITH(wrong_value.iter().next(), Contains("feature 'tokens'") && Contains("int32"));
  auto unknown = ds | tf::data::padded_batch(2, tf::data::FeaturesPadding{{"tokenz", {}}});
  CHECK_THROWS_WITH(unknown.iter().next(), Contains("'tokenz'"));
  auto bad_rank =
      ds | tf::data::padded_batch(2, tf::data::FeaturesPadding{{"mask", {.padded_shape = {4}}}});
  CHECK_THROWS_WITH(bad_rank.iter().next(), Contains("feature 'mask'"));
  // strings pad with the empty string
  auto words =
      tf::data::range(1, 3) | tf::data::map([](auto n) {
        return tf::data::Features{{"w", tf::fill<std::string, 1>({n.item()}, std::string("x"))}};
      }) |
      tf::data::padded_batch(2);
  CHECK(words.iter().get_next().get<std::string, 2>("w").numpy() ==
        std::vector<std::string>{"x", "", "x", "x"});
}

TEST_CASE("shuffle and cache keep Features together, seeds reproduce", "[data][features]") {
  auto make = [](std::uint64_t seed) {
    return tf::data::from_tensor_slices(examples()) | tf::data::shuffle(6, {.seed = seed});
  };
  const auto a = indices(make(7));
  CHECK(std::multiset<std::int64_t>(a.begin(), a.end()) ==
        std::multiset<std::int64_t>{0, 1, 2, 3, 4, 5});
  CHECK(indices(make(7)) == a);
  // byte budget: byte_size counts every feature
  auto by_bytes = tf::data::from_tensor_slices(examples()) |
                  tf::data::shuffle(tf::data::buffer_bytes(1 << 20), {.seed = 1});
  CHECK(indices(by_bytes).size() == 6);
  // memory cache: the second epoch replays the first
  int calls = 0;
  auto cached = tf::data::from_tensor_slices(examples()) | tf::data::map([&calls](auto x) {
                  ++calls;
                  return x;
                }) |
                tf::data::cache();
  CHECK(indices(cached) == I64{0, 1, 2, 3, 4, 5});
  CHECK(indices(cached) == I64{0, 1, 2, 3, 4, 5});
  CHECK(calls == 6);
  // file cache: keys, dtypes, strings and shapes survive the file
  const std::string file = (std::filesystem::current_path() / "features_cache.bin").string();
  std::filesystem::remove(file);
  auto on_disk = [&] { return tf::data::from_tensor_slices(examples()) | tf::data::cache(file); };
  CHECK(indices(on_disk()) == I64{0, 1, 2, 3, 4, 5});
  CHECK(std::filesystem::exists(file));
  auto replayed = on_disk().iter().get_next();
  CHECK(replayed.keys() == std::vector<std::string>{"image", "label", "name"});
  CHECK(indices(on_disk()) == I64{0, 1, 2, 3, 4, 5});
}

TEST_CASE("element_traits<Features> encodes losslessly and rejects corrupt bytes",
          "[data][features]") {
  using traits = tf::data::element_traits<tf::data::Features>;
  const auto x = examples();
  std::string bytes;
  traits::encode(x, bytes);
  std::string_view in(bytes);
  const auto y = traits::decode(in);
  CHECK(in.empty());
  CHECK(y.keys() == x.keys());
  CHECK(y.get<float, 3>("image").numpy() == x.get<float, 3>("image").numpy());
  CHECK(y.get<std::string, 1>("name").numpy() == x.get<std::string, 1>("name").numpy());
  CHECK(traits::byte_size(x) > 6 * 4 * sizeof(float) + 6 * sizeof(std::int64_t));
  for (std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{20}, bytes.size() - 1}) {
    std::string_view part(bytes.data(), cut);
    CHECK_THROWS_AS(traits::decode(part), tf::data_loss);
  }
  std::string bad = bytes;
  bad[8 + 8 + 5] = '\x7f';  // the first tensor's dtype
  std::string_view bad_in(bad);
  CHECK_THROWS_AS(traits::decode(bad_in), tf::data_loss);
}

TEST_CASE("iterator state saves and restores Features pipelines", "[data][features][state]") {
  auto make = [] {
    return tf::data::from_tensor_slices(examples()) | tf::data::shuffle(4, {.seed = 3}) |
           tf::data::batch(2) | tf::data::unbatch() | tf::data::prefetch(2);
  };
  const auto all = indices(make());
  auto it = make().iter();
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(check_example(it.get_next()) == all[i]);
  }
  const auto state = it.save_state();
  auto resumed = make().iter();
  resumed.restore_state(state);
  for (std::size_t i = 3; i < all.size(); ++i) {
    CHECK(check_example(resumed.get_next()) == all[i]);
  }
  CHECK_FALSE(resumed.next().has_value());
}

TEST_CASE("the quick reference example runs", "[data][features]") {
  // images [n, h, w, c] = [5, 1, 2, 1] holding (i, -i); labels i
  std::vector<float> px;
  for (int i = 0; i < 5; ++i) {
    px.push_back(static_cast<float>(i));
    px.push_back(static_cast<float>(-i));
  }
  auto images = tf::constant<float, 4>(px, {5, 1, 2, 1});
  auto labels = tf::constant<std::int64_t>({0, 1, 2, 3, 4});
  auto ds = tf::data::from_tensor_slices({{"image", images}, {"label", labels}}) |
            tf::data::map([](tf::data::Features d) {
              return d.set("image", tf::image::flip_left_right(d.get<float, 3>("image")));
            }) |
            tf::data::shuffle(1000, {.seed = 1}) | tf::data::batch(32);
  int batches = 0;
  for (auto&& d : ds) {
    auto x = d.get<float, 4>("image");
    auto y = d.get<std::int64_t, 1>("label");
    CHECK(x.shape().to_string() == "(5, 1, 2, 1)");
    for (std::int64_t k = 0; k < 5; ++k) {
      CHECK(x(k, 0, 0, 0) == -static_cast<float>(y(k)));  // flipped: (-i, i)
      CHECK(x(k, 0, 1, 0) == static_cast<float>(y(k)));
    }
    ++batches;
  }
  CHECK(batches == 1);
}

}  // namespace test_data_features
