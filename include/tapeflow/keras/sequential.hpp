// tf.keras.Sequential: a linear stack of layers whose ranks are checked at compile time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/detail/batching.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::keras_impl {

// Note [Sequential rank checks]
// A built-in layer declares the ranks it accepts (`min_input_rank`, optionally `input_rank`)
// and `output_rank(in)` (-1: unknown). Sequential walks the chain from an unknown input rank in
// its constructor (so Sequential(Flatten(), Dense(10), Conv2D(...)) does not compile: Conv2D
// needs rank 4 and Flatten gives 2), and again from the actual rank when called. Layers that
// declare nothing (user layers) pass any rank through as unknown.
template <class L>
constexpr int layer_output_rank(int in) {
  if constexpr (requires { L::output_rank(0); }) {
    return L::output_rank(in);
  } else {
    return -1;
  }
}
template <class L>
constexpr bool layer_accepts(int in) {
  if (in < 0) {
    return true;
  }
  if constexpr (requires { L::input_rank; }) {
    if (L::input_rank != in) {
      return false;
    }
  }
  if constexpr (requires { L::min_input_rank; }) {
    if (in < L::min_input_rank) {
      return false;
    }
  }
  return true;
}
/// Index of the first layer that rejects its input rank, or -1.
template <class... Layers>
constexpr int first_rank_mismatch(int in) {
  int rank = in;
  int index = 0;
  int bad = -1;
  (
      [&] {
        if (bad < 0 && !layer_accepts<Layers>(rank)) {
          bad = index;
        }
        rank = layer_output_rank<Layers>(rank);
        ++index;
      }(),
      ...);
  return bad;
}

/// Calls `layer(x, {.training = training})` for layers with a `call` (Layer<Self>), else
/// `layer(x, training)` when the layer's call operator takes the flag, else `layer(x)`.
template <class L, class X>
decltype(auto) call_layer(L& layer, const X& x, bool training) {
  if constexpr (has_call<L, X>) {
    return layer(x, keras::CallOptions{.training = training});
  } else if constexpr (requires { layer(x, training); }) {
    return layer(x, training);
  } else {
    return layer(x);
  }
}

}  // namespace detail::keras_impl

namespace keras {

/// A linear stack of layers (tf.keras.Sequential). The layers are values held in order; their
/// ranks are checked when the model is declared and when it is called (a mismatch is a compile
/// error, Note [Sequential rank checks]).
///
///     auto model = tf::keras::Sequential(tf::keras::layers::Flatten(),
///                                        tf::keras::layers::Dense(100, {.activation =
///                                        tf::nn::relu}), tf::keras::layers::Dense(10));
///     auto logits = model(images);  // Tensor<float, 3> [N, 28, 28] -> Tensor<float, 2> [N, 10]
///
/// Object-graph children: Keras 3's `_functional/_operations/<i>` (the InputLayer is 0), or
/// tf_keras' "layer_with_weights-<j>" and "layer-<i>" (docs/checkpoints.md, "Layouts"),
/// plus "optimizer" once compiled.
template <class... Layers>
class Sequential : public Model<> {
  static_assert(sizeof...(Layers) > 0, "tf::keras::Sequential needs at least one layer");
  static_assert((std::derived_from<Layers, Layer<>> && ...),
                "tf::keras::Sequential: every argument must be a tf::keras layer");
  static_assert(detail::keras_impl::first_rank_mismatch<Layers...>(-1) < 0,
                "tf::keras::Sequential: a layer's output rank does not fit the next layer's "
                "input rank (e.g. Conv2D/MaxPooling2D need rank-4 NHWC input; Flatten and Dense "
                "give rank 2)");

 public:
  static constexpr std::size_t num_layers = sizeof...(Layers);  ///< `len(model.layers)`

  /// Stacks `layers` (moved in), named "sequential", "sequential_1", ...; unnamed layers get
  /// their default names now, in order.
  explicit Sequential(Layers... layers) : Model<>("sequential"), layers_(std::move(layers)...) {
    name_layers();
  }
  /// Stacks `layers` with the model's name and trainability from `options`.
  Sequential(LayerOptions options, Layers... layers)
      : Model<>("sequential", std::move(options)), layers_(std::move(layers)...) {
    name_layers();
  }

  /// The I-th layer (Keras: `model.layers[I]`).
  template <std::size_t I>
  [[nodiscard]] auto& layer() noexcept {
    return std::get<I>(layers_);
  }

  /// Runs the layers in order. `training` reaches layers that take it (Dropout).
  template <class T, std::size_t R>
  auto operator()(const Tensor<T, R>& x, bool training = false) {
    static_assert(detail::keras_impl::first_rank_mismatch<Layers...>(int(R)) < 0,
                  "tf::keras::Sequential: the input's rank does not fit the first layers "
                  "(e.g. Conv2D needs a rank-4 NHWC input)");
    if constexpr (std::same_as<T, float>) {
      return run<0>(x, training);
    } else {
      return run<0>(cast<float>(x), training);  // Keras layers cast inputs to float32
    }
  }
  /// `model(x, {.training = true})`, as subclassed models are called.
  template <class T, std::size_t R>
  auto operator()(const Tensor<T, R>& x, CallOptions options) {
    return (*this)(x, options.training);
  }

