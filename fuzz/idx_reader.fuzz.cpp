// libFuzzer target for the IDX (MNIST) reader of `tf::keras::datasets`: the first byte picks
// gzip-then-decode (as load_data reads the .gz files) or a decode of the raw bytes; the rest is
// the file. Any bytes must give tensors or a tf::error (data_loss, or resource_exhausted past
// the decompression ceiling, lowered here to 16 MiB) — never crash or allocate without bound.
//   ./idx_reader_fuzzer -max_total_time=600 <fresh dir> fuzz/corpus/idx_reader
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/keras/datasets.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace idx = tapeflow::keras::datasets::idx;
  if (size == 0) {
    return 0;
  }
  const bool gzipped = (data[0] & 1) != 0;
  const std::span<const std::uint8_t> file(data + 1, size - 1);
  try {
    std::vector<std::uint8_t> plain;
    if (gzipped) {
      plain = idx::gunzip(file, "fuzz.gz", std::size_t{16} << 20);
    } else {
      plain.assign(file.begin(), file.end());
    }
    try {
      const auto images = idx::decode_images(plain, "fuzz");
      if (images.size() != static_cast<std::int64_t>(plain.size()) - 16) {
        __builtin_trap();  // every pixel byte lands in the tensor
      }
    } catch (const tapeflow::error&) {
    }
    const auto labels = idx::decode_labels(plain, "fuzz");
    if (labels.size() != static_cast<std::int64_t>(plain.size()) - 8) {
      __builtin_trap();
    }
  } catch (const tapeflow::error&) {
  }
  return 0;
}
