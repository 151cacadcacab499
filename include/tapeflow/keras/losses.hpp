// tf.keras.losses: crossentropies and mean squared error, as functions (per-example values)
// and as `Loss` classes (reduced to the batch mean, usable in `model.compile`).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/core/visit_rank.hpp>
#include <tapeflow/detail/deferred.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/detail/batching.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/cross_entropy.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace losses {

/// Keras' fuzz factor: probabilities are clipped to [epsilon, 1 - epsilon] before the log.
inline constexpr float epsilon = 1e-7f;

namespace impl {
// The loss classes route their bodies through templates on a defaulted `Deferred` parameter,
// so including this header instantiates nothing (detail/deferred.hpp).
using tapeflow::detail::deferred;
template <class L, std::size_t R>
Tensor<std::int32_t, R> int_labels(const Tensor<L, R>& y) {
  if constexpr (std::same_as<L, std::int32_t>) {
    return y;
  } else {
    return tapeflow::detail::keras_impl::convert<std::int32_t, R>(
        AnyTensor(y), "tf::keras::losses::sparse_categorical_crossentropy(labels)");
  }
}
template <std::size_t R>
Tensor<float, R> clip_probs(const Tensor<float, R>& p) {
  return minimum(maximum(p, Tensor<float, 0>(epsilon)), Tensor<float, 0>(1.0f - epsilon));
}
}  // namespace impl

/// Per-example crossentropy between integer labels [N] and predictions [N, C]
/// (tf.keras.losses.sparse_categorical_crossentropy). `y_pred` holds probabilities (clipped
/// to [1e-7, 1 - 1e-7] before the log, as Keras does), or logits with `from_logits` (computed
/// stably by the fused softmax-crossentropy op). Labels may be uint8, int32 or int64 and may
/// carry a trailing axis of size 1 ([N, 1]).
template <tensor_like Labels, tensor_like Pred>
Tensor<float, rank_of<Pred> - 1> sparse_categorical_crossentropy(const Labels& y_true,
                                                                 const Pred& y_pred,
                                                                 bool from_logits = false) {
  constexpr std::size_t R = rank_of<Pred>;
  static_assert(std::same_as<value_type_of<Pred>, float>,
                "tf::keras::losses::sparse_categorical_crossentropy: y_pred must be float");
  static_assert(rank_of<Labels> + 1 == R || rank_of<Labels> == R,
                "tf::keras::losses::sparse_categorical_crossentropy: y_true must have the rank "
                "of y_pred minus one ([N] labels for [N, C] predictions)");
  const auto& pred = tapeflow::detail::as_tensor(y_pred);
  auto labels_any = tapeflow::detail::as_tensor(y_true);
  Tensor<std::int32_t, R - 1> labels;
  if constexpr (rank_of<Labels> == R) {
    std::array<std::int64_t, R - 1> dims{};
    for (std::size_t i = 0; i + 1 < R; ++i) {
      dims[i] = labels_any.dims()[i];
    }
    labels = reshape(impl::int_labels(labels_any), dims);
  } else {
    labels = impl::int_labels(labels_any);
  }
  if (from_logits) {
    return nn::sparse_softmax_cross_entropy_with_logits(labels, pred);
  }
  // softmax(log p) = p for normalized p: the fused op then computes -log p[label].
  return nn::sparse_softmax_cross_entropy_with_logits(labels, log(impl::clip_probs(pred)));
}

/// Per-example crossentropy between one-hot (or soft) labels and predictions, both [N, C]
/// (tf.keras.losses.categorical_crossentropy).
template <std::size_t R>
Tensor<float, R - 1> categorical_crossentropy(const Tensor<float, R>& y_true,
                                              const Tensor<float, R>& y_pred,
                                              bool from_logits = false) {
  if (from_logits) {
    return nn::softmax_cross_entropy_with_logits(y_true, y_pred);
  }
  auto p = y_pred / reduce_sum(y_pred, -1, keepdims);
  return -reduce_sum(y_true * log(impl::clip_probs(p)), -1);
}