  /// fit/evaluate/predict's entry: runs a batch of rank 2 to 4 (cast to float32); throws
  /// invalid_argument for other ranks or ranks the first layers reject.
  AnyTensor call_any(const AnyTensor& x, bool training) override {
    return detail::keras_impl::with_rank(x.rank(), "Sequential", [&]<std::size_t R>() -> AnyTensor {
      if constexpr (R >= 2 && R <= 4 &&
                    detail::keras_impl::first_rank_mismatch<Layers...>(int(R)) < 0) {
        return AnyTensor((*this)(detail::keras_impl::as_float<R>(x), training));
      } else {
        throw invalid_argument("Sequential '" + name() + "': inputs of shape " +
                               x.shape().to_string() + " do not fit the first layer");
      }
    });
  }

  /// Builds every layer by running a batch of one zero example of shape `input_shape`
  /// (without the batch axis), as `model.build((None, ...))` does.
  template <std::size_t N>
  void build(const std::int64_t (&input_shape)[N]) {
    std::array<std::int64_t, N + 1> dims{};
    dims[0] = 1;
    for (std::size_t i = 0; i < N; ++i) {
      dims[i + 1] = input_shape[i];
    }
    (void)(*this)(zeros<float>(dims));
  }

  using Model<>::build;  // Layer's build(input_shape), beside the one taking dims
  /// The layers, in order (Keras: `model.layers`).
  std::vector<Layer<>*> sublayers() override {
    std::vector<Layer<>*> out;
    std::apply([&](auto&... l) { (out.push_back(&l), ...); }, layers_);
    return out;
  }
  /// The layers as one list (weights files key them by class name).
  std::optional<std::vector<Layer<>*>> layer_list() override { return sublayers(); }
  /// The object-graph children of the class comment for `layout`, as TensorFlow's checkpoint
  /// keys name them.
  std::vector<TrackableReference> trackable_children(Layout layout) override {
    std::vector<TrackableReference> out;
    if (layout == Layout::keras3) {
      // Keras 3 keeps the layers in a Functional model built on first call, whose operations
      // start with the InputLayer (an empty node); the other attributes it tracks are empty
      // lists. A compiled model lists its optimizer first (compile usually precedes the build).
      if (auto opt = compiled_optimizer()) {
        out.push_back(std::move(*opt));
      }
      auto operations = std::make_shared<train::TrackableList>();
      operations->push_back({.owned = std::make_shared<train::TrackableNode>()});
      for (Layer<>* l : sublayers()) {
        operations->push_back({.object = l});
      }
      std::vector<TrackableReference> functional;
      for (const char* empty :
           {"_tracked", "_inbound_nodes", "_outbound_nodes", "_losses", "_losses_override",
            "call_signature_parameters", "_call_has_context_arg"}) {
        functional.push_back({.name = empty, .owned = std::make_shared<train::TrackableList>()});
      }
      functional.push_back({.name = "_operations", .owned = std::move(operations)});
      out.push_back({.name = "_functional",
                     .owned = std::make_shared<train::TrackableNode>(std::move(functional))});
      return out;
    }
    int i = 0, j = 0;
    for (Layer<>* l : sublayers()) {
      // tf_keras lists "layer_with_weights-<j>" before "layer-<i>", so checkpoint keys take the
      // layer_with_weights path (the first BFS path names a node).
      if (!l->variables().empty()) {
        out.push_back({.name = "layer_with_weights-" + std::to_string(j++), .object = l});
      }
      out.push_back({.name = "layer-" + std::to_string(i++), .object = l});
    }
    if (auto opt = compiled_optimizer()) {
      out.push_back(std::move(*opt));
    }
    return out;
  }
  /// "Sequential".
  [[nodiscard]] std::string class_name() const override { return "Sequential"; }

 protected:
  /// One row per layer: "name (Type)", its last output shape ("(unbuilt)" before an eager call) and
  /// its parameter count.
  std::vector<SummaryRow> summary_rows() override {
    std::vector<SummaryRow> rows;
    std::size_t i = 0;
    std::apply(
        [&](auto&... l) {
          (rows.push_back({l.name() + " (" + type_name(l) + ")",
                           i < shapes_.size() ? shape_text(shapes_[i++]) : "(unbuilt)",
                           l.count_params()}),
           ...);
        },
        layers_);
    return rows;
  }

 private:
  void name_layers() {
    (void)name();
    for (Layer<>* l : sublayers()) {
      (void)l->name();  // default names in layer order (Layer::name)
    }
  }
  template <class L>
  static std::string type_name(const L& l) {
    if constexpr (requires { l.class_name(); }) {
      return l.class_name();
    } else {
      return "Layer";
    }
  }

  template <std::size_t I, class X>
  auto run(const X& x, bool training) {
    auto y = detail::keras_impl::call_layer(std::get<I>(layers_), x, training);
    // Replica 0 alone records shapes for summary(): replicas of a strategy call concurrently.
    if (!y.is_symbolic() && tapeflow::detail::current_replica() <= 0) {
      if (shapes_.size() <= I) {
        shapes_.resize(I + 1);
      }
      shapes_[I] = y.shape();
    }
    if constexpr (I + 1 < sizeof...(Layers)) {
      return run<I + 1>(y, training);
    } else {
      return y;
    }
  }

  std::tuple<Layers...> layers_;
  std::vector<Shape> shapes_;
};

/// Deduces `Sequential<Layers...>` from the layers passed, in order.
template <class... Layers>
Sequential(Layers...) -> Sequential<Layers...>;

}  // namespace keras
TAPEFLOW_END_NAMESPACE
