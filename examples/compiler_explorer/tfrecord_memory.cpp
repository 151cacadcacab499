// tf.train.Example records in a TFRecord stream, written and read back in memory, in one file
// for Compiler Explorer (README, "Compiler Explorer"). There: add the libraries Eigen and
// range-v3, compile with -std=c++20 -O2, and include single_include/tapeflow/all.hpp by its URL.
// (GZIP/ZLIB streams need zlib: define TAPEFLOW_WITH_ZLIB=1 before the include and link -lz.)
// [snippet:program]
#include <cstdint>
#include <iostream>
#include <string>

#include <tapeflow/all.hpp>

namespace tf = tapeflow;

int main() {
  std::string file;  // the bytes a TFRecordWriter would write to a file
  for (std::int64_t i = 0; i < 3; ++i) {
    tf::train::Example example({
        {"name", tf::io::bytes_feature("example " + std::to_string(i))},
        {"point", tf::io::float_feature({0.5f * static_cast<float>(i), 1.0f})},
        {"label", tf::io::int64_feature(i % 2)},
    });
    tf::io::append_tfrecord(file, example.serialize());  // length, CRCs, payload
  }
  std::cout << "3 records, " << file.size() << " bytes\n";

  const tf::io::FeatureDescription description{
      {"name", tf::io::FixedLenFeature<std::string>{}},
      {"point", tf::io::FixedLenFeature<float>{.shape = {2}}},
      {"label", tf::io::FixedLenFeature<std::int64_t>{}},
  };
  auto reader = tf::io::TFRecordReader::from_memory(file);
  std::string record;
  std::int64_t label_sum = 0;
  while (reader.read(record)) {  // checks both CRCs of every record
    auto parsed = tf::io::parse_single_example(record, description);
    auto label = parsed["label"].as<std::int64_t, 0>();
    std::cout << parsed["name"].as<std::string, 0>().item() << ": point "
              << parsed["point"].as<float, 1>() << ", label " << label.item() << "\n";
    label_sum += label.item();
  }
  return reader.records_read() == 3 && label_sum == 1 ? 0 : 1;
}
// [snippet:program]
