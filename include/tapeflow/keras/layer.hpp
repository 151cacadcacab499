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
// Layers built from options at run time (tf.keras.applications' ~150) are owned instead:
// `track_owned(name, std::make_shared<L>(...))` keeps the child on the heap, shared by copies
// of the parent (as Python shares the layer objects); both kinds list in registration order.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/replica_context.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/ops/state/variable.hpp>
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
  std::optional<std::string> name = std::nullopt;  ///< used verbatim; default: a unique name
  bool trainable = true;  ///< whether training updates its weights (Keras' `trainable`)
};

/// Keyword arguments of a call: `layer(x, {.training = true})` (Keras: `layer(x, training=True)`).
struct CallOptions {
  bool training = false;  ///< training mode (Dropout drops only then); default inference
};

template <class Derived = void>
class Layer;

/// The type-erased base of every layer (tf.keras.layers.Layer): owns weights and child layers,
/// builds once. Layers derive from `Layer<Self>` (below), which adds the call operator.
template <>
class Layer<void> : public Trackable {
 public:
  /// `base_name` is uniquified ("dense" -> "dense_1"); `options.name` is used verbatim.
  explicit Layer(const std::string& base_name, LayerOptions options = {})
      : name_(options.name ? *options.name : std::string()),
        base_name_(base_name),
        trainable_(options.trainable) {}

  /// Creates the layer's weights for inputs of shape `input_shape` (Keras: `build`). The call
  /// operator runs it once, before the first call.
  virtual void build(const Shape& input_shape) { (void)input_shape; }
  /// Builds for `input_shape` unless built (what the call operator does first).
  /// Inside `strategy.run`, replica 0 builds for all replicas in a merge_call, so the weights
  /// are created once, mirrored (Note [Mirrored variables]).
  void ensure_built(const Shape& input_shape) {
    if (built_) {
      return;
    }
    if (auto* replica = distribute::get_replica_context();
        replica != nullptr && replica->num_replicas_in_sync() > 1) {
      replica->merge_call([&] {
        if (!built_) {
          build(input_shape);
          built_ = true;
        }
      });
      return;
    }
    build(input_shape);
    built_ = true;
  }

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
  /// Whether training calls a collective of the replicas in this layer or a child
  /// (BatchNormalization(synchronized)): then every replica runs each step under a strategy,
  /// one given no rows of the batch too, so that it joins those calls.
  [[nodiscard]] virtual bool uses_replica_collectives() {
    return std::ranges::any_of(sublayers(),
                               [](Layer<>* child) { return child->uses_replica_collectives(); });
  }
  /// Whether `build` has run (Keras: `layer.built`).
  [[nodiscard]] bool built() const noexcept { return built_; }
  /// Whether training updates this layer's weights (Keras: `layer.trainable`).
  [[nodiscard]] bool trainable() const noexcept { return trainable_; }
  /// Freezes (false) or unfreezes the layer (Keras: `layer.trainable = t`): a frozen layer's
  /// `trainable_variables` is empty, its children's weights included.
  void set_trainable(bool t) noexcept { trainable_ = t; }

