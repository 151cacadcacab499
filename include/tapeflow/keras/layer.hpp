// `tf::keras::Layer` (tf.keras.layers.Layer) and the `Trackable` interface checkpoints walk.
//
// Note [Keras tracking]
// ~~~~~~~~~~~~~~~~~~~~~
// Every layer, model and optimizer is a `Trackable`: `trackable_children()` lists its child
// objects under TensorFlow's object-graph local names (Sequential:
// "layer_with_weights-0", "layer-0", ...; a user layer: the names given to `track`) and
// `trackable_variables()` lists the variables it owns directly under their attribute names
// ("kernel", "bias", "iter", ...). Optimizer slots are listed by `Optimizer::slot_variables()`.
// Together these give docs/formats.md section 11.4's checkpoint keys.
//
// Weights are created lazily: `add_weight` runs in `build`, on the first call. A checkpoint
// restored before that installs a `restore hook` (`set_restore_hook`) on the node; `add_weight`
// calls it with the weight's local name right after creating the variable, so the value is
// applied then (TensorFlow's deferred restoration).
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
#include <tapeflow/keras/any_variable.hpp>
#include <tapeflow/keras/initializers.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {

class Trackable;

/// A named child in the object graph.
struct TrackableChild {
  std::string name;
  Trackable* object = nullptr;
};
/// A named variable owned by a trackable object.
struct TrackableVariable {
  std::string name;
  AnyVariable variable;
};

/// Objects checkpoints walk (Note [Keras tracking]).
class Trackable {
 public:
  /// Called by add_weight after creating a weight (deferred restoration).
  using RestoreHook = std::function<void(const std::string& local_name, const AnyVariable&)>;

  Trackable() = default;
  Trackable(const Trackable&) = default;
  Trackable(Trackable&&) noexcept = default;
  Trackable& operator=(const Trackable&) = default;
  Trackable& operator=(Trackable&&) noexcept = default;
  virtual ~Trackable() = default;

  /// Child objects under their TensorFlow object-graph local names, in creation order.
  [[nodiscard]] virtual std::vector<TrackableChild> trackable_children() { return {}; }
  /// Variables this object owns directly, under their attribute names.
  [[nodiscard]] virtual std::vector<TrackableVariable> trackable_variables() { return {}; }
  /// Installs (or clears, with nullptr) the deferred-restoration hook.
  void set_restore_hook(RestoreHook hook) { restore_hook_ = std::move(hook); }

 protected:
  void notify_created(const std::string& local_name, const AnyVariable& v) const {
    if (restore_hook_) {
      restore_hook_(local_name, v);
    }
  }

 private:
  RestoreHook restore_hook_;
};

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

  [[nodiscard]] std::vector<TrackableChild> trackable_children() override {
    std::vector<TrackableChild> out;
    for (const auto& [name, offset] : children_) {
      out.push_back({name, child_at(offset)});
    }
    return out;
  }
  [[nodiscard]] std::vector<TrackableVariable> trackable_variables() override {
    return own_weights_;
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
    own_weights_.push_back({name, AnyVariable(v)});
    notify_created(name, own_weights_.back().variable);
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
  std::vector<TrackableVariable> own_weights_;
  std::vector<std::pair<std::string, std::ptrdiff_t>> children_;
};

}  // namespace keras
TAPEFLOW_END_NAMESPACE
