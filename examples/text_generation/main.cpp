// Character-level text generation with an LSTM, as in the TensorFlow 2 handbook: one-hot
// characters -> LSTMCell(256) unrolled over seq_length steps -> Dense(num_chars); trained with
// Adam on random windows of a text, then sampled at several temperatures.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <tapeflow/keras.hpp>
#include <tapeflow/keras/layers/lstm.hpp>
#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

// The handbook's DataLoader: the text as character indices, random (window, next char) batches.
class DataLoader {
 public:
  explicit DataLoader(const std::string& text, unsigned seed) : rng_(seed) {
    std::vector<char> chars(text.begin(), text.end());
    std::sort(chars.begin(), chars.end());
    chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
    chars_ = chars;
    for (std::size_t i = 0; i < chars.size(); ++i) {
      index_[chars[i]] = std::int32_t(i);
    }
    for (char c : text) {
      text_.push_back(index_[c]);
    }
  }
  [[nodiscard]] std::int64_t num_chars() const { return std::int64_t(chars_.size()); }
  [[nodiscard]] char char_at(std::int64_t i) const { return chars_[std::size_t(i)]; }
  [[nodiscard]] const std::vector<std::int32_t>& text() const { return text_; }

  // seq: [batch, seq_length] character ids; next: [batch] the character after each window.
  std::pair<tf::Tensor<std::int32_t, 2>, tf::Tensor<std::int32_t, 1>> get_batch(
      std::int64_t seq_length, std::int64_t batch_size) {
    std::uniform_int_distribution<std::size_t> pick(0, text_.size() - std::size_t(seq_length) - 1);
    std::vector<std::int32_t> seq, next;
    for (std::int64_t b = 0; b < batch_size; ++b) {
      const std::size_t at = pick(rng_);
      seq.insert(seq.end(), text_.begin() + std::ptrdiff_t(at),
                 text_.begin() + std::ptrdiff_t(at) + seq_length);
      next.push_back(text_[at + std::size_t(seq_length)]);
    }
    return {
        tf::constant<std::int32_t, 2>(std::span<const std::int32_t>(seq), {batch_size, seq_length}),
        tf::constant<std::int32_t>(next)};
  }

  // Entropy (nats) of the character frequencies: the loss of a model that ignores context.
  [[nodiscard]] double unigram_entropy() const {
    std::vector<double> counts(chars_.size(), 0.0);
    for (auto c : text_) {
      counts[std::size_t(c)] += 1;
    }
    double h = 0;
    for (double n : counts) {
      if (n > 0) {
        const double p = n / double(text_.size());
        h -= p * std::log(p);
      }
    }
    return h;
  }

 private:
  std::mt19937 rng_;
  std::vector<char> chars_;
  std::map<char, std::int32_t> index_;
  std::vector<std::int32_t> text_;
};

// The handbook's RNN model.
struct RNN : tf::keras::Model<RNN> {
  std::int64_t num_chars;
  tf::keras::layers::LSTMCell cell{256};
  tf::keras::layers::Dense dense;

  explicit RNN(std::int64_t chars) : num_chars(chars), dense(chars) { TAPEFLOW_TRACK(cell, dense); }
  // Logits of the character following each window [batch, seq_length].
  tf::Tensor<float, 2> call(const tf::Tensor<std::int32_t, 2>& inputs) {
    const std::int64_t batch = inputs.dim(0), seq_length = inputs.dim(1);
    auto one_hot = tf::one_hot<float>(inputs, num_chars);  // [batch, seq_length, num_chars]
    auto state = cell.get_initial_state({.batch_size = batch});
    auto steps = tf::unstack(one_hot, 1);
    tf::Tensor<float, 2> output;
    for (std::int64_t t = 0; t < seq_length; ++t) {
      std::tie(output, state) = cell(steps[std::size_t(t)], state);
    }
    return dense(output);
  }
  // Samples one character per window from softmax(logits / temperature).
  std::vector<std::int32_t> predict(const tf::Tensor<std::int32_t, 2>& inputs, double temperature,
                                    std::mt19937& rng) {
    auto prob = tf::nn::softmax(call(inputs) / float(temperature));
    std::vector<std::int32_t> out;
    for (std::int64_t i = 0; i < prob.dim(0); ++i) {
      std::vector<double> p(prob.data() + i * num_chars, prob.data() + (i + 1) * num_chars);
      std::discrete_distribution<std::int32_t> pick(p.begin(), p.end());
      out.push_back(pick(rng));
    }
    return out;
  }
};

