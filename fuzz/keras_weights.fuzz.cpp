// libFuzzer target for the Keras 3 weights-file path of `model.load_weights`: the bytes are a
// `.weights.h5` file image (first byte even) or a `.keras` zip archive holding one (odd), loaded
// into the seed CNN of tests/data/keras_weights (Conv2D, BatchNormalization, MaxPooling2D,
// Flatten, Dense); bit 1 sets skip_mismatch, bit 2 compiles the model with Adam first, so an
// `optimizer` group is looked for and may build the slots. Any bytes must load or give a
// tf::error, and a failed load must leave every weight as it was (load_groups stages every value
// before assigning any). HDF5 parsing itself is Debian's libhdf5, uninstrumented (fuzz/README.md).
//   ./keras_weights_fuzzer -max_total_time=600 <fresh dir> fuzz/corpus/keras_weights
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/keras/detail/hdf5_weights.hpp>
#include <tapeflow/keras/layers/batch_normalization.hpp>
#include <tapeflow/keras/layers/conv2d.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/layers/pooling.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/keras/sequential.hpp>
#include <tapeflow/keras/weights.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/softmax.hpp>

// The libFuzzer build compiles tapeflow::keras_io's sources in (fuzz/CMakeLists.txt); the replay
// program links the library instead.
#if TAPEFLOW_FUZZ_KERAS_IO_SOURCES
#include "../src/keras_io/hdf5_weights.cpp"
#include "../src/keras_io/keras_archive.cpp"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace tf = tapeflow;
  namespace layers = tf::keras::layers;
  if (size == 0) {
    return 0;
  }
  const std::uint8_t mode = data[0];
  const std::string_view file(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto model = tf::keras::Sequential(layers::Conv2D(2, 3, {.activation = tf::nn::relu}),
                                     layers::BatchNormalization(), layers::MaxPooling2D(2),
                                     layers::Flatten(),
                                     layers::Dense(3, {.activation = tf::nn::softmax}));
  const auto x = tf::zeros<float>({1, 6, 6, 1});
  (void)model(x);
  if ((mode & 4) != 0) {
    model.compile({.optimizer = tf::keras::optimizers::Adam(),
                   .loss = tf::keras::losses::MeanSquaredError()});
  }
  std::vector<std::string> before;  // every weight is float32
  for (const auto& v : model.variables()) {
    const auto t = v.value();
    before.emplace_back(static_cast<const char*>(t.raw_data()), static_cast<std::size_t>(t.num_elements()) * sizeof(float));
  }
  try {
    namespace io = tf::detail::keras_hdf5;
    const io::WeightsFile weights =
        (mode & 1) == 0 ? io::WeightsFile(std::string(file), "fuzz.weights.h5")
                        : io::WeightsFile(io::read_archive_member(file, "fuzz.keras",
                                                                  "model.weights.h5"),
                                          "fuzz.keras (model.weights.h5)");
    (void)tf::detail::keras_weights::load_groups(model, weights, (mode & 2) != 0);
    (void)model(x);  // loaded weights of the checked shapes run
  } catch (const tf::error&) {
    const auto after = model.variables();
    for (std::size_t i = 0; i < after.size(); ++i) {
      const auto t = after[i].value();
      if (std::string_view(static_cast<const char*>(t.raw_data()), static_cast<std::size_t>(t.num_elements()) * sizeof(float)) != before[i]) {
        __builtin_trap();  // a failed load changed a weight
      }
    }
  }
  return 0;
}
