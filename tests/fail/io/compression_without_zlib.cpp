// error: compressed TFRecords need zlib, compiled out here: define TAPEFLOW_WITH_ZLIB=1
// With TAPEFLOW_WITH_ZLIB=0 (the single header's default) uncompressed TFRecords work, and
// naming a compression names the macro that brings zlib back.
#define TAPEFLOW_WITH_ZLIB 0
#include <string>

#include <tapeflow/io/tfrecord_reader.hpp>
#include <tapeflow/io/tfrecord_writer.hpp>

namespace tf = tapeflow;

int main() {
  std::string file;
  tf::io::append_tfrecord(file, "record");
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto reader =
      tf::io::TFRecordReader::from_memory(file, {.compression = tf::io::Compression::gzip});
#else
  auto reader =
      tf::io::TFRecordReader::from_memory(file, {.compression = tf::io::Compression::none});
#endif
  std::string record;
  return reader.read(record) && record == "record" ? 0 : 1;
}
