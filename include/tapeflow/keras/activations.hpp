// `tf::keras::Activation`: the `activation=` argument of Keras layers (tf.keras.activations).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/deferred.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/relu6.hpp>
#include <tapeflow/ops/nn/softmax.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {

/// An elementwise (or last-axis) function applied to a layer's output. Built from
/// `tf::nn::relu`, `tf::nn::sigmoid`, `tf::nn::tanh`, `tf::nn::softmax` (function names, as in
/// Python), a Keras name ("relu", "softmax", ...) or any callable on `Tensor<float, 2>`.
/// Default-constructed: linear (identity). Works on any rank: the tensor is viewed as
/// [-1, last axis] (a free reshape), which suits elementwise functions and softmax alike.
///
///     tf::keras::layers::Dense(100, {.activation = tf::nn::relu});
class Activation {
 public:
  /// The stored function, on [-1, last axis] views of the input.
  using Fn = std::function<Tensor<float, 2>(const Tensor<float, 2>&)>;
  Activation() = default;
  /// A unary function such as `tf::nn::relu` (its float/rank-2 instance is taken).
  Activation(Tensor<float, 2> (*f)(const Tensor<float, 2>&))  // NOLINT: implicit as in Python
      : fn_(f) {}
  /// A function with an axis argument such as `tf::nn::softmax` (applied on the last axis).
  Activation(Tensor<float, 2> (*f)(const Tensor<float, 2>&, int))  // NOLINT
      : fn_([f](const Tensor<float, 2>& x) { return f(x, -1); }) {}
  /// A Keras name: "linear", "relu", "relu6", "sigmoid", "tanh", "softmax". (Templates only so that
  /// the activations are compiled where a name is used: detail/deferred.hpp.)
  template <class Deferred = void>
  Activation(const char* name) : Activation(std::string(name)) {}  // NOLINT
  /// A Keras name, as a string: "linear" or "" (the identity), "relu", "relu6", "sigmoid",
  /// "tanh", "softmax"; throws invalid_argument for any other name.
  template <class Deferred = void>
  Activation(const std::string& name) {  // NOLINT
    using detail::deferred;
    if (name == "relu") {
      fn_ = [](const Tensor<float, 2>& x) { return nn::relu(deferred<Deferred>(x)); };
    } else if (name == "relu6") {
      fn_ = [](const Tensor<float, 2>& x) { return nn::relu6(deferred<Deferred>(x)); };
    } else if (name == "sigmoid") {
      fn_ = [](const Tensor<float, 2>& x) { return sigmoid(deferred<Deferred>(x)); };
    } else if (name == "tanh") {
      fn_ = [](const Tensor<float, 2>& x) { return tanh(deferred<Deferred>(x)); };
    } else if (name == "softmax") {
      fn_ = [](const Tensor<float, 2>& x) { return nn::softmax(deferred<Deferred>(x)); };
    } else if (name != "linear" && !name.empty()) {
      throw invalid_argument("tf::keras::Activation: unknown activation '" + name + "'");
    }
  }
  /// Any callable on `Tensor<float, 2>`.
  template <class F>
    requires std::is_invocable_r_v<Tensor<float, 2>, F, const Tensor<float, 2>&> &&
             (!std::is_convertible_v<F, std::string>) &&
             (!std::is_convertible_v<F, Tensor<float, 2> (*)(const Tensor<float, 2>&)>)
  Activation(F f) : fn_(std::move(f)) {}  // NOLINT

  /// Whether this is the identity.
  [[nodiscard]] bool is_linear() const noexcept { return !fn_; }

  /// Applies the function to `x` (rank >= 1) viewed as [-1, last axis]; same shape out.
  template <std::size_t R>
  Tensor<float, R> operator()(const Tensor<float, R>& x) const {
    if (!fn_) {
      return x;
    }
    if constexpr (R == 2) {
      return fn_(x);
    } else {
      static_assert(R >= 1, "tf::keras::Activation: rank-0 inputs are not supported");
      auto flat = reshape(x, std::array<std::int64_t, 2>{-1, x.dims()[R - 1]});
      return reshape(fn_(flat), x.dims());
    }
  }

 private:
  Fn fn_;
};

}  // namespace keras
TAPEFLOW_END_NAMESPACE
