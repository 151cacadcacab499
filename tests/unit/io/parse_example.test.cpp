#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/io/example.hpp>
#include <tapeflow/io/parse_example.hpp>
#include <tapeflow/io/tfrecord_reader.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_io_parse_example {

namespace tf = tapeflow;
using namespace std::string_literals;
using Catch::Matchers::Contains;
using tf::io::FixedLenFeature;
using tf::io::VarLenFeature;

namespace {
std::vector<std::string> golden_records(const std::string& name) {
  tf::io::TFRecordReader r(std::string(TAPEFLOW_TEST_DATA_DIR) + "/io/" + name);
  std::vector<std::string> out;
  while (auto rec = r.next()) {
    out.push_back(*rec);
  }
  return out;
}
}  // namespace

TEST_CASE("parse_single_example: the chapter's image + label", "[io][parse_example][golden]") {
  const auto golden = golden_records("examples.tfrecord");
  const tf::io::FeatureDescription description{
      {"image", FixedLenFeature<std::string>{}},
      {"label", FixedLenFeature<std::int64_t>{}},
  };
  auto parsed = tf::io::parse_single_example(golden[0], description);
  CHECK(parsed.size() == 2);
  CHECK((parsed["label"].as<std::int64_t, 0>().item() == 1));
  CHECK((parsed["image"].as<std::string, 0>().item() == "\xff\xd8\xff\xe0\x00\x10JFIF\x00"
                                                        "fake image bytes\xff\xd9"s));
  CHECK_THROWS_AS(parsed["nope"], tf::not_found);
  CHECK_THROWS_AS((parsed["label"].as<float, 0>()), tf::invalid_argument);
  // from a string tensor too
  auto again = tf::io::parse_single_example(tf::Tensor<std::string, 0>(golden[0]), description);
  CHECK((again["label"].as<std::int64_t, 0>().item() == 1));
}

