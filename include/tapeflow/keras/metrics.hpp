// tf.keras.metrics: Mean, Accuracy, SparseCategoricalAccuracy, CategoricalAccuracy (stateful,
// with update_state / result / reset_state) and the per-example function forms.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/math/argmax.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/math/compare.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace metrics {

namespace impl {
/// Element i of a numeric tensor as double.
inline double element(const AnyTensor& t, std::int64_t i) {
  return visit_dtype(t.dtype(), [&]<class T>() -> double {
    if constexpr (std::is_arithmetic_v<T>) {
      return static_cast<double>(static_cast<const T*>(t.raw_data())[i]);
    } else {
      throw invalid_argument("tf::keras::metrics: string tensors are not supported");
    }
  });
}
/// argmax over the last axis of row r (rows of length n).
inline std::int64_t row_argmax(const AnyTensor& t, std::int64_t r, std::int64_t n) {
  std::int64_t best = 0;
  double best_v = element(t, r * n);
  for (std::int64_t j = 1; j < n; ++j) {
    double v = element(t, r * n + j);
    if (v > best_v) {
      best_v = v;
      best = j;
    }
  }
  return best;
}
inline void require_value(const AnyTensor& t, const char* what) {
  if (!t.has_value()) {
    throw failed_precondition(std::string(what) + ": the tensor holds no value");
  }
}
}  // namespace impl

/// Base of stateful metrics (tf.keras.metrics.Metric). State lives in variables, so copies of
/// a metric share it (as Python references do) and checkpoints can save it.
///
///     struct MyAccuracy : tf::keras::metrics::Metric {
///       tf::Variable<float, 0> correct, count;
///       MyAccuracy() : Metric("my_accuracy") {
///         correct = add_weight("correct");
///         count = add_weight("count");
///       }
///       void update_state(const tf::AnyTensor& y_true, const tf::AnyTensor& y_pred) override {
///         ...
///       }
///       float result() const override {
///         return correct.value().item() / count.value().item();
///       }
///     };
class Metric : public Trackable {
 public:
  /// A metric named `name`: the key of its value in fit's logs, and its variables' prefix.
  explicit Metric(std::string name) : name_(std::move(name)) {}
  /// The metric's name ("sparse_categorical_accuracy", ...).
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  /// Accumulates a batch of labels and predictions.
  virtual void update_state(const AnyTensor& y_true, const AnyTensor& y_pred) = 0;
  /// The metric's current value.
  [[nodiscard]] virtual float result() const = 0;
  /// Zeroes every state variable.
  virtual void reset_state() {
    for (auto& [n, v] : state_) {
      v.assign(Tensor<float, 0>(0.0f));
    }
  }
  /// The state variables under the names given to `add_weight` ("total", "count"), as
  /// TensorFlow's checkpoints hold them.
  [[nodiscard]] std::vector<TrackableReference> trackable_children(Layout) override {
    std::vector<TrackableReference> out;
    for (auto& [n, v] : state_) {
      out.push_back({.name = n, .variable = AnyVariable(v)});
    }
    return out;
  }

 protected:
  /// A float scalar state variable starting at 0, named `<metric>/<name>`.
  Variable<float, 0> add_weight(const std::string& name) {
    Variable<float, 0> v(0.0f, {.name = name_ + "/" + name, .trainable = false});
    state_.emplace_back(name, v);
    return v;
  }

 private:
  std::string name_;
  std::vector<std::pair<std::string, Variable<float, 0>>> state_;
};

/// Running (weighted) mean of the values passed to `update_state` (tf.keras.metrics.Mean);
/// variables "total" and "count".
class Mean : public Metric {
 public:
  /// A mean named `name`, starting empty (its result is 0 until updated).
  explicit Mean(std::string name = "mean") : Metric(std::move(name)) {
    total_ = add_weight("total");
    count_ = add_weight("count");
  }
  /// Adds every element of `values` (any rank, numeric).
  void update_state(const AnyTensor& values) {
    impl::require_value(values, "Mean::update_state");
    double s = 0;
    for (std::int64_t i = 0; i < values.num_elements(); ++i) {
      s += impl::element(values, i);
    }
    add(s, double(values.num_elements()));
  }
  /// Adds one value with a weight (e.g. a batch loss weighted by the batch size).
  void update_state(double value, double weight = 1.0) { add(value * weight, weight); }
  /// As a compiled metric: adds the elements of the second argument (the first is ignored).
  void update_state(const AnyTensor&, const AnyTensor& values) override { update_state(values); }
  /// total / count; 0 when nothing was added.
  [[nodiscard]] float result() const override {
    const float c = count_.value().item();
    return c == 0 ? 0.0f : total_.value().item() / c;
  }

 protected:
  /// Adds `total` to the running sum and `count` to the running weight (for subclasses).
  void add(double total, double count) {
    total_.assign(Tensor<float, 0>(float(double(total_.value().item()) + total)));
    count_.assign(Tensor<float, 0>(float(double(count_.value().item()) + count)));
  }

 private:
  Variable<float, 0> total_;
  Variable<float, 0> count_;
};

