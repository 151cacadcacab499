// error: tf::image::encode_png needs libpng, compiled out here: define TAPEFLOW_WITH_PNG=1
// With TAPEFLOW_WITH_PNG=0 (the single header's default) the header still compiles, and a call
// names the macro that brings the codec back.
#define TAPEFLOW_WITH_PNG 0
#include <cstdint>

#include <tapeflow/image/decode_png.hpp>

namespace tf = tapeflow;

int main() {
  auto image = tf::Tensor<std::uint8_t, 3>::uninitialized({2, 2, 1});
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto png = tf::image::encode_png(image);
  return static_cast<int>(png.item().size());
#else
  return static_cast<int>(image.num_elements()) - 4;
#endif
}
