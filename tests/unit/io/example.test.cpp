#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/io/example.hpp>
#include <tapeflow/io/tfrecord_reader.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_io_example {

namespace tf = tapeflow;
using namespace std::string_literals;
namespace train = tf::train;

namespace {
std::vector<std::string> golden_records(const std::string& name) {
  tf::io::TFRecordReader r(std::string(TAPEFLOW_TEST_DATA_DIR) + "/io/" + name);
  std::vector<std::string> out;
  while (auto rec = r.next()) {
    out.push_back(*rec);
  }
  return out;
}
const std::string fake_jpeg =
    "\xff\xd8\xff\xe0\x00\x10JFIF\x00"
    "fake image bytes\xff\xd9"s;

// The Examples of make_golden.py's EXAMPLES, in order.
std::vector<train::Example> golden_examples() {
  std::vector<train::Example> v;
  v.push_back(train::Example({{"image", train::Feature(train::BytesList{{fake_jpeg}})},
                              {"label", train::Feature(train::Int64List{{1}})}}));
  v.push_back(train::Example({{"x", tf::io::float_feature({1.0f, 2.0f})}}));
  v.push_back(train::Example(
      {{"bytes", tf::io::bytes_feature({"a", "", "ccc"})},
       {"floats", tf::io::float_feature({-1.5f, 0.0f, 3.25e10f})},
       {"ints", tf::io::int64_feature({0, -1, std::int64_t{1} << 62, INT64_MIN, INT64_MAX})}}));
  v.push_back(train::Example({{"empty_bytes", train::BytesList{}},
                              {"empty_floats", train::FloatList{}},
                              {"empty_ints", train::Int64List{}}}));
  v.push_back(train::Example({{"nothing", train::Feature()}}));
  v.push_back(train::Example(train::Features{}));
  v.push_back(train::Example());
  v.push_back(train::Example({{"matrix", tf::io::float_feature({0, 1, 2, 3, 4, 5})},
                              {"names", tf::io::bytes_feature({"cat", "dog"})}}));
  return v;
}
}  // namespace

TEST_CASE("Example serialization equals TensorFlow's byte for byte", "[io][example][golden]") {
  const auto golden = golden_records("examples.tfrecord");
  const auto ours = golden_examples();
  REQUIRE(golden.size() == ours.size());
  for (std::size_t i = 0; i < ours.size(); ++i) {
    INFO("example " << i);
    CHECK(ours[i].serialize() == golden[i]);
    CHECK(train::Example::parse(golden[i]) == ours[i]);
  }
  CHECK(golden[6].empty());
  CHECK(golden[5] == "\x0a\x00"s);
}

TEST_CASE("Example parses hand-made encodings", "[io][example][golden]") {
  const auto hand = golden_records("handmade.tfrecord");
  REQUIRE(hand.size() == 4);
  auto e0 = train::Example::parse(hand[0]);
  CHECK(e0.at("ints").int64_list()->value == std::vector<std::int64_t>{5, -6, 300});
  CHECK(e0.at("floats").float_list()->value == std::vector<float>{1.5f, -2.0f});
  auto e1 = train::Example::parse(hand[1]);  // unknown fields, value before key
  CHECK(e1.at("label").int64_list()->value == std::vector<std::int64_t>{7, 8});
  CHECK(e1.features().feature.size() == 1);
  auto e2 = train::Example::parse(hand[2]);  // Example.features twice: merged
  CHECK(e2.at("a").int64_list()->value == std::vector<std::int64_t>{1});
  CHECK(e2.at("b").bytes_list()->value == std::vector<std::string>{"bee"});
  auto e3 = train::Example::parse(hand[3]);  // two packed chunks: merged
  CHECK(e3.at("label").int64_list()->value == std::vector<std::int64_t>{7, 8});
}

TEST_CASE("Example builders and accessors", "[io][example]") {
  train::Example e;
  CHECK_FALSE(e.has_features());
  e.set("label", tf::io::int64_feature(3)).set("name", tf::io::bytes_feature("x"));
  CHECK(e.has_features());
  CHECK(e.at("label").kind() == train::Feature::Kind::int64_list);
  CHECK(e.find("nope") == nullptr);
  CHECK_THROWS_AS(e.at("nope"), tf::not_found);
  CHECK(train::Example::parse(e.serialize()) == e);
  // docs/formats.md test vector
  CHECK(train::Example({{"x", tf::io::float_feature({1.0f, 2.0f})}}).serialize() ==
        "\x0a\x13\x0a\x11\x0a\x01\x78\x12\x0c\x12\x0a\x0a\x08\x00\x00\x80\x3f\x00\x00\x00\x40"s);
  // another kind replaces (oneof); the same kind appends
  train::Feature f;
  f.mutable_list<train::FloatList>().value.push_back(1);
  f.mutable_list<train::Int64List>().value.push_back(2);
  CHECK(f.kind() == train::Feature::Kind::int64_list);
}

TEST_CASE("Example::parse rejects malformed bytes with data_loss", "[io][example]") {
  CHECK_THROWS_AS(train::Example::parse("\x0a\x05\x01"s), tf::data_loss);
  CHECK_THROWS_WITH(train::Example::parse("\x0a\x05\x01"s),
                    Catch::Matchers::Contains("byte offset"));
  // truncated at every length: data_loss or a shorter valid message, never a crash
  const std::string full = golden_examples()[2].serialize();
  for (std::size_t n = 0; n < full.size(); ++n) {
    try {
      (void)train::Example::parse(std::string_view(full).substr(0, n));
    } catch (const tf::data_loss&) {
    }
  }
}

}  // namespace test_io_example
