// libFuzzer target for the TF_CONFIG reader (`distribute::detail::parse_tf_config`, what
// MultiWorkerMirroredStrategy runs on the environment variable): any bytes must either give a
// cluster and task or raise invalid_argument naming the offset — never crash, recurse without
// bound or read out of bounds.
//   ./tf_config_fuzzer -max_total_time=600 <fresh dir> fuzz/corpus/tf_config
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/distribute/detail/tf_config.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto config = tapeflow::distribute::detail::parse_tf_config(text);
    std::size_t tasks = 0;
    for (const auto& [job, addresses] : config.cluster) {
      tasks += job.size() + addresses.size();
    }
    static_cast<void>(tasks);
  } catch (const tapeflow::error&) {
  }
  return 0;
}
