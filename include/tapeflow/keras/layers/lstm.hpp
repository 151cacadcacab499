// tf.keras.layers.LSTMCell and tf.keras.layers.LSTM.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/array/stack.hpp>
#include <tapeflow/ops/linalg/matmul.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/state/variable.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// The state of an LSTM: {h, c}, each [batch, units] (Keras: a list [h, c]).
using LSTMState = std::array<Tensor<float, 2>, 2>;

/// Keyword arguments of LSTMCell.
struct LSTMCellOptions {
  /// Initial values of the kernel [in, 4 units]; default Glorot uniform (as Keras).
  initializers::Initializer kernel_initializer = initializers::GlorotUniform();
  /// Initial values of the recurrent kernel [units, 4 units]; default orthogonal (as Keras).
  initializers::Initializer recurrent_initializer = initializers::Orthogonal();
  /// Zeros with the forget gate's bias at 1 (Keras' unit_forget_bias=True) when unset.
  std::optional<initializers::Initializer> bias_initializer = std::nullopt;
  std::optional<std::string> name = std::nullopt;  ///< default "lstm_cell", "lstm_cell_1", ...
};

/// One LSTM step (tf.keras.layers.LSTMCell): weights "kernel" [in, 4 units],
/// "recurrent_kernel" [units, 4 units], "bias" [4 units], gates in Keras' order i, f, c, o:
///   z = x @ kernel + h @ recurrent_kernel + bias
///   c' = sigmoid(z_f) * c + sigmoid(z_i) * tanh(z_c);  h' = sigmoid(z_o) * tanh(c')
///
///     tf::keras::layers::LSTMCell cell(256);
///     auto state = cell.get_initial_state({.batch_size = 50});
///     auto [output, new_state] = cell(x_t, state);
class LSTMCell : public Layer<LSTMCell> {
 public:
  static constexpr int input_rank = 2;      ///< one step's input [batch, features]
  static constexpr int min_input_rank = 2;  ///< as `input_rank`

  /// A cell with `units` hidden units; throws invalid_argument unless units > 0.
  explicit LSTMCell(std::int64_t units, LSTMCellOptions options = {})
      : Layer("lstm_cell", {.name = options.name}), units_(units), options_(std::move(options)) {
    if (units <= 0) {
      throw invalid_argument("tf::keras::layers::LSTMCell: units must be positive");
    }
  }
  /// "LSTMCell".
  [[nodiscard]] std::string class_name() const override { return "LSTMCell"; }
  /// Size of h and c (the output's last axis).
  [[nodiscard]] std::int64_t units() const noexcept { return units_; }

  /// Options of `get_initial_state` (Keras: its `batch_size` argument).
  struct InitialStateOptions {
    std::int64_t batch_size = 1;  ///< rows of h and c
  };
  /// Zero h and c of shape [batch_size, units] (Keras: `cell.get_initial_state`).
  [[nodiscard]] LSTMState get_initial_state(InitialStateOptions o) const {
    return {zeros<float>({o.batch_size, units_}), zeros<float>({o.batch_size, units_})};
  }

  /// Creates the weights for inputs [batch, input_shape[1]].
  void build(const Shape& input_shape) override {
    if (input_shape.rank() != 2 || input_shape[1] < 0) {
      throw invalid_argument("LSTMCell '" + name() + "': cannot build for inputs of shape " +
                             input_shape.to_string() + " ([batch, features] with known features)");
    }
    const std::int64_t input_dim = input_shape[1];
    const std::int64_t u = units_;
    kernel_ = add_weight<float, 2>("kernel", {input_dim, 4 * u}, options_.kernel_initializer);
    recurrent_kernel_ =
        add_weight<float, 2>("recurrent_kernel", {u, 4 * u}, options_.recurrent_initializer);
    initializers::Initializer bias_init = options_.bias_initializer
                                              ? *options_.bias_initializer
                                              : initializers::Initializer([u](const Shape&) {
                                                  std::vector<float> b(std::size_t(4 * u), 0.0f);
                                                  std::fill(b.begin() + u, b.begin() + 2 * u, 1.0f);
                                                  return b;
                                                });
    bias_ = add_weight<float, 1>("bias", {4 * u}, bias_init);
  }

  /// One step: returns (output = h', new state {h', c'}).
  std::pair<Tensor<float, 2>, LSTMState> call(const Tensor<float, 2>& x, const LSTMState& state) {
    return step(matmul(x, kernel_), state);
  }

  /// A step given the input projection `xk` = x @ kernel (LSTM computes it for all steps at
  /// once).
  std::pair<Tensor<float, 2>, LSTMState> step(const Tensor<float, 2>& xk, const LSTMState& state) {
    const auto& [h, c] = state;
    auto z = xk + matmul(h, recurrent_kernel_) + bias_;
    const std::int64_t u = units_;
    auto gate = [&](std::int64_t k) { return slice(z, {0, k * u}, {-1, u}); };
    auto i = sigmoid(gate(0));
    auto f = sigmoid(gate(1));
    auto g = tanh(gate(2));
    auto o = sigmoid(gate(3));
    auto c2 = f * c + i * g;
    auto h2 = o * tanh(c2);
    return {h2, LSTMState{h2, c2}};
  }

