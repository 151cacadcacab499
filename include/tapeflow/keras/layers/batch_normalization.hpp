// tf.keras.layers.BatchNormalization (channels last), as Keras 3 computes it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/collective.hpp>
#include <tapeflow/distribute/replica_context.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/array/concat.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/array/slice.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/batch_norm.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Keyword arguments of BatchNormalization (Keras' names and defaults).
struct BatchNormalizationOptions {
  /// The feature axis; only the last one (-1, or rank - 1) is supported.
  int axis = -1;
  /// Weight of the old value in the moving averages: moving = moving * momentum + batch *
  /// (1 - momentum).
  double momentum = 0.99;
  float epsilon = 1e-3f;  ///< added to the variance before the square root
  bool center = true;     ///< whether to add `beta` (else the offset is 0 and no beta exists)
  bool scale = true;      ///< whether to multiply by `gamma` (else 1 and no gamma exists)
  initializers::Initializer beta_initializer = initializers::Zeros();            ///< default zeros
  initializers::Initializer gamma_initializer = initializers::Ones();            ///< default ones
  initializers::Initializer moving_mean_initializer = initializers::Zeros();     ///< zeros
  initializers::Initializer moving_variance_initializer = initializers::Ones();  ///< ones
  std::optional<std::string> name = std::nullopt;  ///< default "batch_normalization", ...
  bool trainable = true;  ///< a frozen layer always normalizes with the moving statistics
  /// Inside `strategy.run` (and so in `fit` under a strategy), normalize with the statistics of
  /// the global batch, all-reduced over the replicas, instead of each replica's own; elsewhere
  /// it changes nothing.
  bool synchronized = false;
};

/// Normalizes each channel (the last axis) to zero mean and unit variance, then scales by
/// `gamma` and shifts by `beta` (tf.keras.layers.BatchNormalization, Keras 3's computation).
/// Weights, created on the first call, in Keras' order: "gamma", "beta" (trainable),
/// "moving_mean", "moving_variance" (non-trainable), each [C].
///
/// Called with `training = true` (and trainable), it normalizes with the batch's mean and
/// biased variance over every other axis and updates the moving statistics,
/// `moving = moving * momentum + batch * (1 - momentum)`; otherwise it normalizes with the
/// moving statistics. A frozen layer (`set_trainable(false)`) runs in inference mode even
/// when training, as in Keras 3 (fine-tuning keeps pretrained statistics).
///
/// With `synchronized` under a distribution strategy, the training statistics are the global
/// batch's: each replica's per-channel sums, sums of squares and row count are summed over the
/// replicas in one differentiable all-reduce (ReplicaContext::all_reduce), so N replicas train
/// as one replica on the whole batch and their moving statistics stay identical. The variance
/// is then E[x^2] - E[x]^2 (clamped at 0), as TensorFlow's synchronized moments compute it.
///
///     tf::keras::layers::BatchNormalization bn({.momentum = 0.999});
///     auto y = bn(x, {.training = true});  // x: [N, H, W, C] or [N, C]
class BatchNormalization : public Layer<BatchNormalization> {
 public:
  /// Needs a batch axis and a feature axis.
  static constexpr int min_input_rank = 2;
  /// The output has the input's shape.
  static constexpr int output_rank(int in) { return in; }

  /// A layer with Keras' defaults unless `options` says otherwise; throws invalid_argument
  /// for a momentum outside [0, 1] or a negative epsilon.
  explicit BatchNormalization(BatchNormalizationOptions options = {})
      : Layer("batch_normalization", {.name = options.name, .trainable = options.trainable}),
        options_(std::move(options)) {
    if (!(options_.momentum >= 0.0 && options_.momentum <= 1.0) || !(options_.epsilon >= 0.0f)) {
      throw invalid_argument(
          "tf::keras::layers::BatchNormalization: momentum must be in [0, 1] and epsilon >= 0, "
          "got momentum " +
          std::to_string(options_.momentum) + ", epsilon " + std::to_string(options_.epsilon));
    }
  }

  /// gamma [C] (after build, with `scale`).
  [[nodiscard]] const Variable<float, 1>& gamma() const noexcept { return gamma_; }
  /// beta [C] (after build, with `center`).
  [[nodiscard]] const Variable<float, 1>& beta() const noexcept { return beta_; }
  /// The moving mean [C] (after build).
  [[nodiscard]] const Variable<float, 1>& moving_mean() const noexcept { return moving_mean_; }
  /// The moving variance [C] (after build).
  [[nodiscard]] const Variable<float, 1>& moving_variance() const noexcept {
    return moving_variance_;
  }

