// tf.keras.layers.GlobalAveragePooling2D and GlobalMaxPooling2D (NHWC).
#pragma once

#include <string>
#include <utility>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Mean over height and width (tf.keras.layers.GlobalAveragePooling2D, TensorFlow's Mean over
/// axes 1 and 2): [N, H, W, C] -> [N, C], or [N, 1, 1, C] with `keepdims`. Keras' run-time
/// `keepdims=True` changes the rank, so here it is part of the type: pass `tf::keepdims`.
///
///     tf::keras::layers::GlobalAveragePooling2D gap;                 // [N, C]
///     tf::keras::layers::GlobalAveragePooling2D kept(tf::keepdims);  // [N, 1, 1, C]
template <bool KeepDims = false>
class GlobalAveragePooling2D : public Layer<GlobalAveragePooling2D<KeepDims>> {
 public:
  static constexpr int input_rank = 4;      ///< NHWC inputs only (checked by Sequential)
  static constexpr int min_input_rank = 4;  ///< as `input_rank`
  /// [N, C], or NHWC with `keepdims`.
  static constexpr int output_rank(int) { return KeepDims ? 4 : 2; }

  /// Default name "global_average_pooling2d", "global_average_pooling2d_1", ...
  explicit GlobalAveragePooling2D(LayerOptions options = {})
    requires(!KeepDims)
      : Layer<GlobalAveragePooling2D>("global_average_pooling2d", std::move(options)) {}
  /// Keeps the pooled axes with size 1 (Keras: `keepdims=True`).
  explicit GlobalAveragePooling2D(keepdims_t, LayerOptions options = {})
    requires KeepDims
      : Layer<GlobalAveragePooling2D>("global_average_pooling2d", std::move(options)) {}

  /// "GlobalAveragePooling2D".
  [[nodiscard]] std::string class_name() const override { return "GlobalAveragePooling2D"; }
  /// `tf::reduce_mean(x, {1, 2})` of NHWC `x` (keeping the axes with `keepdims`).
  auto call(const Tensor<float, 4>& x) {
    if constexpr (KeepDims) {
      return reduce_mean(x, {1, 2}, keepdims);
    } else {
      return reduce_mean(x, {1, 2});
    }
  }
};
/// `GlobalAveragePooling2D(options)` drops the pooled axes.
GlobalAveragePooling2D(LayerOptions) -> GlobalAveragePooling2D<false>;
/// `GlobalAveragePooling2D(tf::keepdims)` keeps them.
GlobalAveragePooling2D(keepdims_t) -> GlobalAveragePooling2D<true>;
/// `GlobalAveragePooling2D(tf::keepdims, options)` keeps them.
GlobalAveragePooling2D(keepdims_t, LayerOptions) -> GlobalAveragePooling2D<true>;

/// Maximum over height and width (tf.keras.layers.GlobalMaxPooling2D, TensorFlow's Max over
/// axes 1 and 2): [N, H, W, C] -> [N, C], or [N, 1, 1, C] with `tf::keepdims` (as for
/// GlobalAveragePooling2D). The gradient goes to the maxima (split among ties).
template <bool KeepDims = false>
class GlobalMaxPooling2D : public Layer<GlobalMaxPooling2D<KeepDims>> {
 public:
  static constexpr int input_rank = 4;      ///< NHWC inputs only (checked by Sequential)
  static constexpr int min_input_rank = 4;  ///< as `input_rank`
  /// [N, C], or NHWC with `keepdims`.
  static constexpr int output_rank(int) { return KeepDims ? 4 : 2; }

  /// Default name "global_max_pooling2d", "global_max_pooling2d_1", ...
  explicit GlobalMaxPooling2D(LayerOptions options = {})
    requires(!KeepDims)
      : Layer<GlobalMaxPooling2D>("global_max_pooling2d", std::move(options)) {}
  /// Keeps the pooled axes with size 1 (Keras: `keepdims=True`).
  explicit GlobalMaxPooling2D(keepdims_t, LayerOptions options = {})
    requires KeepDims
      : Layer<GlobalMaxPooling2D>("global_max_pooling2d", std::move(options)) {}

  /// "GlobalMaxPooling2D".
  [[nodiscard]] std::string class_name() const override { return "GlobalMaxPooling2D"; }
  /// `tf::reduce_max(x, {1, 2})` of NHWC `x` (keeping the axes with `keepdims`).
  auto call(const Tensor<float, 4>& x) {
    if constexpr (KeepDims) {
      return reduce_max(x, {1, 2}, keepdims);
    } else {
      return reduce_max(x, {1, 2});
    }
  }
};
/// `GlobalMaxPooling2D(options)` drops the pooled axes.
GlobalMaxPooling2D(LayerOptions) -> GlobalMaxPooling2D<false>;
/// `GlobalMaxPooling2D(tf::keepdims)` keeps them.
GlobalMaxPooling2D(keepdims_t) -> GlobalMaxPooling2D<true>;
/// `GlobalMaxPooling2D(tf::keepdims, options)` keeps them.
GlobalMaxPooling2D(keepdims_t, LayerOptions) -> GlobalMaxPooling2D<true>;

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
