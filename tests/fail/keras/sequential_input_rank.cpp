// error: the input's rank does not fit the first layers
// A rank-3 batch fed to a model starting with Conv2D (which needs rank-4 NHWC) does not compile.
#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/layers/conv2d.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/sequential.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

int main() {
  auto model = tf::keras::Sequential(layers::Conv2D(8, 3), layers::Flatten());
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto y = model(tf::zeros<float>({1, 28, 28}));
#else
  auto y = model(tf::zeros<float>({1, 28, 28, 1}));
#endif
  return static_cast<int>(y.dims()[1]);
}