  /// Weights of this layer and its children, depth first, own weights first (Keras order).
  [[nodiscard]] std::vector<AnyVariable> variables() {
    std::vector<AnyVariable> out;
    collect(out, [](const AnyVariable&) { return true; });
    return out;
  }
  /// The same as `variables()` (Keras: `layer.weights`).
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
  /// The weights `trainable_variables` leaves out: non-trainable weights and those of frozen
  /// layers (Keras: `non_trainable_weights`).
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
    for (const auto& c : children_) {
      out.push_back({.name = c.name, .object = child_at(c)});
    }
    for (const auto& w : own_weights_) {
      out.push_back(
          {.name = layout == Layout::keras3 ? w.keras3_name : w.name, .variable = w.variable});
    }
    return out;
  }
  /// This layer's own weights, trainable ones first (Keras: `_trainable_variables +
  /// _non_trainable_variables`, the order weights files store them in).
  [[nodiscard]] std::vector<AnyVariable> own_variables() const {
    std::vector<AnyVariable> out;
    for (const bool trainable : {true, false}) {
      for (const auto& w : own_weights_) {
        if (w.variable.trainable() == trainable) {
          out.push_back(w.variable);
        }
      }
    }
    return out;
  }
  /// Tracked child layers under their attribute names, in registration order.
  [[nodiscard]] std::vector<std::pair<std::string, Layer<>*>> named_sublayers() {
    std::vector<std::pair<std::string, Layer<>*>> out;
    for (const auto& c : children_) {
      out.emplace_back(c.name, child_at(c));
    }
    return out;
  }
  /// The layers of a model that keeps them as one list (Keras: `model.layers` of Sequential and
  /// Functional models), which Keras 3 weights files key by class name; nullopt for a layer or
  /// model whose children are attributes (`named_sublayers`).
  [[nodiscard]] virtual std::optional<std::vector<Layer<>*>> layer_list() { return std::nullopt; }
  /// Child layers (tracked members), in registration order.
  [[nodiscard]] virtual std::vector<Layer<>*> sublayers() {
    std::vector<Layer<>*> out;
    for (const auto& c : children_) {
      out.push_back(child_at(c));
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
    // Initial values are computed eagerly even when the first call is being traced by a
    // tf::function (TensorFlow's init_scope): the variable outlives the trace.
    auto values = [&] {
      const tapeflow::detail::trace::Suspend eager;
      return initializer ? initializer(Shape(dims))
                         : std::vector<float>(std::size_t(detail::product(dims)), 0.0f);
    }();
    if (static_cast<std::int64_t>(values.size()) != detail::product(dims)) {
      throw invalid_argument("tf::keras::Layer::add_weight '" + this->name() + "/" + name +
                             "': the initializer gave " + std::to_string(values.size()) +
                             " values for shape " + Shape(dims).to_string());
    }
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
  /// `add_weight` with the shape as a braced list: `add_weight<float, 2>("w", {in, units})`.
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
  /// Registers member layer `child` under `name`, its object-graph local name (the Python
  /// attribute name: "dense1"); returns it. `TAPEFLOW_TRACK(a, b, ...)` registers several
  /// members under their own names. Throws invalid_argument when `child` is not a sub-object of
  /// this layer (children are found again by their offset from the layer, so layers stay
  /// movable).
  template <class L>
  L& track(const std::string& name, L& child) {
    static_assert(std::derived_from<L, Layer<>>,
                  "Layer::track: child must be a tf::keras layer (derived from tf::keras::Layer)");
    const auto* base = reinterpret_cast<const char*>(this);
    const auto* at = reinterpret_cast<const char*>(&child);
    const std::size_t size = object_size();
    if (at < base || (size != 0 && at + sizeof(L) > base + size) ||
        static_cast<const Layer<>*>(&child) == this) {
      throw invalid_argument("tf::keras::Layer::track: '" + name + "' is not a member of layer '" +
                             this->name() +
                             "' (track registers sub-objects only: declare the child layer as a "
                             "data member and track that member)");
    }
    check_new_child(name, "track");
    children_.push_back({name,
                         reinterpret_cast<const char*>(static_cast<Layer<>*>(&child)) -
                             reinterpret_cast<const char*>(this),
                         nullptr});
    return child;
  }
  /// Registers a heap-allocated child layer under `name` and keeps it alive (a layer list built
  /// at run time, as tf.keras.applications' models are); returns it. Copies of this layer share
  /// the child (Python shares the object). Throws invalid_argument for a null child or a name
  /// already tracked.
  template <class L>
  L& track_owned(const std::string& name, std::shared_ptr<L> child) {
    static_assert(std::derived_from<L, Layer<>>,
                  "Layer::track_owned: child must be a tf::keras layer (derived from "
                  "tf::keras::Layer)");
    if (!child) {
      throw invalid_argument("tf::keras::Layer::track_owned: layer '" + this->name() +
                             "' was given no child for '" + name + "'");
    }
    check_new_child(name, "track_owned");
    L& out = *child;
    children_.push_back({name, 0, std::shared_ptr<Layer<>>(std::move(child))});
    return out;
  }

 protected:
  /// Member-wise copy (for derived layers); the copy's weights are handles to the same
  /// variables.
  Layer(const Layer&) = default;
  /// Moves the layer; tracked children stay valid (they are stored as offsets).
  Layer(Layer&&) noexcept = default;
  /// Copy-assigns, as the copy constructor copies.
  Layer& operator=(const Layer&) = default;
  /// Move-assigns, as the move constructor moves.
  Layer& operator=(Layer&&) noexcept = default;

  /// Marks the layer built (or not), for layers that build outside `ensure_built`.
  void set_built(bool b = true) noexcept { built_ = b; }
  /// Keras 3 tracks weight `name` under another attribute (Dense: "kernel" -> "_kernel").
  void keras3_attribute(std::string name, std::string keras3_name) {
    keras3_names_.emplace_back(std::move(name), std::move(keras3_name));
  }
  /// sizeof the most derived object (Layer<Self> knows it), 0 when unknown: bounds `track`'s
  /// membership check.
  [[nodiscard]] virtual std::size_t object_size() const noexcept { return 0; }

 private:
  template <class Pred>
  void collect(std::vector<AnyVariable>& out, Pred pred, bool only_trainable_layers = false) {
    for (const auto& w : own_weights_) {
      if (pred(w.variable)) {
        out.push_back(w.variable);
      }
    }
    for (Layer<>* child : sublayers()) {
      if (only_trainable_layers && !child->trainable_) {
        continue;
      }
      child->collect(out, pred, only_trainable_layers);
    }
  }
  struct Child {
    std::string name;
    std::ptrdiff_t offset;           // a member child: its offset from this layer
    std::shared_ptr<Layer<>> owned;  // an owned child (track_owned), else null
  };
  Layer<>* child_at(const Child& c) {
    return c.owned ? c.owned.get()
                   : reinterpret_cast<Layer<>*>(reinterpret_cast<char*>(this) + c.offset);
  }
  void check_new_child(const std::string& name, const char* what) const {
    for (const auto& c : children_) {
      if (c.name == name) {
        throw invalid_argument(std::string("tf::keras::Layer::") + what + ": layer '" +
                               this->name() + "' already tracks a child named '" + name + "'");
      }
    }
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
  std::vector<Child> children_;
};

}  // namespace keras

namespace detail::keras_impl {

/// A class's unqualified name ("ns::MyLayer" -> "MyLayer"), from the compiler's spelling of
/// the type; "Layer" where the compiler gives none.
template <class T>
std::string class_name_of() {
#if defined(__clang__) || defined(__GNUC__)
  std::string_view f = __PRETTY_FUNCTION__;  // "... [with T = ns::MyLayer; ...]"
  const auto eq = f.find("T = ");
  std::string_view t = eq == std::string_view::npos ? std::string_view("Layer") : f.substr(eq + 4);
  t = t.substr(0, t.find_first_of(";]<"));
  if (const auto colon = t.rfind("::"); colon != std::string_view::npos) {
    t = t.substr(colon + 2);
  }
  return std::string(t.empty() ? std::string_view("Layer") : t);
#else
  return "Layer";
#endif
}

/// Keras' default layer name for a class: its name in snake_case ("MLP" -> "mlp", "MyLayer" ->
/// "my_layer").
template <class T>
std::string default_layer_name() {
  const std::string name = class_name_of<T>();
  const std::string_view t = name;
  std::string out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    const bool upper = c >= 'A' && c <= 'Z';
    // "MyLayer" -> my_layer, "HTTPServer" -> http_server, "MLP" -> mlp
    if (upper && i > 0 &&
        ((t[i - 1] >= 'a' && t[i - 1] <= 'z') || (t[i - 1] >= '0' && t[i - 1] <= '9') ||
         (i + 1 < t.size() && t[i + 1] >= 'a' && t[i + 1] <= 'z' && t[i - 1] >= 'A' &&
          t[i - 1] <= 'Z'))) {
      out += '_';
    }
    out += upper ? char(c - 'A' + 'a') : c;
  }
  return out.empty() ? std::string("layer") : out;
}

template <class>
inline constexpr bool dependent_false = false;

/// Whether layer class L has a `call` taking x (with or without the training flag).
template <class L, class X>
concept has_call =
    requires(L& l, const X& x) { l.call(x); } || requires(L& l, const X& x) { l.call(x, true); };

template <class X>
Shape input_shape_of(const X& x) {
  if constexpr (requires { x.shape(); }) {
    return x.shape();
  } else {
    return Shape();
  }
}

/// What `layer(x, ...)` and `model(x, ...)` do: build once from x's shape, then call
/// `self.call(x, training)` (when call takes the flag) or `self.call(x, args...)`.
template <class Self, class X, class... Args>
decltype(auto) invoke_call(Self& self, keras::Layer<>& base, const X& x, Args&&... args) {
  if constexpr (sizeof...(Args) == 0) {
    return invoke_call(self, base, x, keras::CallOptions{});
  } else if constexpr (sizeof...(Args) == 1 &&
                       (std::same_as<std::remove_cvref_t<Args>, keras::CallOptions> && ...)) {
    const keras::CallOptions options = (args, ...);
    if constexpr (requires { self.call(x, options.training); }) {
      base.ensure_built(input_shape_of(x));
      return self.call(x, options.training);
    } else if constexpr (requires { self.call(x); }) {
      base.ensure_built(input_shape_of(x));
      return self.call(x);
    } else {
      static_assert(dependent_false<X>,
                    "tf::keras: `layer(x)` / `model(x)` needs the class's call() to accept x: no "
                    "call(x) or call(x, bool training) takes a tensor of this rank and dtype");
    }
  } else if constexpr (requires { self.call(x, std::forward<Args>(args)...); }) {
    base.ensure_built(input_shape_of(x));
    return self.call(x, std::forward<Args>(args)...);
  } else {
    static_assert(dependent_false<X>,
                  "tf::keras: `layer(x, args...)` needs the class's call() to accept (x, args...)");
  }
}

}  // namespace detail::keras_impl

