// tf.keras.layers.Dropout: drops only while training.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/nn/dropout.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Keyword arguments of Dropout.
struct DropoutOptions {
  /// Op seed of the mask (`tf::nn::dropout`'s; Note [Random seeds] in ops/random/random.hpp).
  std::optional<std::int64_t> seed = std::nullopt;
  std::optional<std::string> name = std::nullopt;  ///< default "dropout", "dropout_1", ...
};

/// Sets inputs to zero with probability `rate` (scaling the rest by 1 / (1 - rate)) when
/// called with `training = true`; the identity otherwise (tf.keras.layers.Dropout).
class Dropout : public Layer<Dropout> {
 public:
  /// Any rank is accepted.
  static constexpr int min_input_rank = 0;
  /// The output has the input's shape.
  static constexpr int output_rank(int in) { return in; }

  /// Drops with probability `rate`; throws invalid_argument unless 0 <= rate < 1.
  explicit Dropout(double rate, DropoutOptions options = {})
      : Layer("dropout", {.name = options.name}), rate_(rate), seed_(options.seed) {
    if (!(rate >= 0.0 && rate < 1.0)) {
      throw invalid_argument("tf::keras::layers::Dropout: rate must be in [0, 1), got " +
                             std::to_string(rate));
    }
  }

  /// "Dropout".
  [[nodiscard]] std::string class_name() const override { return "Dropout"; }
  /// `tf::nn::dropout(x, rate)` when `training`, else `x` unchanged.
  template <class T, std::size_t R>
  Tensor<T, R> call(const Tensor<T, R>& x, bool training = false) {
    if (!training || rate_ == 0.0) {
      return x;
    }
    return nn::dropout(x, rate_, {.seed = seed_});
  }

 private:
  double rate_;
  std::optional<std::int64_t> seed_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