/// Per-example mean of squared differences over the last axis
/// (tf.keras.losses.mean_squared_error).
template <std::size_t R>
Tensor<float, R - 1> mean_squared_error(const Tensor<float, R>& y_true,
                                        const Tensor<float, R>& y_pred) {
  return reduce_mean(square(y_pred - y_true), -1);
}

/// Per-example binary crossentropy, averaged over the last axis
/// (tf.keras.losses.binary_crossentropy). With `from_logits` it uses the stable form
/// max(x, 0) - x * z + log(1 + exp(-|x|)).
template <std::size_t R>
Tensor<float, R - 1> binary_crossentropy(const Tensor<float, R>& y_true,
                                         const Tensor<float, R>& y_pred, bool from_logits = false) {
  if (from_logits) {
    auto zero = Tensor<float, 0>(0.0f);
    return reduce_mean(maximum(y_pred, zero) - y_pred * y_true + log(1.0f + exp(-abs(y_pred))), -1);
  }
  auto p = impl::clip_probs(y_pred);
  return reduce_mean(-(y_true * log(p) + (1.0f - y_true) * log(1.0f - p)), -1);
}

/// Base of loss classes (tf.keras.losses.Loss): `call` gives per-example losses (any rank);
/// calling the loss reduces them to their mean (Keras' SUM_OVER_BATCH_SIZE).
///
///     struct MeanSquaredError : tf::keras::losses::Loss {
///       MeanSquaredError() : Loss("mean_squared_error") {}
///       tf::AnyTensor call(const tf::AnyTensor& y_true, const tf::AnyTensor& y_pred) const
///       override {
///         auto d = y_pred.as<float, 2>() - y_true.as<float, 2>();
///         return tf::reduce_mean(tf::square(d));
///       }
///     };
class Loss {
 public:
  /// A loss named `name` (Keras' `name` argument; used in error messages).
  explicit Loss(std::string name = "loss") : name_(std::move(name)) {}
  /// Copyable, so derived losses can be.
  Loss(const Loss&) = default;
  /// Movable, so derived losses can be.
  Loss(Loss&&) noexcept = default;
  /// Copy-assignable, so derived losses can be.
  Loss& operator=(const Loss&) = default;
  /// Move-assignable, so derived losses can be.
  Loss& operator=(Loss&&) noexcept = default;
  virtual ~Loss() = default;

  /// Per-example (or already reduced) losses, float, any rank.
  [[nodiscard]] virtual AnyTensor call(const AnyTensor& y_true, const AnyTensor& y_pred) const = 0;

  /// The mean of `call`'s values: a float scalar the tape can differentiate. Throws
  /// invalid_argument when `call` returns a non-float tensor or one of rank above 3.
  template <class Deferred = void>
  Tensor<float, 0> operator()(const AnyTensor& y_true, const AnyTensor& y_pred) const {
    const auto v = impl::deferred<Deferred>(call(y_true, y_pred));
    if (v.dtype() != DType::float32) {
      throw invalid_argument("tf::keras::losses::Loss '" + name_ +
                             "': call() must return a float tensor");
    }
    const std::string what = "tf::keras::losses::Loss '" + name_ + "': call()'s result";
    return tapeflow::detail::visit_rank<0, 3>(v.rank(), what, [&]<std::size_t R>() {
      if constexpr (R == 0) {
        return v.template as<float, 0>();
      } else {
        return reduce_mean(v.template as<float, R>());
      }
    });
  }
  /// The loss's name ("sparse_categorical_crossentropy", ...).
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
};

