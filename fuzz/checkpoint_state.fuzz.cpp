// libFuzzer target for the `checkpoint` state file parser (tf.train.get_checkpoint_state's text
// proto): any text must parse or give nullopt, never crash. A parsed state written back with
// to_text (as CheckpointManager writes it) must parse to a state that writes the same text.
//   ./checkpoint_state_fuzzer -max_total_time=600 <fresh dir> fuzz/corpus/checkpoint_state
#include <cstddef>
#include <cstdint>
#include <string>

#include <tapeflow/train/checkpoint_state.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace train = tapeflow::train;
  const auto state =
      train::parse_checkpoint_state(std::string(reinterpret_cast<const char*>(data), size));
  if (!state) {
    return 0;
  }
  const std::string once = train::to_text(*state);
  const auto again = train::parse_checkpoint_state(once);
  if (!again || train::to_text(*again) != once) {
    __builtin_trap();
  }
  return 0;
}
