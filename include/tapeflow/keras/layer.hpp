// `tf::keras::Layer` (tf.keras.layers.Layer): weights, child layers and lazy building.
//
// Note [Keras tracking]
// ~~~~~~~~~~~~~~~~~~~~~
// Every layer, model, optimizer and metric is a `train::Trackable`: `trackable_children(layout)`
// lists child layers under the names given to `track` and the layer's own weights under their
// attribute names for that layout (Keras 3 renames some: Dense's kernel is `_kernel`, see
// `keras3_attribute`), which gives TensorFlow's checkpoint keys (docs/checkpoints.md, "Layouts").
//
// Weights are created lazily: `add_weight` runs in `build`, on the first call, and notifies the
// trackable's hook (`notify_children_changed`) so that a checkpoint restored earlier applies
// the values it holds for them then (TensorFlow's deferred restoration).
//
// Children registered with `track` are stored as offsets from the layer, so they must be
// members (sub-objects) of the layer; layers stay movable (Sequential moves them into place).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/variable.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/core/any_variable.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {

using train::Layout;
using train::Trackable;
using train::TrackableReference;

/// Unique Keras-style names: "dense", "dense_1", "dense_2", ... per base name (process-wide,
/// like Keras' per-session uids).
inline std::string unique_layer_name(const std::string& base) {
  static std::mutex mutex;
  static std::map<std::string, int> counts;
  std::lock_guard lock(mutex);
  int n = counts[base]++;
  return n == 0 ? base : base + "_" + std::to_string(n);
}

/// Keyword arguments every layer takes.
struct LayerOptions {
  std::optional<std::string> name = std::nullopt;
  bool trainable = true;
};

/// Base of every layer (tf.keras.layers.Layer): owns weights and child layers, builds lazily.
///
/// A user layer (the chapter's MyLayer) derives from it, creates weights in `build` with
/// `add_weight`, and computes in a call operator:
///
///     struct MyLayer : tf::keras::Layer {
///       tf::Variable<float, 2> w;
///       MyLayer() : Layer("my_layer") {}
///       tf::Tensor<float, 2> operator()(const tf::Tensor<float, 2>& x) {
///         if (!built()) { w = add_weight<float, 2>("w", {x.dim(1), 4}); set_built(); }
///         return tf::matmul(x, w);
///       }
///     };
class Layer : public Trackable {
 public:
  /// `base_name` is uniquified ("dense" -> "dense_1"); `options.name` is used verbatim.
  explicit Layer(const std::string& base_name, LayerOptions options = {})
      : name_(options.name ? *options.name : std::string()),
        base_name_(base_name),
        trainable_(options.trainable) {}

  /// The layer's name. Default names ("dense", "dense_1", ...) are given on first use, not at
  /// construction: C++ evaluates `Sequential(Dense(..), Dense(..))`'s arguments in no fixed
  /// order, and Sequential names its layers in order so they match Keras'.
  [[nodiscard]] const std::string& name() const {
    if (name_.empty()) {
      name_ = unique_layer_name(base_name_);
    }
    return name_;
  }
  /// The Keras class name summary() shows ("Dense", "Conv2D", ...).
  [[nodiscard]] virtual std::string class_name() const { return "Layer"; }
  [[nodiscard]] bool built() const noexcept { return built_; }
  [[nodiscard]] bool trainable() const noexcept { return trainable_; }
  void set_trainable(bool t) noexcept { trainable_ = t; }

  /// Weights of this layer and its children, depth first, own weights first (Keras order).
  [[nodiscard]] std::vector<AnyVariable> variables() {
    std::vector<AnyVariable> out;
    collect(out, [](const AnyVariable&) { return true; });
    return out;
  }
  [[nodiscard]] std::vector<AnyVariable> weights() { return variables(); }
  /// The weights a training step updates (trainable weights of trainable layers).
  [[nodiscard]] std::vector<AnyVariable> trainable_variables() {
    std::vector<AnyVariable> out;
    if (trainable_) {
      collect(
          out, [](const AnyVariable& v) { return v.trainable(); }, true);
    }
    return out;
  }
  [[nodiscard]] std::vector<AnyVariable> non_trainable_variables() {
    auto all = variables();
    auto tr = trainable_variables();
    std::vector<AnyVariable> out;
    for (auto& v : all) {
      bool found = false;
      for (auto& t : tr) {
        found = found || t.same_as(v);
      }
      if (!found) {
        out.push_back(v);
      }
    }
    return out;
  }
  /// Number of scalars in all weights.
  [[nodiscard]] std::int64_t count_params() {
    std::int64_t n = 0;
    for (const auto& v : variables()) {
      n += v.num_elements();
    }
    return n;
  }

