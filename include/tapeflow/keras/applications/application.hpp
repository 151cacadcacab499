// `tf::keras::applications::Application`: the model tf.keras.applications' constructors return
// (a Keras Functional model), holding its layers in Keras's `model.layers` order.
//
// Note [Application layers]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// MobileNetV2, ResNet50 and VGG16 are built from options at run time (MobileNetV2 has 155
// layers), so their layers are owned (`Layer::track_owned`) rather than members. They are
// registered in the order Keras 3's `model.layers` lists them (a topological order, which
// differs from the order the Python code creates them: ResNet's shortcut `_0_conv` comes after
// the block's `_2_relu`), each a node with the indices of the nodes it reads (node 0 is the
// input). Keras builds a Functional model at construction, so the constructor builds every
// layer from the shapes it infers (weights exist at once, as `model.weights` in Python); a
// layer's output shape is known without a forward pass, for summary() and the checks.
//
// Checkpoint children follow Keras's Functional model (docs/checkpoints.md, "Layouts"): Keras 3
// lists `_operations/<i>` with the InputLayer at 0; tf_keras lists `layer_with_weights-<j>`
// and `layer-<i>` with the InputLayer at `layer-0`. Layer names are Keras 3's (the default
// names, "input_layer" and "global_average_pooling2d", are uniquified as Keras does).
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/activations.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/keras/layers/activation.hpp>
#include <tapeflow/keras/layers/batch_normalization.hpp>
#include <tapeflow/keras/layers/conv2d.hpp>
#include <tapeflow/keras/layers/dense.hpp>
#include <tapeflow/keras/layers/depthwise_conv2d.hpp>
#include <tapeflow/keras/layers/flatten.hpp>
#include <tapeflow/keras/layers/global_pooling.hpp>
#include <tapeflow/keras/layers/merge.hpp>
#include <tapeflow/keras/layers/pooling.hpp>
#include <tapeflow/keras/layers/relu.hpp>
#include <tapeflow/keras/layers/zero_padding2d.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/keras/weights.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras::applications {

/// The arguments every application takes, resolved (see each model's options struct).
struct CommonOptions {
  /// (height, width, channels); -1 for an unknown height or width (Keras' None); default
  /// 224x224x3 with the top, (None, None, 3) without.
  std::optional<std::array<std::int64_t, 3>> input_shape = std::nullopt;
  bool include_top = true;  ///< the classifier (Keras: `include_top`)
  /// "" (Keras' None: random weights), "imagenet" or the path of a weights file.
  std::string weights = "";
  std::string pooling = "";     ///< without the top: "" (4-D features), "avg" or "max"
  std::int64_t classes = 1000;  ///< classifier outputs, with the top
  std::string classifier_activation = "softmax";   ///< "softmax", or "" / "linear" (logits)
  std::optional<std::string> name = std::nullopt;  ///< the model's name; default Keras's
};

/// A model of tf.keras.applications (a Keras Functional model): its layers in `model.layers`
/// order (Note [Application layers]), built at construction. `model(x)` takes NHWC float
/// images and gives an AnyTensor: [N, classes] with the top, [N, C] with pooling, else the
/// [N, H', W', C] features (`.as<float, 2>()` / `.as<float, 4>()` for the typed tensor).
class Application : public Model<Application> {
 public:
  /// A row of `layers()`: what Python's `[(l.name, l.__class__.__name__, [w.shape for w in
  /// l.weights]) for l in model.layers]` gives, plus the output shape (-1: None).
  struct LayerInfo {
    std::string name;                  ///< the Keras layer name ("Conv1", "block_1_pad", ...)
    std::string class_name;            ///< the Keras class ("Conv2D", "InputLayer", ...)
    std::vector<Shape> weight_shapes;  ///< in Keras's order (kernel, bias; gamma, beta, ...)
    Shape output_shape;                ///< with the batch axis as -1
  };