  /// The input kernel [in, 4 units], gates i, f, c, o (after build).
  [[nodiscard]] const Variable<float, 2>& kernel() const noexcept { return kernel_; }
  /// The recurrent kernel [units, 4 units], gates i, f, c, o (after build).
  [[nodiscard]] const Variable<float, 2>& recurrent_kernel() const noexcept {
    return recurrent_kernel_;
  }
  /// The bias [4 units], gates i, f, c, o (after build).
  [[nodiscard]] const Variable<float, 1>& bias() const noexcept { return bias_; }

  /// tf_keras's LSTMCell tracks the list `state_size = [units, units]` (set in its
  /// constructor, so listed before the weights): an object-graph node without values. Keras 3
  /// does not track it.
  [[nodiscard]] std::vector<TrackableReference> trackable_children(Layout layout) override {
    auto out = Layer::trackable_children(layout);
    if (layout != Layout::keras3) {
      out.insert(out.begin(),
                 TrackableReference{.name = "state_size",
                                    .owned = std::make_shared<train::TrackableList>()});
    }
    return out;
  }

 private:
  std::int64_t units_;
  LSTMCellOptions options_;
  Variable<float, 2> kernel_;
  Variable<float, 2> recurrent_kernel_;
  Variable<float, 1> bias_;
};

/// Keyword arguments of LSTM. Keras's `return_sequences` is not an option: the output's rank is
/// a type, so `LSTM::call` returns the last step's output and `LSTM::sequences` every step's.
struct LSTMOptions {
  LSTMCellOptions cell = {};  ///< options of the cell (its initializers; its name)
  std::optional<std::string> name = std::nullopt;  ///< default "lstm", "lstm_1", ...
};

/// An LSTM over [batch, time, features] (tf.keras.layers.LSTM): the last output [batch, units]
/// (rank 2), or use `sequences` for every step's output [batch, time, units]. Its cell is the
/// object-graph child "cell".
class LSTM : public Layer<LSTM> {
 public:
  static constexpr int input_rank = 3;      ///< [batch, time, features] only
  static constexpr int min_input_rank = 3;  ///< as `input_rank`
  /// `call` gives the last output [batch, units].
  static constexpr int output_rank(int) { return 2; }

  /// An LSTM with `units` hidden units; throws invalid_argument unless units > 0.
  explicit LSTM(std::int64_t units, LSTMOptions options = {})
      : Layer("lstm", {.name = options.name}), cell_(units, options.cell) {
    track("cell", cell_);
  }
  LSTM(const LSTM& other) = delete;
  /// Moves the layer with its cell (which stays tracked as "cell").
  LSTM(LSTM&& other) noexcept = default;
  /// "LSTM".
  [[nodiscard]] std::string class_name() const override { return "LSTM"; }
  /// The cell: its weights are the layer's (Keras: `lstm.cell`).
  [[nodiscard]] LSTMCell& cell() noexcept { return cell_; }

  /// tf_keras's RNN layers track the list `state_spec` once built (after `cell`): a node
  /// without values. Keras 3 tracks only the cell.
  [[nodiscard]] std::vector<TrackableReference> trackable_children(Layout layout) override {
    auto out = Layer::trackable_children(layout);
    if (layout != Layout::keras3 && built()) {
      out.push_back({.name = "state_spec", .owned = std::make_shared<train::TrackableList>()});
    }
    return out;
  }

  /// The last step's output [batch, units].
  Tensor<float, 2> call(const Tensor<float, 3>& x) { return run(x, false).first; }
  /// Every step's output [batch, time, units] (Keras: return_sequences=True).
  Tensor<float, 3> sequences(const Tensor<float, 3>& x) { return run(x, true).second; }

 private:
  std::pair<Tensor<float, 2>, Tensor<float, 3>> run(const Tensor<float, 3>& x, bool all) {
    const std::int64_t n = x.dims()[0], t = x.dims()[1], f = x.dims()[2];
    if (t == 0) {
      throw invalid_argument("LSTM '" + name() + "': input of shape " + x.shape().to_string() +
                             " has no time steps");
    }
    cell_.ensure_built(Shape({n, f}));
    set_built();
    // Project every step's input at once: [N * T, F] @ kernel -> [N, T, 4U].
    auto xk = reshape(matmul(reshape(x, {n * t, f}), cell_.kernel()), {n, t, 4 * cell_.units()});
    auto steps = unstack(xk, 1);
    LSTMState state = cell_.get_initial_state({.batch_size = n});
    std::vector<Tensor<float, 2>> outputs;
    Tensor<float, 2> out;
    for (const auto& xt : steps) {
      auto [o, s] = cell_.step(xt, state);
      out = o;
      state = s;
      if (all) {
        outputs.push_back(o);
      }
    }
    return {out, all ? stack(outputs, 1) : Tensor<float, 3>{}};
  }

  LSTMCell cell_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
