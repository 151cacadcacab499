// error: tf::summary::image writes PNGs and needs libpng, compiled out here: define TAPEFLOW_WITH_PNG
// With TAPEFLOW_WITH_PNG=0 (the single header's default) the other summaries work, and an image
// summary names the macro that brings libpng back.
#define TAPEFLOW_WITH_PNG 0
#include <cstdint>

#include <tapeflow/summary/image.hpp>
#include <tapeflow/summary/scalar.hpp>

namespace tf = tapeflow;

int main() {
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto images = tf::Tensor<std::uint8_t, 4>::uninitialized({1, 2, 2, 1});
  return tf::summary::image("images", images, 0) ? 1 : 0;
#else
  return tf::summary::scalar("loss", 1.0f, 0) ? 1 : 0;
#endif
}