  /// The forward pass on NHWC float images (`training` reaches BatchNormalization).
  AnyTensor call(const Tensor<float, 4>& x, bool training = false) {
    const Shape& in = shapes_[0];
    for (std::size_t i = 1; i < 4; ++i) {
      if (in[i] >= 0 && x.dims()[i] != in[i]) {
        throw invalid_argument("tf::keras::applications model '" + name() +
                               "': expected inputs of shape " + shape_text(in) + ", got " +
                               x.shape().to_string());
      }
    }
    std::vector<AnyTensor> values(nodes_.size() + 1);
    values[0] = AnyTensor(x);
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      values[k + 1] = nodes_[k].run(values, training);
      for (int input : nodes_[k].inputs) {
        if (last_use_[std::size_t(input)] == int(k) + 1) {
          values[std::size_t(input)] = AnyTensor();  // free what no later node reads
        }
      }
    }
    return values.back();
  }

  /// `model.layers` as Keras lists it, the InputLayer first.
  [[nodiscard]] std::vector<LayerInfo> layers() {
    std::vector<LayerInfo> out;
    out.push_back({input_name_, "InputLayer", {}, shapes_[0]});
    auto children = sublayers();
    for (std::size_t i = 0; i < children.size(); ++i) {
      LayerInfo info{children[i]->name(), children[i]->class_name(), {}, shapes_[i + 1]};
      for (const auto& v : children[i]->variables()) {
        info.weight_shapes.push_back(v.shape());
      }
      out.push_back(std::move(info));
    }
    return out;
  }
  /// The names of `layers()`, the InputLayer first.
  [[nodiscard]] std::vector<std::string> layer_names() {
    std::vector<std::string> out{input_name_};
    for (Layer<>* l : sublayers()) {
      out.push_back(l->name());
    }
    return out;
  }
  /// The input shape with the batch axis, -1 for unknown sizes (Keras: `model.input_shape`).
  [[nodiscard]] const Shape& input_shape() const noexcept { return shapes_.front(); }
  /// The output shape with the batch axis, -1 for unknown sizes (Keras: `model.output_shape`).
  [[nodiscard]] const Shape& output_shape() const noexcept { return shapes_.back(); }
  /// The weights file given as `weights` ("" when none).
  [[nodiscard]] const std::string& weights_path() const noexcept { return weights_; }
  /// The layers as Keras's `model.layers` lists them, without the InputLayer (which has no
  /// weights): what weights files key by class name (Note [Keras 3 weights files]).
  std::optional<std::vector<Layer<>*>> layer_list() override { return sublayers(); }

  /// "Functional", the class Keras's constructors return.
  [[nodiscard]] std::string class_name() const override { return "Functional"; }

  /// Keras 3: `_operations/<i>` (the InputLayer at 0); tf_keras: `layer_with_weights-<j>`
  /// and `layer-<i>` (the InputLayer at `layer-0`); then "optimizer" once compiled.
  std::vector<TrackableReference> trackable_children(Layout layout) override {
    std::vector<TrackableReference> out;
    const auto children = sublayers();
    if (layout == Layout::keras3) {
      if (auto opt = compiled_optimizer()) {
        out.push_back(std::move(*opt));
      }
      auto operations = std::make_shared<train::TrackableList>();
      operations->push_back({.owned = std::make_shared<train::TrackableNode>()});
      for (Layer<>* l : children) {
        operations->push_back({.object = l});
      }
      for (const char* empty :
           {"_tracked", "_inbound_nodes", "_outbound_nodes", "_losses", "_losses_override",
            "call_signature_parameters", "_call_has_context_arg"}) {
        out.push_back({.name = empty, .owned = std::make_shared<train::TrackableList>()});
      }
      out.push_back({.name = "_operations", .owned = std::move(operations)});
      return out;
    }
    out.push_back({.name = "layer-0", .owned = std::make_shared<train::TrackableNode>()});
    int j = 0;
    for (std::size_t i = 0; i < children.size(); ++i) {
      if (!children[i]->variables().empty()) {
        out.push_back({.name = "layer_with_weights-" + std::to_string(j++), .object = children[i]});
      }
      out.push_back({.name = "layer-" + std::to_string(i + 1), .object = children[i]});
    }
    if (auto opt = compiled_optimizer()) {
      out.push_back(std::move(*opt));
    }
    return out;
  }

 protected:
  /// An empty model named `name` (verbatim, as Keras names its applications) whose input has
  /// shape `input_shape` (H, W, C; -1 for unknown H or W). `weights` is kept for `weights_path`.
  Application(const std::string& name, const std::array<std::int64_t, 3>& input_shape,
              std::string weights)
      : Model<Application>(LayerOptions{.name = name}),
        input_name_(unique_layer_name("input_layer")),
        weights_(std::move(weights)) {
    shapes_.push_back(Shape{-1, input_shape[0], input_shape[1], input_shape[2]});
    last_use_.push_back(0);
  }

  /// Loads `weights_path()` when one was given (Keras loads it once the model is built): a
  /// Keras 3 `.weights.h5` / `.keras` file or a checkpoint prefix (model.load_weights).
  void load_weights_file() {
    if (!weights_.empty()) {
      (void)load_weights(weights_);
    }
  }

  /// A node's index in the graph (0: the input).
  using Node = int;

  /// The output shape of node `n` (batch axis -1).
  [[nodiscard]] const Shape& shape_of(Node n) const { return shapes_.at(std::size_t(n)); }

  /// Conv2D (Keras' defaults but for the arguments given); "same" padding when `same`.
  Node conv2d(Node in, const std::string& name, std::int64_t filters, nn::Size2D kernel,
              nn::Size2D strides, bool same, bool use_bias, keras::Activation activation = {}) {
    auto layer = std::make_shared<layers::Conv2D>(
        filters, kernel,
        layers::Conv2DOptions{.strides = strides,
                              .padding = same ? nn::Padding::same : nn::Padding::valid,
                              .activation = std::move(activation),
                              .use_bias = use_bias,
                              .name = name});
    Shape out = window_shape(shape_of(in), kernel, strides, same, name);
    out[3] = filters;
    return add_node(std::move(layer), {in}, out);
  }
  /// DepthwiseConv2D with depth multiplier 1.
  Node depthwise_conv2d(Node in, const std::string& name, nn::Size2D kernel, nn::Size2D strides,
                        bool same, bool use_bias) {
    auto layer = std::make_shared<layers::DepthwiseConv2D>(
        kernel,
        layers::DepthwiseConv2DOptions{.strides = strides,
                                       .padding = same ? nn::Padding::same : nn::Padding::valid,
                                       .use_bias = use_bias,
                                       .name = name});
    return add_node(std::move(layer), {in},
                    window_shape(shape_of(in), kernel, strides, same, name));
  }
  /// BatchNormalization on the last axis.
  Node batch_normalization(Node in, const std::string& name, float epsilon, double momentum) {
    auto layer = std::make_shared<layers::BatchNormalization>(
        layers::BatchNormalizationOptions{.momentum = momentum, .epsilon = epsilon, .name = name});
    return add_node(std::move(layer), {in}, shape_of(in));
  }
  /// ReLU(max_value) (ReLU6 with 6).
  Node relu(Node in, const std::string& name, std::optional<float> max_value) {
    auto layer =
        std::make_shared<layers::ReLU>(layers::ReLUOptions{.max_value = max_value, .name = name});
    return add_node(std::move(layer), {in}, shape_of(in));
  }
  /// Activation(`activation`).
  Node activation(Node in, const std::string& name, const char* activation) {
    auto layer = std::make_shared<layers::Activation>(activation, LayerOptions{.name = name});
    return add_node(std::move(layer), {in}, shape_of(in));
  }
  /// ZeroPadding2D(`padding`).
  Node zero_padding2d(Node in, const std::string& name, const layers::Padding2D& padding) {
    auto layer = std::make_shared<layers::ZeroPadding2D>(padding, LayerOptions{.name = name});
    Shape out = shape_of(in);
    out[1] = out[1] < 0 ? -1 : out[1] + padding.top + padding.bottom;
    out[2] = out[2] < 0 ? -1 : out[2] + padding.left + padding.right;
    return add_node(std::move(layer), {in}, out);
  }
  /// MaxPooling2D(pool, strides), "valid" padding.
  Node max_pooling2d(Node in, const std::string& name, nn::Size2D pool, nn::Size2D strides) {
    auto layer = std::make_shared<layers::MaxPooling2D>(
        pool, layers::Pooling2DOptions{.strides = strides, .name = name});
    return add_node(std::move(layer), {in}, window_shape(shape_of(in), pool, strides, false, name));
  }
  /// Add()([a, b]).
  Node add(Node a, Node b, const std::string& name) {
    auto layer = std::make_shared<layers::Add>(LayerOptions{.name = name});
    return add_node(std::move(layer), {a, b}, shape_of(a));
  }
  /// GlobalAveragePooling2D; an empty name gives Keras's default ("global_average_pooling2d").
  Node global_average_pooling2d(Node in, const std::string& name = "") {
    auto layer = std::make_shared<layers::GlobalAveragePooling2D<>>(
        LayerOptions{.name = name.empty() ? unique_layer_name("global_average_pooling2d") : name});
    return add_node(std::move(layer), {in}, Shape{-1, shape_of(in)[3]});
  }
  /// GlobalMaxPooling2D; an empty name gives Keras's default ("global_max_pooling2d").
  Node global_max_pooling2d(Node in, const std::string& name = "") {
    auto layer = std::make_shared<layers::GlobalMaxPooling2D<>>(
        LayerOptions{.name = name.empty() ? unique_layer_name("global_max_pooling2d") : name});
    return add_node(std::move(layer), {in}, Shape{-1, shape_of(in)[3]});
  }
  /// Flatten (needs known sizes: include_top models have a static input shape).
  Node flatten(Node in, const std::string& name) {
    auto layer = std::make_shared<layers::Flatten>(LayerOptions{.name = name});
    const Shape& s = shape_of(in);
    return add_node(std::move(layer), {in}, Shape{-1, s[1] * s[2] * s[3]});
  }
  /// Dense(units, activation) on [N, features].
  Node dense(Node in, const std::string& name, std::int64_t units,
             keras::Activation activation = {}) {
    auto layer = std::make_shared<layers::Dense>(
        units, layers::DenseOptions{.activation = std::move(activation), .name = name});
    return add_node<2>(std::move(layer), {in}, Shape{-1, units});
  }

  /// `pooling` without the top: Keras's GlobalAveragePooling2D / GlobalMaxPooling2D (named
  /// `avg_name` / `max_name`, default names when empty), or none.
  Node pool_features(Node x, const std::string& pooling, const std::string& avg_name = "",
                     const std::string& max_name = "") {
    if (pooling == "avg") {
      return global_average_pooling2d(x, avg_name);
    }
    if (pooling == "max") {
      return global_max_pooling2d(x, max_name);
    }
    return x;
  }

 private:
  struct NodeEntry {
    std::vector<Node> inputs;
    std::function<AnyTensor(const std::vector<AnyTensor>&, bool)> run;
  };

  // Registers `layer` as the next node, reading `inputs` (rank InRank; two for Add), builds it.
  template <std::size_t InRank = 4, class L>
  Node add_node(std::shared_ptr<L> layer, std::vector<Node> inputs, const Shape& out) {
    L& l = track_owned(layer->name(), layer);
    l.ensure_built(shape_of(inputs.front()));  // Keras builds a Functional model at once
    const Node self = Node(nodes_.size()) + 1;
    for (Node i : inputs) {
      last_use_[std::size_t(i)] = self;
    }
    NodeEntry entry;
    entry.inputs = inputs;
    L* p = &l;
    if constexpr (std::same_as<L, layers::Add>) {
      entry.run = [p, a = inputs.at(0), b = inputs.at(1)](const std::vector<AnyTensor>& v, bool) {
        return AnyTensor((*p)(v[std::size_t(a)].as<float, 4>(), v[std::size_t(b)].as<float, 4>()));
      };
    } else {
      entry.run = [p, a = inputs.at(0)](const std::vector<AnyTensor>& v, bool training) {
        return AnyTensor(
            (*p)(v[std::size_t(a)].as<float, InRank>(), CallOptions{.training = training}));
      };
    }
    nodes_.push_back(std::move(entry));
    shapes_.push_back(out);
    last_use_.push_back(self);
    return self;
  }

  static Shape window_shape(const Shape& in, nn::Size2D k, nn::Size2D s, bool same,
                            const std::string& layer) {
    Shape out = in;
    const std::int64_t ks[2] = {k.h, k.w}, ss[2] = {s.h, s.w};
    for (std::size_t a = 0; a < 2; ++a) {
      const std::int64_t n = in[a + 1];
      if (n < 0) {
        continue;
      }
      if (!same && n < ks[a]) {
        throw invalid_argument("tf::keras::applications: the input is too small: layer '" + layer +
                               "' gets " + in.to_string() + " for a window of " + k.to_string());
      }
      out[a + 1] = same ? (n + ss[a] - 1) / ss[a] : (n - ks[a]) / ss[a] + 1;
    }
    return out;
  }
  static std::string shape_text(const Shape& s) {
    std::string t = "(";
    for (std::size_t i = 0; i < s.rank(); ++i) {
      t += (i ? ", " : "") + (s[i] < 0 ? std::string("None") : std::to_string(s[i]));
    }
    return t + ")";
  }

 protected:
  /// Keras' summary rows: the InputLayer, then each layer with its output shape.
  std::vector<SummaryRow> summary_rows() override {
    std::vector<SummaryRow> rows;
    for (const auto& l : layers()) {
      std::int64_t params = 0;
      for (const auto& w : l.weight_shapes) {
        params += w.num_elements();
      }
      rows.push_back({l.name + " (" + l.class_name + ")", shape_text(l.output_shape), params});
    }
    return rows;
  }

 private:
  std::string input_name_;
  std::string weights_;
  std::vector<NodeEntry> nodes_;
  std::vector<Shape> shapes_;   // per node, 0 the input
  std::vector<Node> last_use_;  // per node, the last node that reads it
};

}  // namespace keras::applications

