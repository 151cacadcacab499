// error: use of deleted function|call to deleted
// TFRecordReader::from_memory keeps a view of its bytes: a temporary string (here the result
// of a function reading a file) would be destroyed before the first read, so it does not
// compile.
#include <fstream>
#include <iterator>
#include <string>

#include <tapeflow/io/tfrecord_reader.hpp>

namespace tf = tapeflow;

std::string read_bytes(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int main() {
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto reader = tf::io::TFRecordReader::from_memory(read_bytes("data.tfrecord"));
#else
  const std::string bytes = read_bytes("data.tfrecord");
  auto reader = tf::io::TFRecordReader::from_memory(bytes);
#endif
  std::string record;
  return reader.read(record) ? 0 : 1;
}
