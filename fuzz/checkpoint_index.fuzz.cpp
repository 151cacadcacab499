// libFuzzer target for the tensor-bundle index reader (issue 7): any bytes as a `.index` file
// must either parse or raise a tf::error — never crash, hang or read out of bounds. Every
// tensor the index lists is then read (against a data file that does not exist / is short).
// Build: cmake -DTAPEFLOW_FUZZ=ON (fuzz/CMakeLists.txt), target fuzz_<name>; run:
//   ./checkpoint_index_fuzzer -max_total_time=600 <fresh dir> fuzz/corpus/checkpoint_index
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <tapeflow/train/tensor_bundle.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    tapeflow::train::CheckpointReader r(
        "/nonexistent/fuzz", std::string_view(reinterpret_cast<const char*>(data), size));
    for (const auto& k : r.keys()) {
      (void)r.info(k);
      try {
        (void)r.get_tensor(k);
      } catch (const tapeflow::error&) {
      }
    }
  } catch (const tapeflow::error&) {
  }
  return 0;
}