namespace detail::keras_impl {

/// Keras's `obtain_input_shape` and weights checks shared by the applications: returns the
/// (H, W, C) input shape (-1: unknown) for `options`; throws invalid_argument as Keras raises
/// ValueError. `model` names the application in messages.
inline std::array<std::int64_t, 3> application_input_shape(
    const keras::applications::CommonOptions& options, const char* model, std::int64_t default_size,
    std::int64_t min_size) {
  const std::string where = std::string("tf::keras::applications::") + model + ": ";
  const bool imagenet = options.weights == "imagenet";
  // A checkpoint prefix names `<prefix>.index`, not a file of its own.
  if (!options.weights.empty() && !imagenet && !std::filesystem::exists(options.weights) &&
      !std::filesystem::exists(options.weights + ".index")) {
    throw invalid_argument(where +
                           "the `weights` argument should be either empty (random "
                           "initialization), \"imagenet\" (pre-training on ImageNet), or the path "
                           "to the weights file to be loaded. Received: weights=" +
                           options.weights);
  }
  if (imagenet && options.include_top && options.classes != 1000) {
    throw invalid_argument(where +
                           "if using weights=\"imagenet\" with include_top=true, classes should "
                           "be 1000. Received: classes=" +
                           std::to_string(options.classes));
  }
  if (options.include_top && options.classes < 1) {
    throw invalid_argument(
        where + "classes must be positive. Received: classes=" + std::to_string(options.classes));
  }
  if (!options.include_top && !options.pooling.empty() && options.pooling != "avg" &&
      options.pooling != "max") {
    throw invalid_argument(
        where + "pooling must be empty, \"avg\" or \"max\". Received: pooling=" + options.pooling);
  }
  if (options.include_top && !options.weights.empty()) {
    const auto& a = options.classifier_activation;
    if (!(a == "softmax" || a.empty() || a == "linear")) {
      throw invalid_argument(where +
                             "only empty (linear) and \"softmax\" activations are allowed for "
                             "the classifier_activation argument when using pretrained weights, "
                             "with include_top=true; Received: classifier_activation=" +
                             a);
    }
  }
  const std::array<std::int64_t, 3> default_shape{default_size, default_size, 3};
  auto text = [](const std::array<std::int64_t, 3>& s) {
    auto d = [](std::int64_t v) { return v < 0 ? std::string("None") : std::to_string(v); };
    return "(" + d(s[0]) + ", " + d(s[1]) + ", " + d(s[2]) + ")";
  };
  if (imagenet && options.include_top) {
    if (options.input_shape && *options.input_shape != default_shape) {
      throw invalid_argument(where +
                             "when setting include_top=true and loading imagenet weights, "
                             "input_shape should be " +
                             text(default_shape) +
                             ". Received: input_shape=" + text(*options.input_shape));
    }
    return default_shape;
  }
  std::array<std::int64_t, 3> shape{-1, -1, 3};
  if (options.input_shape) {
    shape = *options.input_shape;
    if (shape[2] < 1) {
      throw invalid_argument(where +
                             "input_shape needs a known, positive number of channels. "
                             "Received: input_shape=" +
                             text(shape));
    }
    if (shape[2] != 3 && imagenet) {
      throw invalid_argument(
          where + "the input must have 3 channels; Received: input_shape=" + text(shape));
    }
    if ((shape[0] >= 0 && shape[0] < min_size) || (shape[1] >= 0 && shape[1] < min_size)) {
      throw invalid_argument(where + "input size must be at least " + std::to_string(min_size) +
                             "x" + std::to_string(min_size) +
                             "; Received: input_shape=" + text(shape));
    }
  } else if (options.include_top) {
    shape = default_shape;
  }
  if (options.include_top && (shape[0] < 0 || shape[1] < 0)) {
    throw invalid_argument(where +
                           "if include_top is true, you should specify a static input_shape. "
                           "Received: input_shape=" +
                           text(shape));
  }
  return shape;
}

/// ImageNet weights cannot be downloaded here: a clear unimplemented, before building.
inline void application_weights(const std::string& weights, const char* model) {
  if (weights == "imagenet") {
    throw unimplemented(std::string("tf::keras::applications::") + model +
                        ": weights=\"imagenet\" needs the pretrained file, which cannot be "
                        "downloaded here: save it in Python (" +
                        model +
                        "(weights='imagenet').save_weights('x.weights.h5')) and pass its path");
  }
}

/// The classifier activation named by `name` ("" and "linear": none).
inline keras::Activation classifier_activation(const std::string& name) {
  return name.empty() ? keras::Activation() : keras::Activation(name);
}

}  // namespace detail::keras_impl
TAPEFLOW_END_NAMESPACE
