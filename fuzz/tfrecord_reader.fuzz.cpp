// libFuzzer target: TFRecordReader on arbitrary bytes. The first byte picks the compression
// (bits 0-1) and skip_corrupt (bit 2); the rest is the file. Reading must end in records or a
// tapeflow::error, never a crash, hang or unbounded allocation; uncompressed records read must
// re-frame to exactly the input bytes they came from.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/io/tfrecord_reader.hpp>
#include <tapeflow/io/tfrecord_writer.hpp>

namespace tf = tapeflow;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const unsigned mode = data[0];
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto compression = static_cast<tf::io::Compression>((mode & 3) % 3);
  const bool skip = (mode & 4) != 0;
  try {
    auto reader = tf::io::TFRecordReader::from_memory(file,
                                                      {.compression = compression,
                                                       .buffer_size = (mode & 8) != 0 ? 7U : 4096U,
                                                       .skip_corrupt = skip},
                                                      "fuzz");
    std::string record;
    std::uint64_t expected_offset = 0;
    while (reader.read(record)) {
      if (compression == tf::io::Compression::none && !skip) {
        std::string framed;
        tf::io::append_tfrecord(framed, record);
        if (file.substr(expected_offset, framed.size()) != framed) {
          std::abort();  // a record that does not match its bytes
        }
        expected_offset += framed.size();
        if (reader.offset() != expected_offset) {
          std::abort();
        }
      }
    }
  } catch (const tf::error&) {
  }
  return 0;
}