  /// Creates the weights for inputs whose last axis (the features) is known; throws
  /// invalid_argument for another `axis` or an unknown feature size.
  void build(const Shape& input_shape) override {
    const int rank = static_cast<int>(input_shape.rank());
    const int axis = options_.axis < 0 ? options_.axis + rank : options_.axis;
    if (rank < 2 || axis != rank - 1 || input_shape[rank - 1] < 0) {
      throw invalid_argument("BatchNormalization '" + name() +
                             "': cannot build for inputs of shape " + input_shape.to_string() +
                             " with axis " + std::to_string(options_.axis) +
                             " (the features must be the last, known axis)");
    }
    const std::int64_t c = input_shape[rank - 1];
    if (options_.scale) {
      gamma_ = add_weight<float, 1>("gamma", {c}, options_.gamma_initializer);
    }
    if (options_.center) {
      beta_ = add_weight<float, 1>("beta", {c}, options_.beta_initializer);
    }
    moving_mean_ = add_weight<float, 1>("moving_mean", {c}, options_.moving_mean_initializer,
                                        /*trainable=*/false);
    moving_variance_ =
        add_weight<float, 1>("moving_variance", {c}, options_.moving_variance_initializer,
                             /*trainable=*/false);
  }

  /// "BatchNormalization".
  [[nodiscard]] std::string class_name() const override { return "BatchNormalization"; }
  /// With `synchronized`: its training statistics are all-reduced over the replicas.
  [[nodiscard]] bool uses_replica_collectives() override { return options_.synchronized; }

  /// Normalizes `x` [N, ..., C] (rank 2 to 4) with the batch statistics when `training` (and
  /// the layer is trainable), updating the moving statistics, else with the moving ones.
  /// Throws invalid_argument when C is not the size the layer was built for.
  template <std::size_t R>
  Tensor<float, R> call(const Tensor<float, R>& x, bool training = false) {
    static_assert(R >= 2 && R <= 4,
                  "tf::keras::layers::BatchNormalization: input must have rank 2 to 4 (channels "
                  "last)");
    const std::int64_t c = x.dims()[R - 1];
    if (c != moving_mean_.dims()[0]) {
      throw invalid_argument("BatchNormalization '" + name() + "': input of shape " +
                             x.shape().to_string() + " has " + std::to_string(c) +
                             " features but the layer was built for " +
                             std::to_string(moving_mean_.dims()[0]));
    }
    const Tensor<float, 1> gamma = options_.scale ? Tensor<float, 1>(gamma_) : ones<float>({c});
    const Tensor<float, 1> beta = options_.center ? Tensor<float, 1>(beta_) : zeros<float>({c});
    const bool use_batch = training && trainable();
    distribute::ReplicaContext* const replicas =
        use_batch && options_.synchronized ? distribute::get_replica_context() : nullptr;
    if (use_batch) {
      // Keras 3: moments over every axis but the features (biased variance), then the moving
      // averages in its order of operations.
      auto flat = reshape(x, std::array<std::int64_t, 2>{-1, c});
      // Locally, the moments feed FusedBatchNormV3, which gives them no gradient (its own
      // gradient accounts for them): a tape need not keep their full-size intermediates.
      auto [mean, variance] = replicas != nullptr ? global_moments(*replicas, flat)
                                                  : local_moments(stop_gradient(flat));
      const auto momentum = static_cast<float>(options_.momentum);
      const auto rest = static_cast<float>(1.0 - options_.momentum);
      moving_mean_.assign(moving_mean_ * momentum + mean * rest);
      moving_variance_.assign(moving_variance_ * momentum + variance * rest);
      if (replicas != nullptr) {
        // FusedBatchNormV3's training mode would take this replica's own statistics.
        auto inv = gamma / sqrt(variance + options_.epsilon);
        return x * inv + (beta - mean * inv);
      }
      // The op normalizes with these moments and its gradient reuses them: computed once.
      return tapeflow::detail::batch_norm_any_rank(
          ops::FusedBatchNormV3{options_.epsilon, true, /*batch_moments_given=*/true}, x, gamma,
          beta, mean, variance);
    }
    return nn::fused_batch_norm(x, gamma, beta, moving_mean_, moving_variance_,
                                {.epsilon = options_.epsilon, .is_training = use_batch});
  }

 private:
  // The mean and biased variance of `flat` [rows, C] over its rows.
  static std::pair<Tensor<float, 1>, Tensor<float, 1>> local_moments(const Tensor<float, 2>& flat) {
    auto mean = reduce_mean(flat, 0);
    return {mean, reduce_mean(math::squared_difference(flat, mean), 0)};
  }
  // The global batch's mean and biased variance of `flat` [rows, C]: one all-reduce of this
  // replica's [sum, sum of squares, rows], differentiable, so each replica's gradients see
  // every replica's rows.
  static std::pair<Tensor<float, 1>, Tensor<float, 1>> global_moments(
      distribute::ReplicaContext& replicas, const Tensor<float, 2>& flat) {
    const std::int64_t c = flat.dims()[1];
    const auto rows = constant<float>({static_cast<float>(flat.dims()[0])});
    auto total =
        replicas.all_reduce(distribute::ReduceOp::sum,
                            concat({reduce_sum(flat, 0), reduce_sum(square(flat), 0), rows}, 0));
    auto count = slice(total, {2 * c}, {1});
    auto mean = slice(total, {0}, {c}) / count;
    auto variance = maximum(slice(total, {c}, {c}) / count - square(mean), 0.0f);
    return {mean, variance};
  }

  BatchNormalizationOptions options_;
  Variable<float, 1> gamma_;
  Variable<float, 1> beta_;
  Variable<float, 1> moving_mean_;
  Variable<float, 1> moving_variance_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