TEST_CASE("parse_single_example: shapes, defaults, VarLen", "[io][parse_example][golden]") {
  const auto golden = golden_records("examples.tfrecord");
  auto p = tf::io::parse_single_example(
      golden[7], {{"matrix", FixedLenFeature<float>{{2, 3}}},
                  {"names", FixedLenFeature<std::string>{{2}}},
                  {"missing", FixedLenFeature<std::int64_t>{{2}, {7, 8}}},
                  {"missing_scalar", FixedLenFeature<float>{.default_value = 0.5f}},
                  {"missing_str", FixedLenFeature<std::string>{.default_value = "none"}},
                  {"var_missing", VarLenFeature<float>{}}});
  auto m = p["matrix"].as<float, 2>();
  CHECK((m.dims() == std::array<std::int64_t, 2>{2, 3}));
  CHECK(m(1, 2) == 5.0f);
  CHECK((p["names"].as<std::string, 1>().numpy() == std::vector<std::string>{"cat", "dog"}));
  CHECK((p["missing"].as<std::int64_t, 1>().numpy() == std::vector<std::int64_t>{7, 8}));
  CHECK((p["missing_scalar"].as<float, 0>().item() == 0.5f));
  CHECK((p["missing_str"].as<std::string, 0>().item() == "none"));
  const auto& vm = p["var_missing"].sparse<float>();
  CHECK(vm.values.num_elements() == 0);
  CHECK((vm.indices.dims() == std::array<std::int64_t, 2>{0, 1}));
  CHECK(vm.dense_shape.numpy() == std::vector<std::int64_t>{0});

  auto q = tf::io::parse_single_example(golden[2], {{"ints", VarLenFeature<std::int64_t>{}},
                                                    {"bytes", VarLenFeature<std::string>{}},
                                                    {"floats", FixedLenFeature<float>{{3}}}});
  const auto& ints = q["ints"].sparse<std::int64_t>();
  CHECK(ints.values.numpy() ==
        std::vector<std::int64_t>{0, -1, std::int64_t{1} << 62, INT64_MIN, INT64_MAX});
  CHECK(ints.indices.numpy() == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  CHECK(ints.dense_shape.numpy() == std::vector<std::int64_t>{5});
  CHECK(q["bytes"].sparse<std::string>().values.numpy() ==
        std::vector<std::string>{"a", "", "ccc"});
  CHECK((q["floats"].as<float, 1>().numpy() == std::vector<float>{-1.5f, 0.0f, 3.25e10f}));
  CHECK(q["ints"].is_sparse());
  CHECK_THROWS_AS(q["ints"].dense(), tf::invalid_argument);
  CHECK_THROWS_AS(q["ints"].sparse<float>(), tf::invalid_argument);

  // a Feature with no kind counts as absent; an empty list does not
  auto r = tf::io::parse_single_example(
      golden[4], {{"nothing", FixedLenFeature<float>{.default_value = 1.0f}}});
  CHECK((r["nothing"].as<float, 0>().item() == 1.0f));
  auto e =
      tf::io::parse_single_example(golden[3], {{"empty_ints", FixedLenFeature<std::int64_t>{{0}}},
                                               {"empty_bytes", VarLenFeature<std::string>{}}});
  CHECK((e["empty_ints"].as<std::int64_t, 1>().num_elements() == 0));
  CHECK(e["empty_bytes"].sparse<std::string>().values.num_elements() == 0);
  // empty Examples: everything takes its default
  for (int i : {5, 6}) {
    auto d =
        tf::io::parse_single_example(golden[static_cast<std::size_t>(i)],
                                     {{"x", FixedLenFeature<std::int64_t>{.default_value = 4}}});
    CHECK((d["x"].as<std::int64_t, 0>().item() == 4));
  }
}

TEST_CASE("parse_single_example: TensorFlow's parse of hand-made encodings",
          "[io][parse_example][golden]") {
  // handmade_parsed.txt (TensorFlow's output) lists the same values.
  const auto hand = golden_records("handmade.tfrecord");
  auto p0 = tf::io::parse_single_example(
      hand[0], {{"ints", VarLenFeature<std::int64_t>{}}, {"floats", VarLenFeature<float>{}}});
  CHECK(p0["ints"].sparse<std::int64_t>().values.numpy() == std::vector<std::int64_t>{5, -6, 300});
  CHECK(p0["floats"].sparse<float>().values.numpy() == std::vector<float>{1.5f, -2.0f});
  auto p1 = tf::io::parse_single_example(hand[1], {{"label", FixedLenFeature<std::int64_t>{{2}}}});
  CHECK((p1["label"].as<std::int64_t, 1>().numpy() == std::vector<std::int64_t>{7, 8}));
  auto p2 = tf::io::parse_single_example(
      hand[2], {{"a", FixedLenFeature<std::int64_t>{}}, {"b", FixedLenFeature<std::string>{}}});
  CHECK((p2["a"].as<std::int64_t, 0>().item() == 1));
  CHECK((p2["b"].as<std::string, 0>().item() == "bee"));
  // Two packed chunks: TensorFlow's fast parser keeps only the first ([7]); protobuf, and
  // tapeflow, merge them.
  auto p3 = tf::io::parse_single_example(hand[3], {{"label", VarLenFeature<std::int64_t>{}}});
  CHECK(p3["label"].sparse<std::int64_t>().values.numpy() == std::vector<std::int64_t>{7, 8});
}

TEST_CASE("parse_single_example: TensorFlow's errors", "[io][parse_example]") {
  const auto golden = golden_records("examples.tfrecord");
  const std::string& x = golden[1];  // x: float_list [1, 2]
  // texts as in tests/data/io/tf_errors.txt
  CHECK_THROWS_MATCHES(
      tf::io::parse_single_example(x, {{"y", FixedLenFeature<float>{}}}), tf::invalid_argument,
      Catch::Matchers::Message("tf::io::parse_single_example: Feature: y (data type: float) is "
                               "required but could not be found."));
  CHECK_THROWS_WITH(tf::io::parse_single_example(x, {{"y", FixedLenFeature<std::string>{}}}),
                    Contains("Feature: y (data type: string) is required but could not be found."));
  CHECK_THROWS_WITH(
      tf::io::parse_single_example(x, {{"x", FixedLenFeature<std::int64_t>{{2}}}}),
      Contains("Key: x.  Data types don't match. Data type: float but expected type: int64"));
  CHECK_THROWS_WITH(tf::io::parse_single_example(x, {{"x", FixedLenFeature<float>{{3}}}}),
                    Contains("Key: x.  Number of float values != expected.  Values size: 2 but "
                             "output shape: [3]"));
  CHECK_THROWS_WITH(
      tf::io::parse_single_example(x, {{"x", VarLenFeature<std::string>{}}}),
      Contains("Key: x.  Data types don't match. Expected type: string, Actual type: float"));
  CHECK_THROWS_WITH(
      tf::io::parse_single_example(
          golden[3], {{"empty_ints", FixedLenFeature<std::int64_t>{.default_value = 3}}}),
      Contains("Number of int64 values != expected.  Values size: 0"));
  CHECK_THROWS_WITH(
      tf::io::parse_single_example("\x0a\x05\x01"s, {{"x", FixedLenFeature<float>{}}}),
      Contains("Could not parse example input") && Contains("byte offset"));
  CHECK_THROWS_AS(tf::io::parse_single_example("\x0a\x05\x01"s, {{"x", FixedLenFeature<float>{}}}),
                  tf::invalid_argument);
  // bad specs
  CHECK_THROWS_WITH(tf::io::parse_single_example(x, {{"x", FixedLenFeature<float>{{-1}}}}),
                    Contains("must be fully defined"));
  CHECK_THROWS_WITH(
      tf::io::parse_single_example(x, {{"x", FixedLenFeature<float>{{3}, {1.0f, 2.0f}}}}),
      Contains("default_value has 2 values, but shape [3] needs 3"));
}

TEST_CASE("parse_example: batches", "[io][parse_example]") {
  std::vector<std::string> batch;
  batch.push_back(tf::train::Example({{"v", tf::io::int64_feature({1, 2, 3})},
                                      {"f", tf::io::float_feature({1, 2})}})
                      .serialize());
  batch.push_back(tf::train::Example({{"v", tf::io::int64_feature({4})}}).serialize());
  batch.push_back(tf::train::Example({{"f", tf::io::float_feature({5, 6})}}).serialize());
  const tf::io::FeatureDescription spec{
      {"v", VarLenFeature<std::int64_t>{}},
      {"f", FixedLenFeature<float>{{2}, {0.0f, -1.0f}}},
  };
  auto p = tf::io::parse_example(std::span<const std::string>(batch), spec);
  auto f = p["f"].as<float, 2>();
  CHECK((f.dims() == std::array<std::int64_t, 2>{3, 2}));
  CHECK(f.numpy() == std::vector<float>{1, 2, 0, -1, 5, 6});
  const auto& v = p["v"].sparse<std::int64_t>();
  CHECK(v.values.numpy() == std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(v.indices.numpy() == std::vector<std::int64_t>{0, 0, 0, 1, 0, 2, 1, 0});
  CHECK(v.dense_shape.numpy() == std::vector<std::int64_t>{3, 3});
  // string tensor input
  auto t = tf::constant<std::string, 1>(batch, std::array<std::int64_t, 1>{3});
  CHECK((tf::io::parse_example(t, spec)["f"].as<float, 2>().numpy() == f.numpy()));
  // errors name the example index
  CHECK_THROWS_WITH(
      tf::io::parse_example(std::span<const std::string>(batch),
                            {{"v", FixedLenFeature<std::int64_t>{{1}}}}),
      Contains("Name: <unknown>, Key: v, Index: 0.  Number of int64 values != expected.  "
               "Values size: 3 but output shape: [3,1]"));
  CHECK_THROWS_WITH(tf::io::parse_example(std::span<const std::string>(batch),
                                          {{"f", FixedLenFeature<float>{{2}}}}),
                    Contains("Name: <unknown>, Feature: f (data type: float) is required"));
  // empty batch
  auto empty = tf::io::parse_example(std::span<const std::string>(), spec);
  CHECK((empty["f"].as<float, 2>().dims() == std::array<std::int64_t, 2>{0, 2}));
}

TEST_CASE("FixedLenSequenceFeature: TensorFlow's shapes, padding and errors",
          "[io][parse_example]") {
  using tf::io::FixedLenSequenceFeature;
  // Expected values and messages: TensorFlow 2.21 on the same Examples.
  const std::string e1 = tf::train::Example({{"x", tf::io::float_feature({1, 2, 3, 4})},
                                             {"i", tf::io::int64_feature({1, 2, 3})},
                                             {"s", tf::io::bytes_feature({"a", "b"})}})
                             .serialize();
  const std::string e2 =
      tf::train::Example({{"x", tf::io::float_feature({5, 6})}, {"i", tf::io::int64_feature({7})}})
          .serialize();
  const std::string e3 = tf::train::Example(tf::train::Features{}).serialize();
  const std::string e4 =  // present but empty: a Feature with no list, and an empty list
      tf::train::Example({{"x", tf::train::Feature()}, {"i", tf::train::Int64List{}}}).serialize();
  const FixedLenSequenceFeature<float> pairs{.shape = {2}, .allow_missing = true};

  SECTION("single Example: [rows] + shape") {
    auto p = tf::io::parse_single_example(e1, {{"x", pairs}});
    auto x = p["x"].as<float, 2>();
    CHECK((x.dims() == std::array<std::int64_t, 2>{2, 2}));
    CHECK(x.numpy() == std::vector<float>{1, 2, 3, 4});
    auto flat = tf::io::parse_single_example(
        e1, {{"x", FixedLenSequenceFeature<float>{.allow_missing = true}},
             {"s", FixedLenSequenceFeature<std::string>{.allow_missing = true}}});
    CHECK((flat["x"].as<float, 1>().numpy() == std::vector<float>{1, 2, 3, 4}));
    CHECK((flat["s"].as<std::string, 1>().numpy() == std::vector<std::string>{"a", "b"}));
    // missing or empty: no rows (the default value only pads batches)
    for (const std::string* e : {&e3, &e4}) {
      auto m = tf::io::parse_single_example(
          *e, {{"x",
                FixedLenSequenceFeature<float>{
                    .shape = {2}, .allow_missing = true, .default_value = 9.0f}},
               {"i", FixedLenSequenceFeature<std::int64_t>{.allow_missing = true}}});
      CHECK((m["x"].as<float, 2>().dims() == std::array<std::int64_t, 2>{0, 2}));
      CHECK((m["i"].as<std::int64_t, 1>().dims() == std::array<std::int64_t, 1>{0}));
    }
    auto grid = tf::io::parse_single_example(
        e1, {{"x", FixedLenSequenceFeature<float>{.shape = {1, 2}, .allow_missing = true}}});
    CHECK((grid["x"].as<float, 3>().dims() == std::array<std::int64_t, 3>{2, 1, 2}));
  }
  SECTION("batches: [batch, most rows] + shape, padded with the default") {
    const std::vector<std::string> batch{e1, e2, e3};
    auto p = tf::io::parse_example(
        std::span<const std::string>(batch),
        {{"x", pairs},
         {"i", FixedLenSequenceFeature<std::int64_t>{.allow_missing = true, .default_value = -1}},
         {"s",
          FixedLenSequenceFeature<std::string>{.allow_missing = true, .default_value = "pad"}}});
    auto x = p["x"].as<float, 3>();
    CHECK((x.dims() == std::array<std::int64_t, 3>{3, 2, 2}));
    CHECK(x.numpy() == std::vector<float>{1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0});
    auto i = p["i"].as<std::int64_t, 2>();
    CHECK((i.dims() == std::array<std::int64_t, 2>{3, 3}));
    CHECK(i.numpy() == std::vector<std::int64_t>{1, 2, 3, 7, -1, -1, -1, -1, -1});
    auto s = p["s"].as<std::string, 2>();
    CHECK((s.dims() == std::array<std::int64_t, 2>{3, 2}));
    CHECK(s.numpy() == std::vector<std::string>{"a", "b", "pad", "pad", "pad", "pad"});
    auto padded = tf::io::parse_example(
        std::span<const std::string>(batch.data(), 2),
        {{"x", FixedLenSequenceFeature<float>{
                   .shape = {2}, .allow_missing = true, .default_value = 9.0f}}});
    CHECK((padded["x"].as<float, 3>().numpy() == std::vector<float>{1, 2, 3, 4, 5, 6, 9, 9}));
    const std::vector<std::string> none{e3, e3};
    CHECK((tf::io::parse_example(std::span<const std::string>(none), {{"x", pairs}})["x"]
               .as<float, 3>()
               .dims() == std::array<std::int64_t, 3>{2, 0, 2}));
    CHECK((tf::io::parse_example(std::span<const std::string>(), {{"x", pairs}})["x"]
               .as<float, 3>()
               .dims() == std::array<std::int64_t, 3>{0, 0, 2}));
    // beside a FixedLenFeature and a VarLenFeature
    auto mixed = tf::io::parse_example(
        std::span<const std::string>(batch.data(), 2),
        {{"x", pairs},
         {"s", VarLenFeature<std::string>{}},
         {"i", FixedLenSequenceFeature<std::int64_t>{.shape = {1}, .allow_missing = true}}});
    CHECK((mixed["i"].as<std::int64_t, 3>().dims() == std::array<std::int64_t, 3>{2, 3, 1}));
    CHECK(mixed["s"].sparse<std::string>().dense_shape.numpy() == std::vector<std::int64_t>{2, 2});
  }
  SECTION("errors") {
    CHECK_THROWS_MATCHES(
        tf::io::parse_single_example(e1, {{"x", FixedLenSequenceFeature<float>{.shape = {2}}}}),
        tf::invalid_argument,
        Catch::Matchers::Message("tf::io::parse_single_example: Key: x. Unsupported: "
                                 "FixedLenSequenceFeature requires allow_missing to be True."));
    CHECK_THROWS_WITH(
        tf::io::parse_single_example(
            e1, {{"x", FixedLenSequenceFeature<float>{.shape = {3}, .allow_missing = true}}}),
        Contains("Error while parsing feature with key x: number of elements should be divisible "
                 "by 3, found 4 instead"));
    CHECK_THROWS_WITH(
        tf::io::parse_single_example(
            e1, {{"i", FixedLenSequenceFeature<float>{.allow_missing = true}}}),
        Contains("Key: i.  Data types don't match. Data type: int64 but expected type: float"));
    const std::vector<std::string> batch{e2, e1};
    CHECK_THROWS_WITH(
        tf::io::parse_example(
            std::span<const std::string>(batch),
            {{"i", FixedLenSequenceFeature<std::int64_t>{.shape = {2}, .allow_missing = true}}}),
        Contains("Name: <unknown>, Key: i, Index: 0.  Number of int64 values is not a multiple "
                 "of stride length. Saw 1 values but output shape is: [?,2]"));
    CHECK_THROWS_WITH(
        tf::io::parse_example(std::span<const std::string>(batch),
                              {{"i", FixedLenSequenceFeature<std::string>{.allow_missing = true}}}),
        Contains("Name: <unknown>, Key: i, Index: 0.  Data types don't match. Data type: int64 "
                 "but expected type: string"));
    // bad specs: a padding value is one value; rows need a fully defined, non-empty shape
    CHECK_THROWS_WITH(tf::io::parse_example(
                          std::span<const std::string>(batch),
                          {{"i", FixedLenSequenceFeature<std::int64_t>{.allow_missing = true,
                                                                       .default_value = {1, 2}}}}),
                      Contains("must be a single value, got 2"));
    CHECK_THROWS_WITH(
        tf::io::parse_single_example(
            e1, {{"x", FixedLenSequenceFeature<float>{.shape = {-1}, .allow_missing = true}}}),
        Contains("must be fully defined"));
    CHECK_THROWS_WITH(
        tf::io::parse_single_example(
            e1, {{"x", FixedLenSequenceFeature<float>{.shape = {2, 0}, .allow_missing = true}}}),
        Contains("has no elements per row"));
    CHECK_THROWS_AS(tf::io::parse_single_example(
                        e1, {{"x", FixedLenSequenceFeature<float>{.shape = {1, 1, 1, 1, 1, 1, 1, 1},
                                                                  .allow_missing = true}}}),
                    tf::invalid_argument);
  }
}

}  // namespace test_io_parse_example