/// Fraction of predictions whose argmax over the last axis equals the integer label
/// (tf.keras.metrics.SparseCategoricalAccuracy). Labels [N] or [N, 1], any numeric dtype.
class SparseCategoricalAccuracy : public Mean {
 public:
  /// An accuracy named `name`.
  explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy")
      : Mean(std::move(name)) {}
  using Mean::update_state;
  /// Adds a batch: one label per row of `y_pred` (the last axis holds the classes); throws
  /// invalid_argument when the counts differ.
  void update_state(const AnyTensor& y_true, const AnyTensor& y_pred) override {
    impl::require_value(y_true, "SparseCategoricalAccuracy::update_state");
    impl::require_value(y_pred, "SparseCategoricalAccuracy::update_state");
    if (y_pred.rank() == 0) {
      throw invalid_argument("SparseCategoricalAccuracy: predictions must have a class axis");
    }
    const std::int64_t n = y_pred.shape()[y_pred.rank() - 1];
    const std::int64_t rows = n == 0 ? 0 : y_pred.num_elements() / n;
    if (y_true.num_elements() != rows) {
      throw invalid_argument("SparseCategoricalAccuracy: labels of shape " +
                             y_true.shape().to_string() + " do not fit predictions of shape " +
                             y_pred.shape().to_string());
    }
    std::int64_t correct = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      correct += impl::row_argmax(y_pred, r, n) == std::int64_t(impl::element(y_true, r)) ? 1 : 0;
    }
    add(double(correct), double(rows));
  }
};

/// Fraction of rows whose argmax matches the one-hot label's argmax
/// (tf.keras.metrics.CategoricalAccuracy).
class CategoricalAccuracy : public Mean {
 public:
  /// An accuracy named `name`.
  explicit CategoricalAccuracy(std::string name = "categorical_accuracy") : Mean(std::move(name)) {}
  using Mean::update_state;
  /// Adds a batch; throws invalid_argument unless labels and predictions have the same shape
  /// (rank >= 1).
  void update_state(const AnyTensor& y_true, const AnyTensor& y_pred) override {
    impl::require_value(y_true, "CategoricalAccuracy::update_state");
    impl::require_value(y_pred, "CategoricalAccuracy::update_state");
    if (y_true.shape() != y_pred.shape() || y_pred.rank() == 0) {
      throw invalid_argument("CategoricalAccuracy: labels of shape " + y_true.shape().to_string() +
                             " and predictions of shape " + y_pred.shape().to_string() +
                             " must match");
    }
    const std::int64_t n = y_pred.shape()[y_pred.rank() - 1];
    const std::int64_t rows = n == 0 ? 0 : y_pred.num_elements() / n;
    std::int64_t correct = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      correct += impl::row_argmax(y_pred, r, n) == impl::row_argmax(y_true, r, n) ? 1 : 0;
    }
    add(double(correct), double(rows));
  }
};

/// Fraction of elements where prediction equals label (tf.keras.metrics.Accuracy).
class Accuracy : public Mean {
 public:
  /// An accuracy named `name`.
  explicit Accuracy(std::string name = "accuracy") : Mean(std::move(name)) {}
  using Mean::update_state;
  /// Adds a batch, compared element by element; throws invalid_argument when the element
  /// counts differ.
  void update_state(const AnyTensor& y_true, const AnyTensor& y_pred) override {
    impl::require_value(y_true, "Accuracy::update_state");
    impl::require_value(y_pred, "Accuracy::update_state");
    if (y_true.num_elements() != y_pred.num_elements()) {
      throw invalid_argument("Accuracy: labels of shape " + y_true.shape().to_string() +
                             " and predictions of shape " + y_pred.shape().to_string() +
                             " differ in size");
    }
    std::int64_t correct = 0;
    for (std::int64_t i = 0; i < y_true.num_elements(); ++i) {
      correct += impl::element(y_true, i) == impl::element(y_pred, i) ? 1 : 0;
    }
    add(double(correct), double(y_true.num_elements()));
  }
};

/// Per-example 1.0 / 0.0: argmax(y_pred, -1) == y_true
/// (tf.keras.metrics.sparse_categorical_accuracy).
template <class L, std::size_t R>
Tensor<float, R - 1> sparse_categorical_accuracy(const Tensor<L, R - 1>& y_true,
                                                 const Tensor<float, R>& y_pred) {
  auto pred = argmax(y_pred, int(R) - 1);
  return cast<float>(equal(cast<std::int64_t>(y_true), pred));
}
/// Per-example argmax(y_true, -1) == argmax(y_pred, -1) (categorical_accuracy).
template <std::size_t R>
Tensor<float, R - 1> categorical_accuracy(const Tensor<float, R>& y_true,
                                          const Tensor<float, R>& y_pred) {
  return cast<float>(equal(argmax(y_true, int(R) - 1), argmax(y_pred, int(R) - 1)));
}

/// A shared handle to a metric (what `compile` stores); converts from any Metric.
class MetricHandle {
 public:
  /// Holds a copy of `m` (any class derived from Metric); the copy shares m's state variables.
  template <class M>
    requires std::derived_from<std::remove_cvref_t<M>, Metric>
  MetricHandle(M&& m)  // NOLINT(google-explicit-constructor)
      : p_(std::make_shared<std::remove_cvref_t<M>>(std::forward<M>(m))) {}
  /// Shares `p` (a metric also read elsewhere); must not be null.
  MetricHandle(std::shared_ptr<Metric> p) : p_(std::move(p)) {}  // NOLINT
  /// The metric.
  [[nodiscard]] Metric& get() const { return *p_; }
  /// Member access to the metric: `handle->result()`.
  [[nodiscard]] Metric* operator->() const { return p_.get(); }

 private:
  std::shared_ptr<Metric> p_;
};

}  // namespace metrics
}  // namespace keras
TAPEFLOW_END_NAMESPACE
