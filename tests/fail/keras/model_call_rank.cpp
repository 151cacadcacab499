// error: needs the class's call\(\) to accept x
// A model whose call takes rank-4 images, called with a rank-3 batch, does not compile, and the
// message says why (not a page of template instantiations).
#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/model.hpp>

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

struct MLP : tf::keras::Model<MLP> {
  layers::Flatten flatten;
  layers::Dense dense{10};
  MLP() { TAPEFLOW_TRACK(flatten, dense); }
  tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& x) { return dense(flatten(x)); }
};

int main() {
  MLP model;
#ifndef TAPEFLOW_FAIL_TEST_SANITY
  auto y = model(tf::zeros<float>({1, 28, 28}));
#else
  auto y = model(tf::zeros<float>({1, 28, 28, 1}));
#endif
  return static_cast<int>(y.dims()[1]);
}
