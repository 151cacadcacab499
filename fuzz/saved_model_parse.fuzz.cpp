// libFuzzer target for the saved_model.pb parser (issue 17): any bytes must either parse or raise
// a tf::error (data_loss for malformed input) — never crash, hang, read out of bounds or
// allocate without bound. A parsed model is written back and parsed again: the second write must
// give the same bytes (what the structs hold survives the writer and the reader unchanged).
// Build: cmake -DTAPEFLOW_FUZZ=ON (fuzz/CMakeLists.txt), target fuzz_<name>; run:
//   ./saved_model_parse_fuzzer -max_total_time=600 <fresh dir> fuzz/corpus/saved_model_parse
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/saved_model/detail/parse.hpp>
#include <tapeflow/saved_model/detail/proto.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sm = tapeflow::saved_model::detail;
  std::string once;
  try {
    const auto model =
        sm::parse_saved_model(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    once = sm::serialize(model);
  } catch (const tapeflow::error&) {
    return 0;
  }
  const std::string twice = sm::serialize(sm::parse_saved_model(once, "fuzz (written back)"));
  if (twice != once) {
    __builtin_trap();
  }
  return 0;
}
