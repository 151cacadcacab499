#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/layers/embedding.hpp>
#include <tapeflow/keras/layers/lstm.hpp>
#include <tapeflow/ops/random/random.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>
#include <tapeflow/train/trackable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_recurrent {

namespace tf = tapeflow;
namespace layers = tf::keras::layers;
using Catch::Detail::Approx;

namespace {

using tf::train::Layout;

// A layer's object-graph children (local names) under `layout`.
std::vector<std::string> child_names(tf::train::Trackable& t, Layout layout) {
  std::vector<std::string> out;
  for (const auto& c : t.trackable_children(layout)) {
    out.push_back(c.name);
  }
  return out;
}
template <std::size_t R>
tf::Tensor<float, R> data(std::array<std::int64_t, R> dims, std::int64_t seed) {
  return tf::random::uniform<float>(dims, {.minval = -1.0f, .maxval = 1.0f, .seed = seed});
}
template <std::size_t R>
tf::Tensor<float, 0> weigh(const tf::Tensor<float, R>& y) {
  std::vector<float> w(static_cast<std::size_t>(y.num_elements()));
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = 0.5f + 0.37f * float((i * 7919) % 11) / 11.0f;
  }
  return tf::reduce_sum(y * tf::constant<float, R>(std::span<const float>(w), y.dims()));
}
// Central differences on every element of every weight of `layer`, through `f()`.
template <class F>
void check_weight_gradients(tf::keras::Layer<>& layer, F&& f) {
  auto vars = layer.trainable_variables();
  tf::GradientTape tape;
  auto loss = f();
  tape.stop();
  auto grads = tape.gradient_by_id(loss, tf::ids_of(vars));
  for (std::size_t k = 0; k < vars.size(); ++k) {
    REQUIRE(grads[k].has_value());
    const auto original = vars[k].value();
    const float* g = static_cast<const float*>(grads[k].raw_data());
    for (std::int64_t i = 0; i < original.num_elements(); i += 3) {
      auto eval = [&](float d) {
        std::vector<float> vals(
            static_cast<const float*>(original.raw_data()),
            static_cast<const float*>(original.raw_data()) + original.num_elements());
        vals[std::size_t(i)] += d;
        if (original.rank() == 2) {
          vars[k].assign(tf::constant<float, 2>(std::span<const float>(vals),
                                                {original.shape()[0], original.shape()[1]}));
        } else {
          vars[k].assign(
              tf::constant<float, 1>(std::span<const float>(vals), {original.shape()[0]}));
        }
        double y = f().item();
        vars[k].assign(original);
        return y;
      };
      const double numeric = (eval(1e-2f) - eval(-1e-2f)) / 2e-2;
      INFO(vars[k].name() << "[" << i << "]");
      CHECK(numeric == Approx(g[i]).margin(2e-2).epsilon(2e-2));
    }
  }
}
}  // namespace

