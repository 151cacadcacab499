// libFuzzer target: tf.train.Example parsing on arbitrary bytes: Example::parse (generic
// protobuf reader), parse_single_example and parse_example with a description covering every
// spec kind (FixedLen, VarLen, FixedLenSequence). Errors must be tapeflow::error; a parsed Example
// must survive serialize -> parse -> serialize unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/io/example.hpp>
#include <tapeflow/io/parse_example.hpp>

namespace tf = tapeflow;
using tf::io::FixedLenFeature;
using tf::io::FixedLenSequenceFeature;
using tf::io::VarLenFeature;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto example = tf::train::Example::parse(bytes);
    const std::string once = example.serialize();
    const std::string twice = tf::train::Example::parse(once).serialize();
    if (once != twice) {
      std::abort();
    }
  } catch (const tf::error&) {
  }
  static const tf::io::FeatureDescription description{
      {"image", FixedLenFeature<std::string>{}},
      {"label", FixedLenFeature<std::int64_t>{.default_value = 0}},
      {"x", FixedLenFeature<float>{{2}, {0.0f, 0.0f}}},
      {"a", VarLenFeature<std::int64_t>{}},
      {"b", VarLenFeature<std::string>{}},
      {"floats", VarLenFeature<float>{}},
      {"ints", FixedLenFeature<std::int64_t>{{5}, {0, 0, 0, 0, 0}}},
      {"seq", FixedLenSequenceFeature<float>{.shape = {2}, .allow_missing = true}},
      {"seq_ids",
       FixedLenSequenceFeature<std::int64_t>{.allow_missing = true, .default_value = -1}},
      {"seq_bytes", FixedLenSequenceFeature<std::string>{.allow_missing = true}},
  };
  try {
    (void)tf::io::parse_single_example(bytes, description);
  } catch (const tf::error&) {
  }
  try {
    const std::string_view batch[2] = {bytes, bytes.substr(size / 2)};
    (void)tf::io::parse_example(std::span<const std::string_view>(batch), description);
  } catch (const tf::error&) {
  }
  return 0;
}
