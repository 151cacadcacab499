// libFuzzer target for the TrackableObjectGraph reader (the `_CHECKPOINTABLE_OBJECT_GRAPH`
// entry of every TF2 checkpoint): any bytes must decode or raise data_loss, never crash or
// allocate without bound. A decoded graph encoded again must decode to one that encodes to the
// same bytes.
//   ./object_graph_fuzzer -max_total_time=600 <fresh dir> fuzz/corpus/object_graph
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/train/detail/object_graph.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace og = tapeflow::detail::object_graph;
  std::string once;
  try {
    once = og::encode(og::decode(std::string_view(reinterpret_cast<const char*>(data), size),
                                 "fuzz"));
  } catch (const tapeflow::data_loss&) {
    return 0;
  }
  if (og::encode(og::decode(once, "fuzz (written back)")) != once) {
    __builtin_trap();
  }
  return 0;
}
