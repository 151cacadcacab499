// Our event payloads equal TensorFlow's byte for byte for the same values
// (tests/data/summary/*.tfevents, written by make_golden.py with TensorFlow 2.21).
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <png.h>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/summary.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_summary_golden {

namespace tf = tapeflow;
namespace sd = tf::summary::detail;

namespace {

const std::string data_dir = std::string(TAPEFLOW_TEST_DATA_DIR) + "/summary/";

/// The golden file's records; the first is TensorFlow's version record.
std::vector<std::pair<std::uint64_t, std::string>> golden(const std::string& name) {
  return tf::summary::read_records(data_dir + name + ".tfevents");
}

/// Our Event payload for the same wall time and step as a golden one.
std::string ours(const std::string& golden_payload, const std::string& value) {
  const auto e = tf::summary::parse_event(golden_payload);
  return sd::summary_event(e.wall_time, e.step, value);
}

std::vector<std::uint8_t> decode_png(const std::string& bytes, int& width, int& height,
                                     int& channels) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()) != 0);
  channels = static_cast<int>(PNG_IMAGE_SAMPLE_CHANNELS(image.format));
  width = static_cast<int>(image.width);
  height = static_cast<int>(image.height);
  std::vector<std::uint8_t> pixels(PNG_IMAGE_SIZE(image));
  REQUIRE(png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr) != 0);
  return pixels;
}

}  // namespace

TEST_CASE("version record matches TensorFlow's apart from the writer name", "[summary][golden]") {
  const auto records = golden("scalar");
  const auto tf_version = tf::summary::parse_event(records[0].second);
  CHECK(tf_version.file_version == "brain.Event:2");
  CHECK(tf_version.wall_time == std::floor(tf_version.wall_time));
  CHECK(sd::version_event(tf_version.wall_time, tf_version.source_writer) == records[0].second);
}

TEST_CASE("docs/formats.md test vectors", "[summary][golden]") {
  // The TensorBoard test vector has no source_metadata: drop our empty one (2 bytes + len).
  std::string payload = sd::version_event(1599759586.0, "");
  payload.resize(payload.size() - 4);
  std::string framed;
  sd::append_record(framed, payload);
  const unsigned char expected[] = {0x18, 0,    0,    0,    0,    0,    0,    0,    0xa3, 0x7f,
                                    0x4b, 0x22, 0x09, 0x00, 0x00, 0x80, 0x38, 0x99, 0xd6, 0xd7,
                                    0x41, 0x1a, 0x0d, 'b',  'r',  'a',  'i',  'n',  '.',  'E',
                                    'v',  'e',  'n',  't',  ':',  '2',  0x12, 0x4b, 0x36, 0xab};
  CHECK(framed == std::string(reinterpret_cast<const char*>(expected), sizeof expected));

  std::string value;
  sd::append_scalar_value(value, "loss", 0.5f);
  std::string scalar;
  sd::append_record(scalar, sd::summary_event(1599759587.5, 1, value));
  CHECK(scalar.size() == 46 + 16);
  const unsigned char head[] = {0x2e, 0, 0, 0, 0, 0, 0, 0, 0xc5, 0xcb, 0x57, 0xfa};
  CHECK(scalar.substr(0, 12) == std::string(reinterpret_cast<const char*>(head), 12));
  const unsigned char tail[] = {0xd7, 0xd8, 0x55, 0x49};
  CHECK(scalar.substr(58) == std::string(reinterpret_cast<const char*>(tail), 4));
}

TEST_CASE("scalar events equal TensorFlow's", "[summary][golden]") {
  const auto records = golden("scalar");
  REQUIRE(records.size() == 4);
  const std::pair<const char*, float> values[] = {
      {"loss", 0.5f}, {"train/acc", 0.25f}, {"neg", -3.0f}};
  for (std::size_t i = 0; i < 3; ++i) {
    std::string value;
    sd::append_scalar_value(value, values[i].first, values[i].second);
    CHECK(ours(records[i + 1].second, value) == records[i + 1].second);
  }
}

TEST_CASE("histogram events equal TensorFlow's", "[summary][golden]") {
  const auto records = golden("histogram");
  REQUIRE(records.size() == 5);
  CHECK(ours(records[1].second,
             sd::histogram_value("weights", tf::constant<double>({0.0, 1.0, 1.5, 2.0, 5.0, -1.0}),
                                 {})) == records[1].second);
  CHECK(ours(records[2].second, sd::histogram_value("five", tf::constant<float>({1, 2, 3}),
                                                    {.buckets = 5})) == records[2].second);
  CHECK(ours(records[3].second, sd::histogram_value("same", tf::constant<double>({4.0, 4.0}),
                                                    {.buckets = 3})) == records[3].second);
  CHECK(ours(records[4].second, sd::histogram_value("empty", tf::zeros<float>({0}),
                                                    {.buckets = 2})) == records[4].second);
}

TEST_CASE("text events equal TensorFlow's", "[summary][golden]") {
  const auto records = golden("text");
  REQUIRE(records.size() == 3);
  const std::string note = "hello **world**";
  const auto value = sd::summary_value(
      "note",
      [&](sd::wire::Writer& t) { sd::write_tensor_strings(t, {}, std::vector<std::string>{note}); },
      "text");
  CHECK(ours(records[1].second, value) == records[1].second);
  const std::int64_t dims[2] = {2, 2};
  const auto grid = sd::summary_value(
      "grid",
      [&](sd::wire::Writer& t) {
        sd::write_tensor_strings(t, dims, std::vector<std::string>{"a", "b", "c", "d"});
      },
      "text");
  CHECK(ours(records[2].second, grid) == records[2].second);
}