namespace keras {

/// A layer class (tf.keras.layers.Layer subclass): `Self` creates its weights in
/// `build(input_shape)` with `add_weight` and computes in `call`; `layer(x)` builds once, on
/// the first call, then calls (as Keras does):
///
///     struct Linear : tf::keras::Layer<Linear> {
///       std::int64_t units;
///       tf::Variable<float, 2> w;
///       explicit Linear(std::int64_t units) : units(units) {}
///       void build(const tf::Shape& input_shape) override {
///         w = add_weight<float, 2>("w", {input_shape[input_shape.rank() - 1], units});
///       }
///       tf::Tensor<float, 2> call(const tf::Tensor<float, 2>& x) { return tf::matmul(x, w); }
///     };
///
/// `call` may take a second `bool training` parameter, which `layer(x, {.training = true})`
/// sets. Child layers are data members registered once with `TAPEFLOW_TRACK(a, b, ...)` (or
/// `track("name", member)`), under the names checkpoints use.
template <class Derived>
class Layer : public Layer<void> {
 public:
  /// Named after the class in snake_case ("MyLayer" -> "my_layer", uniquified).
  Layer() : Layer<void>(detail::keras_impl::default_layer_name<Derived>()) {}
  /// Takes the common layer options; without `options.name`, named as the default constructor
  /// names it.
  explicit Layer(LayerOptions options)
      : Layer<void>(detail::keras_impl::default_layer_name<Derived>(), std::move(options)) {}
  using Layer<void>::Layer;

