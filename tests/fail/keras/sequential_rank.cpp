// error: a layer's output rank does not fit the next layer's input rank
// Flatten gives rank 2 but Conv2D needs rank-4 NHWC input: Sequential refuses at compile time.
#include <tapeflow/keras/layers/conv2d.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/sequential.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

int main() {
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto model = tf::keras::Sequential(layers::Flatten(), layers::Conv2D(8, 3));
#else
  auto model = tf::keras::Sequential(layers::Conv2D(8, 3), layers::Flatten());
#endif
  return static_cast<int>(model.num_layers);
}