TEST_CASE("audio events equal TensorFlow's", "[summary][golden]") {
  const auto records = golden("audio");
  REQUIRE(records.size() == 2);
  // make_golden.py: t = linspace(0, 1, 8); channels sin(2 pi t), 0.5 cos(2 pi t).
  std::vector<float> samples;
  for (int i = 0; i < 8; ++i) {
    const float t = static_cast<float>(i) / 7.0f;
    samples.push_back(static_cast<float>(std::sin(2.0 * std::numbers::pi * t)));
    samples.push_back(static_cast<float>(0.5 * std::cos(2.0 * std::numbers::pi * t)));
  }
  auto wave =
      tf::constant<float>(std::span<const float>(samples), std::array<std::int64_t, 3>{1, 8, 2});
  const auto tf_event = tf::summary::parse_event(records[1].second);
  const auto& tf_wav = tf_event.values.at(0).tensor->string_val.at(0);
  const auto our_wav = sd::encode_wav(wave.data(), 8, 2, 8000);
  REQUIRE(our_wav.size() == tf_wav.size());
  // Float rounding of sin/cos may differ by one unit between numpy and libm: compare samples
  // within 1, headers exactly.
  CHECK(our_wav.substr(0, 44) == tf_wav.substr(0, 44));
  for (std::size_t i = 44; i < tf_wav.size(); i += 2) {
    const auto a = static_cast<std::int16_t>(static_cast<std::uint8_t>(our_wav[i]) |
                                             (static_cast<std::uint8_t>(our_wav[i + 1]) << 8));
    const auto b = static_cast<std::int16_t>(static_cast<std::uint8_t>(tf_wav[i]) |
                                             (static_cast<std::uint8_t>(tf_wav[i + 1]) << 8));
    CHECK(std::abs(a - b) <= 1);
  }
  if (our_wav == tf_wav) {
    CHECK(ours(records[1].second, sd::audio_value("tone", wave, 8000, {})) == records[1].second);
  }
}

TEST_CASE("image events equal TensorFlow's (PNG pixels compared decoded)", "[summary][golden]") {
  const auto records = golden("image");
  REQUIRE(records.size() == 3);
  std::vector<std::uint8_t> pixels(2 * 3 * 4 * 3);
  for (std::size_t i = 0; i < pixels.size(); ++i) {
    pixels[i] = static_cast<std::uint8_t>(i * 2);
  }
  auto img = tf::constant<std::uint8_t>(std::span<const std::uint8_t>(pixels),
                                        std::array<std::int64_t, 4>{2, 3, 4, 3});
  auto fimg = tf::constant<float>({0.0f, 1.0f / 3.0f, 2.0f / 3.0f, 1.0f});
  auto fimg4 = tf::constant<float>(fimg.values(), std::array<std::int64_t, 4>{1, 2, 2, 1});
  struct Case {
    std::string value;
    std::size_t record;
  };
  const Case cases[] = {{sd::image_value("sample", img, {}), 1},
                        {sd::image_value("gray", fimg4, {.max_outputs = 1}), 2}};
  for (const auto& c : cases) {
    const auto theirs = tf::summary::parse_event(records[c.record].second).values.at(0);
    const auto mine =
        tf::summary::parse_event(ours(records[c.record].second, c.value)).values.at(0);
    CHECK(mine.tag == theirs.tag);
    CHECK(mine.plugin_name == theirs.plugin_name);
    CHECK(mine.plugin_content == theirs.plugin_content);
    REQUIRE(mine.tensor->string_val.size() == theirs.tensor->string_val.size());
    CHECK(mine.tensor->shape == theirs.tensor->shape);
    CHECK(mine.tensor->dtype == theirs.tensor->dtype);
    CHECK(mine.tensor->string_val[0] == theirs.tensor->string_val[0]);  // width
    CHECK(mine.tensor->string_val[1] == theirs.tensor->string_val[1]);  // height
    for (std::size_t i = 2; i < mine.tensor->string_val.size(); ++i) {
      int w1 = 0, h1 = 0, c1 = 0, w2 = 0, h2 = 0, c2 = 0;
      const auto a = decode_png(mine.tensor->string_val[i], w1, h1, c1);
      const auto b = decode_png(theirs.tensor->string_val[i], w2, h2, c2);
      CHECK(std::tie(w1, h1, c1) == std::tie(w2, h2, c2));
      CHECK(a == b);
    }
  }
}

TEST_CASE("TensorFlow's graph trace summary has the envelope trace_export writes",
          "[summary][golden]") {
  const auto records = golden("graph_trace");
  REQUIRE(records.size() == 2);
  const auto e = tf::summary::parse_event(records[1].second);
  CHECK(e.step == 0);
  const auto& v = e.values.at(0);
  CHECK(v.tag == "model_trace");
  CHECK(v.plugin_name == "graph_run_metadata_graph");
  CHECK(v.plugin_content == "1");
  CHECK(v.tensor->dtype == 7);
  CHECK(v.tensor->shape.empty());
  REQUIRE(v.tensor->string_val.size() == 1);
  // Our envelope around the same RunMetadata bytes is byte-identical.
  const auto ours_value = sd::summary_value(
      "model_trace",
      [&](sd::wire::Writer& t) { sd::write_tensor_strings(t, {}, v.tensor->string_val); },
      "graph_run_metadata_graph", "1");
  CHECK(ours(records[1].second, ours_value) == records[1].second);
}

}  // namespace test_summary_golden
