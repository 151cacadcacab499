// error: tf::image::decode_jpeg needs libjpeg, compiled out here: define TAPEFLOW_WITH_JPEG=1
// With TAPEFLOW_WITH_JPEG=0 (the single header's default) the header still compiles, and a call
// names the macro that brings the codec back.
#define TAPEFLOW_WITH_JPEG 0
#include <string>

#include <tapeflow/image/decode_jpeg.hpp>

namespace tf = tapeflow;

int main() {
  const std::string bytes = "\xff\xd8";
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto image = tf::image::decode_jpeg(bytes);
  return static_cast<int>(image.num_elements());
#else
  return static_cast<int>(tf::image::DecodeJpegOptions{}.channels + bytes.size()) - 2;
#endif
}