TEST_CASE("LSTMCell: state shapes, weight names, Keras' gate equations, gradients") {
  layers::LSTMCell cell(3);
  auto state = cell.get_initial_state({.batch_size = 2});
  CHECK(state[0].dims() == std::array<std::int64_t, 2>{2, 3});
  auto x = data<2>({2, 4}, 1);
  auto [out, next] = cell(x, state);
  CHECK(out.dims() == std::array<std::int64_t, 2>{2, 3});
  CHECK(next[1].dims() == std::array<std::int64_t, 2>{2, 3});
  CHECK(child_names(cell, Layout::keras3) ==
        std::vector<std::string>{"kernel", "recurrent_kernel", "bias"});
  // tf_keras also tracks the list `state_size` (a node without values), set before the weights
  CHECK(child_names(cell, Layout::tf_keras) ==
        std::vector<std::string>{"state_size", "kernel", "recurrent_kernel", "bias"});
  CHECK(cell.kernel().shape() == tf::Shape({4, 12}));
  CHECK(cell.recurrent_kernel().shape() == tf::Shape({3, 12}));
  // unit_forget_bias: the forget gate's bias starts at 1
  CHECK(cell.bias().value().numpy() == std::vector<float>{0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0});
  // recurrent kernel is orthogonal: R R^T = I (3 x 12 rows orthonormal)
  auto r = cell.recurrent_kernel().value();
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      double dot = 0;
      for (int j = 0; j < 12; ++j) {
        dot += double(r(a, j)) * double(r(b, j));
      }
      CHECK(dot == Approx(a == b ? 1.0 : 0.0).margin(1e-5));
    }
  }
  // one step by hand for example 0, unit 0
  auto k = cell.kernel().value();
  auto b = cell.bias().value();
  auto gate = [&](int g) {
    double z = b(g * 3);
    for (int f = 0; f < 4; ++f) {
      z += double(x(0, f)) * double(k(f, g * 3));
    }
    return z;
  };
  auto sig = [](double z) { return 1 / (1 + std::exp(-z)); };
  const double c = sig(gate(0)) * std::tanh(gate(2));
  CHECK(next[1](0, 0) == Approx(c).epsilon(1e-5));
  CHECK(out(0, 0) == Approx(sig(gate(3)) * std::tanh(c)).epsilon(1e-5));

  auto x2 = data<2>({2, 4}, 2);
  auto h0 = data<2>({2, 3}, 3);
  auto c0 = data<2>({2, 3}, 4);
  check_weight_gradients(cell, [&] {
    auto [o, s] = cell(x2, layers::LSTMState{h0, c0});
    return weigh(o) + weigh(s[1]);
  });
}

TEST_CASE("LSTM: last output, sequences and child 'cell'") {
  layers::LSTM lstm(2);
  auto x = data<3>({2, 3, 4}, 5);
  auto y = lstm(x);
  CHECK(y.dims() == std::array<std::int64_t, 2>{2, 2});
  auto seq = lstm.sequences(x);
  CHECK(seq.dims() == std::array<std::int64_t, 3>{2, 3, 2});
  // last step of the sequence is the output
  CHECK(seq(1, 2, 1) == Approx(y(1, 1)));
  CHECK(child_names(lstm, Layout::keras3) == std::vector<std::string>{"cell"});
  // tf_keras's RNN layers track the list `state_spec` once built
  CHECK(child_names(lstm, Layout::tf_keras) == std::vector<std::string>{"cell", "state_spec"});
  layers::LSTM unbuilt(2);
  CHECK(child_names(unbuilt, Layout::tf_keras) == std::vector<std::string>{"cell"});
  CHECK(lstm.variables().size() == 3);
  check_weight_gradients(lstm, [&] { return weigh(lstm.sequences(x)); });
}

TEST_CASE("Embedding: lookup, name, gradient rows") {
  layers::Embedding emb(5, 3);
  auto ids = tf::constant<std::int32_t>({{0, 4}, {4, 4}});
  auto e = emb(ids);
  CHECK(e.dims() == std::array<std::int64_t, 3>{2, 2, 3});
  CHECK(child_names(emb, Layout::tf_keras) == std::vector<std::string>{"embeddings"});
  CHECK(child_names(emb, Layout::keras3) == std::vector<std::string>{"_embeddings"});
  auto table = emb.embeddings().value();
  CHECK(e(1, 0, 2) == table(4, 2));
  for (float v : table.values()) {
    CHECK(std::abs(v) <= 0.05f);
  }
  tf::GradientTape tape;
  auto loss = tf::reduce_sum(emb(ids));
  tape.stop();
  auto vars = emb.trainable_variables();
  auto g = tape.gradient_by_id(loss, tf::ids_of(vars));
  auto gt = g[0].as<float, 2>();
  CHECK(gt(0, 0) == 1.0f);  // id 0 used once
  CHECK(gt(4, 1) == 3.0f);  // id 4 used three times
  CHECK(gt(2, 0) == 0.0f);
}

}  // namespace test_keras_recurrent