namespace impl {
/// Calls f.template operator()<R>() for the run-time rank of y_pred (2 or 3).
template <class F>
AnyTensor dispatch_pred_rank(const char* what, const AnyTensor& y_pred, F&& f) {
  return tapeflow::detail::visit_rank<1, 3>(
      y_pred.rank(), std::string(what) + ": predictions of shape " + y_pred.shape().to_string(), f);
}
template <std::size_t R>
Tensor<float, R> float_of(const AnyTensor& t) {
  return tapeflow::detail::keras_impl::convert<float, R>(t, "tf::keras::losses");
}
}  // namespace impl

/// Keyword arguments of the crossentropy loss classes.
struct CrossentropyOptions {
  bool from_logits = false;  ///< y_pred holds logits rather than probabilities
};

namespace impl {
/// A loss class's per-example computation, chosen when the class is constructed.
using LossFn = AnyTensor (*)(const AnyTensor& y_true, const AnyTensor& y_pred, bool from_logits);

template <std::size_t R, class Deferred>
AnyTensor labels_call(const char* what, const AnyTensor& y_true, const AnyTensor& y_pred,
                      bool from_logits) {
  auto pred = deferred<Deferred>(y_pred).template as<float, R>();
  if (y_true.rank() != R - 1 && y_true.rank() != R) {
    throw invalid_argument(std::string(what) + ": labels of shape " + y_true.shape().to_string() +
                           " do not fit predictions of shape " + y_pred.shape().to_string());
  }
  if (y_true.dtype() != DType::uint8 && y_true.dtype() != DType::int32 &&
      y_true.dtype() != DType::int64) {
    throw invalid_argument(std::string(what) + ": labels must be uint8, int32 or int64, got " +
                           std::string(dtype_name(y_true.dtype())));
  }
  using tapeflow::detail::keras_impl::convert;
  if (y_true.rank() == R) {
    return sparse_categorical_crossentropy(convert<std::int32_t, R>(y_true, what), pred,
                                           from_logits);
  }
  return sparse_categorical_crossentropy(convert<std::int32_t, R - 1>(y_true, what), pred,
                                         from_logits);
}

template <class Deferred>
AnyTensor sparse_categorical_call(const AnyTensor& y_true, const AnyTensor& y_pred,
                                  bool from_logits) {
  const char* what = "SparseCategoricalCrossentropy";
  if (y_pred.rank() == 3) {
    return labels_call<3, Deferred>(what, y_true, y_pred, from_logits);
  }
  if (y_pred.rank() != 2) {
    throw invalid_argument(std::string(what) + ": predictions of shape " +
                           y_pred.shape().to_string() + " (rank 2 or 3 supported)");
  }
  return labels_call<2, Deferred>(what, y_true, y_pred, from_logits);
}

template <class Deferred>
AnyTensor categorical_call(const AnyTensor& y_true, const AnyTensor& y_pred, bool from_logits) {
  return dispatch_pred_rank("CategoricalCrossentropy", y_pred, [&]<std::size_t R>() {
    constexpr std::size_t Rk = R < 2 ? 2 : R;
    return AnyTensor(categorical_crossentropy<Rk>(float_of<Rk>(deferred<Deferred>(y_true)),
                                                  float_of<Rk>(y_pred), from_logits));
  });
}

template <class Deferred>
AnyTensor binary_call(const AnyTensor& y_true, const AnyTensor& y_pred, bool from_logits) {
  return dispatch_pred_rank("BinaryCrossentropy", y_pred, [&]<std::size_t R>() {
    return AnyTensor(binary_crossentropy<R>(float_of<R>(deferred<Deferred>(y_true)),
                                            float_of<R>(y_pred), from_logits));
  });
}

template <class Deferred>
AnyTensor mean_squared_call(const AnyTensor& y_true, const AnyTensor& y_pred, bool) {
  return dispatch_pred_rank("MeanSquaredError", y_pred, [&]<std::size_t R>() {
    return AnyTensor(
        mean_squared_error<R>(float_of<R>(deferred<Deferred>(y_true)), float_of<R>(y_pred)));
  });
}

/// A built-in loss class: `call` runs the computation its (template) constructor picked, so
/// the computation is compiled only in programs that construct the loss.
class BuiltinLoss : public Loss {
 public:
  [[nodiscard]] AnyTensor call(const AnyTensor& y_true, const AnyTensor& y_pred) const override {
    return fn_(y_true, y_pred, from_logits_);
  }

