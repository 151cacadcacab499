// libFuzzer target for the event-file reader (`tf::summary::parse_events`, what
// `summary_iterator` runs on a file's bytes): any bytes must either give events or raise a
// tf::error (data_loss naming the offset) — never crash, hang, read out of bounds or allocate
// more than the bytes present.
//   ./event_file_fuzzer -max_total_time=600 <fresh dir> fuzz/corpus/event_file
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/summary/event_reader.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::size_t values = 0;
    for (const auto& event : tapeflow::summary::parse_events(bytes, "fuzz")) {
      values += event.values.size();
    }
    static_cast<void>(values);
  } catch (const tapeflow::error&) {
  }
  return 0;
}
