// libFuzzer target: TFRecordReader on arbitrary bytes. The first byte picks the compression
// (bits 0-1), skip_corrupt (bit 2) and a tiny buffer (bit 3); the rest is the file. Reading
// must end in records or a tapeflow::error, never a crash, hang or unbounded allocation;
// uncompressed records read must re-frame to exactly the input bytes they came from. The file
// is read twice, with read(std::string&) and with the zero-copy read_view(), and both passes
// must agree on every record, offset, skip count and error message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/io/tfrecord_reader.hpp>
#include <tapeflow/io/tfrecord_writer.hpp>

namespace tf = tapeflow;

namespace {
struct Pass {
  std::vector<std::string> records;
  std::vector<std::uint64_t> offsets;  // after each record
  std::string error;
  std::int64_t skipped = 0;
  bool operator==(const Pass&) const = default;
};

template <bool View>
Pass read_all(std::string_view file, const tf::io::TFRecordReaderOptions& options) {
  Pass pass;
  try {
    auto reader = tf::io::TFRecordReader::from_memory(file, options, "fuzz");
    if constexpr (View) {
      std::string_view record;
      while (reader.read_view(record)) {
        pass.records.emplace_back(record);
        pass.offsets.push_back(reader.offset());
      }
    } else {
      std::string record;  // reused: exercises the in-place overwrite path
      while (reader.read(record)) {
        pass.records.push_back(record);
        pass.offsets.push_back(reader.offset());
      }
    }
    pass.skipped = reader.corrupt_records_skipped();
  } catch (const tf::error& e) {
    pass.error = e.what();
  }
  return pass;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  const unsigned mode = data[0];
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto compression = static_cast<tf::io::Compression>((mode & 3) % 3);
  const bool skip = (mode & 4) != 0;
  const tf::io::TFRecordReaderOptions options{.compression = compression,
                                              .buffer_size = (mode & 8) != 0 ? 7U : 4096U,
                                              .skip_corrupt = skip};
  const Pass copies = read_all<false>(file, options);
  if (!(read_all<true>(file, options) == copies)) {
    std::abort();  // read_view and read disagree
  }
  if (compression == tf::io::Compression::none && !skip) {
    std::uint64_t expected_offset = 0;
    for (std::size_t i = 0; i < copies.records.size(); ++i) {
      std::string framed;
      tf::io::append_tfrecord(framed, copies.records[i]);
      if (file.substr(expected_offset, framed.size()) != framed) {
        std::abort();  // a record that does not match its bytes
      }
      expected_offset += framed.size();
      if (copies.offsets[i] != expected_offset) {
        std::abort();
      }
    }
  }
  return 0;
}