 protected:
  /// A loss named `name` computing `fn(y_true, y_pred, from_logits)` per example.
  BuiltinLoss(std::string name, LossFn fn, bool from_logits)
      : Loss(std::move(name)), fn_(fn), from_logits_(from_logits) {}

 private:
  LossFn fn_;
  bool from_logits_;
};
}  // namespace impl

/// tf.keras.losses.SparseCategoricalCrossentropy (integer labels).
class SparseCategoricalCrossentropy : public impl::BuiltinLoss {
 public:
  /// Named "sparse_categorical_crossentropy". Predictions [N, C] or [N, T, C]; labels uint8,
  /// int32 or int64 of shape [N] or [N, 1] ([N, T] or [N, T, 1]). Calls with other dtypes or
  /// ranks throw invalid_argument.
  template <class Deferred = void>
  explicit SparseCategoricalCrossentropy(CrossentropyOptions o = {})
      : BuiltinLoss("sparse_categorical_crossentropy", &impl::sparse_categorical_call<Deferred>,
                    o.from_logits) {}
};

/// tf.keras.losses.CategoricalCrossentropy (one-hot labels).
class CategoricalCrossentropy : public impl::BuiltinLoss {
 public:
  /// Named "categorical_crossentropy"; labels and predictions share their shape.
  template <class Deferred = void>
  explicit CategoricalCrossentropy(CrossentropyOptions o = {})
      : BuiltinLoss("categorical_crossentropy", &impl::categorical_call<Deferred>, o.from_logits) {}
};

/// tf.keras.losses.BinaryCrossentropy.
class BinaryCrossentropy : public impl::BuiltinLoss {
 public:
  /// Named "binary_crossentropy"; labels (0/1 or soft) and predictions share their shape.
  template <class Deferred = void>
  explicit BinaryCrossentropy(CrossentropyOptions o = {})
      : BuiltinLoss("binary_crossentropy", &impl::binary_call<Deferred>, o.from_logits) {}
};

/// tf.keras.losses.MeanSquaredError.
class MeanSquaredError : public impl::BuiltinLoss {
 public:
  /// Named "mean_squared_error"; labels and predictions share their shape.
  template <class Deferred = void>
  MeanSquaredError()
      : BuiltinLoss("mean_squared_error", &impl::mean_squared_call<Deferred>, false) {}
};

/// A shared handle to a loss object (what `compile` stores); converts from any Loss.
class LossHandle {
 public:
  LossHandle() = default;
  /// Holds a copy of `loss` (any class derived from Loss): `.loss =
  /// SparseCategoricalCrossentropy()`.
  template <class L>
    requires std::derived_from<std::remove_cvref_t<L>, Loss>
  LossHandle(L&& loss)  // NOLINT(google-explicit-constructor)
      : p_(std::make_shared<std::remove_cvref_t<L>>(std::forward<L>(loss))) {}
  /// Shares `p` (a loss owned elsewhere too).
  LossHandle(std::shared_ptr<const Loss> p) : p_(std::move(p)) {}  // NOLINT
  /// Whether it holds a loss.
  [[nodiscard]] bool has_value() const noexcept { return p_ != nullptr; }
  /// The loss; throws failed_precondition when empty.
  [[nodiscard]] const Loss& get() const {
    if (!p_) {
      throw failed_precondition("tf::keras: no loss (pass .loss to compile)");
    }
    return *p_;
  }

 private:
  std::shared_ptr<const Loss> p_;
};

}  // namespace losses
}  // namespace keras
TAPEFLOW_END_NAMESPACE
