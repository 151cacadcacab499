// Replays a committed corpus through its fuzz target without libFuzzer, built by the build's
// own compiler: `fuzz_replay <target> <corpus dir>` feeds every file to the target's
// LLVMFuzzerTestOneInput, so an input that once passed and now crashes, traps or leaks an
// exception fails CTest (tests fuzz/replay/<target>, every run; fuzz/README.md).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

// Each target defines LLVMFuzzerTestOneInput: give each its own name in this one translation
// unit (one compile for all of them).
#define LLVMFuzzerTestOneInput fuzz_tfrecord_reader
#include "tfrecord_reader.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_example_parser
#include "example_parser.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_checkpoint_index
#include "checkpoint_index.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_saved_model_parse
#include "saved_model_parse.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_event_file
#include "event_file.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_idx_reader
#include "idx_reader.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_image_decode
#include "image_decode.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_checkpoint_state
#include "checkpoint_state.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_object_graph
#include "object_graph.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_tf_config
#include "tf_config.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#if TAPEFLOW_HAS_HDF5  // linked with tapeflow::keras_io (tests/CMakeLists.txt)
#define LLVMFuzzerTestOneInput fuzz_keras_weights
#include "keras_weights.fuzz.cpp"
#undef LLVMFuzzerTestOneInput
#endif

namespace {
using Target = int (*)(const std::uint8_t*, std::size_t);
struct Entry {
  std::string_view name;
  Target run;
};
constexpr Entry targets[] = {
    {"tfrecord_reader", fuzz_tfrecord_reader}, {"example_parser", fuzz_example_parser},
    {"checkpoint_index", fuzz_checkpoint_index}, {"saved_model_parse", fuzz_saved_model_parse},
    {"event_file", fuzz_event_file},           {"idx_reader", fuzz_idx_reader},
    {"image_decode", fuzz_image_decode},       {"checkpoint_state", fuzz_checkpoint_state},
    {"object_graph", fuzz_object_graph},       {"tf_config", fuzz_tf_config},
#if TAPEFLOW_HAS_HDF5
    {"keras_weights", fuzz_keras_weights},
#endif
};
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_replay <target> <corpus dir>\n");
    return 2;
  }
  const std::string_view name = argv[1];
  const auto* target = std::find_if(std::begin(targets), std::end(targets),
                                    [&](const Entry& e) { return e.name == name; });
  if (target == std::end(targets)) {
    std::fprintf(stderr, "fuzz_replay: no target named %s\n", argv[1]);
    return 2;
  }
  std::vector<std::filesystem::path> inputs;
  for (const auto& file : std::filesystem::directory_iterator(argv[2])) {
    if (file.is_regular_file()) {
      inputs.push_back(file.path());
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "fuzz_replay: corpus %s is empty\n", argv[2]);
    return 1;
  }
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    std::printf("%s\n", path.filename().c_str());  // the last name printed is the culprit
    std::fflush(stdout);
    target->run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs through %s\n", inputs.size(), argv[1]);
  return 0;
}