  [[nodiscard]] bool may_create_children() const override { return !built_; }
  /// Tracked child layers, then own weights (under their Keras 3 attribute names for
  /// `Layout::keras3`).
  [[nodiscard]] std::vector<TrackableReference> trackable_children(Layout layout) override {
    std::vector<TrackableReference> out;
    for (const auto& [name, offset] : children_) {
      out.push_back({.name = name, .object = child_at(offset)});
    }
    for (const auto& w : own_weights_) {
      out.push_back({.name = layout == Layout::keras3 ? w.keras3_name : w.name,
                     .variable = w.variable});
    }
    return out;
  }
  /// Child layers (tracked members), in registration order.
  [[nodiscard]] virtual std::vector<Layer*> sublayers() {
    std::vector<Layer*> out;
    for (const auto& [name, offset] : children_) {
      out.push_back(child_at(offset));
    }
    return out;
  }

  /// Creates a weight of shape `dims` named `<layer>/<name>`, registers it under `name` and
  /// applies a pending restore (Note [Keras tracking]).
  template <class T = float, std::size_t R>
  Variable<T, R> add_weight(
      const std::string& name, const std::array<std::int64_t, R>& dims,
      const initializers::Initializer& initializer = initializers::GlorotUniform(),
      bool trainable = true) {
    auto values = initializer ? initializer(Shape(dims))
                              : std::vector<float>(std::size_t(detail::product(dims)), 0.0f);
    auto t = Tensor<T, R>::uninitialized(dims);
    T* d = tapeflow::detail::tensor_access::mutable_data(t);
    for (std::size_t i = 0; i < values.size(); ++i) {
      d[i] = static_cast<T>(values[i]);
    }
    Variable<T, R> v(std::move(t), {.name = this->name() + "/" + name, .trainable = trainable});
    std::string keras3_name = name;
    for (const auto& [attr, renamed] : keras3_names_) {
      if (attr == name) {
        keras3_name = renamed;
      }
    }
    own_weights_.push_back({name, std::move(keras3_name), AnyVariable(v)});
    notify_children_changed();
    return v;
  }
  template <class T = float, std::size_t R>
  Variable<T, R> add_weight(
      const std::string& name, std::int64_t const (&dims)[R],
      const initializers::Initializer& initializer = initializers::GlorotUniform(),
      bool trainable = true) {
    std::array<std::int64_t, R> d{};
    std::copy(dims, dims + R, d.begin());
    return add_weight<T, R>(name, d, initializer, trainable);
  }

 protected:
  Layer(const Layer&) = default;
  Layer(Layer&&) noexcept = default;
  Layer& operator=(const Layer&) = default;
  Layer& operator=(Layer&&) noexcept = default;

  void set_built(bool b = true) noexcept { built_ = b; }
  /// Keras 3 tracks weight `name` under another attribute (Dense: "kernel" -> "_kernel").
  void keras3_attribute(std::string name, std::string keras3_name) {
    keras3_names_.emplace_back(std::move(name), std::move(keras3_name));
  }
  /// Registers a member layer under `name` (its object-graph local name); returns it.
  template <class L>
  L& track(const std::string& name, L& child) {
    static_assert(std::derived_from<L, Layer>, "Layer::track: child must be a tf::keras::Layer");
    children_.emplace_back(name, reinterpret_cast<const char*>(static_cast<Layer*>(&child)) -
                                     reinterpret_cast<const char*>(this));
    return child;
  }

 private:
  template <class Pred>
  void collect(std::vector<AnyVariable>& out, Pred pred, bool only_trainable_layers = false) {
    for (const auto& w : own_weights_) {
      if (pred(w.variable)) {
        out.push_back(w.variable);
      }
    }
    for (Layer* child : sublayers()) {
      if (only_trainable_layers && !child->trainable_) {
        continue;
      }
      child->collect(out, pred, only_trainable_layers);
    }
  }
  Layer* child_at(std::ptrdiff_t offset) {
    return reinterpret_cast<Layer*>(reinterpret_cast<char*>(this) + offset);
  }

  mutable std::string name_;
  std::string base_name_;
  bool trainable_ = true;
  bool built_ = false;
  struct OwnWeight {
    std::string name;         // the attribute name (tf_keras)
    std::string keras3_name;  // the attribute name under Keras 3
    AnyVariable variable;
  };
  std::vector<OwnWeight> own_weights_;
  std::vector<std::pair<std::string, std::string>> keras3_names_;
  std::vector<std::pair<std::string, std::ptrdiff_t>> children_;
};

}  // namespace keras
TAPEFLOW_END_NAMESPACE
