// Character-level text generation with an LSTM, as in the TensorFlow 2 handbook: one-hot
// characters -> LSTMCell(256) unrolled over seq_length steps -> Dense(num_chars); trained with
// Adam on random windows of a text, then sampled at several temperatures. Characters are
// Unicode code points, as in Python's `str` ("ä" is one character), and the samples are UTF-8.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <tapeflow/io/files.hpp>
#include <tapeflow/keras.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"
#include "common/utf8.hpp"

namespace tf = tapeflow;
namespace utf8 = examples::utf8;

namespace {
examples::ArgumentParser parser(
    "text_generation",
    "Trains the handbook's character-level LSTM (LSTMCell 256 + Dense) on a UTF-8 text\n"
    "(default: text/nietzsche.txt, found as tf::keras::utils::get_file finds it), printing the\n"
    "loss of every batch, then samples text at temperatures 0.2, 0.5, 1.0 and 1.2.");
auto& text_file = parser.add_argument<std::optional<std::filesystem::path>>(
    "--text", std::nullopt, "train on this UTF-8 file instead");
auto& sample_length = parser.add_argument("--sample_length", std::int64_t{400});
auto& seed = parser.add_argument("--seed", 0u);
auto& data_dir = parser.add_data_dir();
std::mt19937 rng;  // np.random

// [seed:text_generation begin]
auto& num_batches = parser.add_argument("--num_batches", std::int64_t{1000});
auto& seq_length = parser.add_argument("--seq_length", std::int64_t{40});
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{50});
auto& learning_rate = parser.add_argument("--learning_rate", 1e-3);

class DataLoader {
 public:
  std::u32string raw_text, chars;        // code points, as Python's str
  std::map<char32_t, int> char_indices;  // chars[i] is indices_char[i]
  std::vector<std::int32_t> text;

  DataLoader() {
    raw_text = utf8::lower(utf8::decode(tf::io::read_file(text_file->string()).item()));
    std::set<char32_t> unique_chars(raw_text.begin(), raw_text.end());  // sorted
    chars.assign(unique_chars.begin(), unique_chars.end());
    for (std::size_t i = 0; i < chars.size(); ++i) {
      char_indices[chars[i]] = int(i);
    }
    std::ranges::transform(raw_text, std::back_inserter(text),
                           [&](auto c) { return char_indices[c]; });
    if (std::int64_t(text.size()) <= seq_length) {
      throw tf::invalid_argument(text_file->string() + " is shorter than one window");
    }
  }
  std::pair<tf::Tensor<std::int32_t, 2>, tf::Tensor<std::int32_t, 1>> get_batch(
      std::int64_t seq_length, std::int64_t batch_size) {
    std::vector<std::int32_t> seq, next_char;
    for (std::int64_t i = 0; i < batch_size; ++i) {
      auto index = std::uniform_int_distribution<std::size_t>(0, text.size() - seq_length - 1)(rng);
      seq.insert(seq.end(), text.begin() + index, text.begin() + index + seq_length);
      next_char.push_back(text[index + seq_length]);
    }
    // [batch_size, seq_length], [batch_size]
    return {tf::constant(seq, {batch_size, seq_length}), tf::constant(next_char)};
  }
};

// [snippet:rnn]
struct RNN : tf::keras::Model<RNN> {
  std::int64_t num_chars;
  tf::keras::layers::LSTMCell cell{256};
  tf::keras::layers::Dense dense;

  explicit RNN(std::int64_t num_chars) : num_chars(num_chars), dense(num_chars) {
    TAPEFLOW_TRACK(cell, dense);
  }
  // call(inputs, from_logits=True)
  tf::Tensor<float, 2> logits(const tf::Tensor<std::int32_t, 2>& inputs) {
    auto steps = tf::unstack(tf::one_hot<float>(inputs, num_chars), 1);  // inputs[:, t, :]
    auto state = cell.get_initial_state({.batch_size = inputs.dim(0)});
    tf::Tensor<float, 2> output;
    for (auto& step : steps) {  // output and state at t from the input and the state at t - 1
      std::tie(output, state) = cell(step, state);
    }
    return dense(output);
  }
  tf::Tensor<float, 2> call(const tf::Tensor<std::int32_t, 2>& inputs) {
    return tf::nn::softmax(logits(inputs));
  }
  // One character per window, drawn from softmax(logits / temperature) rather than the most
  // likely one: a higher temperature flattens the distribution (more varied text).
  std::vector<std::int32_t> predict(const tf::Tensor<std::int32_t, 2>& inputs,
                                    float temperature = 1) {
    auto prob = tf::nn::softmax(logits(inputs) / temperature);
    std::vector<std::int32_t> select;
    for (std::int64_t i = 0; i < inputs.dim(0); ++i) {
      auto row = tf::slice(prob, {i, 0}, {1, -1}).to_vector();
      select.push_back(std::discrete_distribution<std::int32_t>(row.begin(), row.end())(rng));
    }
    return select;
  }
};
// [snippet:rnn]

void train_and_sample() {
  DataLoader data_loader;
  std::printf("%zu characters, %zu distinct\n", data_loader.raw_text.size(),
              data_loader.chars.size());
  RNN model(std::int64_t(data_loader.chars.size()));
  tf::keras::optimizers::Adam optimizer({.learning_rate = learning_rate});
  for (std::int64_t batch_index = 0; batch_index < num_batches; ++batch_index) {
    auto [X, y] = data_loader.get_batch(seq_length, batch_size);
    tf::GradientTape tape;
    auto y_pred = model(X);
    auto loss = tf::reduce_mean(tf::keras::losses::sparse_categorical_crossentropy(y, y_pred));
    std::printf("batch %ld: loss %f\n", batch_index, loss.item());
    auto grads = tape.gradient(loss, model.variables());
    optimizer.apply_gradients(grads, model.variables());
  }
  auto [X_, unused] = data_loader.get_batch(seq_length, 1);
  for (float diversity : {0.2f, 0.5f, 1.0f, 1.2f}) {
    auto X = X_.to_vector();
    std::printf("diversity %.1f:\n", diversity);
    for (std::int64_t t = 0; t < sample_length; ++t) {
      auto y_pred = model.predict(tf::constant(X, {1, seq_length}), diversity);
      std::cout << utf8::encode(data_loader.chars[y_pred[0]]) << std::flush;
      X.erase(X.begin());  // X = concatenate([X[:, 1:], y_pred])
      X.push_back(y_pred[0]);
    }
    std::cout << "\n\n";
  }
}
// [seed:text_generation end]
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    if (seq_length <= 0 || batch_size <= 0) {
      throw tf::invalid_argument("--seq_length and --batch_size must be > 0");
    }
    if (!text_file) {  // nietzsche.txt, as the handbook's tf.keras.utils.get_file
      text_file = tf::keras::utils::get_file("text/nietzsche.txt", {.cache_dir = data_dir});
    }
    tf::random::set_seed(seed);
    rng.seed(seed);
    train_and_sample();
    return 0;
  });
}