  /// The class's own name, as summary() shows it ("MyLayer"); built-in layers override it.
  [[nodiscard]] std::string class_name() const override {
    return detail::keras_impl::class_name_of<Derived>();
  }

  /// Builds on the first call, then runs `call` (Keras: `layer(x)`, `layer(x, training=True)`).
  template <class X>
  decltype(auto) operator()(const X& x, CallOptions options = {}) {
    return detail::keras_impl::invoke_call(static_cast<Derived&>(*this), *this, x, options);
  }
  /// Extra arguments go to `call` (an LSTMCell's state).
  template <class X, class A, class... More>
  decltype(auto) operator()(const X& x, A&& a, More&&... more) {
    return detail::keras_impl::invoke_call(static_cast<Derived&>(*this), *this, x,
                                           std::forward<A>(a), std::forward<More>(more)...);
  }

 protected:
  /// `sizeof(Derived)`, which bounds `track`'s membership check.
  [[nodiscard]] std::size_t object_size() const noexcept override { return sizeof(Derived); }
};

}  // namespace keras
TAPEFLOW_END_NAMESPACE

// TAPEFLOW_TRACK(a, b, ...) in a layer's or model's constructor: track("a", a), track("b", b),
// ... (each member under its own name, as Python's `self.a = ...` names it), up to 32 members.
#define TAPEFLOW_TRACK(...)                                                                        \
  TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_N(                                            \
      __VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, \
      12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_EXPAND(x) x
#define TAPEFLOW_DETAIL_TRACK_N(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, \
                                _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28,  \
                                _29, _30, _31, _32, N, ...)                                       \
  TAPEFLOW_DETAIL_TRACK_##N
#define TAPEFLOW_DETAIL_TRACK_1(a) this->track(#a, a)
#define TAPEFLOW_DETAIL_TRACK_2(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_1(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_3(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_2(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_4(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_3(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_5(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_4(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_6(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_5(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_7(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_6(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_8(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_7(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_9(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_8(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_10(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_9(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_11(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_10(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_12(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_11(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_13(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_12(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_14(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_13(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_15(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_14(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_16(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_15(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_17(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_16(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_18(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_17(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_19(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_18(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_20(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_19(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_21(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_20(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_22(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_21(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_23(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_22(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_24(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_23(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_25(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_24(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_26(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_25(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_27(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_26(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_28(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_27(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_29(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_28(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_30(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_29(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_31(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_30(__VA_ARGS__))
#define TAPEFLOW_DETAIL_TRACK_32(a, ...) \
  this->track(#a, a), TAPEFLOW_DETAIL_TRACK_EXPAND(TAPEFLOW_DETAIL_TRACK_31(__VA_ARGS__))