std::filesystem::path find_text(const std::string& explicit_path) {
  namespace fs = std::filesystem;
  if (!explicit_path.empty()) {
    return explicit_path;
  }
  if (const char* env = std::getenv("TAPEFLOW_DATASETS"); env != nullptr) {
    if (fs::exists(fs::path(env) / "text" / "nietzsche.txt")) {
      return fs::path(env) / "text" / "nietzsche.txt";
    }
  }
  std::error_code ec;
  for (fs::path d = fs::current_path(ec); !d.empty(); d = d.parent_path()) {
    for (const fs::path& c : {d / "data" / "text" / "nietzsche.txt",
                              d / "shared" / "data" / "text" / "nietzsche.txt"}) {
      if (fs::exists(c, ec)) {
        return c;
      }
    }
    if (d == d.root_path()) {
      break;
    }
  }
  throw tf::not_found(
      "text_generation: nietzsche.txt not found (pass --text FILE, set TAPEFLOW_DATASETS, or "
      "put it in data/text or shared/data/text of a parent directory)");
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t num_batches = 1000, seq_length = 40, batch_size = 50, sample_length = 400;
  double learning_rate = 1e-3;
  std::string text_path;
  unsigned seed = 0;
  int log_every = 100;
  for (int i = 1; i < argc; ++i) {
    std::string const arg = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--help" || arg == "-h") {
      std::cout << "usage: text_generation [--num_batches N] [--seq_length L] [--batch_size B]\n"
                   "                       [--learning_rate LR] [--sample_length N] [--text FILE]\n"
                   "                       [--log_every K] [--seed S]\n"
                   "Trains the handbook's char-level LSTM (LSTMCell 256 + Dense) on a text\n"
                   "(default: nietzsche.txt from data/text or shared/data/text), compares the\n"
                   "loss with the unigram entropy, and samples text at temperatures 0.2, 0.5,\n"
                   "1.0 and 1.2.\n";
      return 0;
    }
    try {
      if (arg == "--num_batches") {
        num_batches = std::stoll(next());
      } else if (arg == "--seq_length") {
        seq_length = std::stoll(next());
      } else if (arg == "--batch_size") {
        batch_size = std::stoll(next());
      } else if (arg == "--learning_rate") {
        learning_rate = std::stod(next());
      } else if (arg == "--sample_length") {
        sample_length = std::stoll(next());
      } else if (arg == "--text") {
        text_path = next();
      } else if (arg == "--log_every") {
        log_every = std::stoi(next());
      } else if (arg == "--seed") {
        seed = unsigned(std::stoul(next()));
      } else {
        std::cerr << "text_generation: unknown argument " << arg << " (see --help)\n";
        return 2;
      }
    } catch (const std::exception&) {
      std::cerr << "text_generation: bad value for " << arg << "\n";
      return 2;
    }
  }
  try {
    tf::random::set_seed(seed);
    std::ifstream in(find_text(text_path), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string text = buffer.str();
    for (char& c : text) {
      c = char(std::tolower(static_cast<unsigned char>(c)));  // the Keras example lowercases
    }
    if (std::int64_t(text.size()) <= seq_length + 1) {
      throw tf::invalid_argument("text_generation: the text is shorter than one window");
    }
    DataLoader loader(text, seed);
    RNN model(loader.num_chars());
    tf::keras::optimizers::Adam optimizer({.learning_rate = learning_rate});
    const double entropy = loader.unigram_entropy();
    std::printf("%zu characters, %lld distinct; unigram entropy %.3f nats\n", text.size(),
                static_cast<long long>(loader.num_chars()), entropy);

    const auto start = std::chrono::steady_clock::now();
    double recent = 0;
    std::int64_t recent_n = 0;
    for (std::int64_t batch_index = 1; batch_index <= num_batches; ++batch_index) {
      auto [X, y] = loader.get_batch(seq_length, batch_size);
      tf::GradientTape tape;
      auto y_pred = model(X);
      auto loss = tf::reduce_mean(
          tf::keras::losses::sparse_categorical_crossentropy(y, y_pred, /*from_logits=*/true));
      auto vars = model.trainable_variables();
      optimizer.apply_gradients(tape.gradient(loss, vars), vars);
      recent += loss.item();
      ++recent_n;
      if (log_every > 0 && (batch_index % log_every == 0 || batch_index == num_batches)) {
        std::printf("batch %lld: loss %f (mean of the last %lld batches)\n",
                    static_cast<long long>(batch_index), recent / double(recent_n),
                    static_cast<long long>(recent_n));
        std::fflush(stdout);
        if (batch_index != num_batches) {
          recent = 0;
          recent_n = 0;
        }
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double final_loss = recent_n > 0 ? recent / double(recent_n) : 0.0;
    std::printf("training time: %.1f s\n", seconds);
    std::printf("final loss %.3f vs unigram entropy %.3f nats: %s\n", final_loss, entropy,
                final_loss < entropy - 0.3 ? "below" : "NOT clearly below");

    std::mt19937 rng(seed);
    auto [X, unused] = loader.get_batch(seq_length, 1);
    (void)unused;
    for (double diversity : {0.2, 0.5, 1.0, 1.2}) {
      std::vector<std::int32_t> window(X.values().begin(), X.values().end());
      std::printf("diversity %.1f:\n", diversity);
      for (std::int32_t c : window) {
        std::putchar(loader.char_at(c));
      }
      std::printf("|");
      for (std::int64_t t = 0; t < sample_length; ++t) {
        auto input =
            tf::constant<std::int32_t, 2>(std::span<const std::int32_t>(window), {1, seq_length});
        const std::int32_t next = model.predict(input, diversity, rng)[0];
        std::putchar(loader.char_at(next));
        window.erase(window.begin());
        window.push_back(next);
      }
      std::printf("\n\n");
    }
    return 0;
  } catch (const tf::error& e) {
    std::cerr << "text_generation: " << e.what() << "\n";
    return 1;
  }
}
