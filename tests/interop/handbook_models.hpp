// The handbook's MLP, CNN and LSTM text model and the shared batch, as the interop programs
// (keras_layouts.cpp, saved_model_export.cpp) and their Python checkers build them: attribute
// names as in Python, so checkpoint keys and object graphs match.
#pragma once

#include <cstdint>
#include <tuple>

#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

namespace handbook {

namespace tf = tapeflow;
namespace layers = tf::keras::layers;

constexpr std::int64_t batch = 4;
constexpr std::int64_t num_chars = 30, seq_length = 8;  // the text model, kept small

// The handbook's MLP: Flatten, Dense(100, relu), Dense(10), softmax.
struct MLP : tf::keras::Model<MLP> {
  layers::Flatten flatten;
  layers::Dense dense1{100, {.activation = tf::nn::relu}};
  layers::Dense dense2{10};
  MLP() { TAPEFLOW_TRACK(flatten, dense1, dense2); }
  tf::Tensor<float, 2> operator()(const tf::Tensor<float, 4>& x) {
    return tf::nn::softmax(dense2(dense1(flatten(x))));
  }
};

// The handbook's CNN: two 5x5 same-padded relu convolutions (32, 64 filters) with 2x2 max
// pooling, Reshape to 7*7*64 (attribute `flatten`), Dense(1024, relu), Dense(10), softmax.
struct CNN : tf::keras::Model<CNN> {
  layers::Conv2D conv1{32, 5, {.padding = "same", .activation = tf::nn::relu}};
  layers::MaxPooling2D pool1{2, {.strides = 2}};
  layers::Conv2D conv2{64, 5, {.padding = "same", .activation = tf::nn::relu}};
  layers::MaxPooling2D pool2{2, {.strides = 2}};
  layers::Reshape<1> flatten{{7 * 7 * 64}};
  layers::Dense dense1{1024, {.activation = tf::nn::relu}};
  layers::Dense dense2{10};
  CNN() { TAPEFLOW_TRACK(conv1, pool1, conv2, pool2, flatten, dense1, dense2); }
  tf::Tensor<float, 2> operator()(const tf::Tensor<float, 4>& x) {
    auto h = pool2(conv2(pool1(conv1(x))));
    return tf::nn::softmax(dense2(dense1(flatten(h))));
  }
};

// The handbook's text model: one-hot characters through LSTMCell(256) over seq_length steps
// from zero states, Dense(num_chars), softmax.
struct RNN : tf::keras::Model<RNN> {
  layers::LSTMCell cell{256};
  layers::Dense dense{num_chars};
  RNN() { TAPEFLOW_TRACK(cell, dense); }
  tf::Tensor<float, 2> operator()(const tf::Tensor<std::int32_t, 2>& inputs) {
    auto steps = tf::unstack(tf::one_hot<float>(inputs, num_chars), 1);
    auto state = cell.get_initial_state({.batch_size = inputs.dim(0)});
    tf::Tensor<float, 2> output;
    for (const auto& x_t : steps) {
      std::tie(output, state) = cell(x_t, state);
    }
    return tf::nn::softmax(dense(output));
  }
};

// The shared batch (check_keras_layouts.py builds the same): images x[i] = ((37 i) % 256) / 255
// over the flat [4, 28, 28, 1] buffer, labels 3 7 0 9; tokens t[i] = (7 i + 3) % 30 over the
// flat [4, 8] buffer, next characters (11 i + 5) % 30.
tf::Tensor<float, 4> images() {
  auto t = tf::Tensor<float, 4>::uninitialized({batch, 28, 28, 1});
  float* d = tf::detail::tensor_access::mutable_data(t);
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    d[i] = float((37 * i) % 256) / 255.0f;
  }
  return t;
}
tf::Tensor<std::int32_t, 2> tokens() {
  auto t = tf::Tensor<std::int32_t, 2>::uninitialized({batch, seq_length});
  std::int32_t* d = tf::detail::tensor_access::mutable_data(t);
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    d[i] = std::int32_t((7 * i + 3) % num_chars);
  }
  return t;
}
}  // namespace handbook
