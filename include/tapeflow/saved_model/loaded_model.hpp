// `tf::saved_model::LoadedModel` and `LoadedSignature`: what tf::saved_model::load returns (a
// loaded SavedModel's signatures, variables and object tree), apart from the loader itself so
// that a program built with TAPEFLOW_PRECOMPILED does not parse the loader.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace saved_model {

/// One loaded signature (TensorFlow: `loaded.signatures["serving_default"]`): a traced graph
/// of our ops, called with named tensors.
class LoadedSignature {
 public:
  /// An empty signature (calling it is failed_precondition).
  LoadedSignature() = default;
  /// Built by `load`: the input keys (sorted, the function's argument order) and their specs,
  /// the output keys in the function's output order, and the traced function.
  LoadedSignature(std::vector<std::string> input_keys, std::vector<TensorSpec> input_specs,
                  std::vector<std::string> output_keys, std::shared_ptr<ConcreteFunction> fn)
      : input_keys_(std::move(input_keys)),
        input_specs_(std::move(input_specs)),
        output_keys_(std::move(output_keys)),
        function_(std::move(fn)) {}

  /// Runs the signature: one tensor per input key; returns output key -> tensor. Throws
  /// invalid_argument for a missing or unknown key, or a tensor of another dtype or shape.
  std::map<std::string, AnyTensor> operator()(
      const std::map<std::string, AnyTensor>& inputs) const {
    if (!function_) {
      throw failed_precondition("tf::saved_model: calling an empty LoadedSignature");
    }
    std::vector<AnyTensor> args;
    for (std::size_t i = 0; i < input_keys_.size(); ++i) {
      auto it = inputs.find(input_keys_[i]);
      if (it == inputs.end()) {
        throw invalid_argument("tf::saved_model: signature input '" + input_keys_[i] +
                               "' was not given");
      }
      check(input_keys_[i], input_specs_[i], it->second);
      args.push_back(it->second);
    }
    if (inputs.size() != input_keys_.size()) {
      for (const auto& [k, v] : inputs) {
        if (std::find(input_keys_.begin(), input_keys_.end(), k) == input_keys_.end()) {
          throw invalid_argument("tf::saved_model: the signature has no input '" + k + "'");
        }
      }
    }
    auto outs = function_->run(args);
    std::map<std::string, AnyTensor> result;
    for (std::size_t i = 0; i < output_keys_.size(); ++i) {
      result.emplace(output_keys_[i], std::move(outs[i]));
    }
    return result;
  }

  /// The typed convenience call for a signature of one input and one output:
  /// `sig.call<float, 2>(x)`. Throws invalid_argument when the output is not a `Tensor<U, RO>`.
  template <class U, std::size_t RO, class T, std::size_t R>
  Tensor<U, RO> call(const Tensor<T, R>& x) const {
    if (input_keys_.size() != 1 || output_keys_.size() != 1) {
      throw invalid_argument(
          "tf::saved_model: call<>() needs a signature of one input and one "
          "output; this one has " +
          std::to_string(input_keys_.size()) + " and " + std::to_string(output_keys_.size()));
    }
    auto out = (*this)({{input_keys_[0], AnyTensor(x)}});
    return out.begin()->second.template as<U, RO>();
  }

  /// The input keys, in the function's argument order (sorted).
  [[nodiscard]] const std::vector<std::string>& input_keys() const noexcept { return input_keys_; }
  /// The dtype and shape each input must have (-1 dims: any size).
  [[nodiscard]] const std::vector<TensorSpec>& input_specs() const noexcept { return input_specs_; }
  /// The output keys, in the function's output order.
  [[nodiscard]] const std::vector<std::string>& output_keys() const noexcept {
    return output_keys_;
  }
  /// The traced graph (for TensorBoard, to_string, or tf::saved_model::save).
  [[nodiscard]] const ConcreteFunction& concrete_function() const { return *function_; }

 private:
  static void check(const std::string& key, const TensorSpec& spec, const AnyTensor& t) {
    bool ok = t.dtype() == spec.dtype && t.rank() == spec.shape.rank();
    for (std::size_t d = 0; ok && d < t.rank(); ++d) {
      ok = spec.shape[d] < 0 || spec.shape[d] == t.shape()[d];
    }
    if (!ok) {
      throw invalid_argument("tf::saved_model: input '" + key + "' must be " +
                             std::string(dtype_name(spec.dtype)) + " " + spec.shape.to_string() +
                             ", got " + std::string(dtype_name(t.dtype())) + " " +
                             t.shape().to_string());
    }
  }
  std::vector<std::string> input_keys_;
  std::vector<TensorSpec> input_specs_;
  std::vector<std::string> output_keys_;
  std::shared_ptr<ConcreteFunction> function_;
};

/// A loaded SavedModel (TensorFlow: the object `tf.saved_model.load` returns).
struct LoadedModel {
  /// Signature name -> signature, e.g. "serving_default".
  std::map<std::string, LoadedSignature> signatures;
  /// The restored variables by bundle key (e.g. `dense1/_kernel/.ATTRIBUTES/VARIABLE_VALUE`):
  /// ordinary Variables the signatures read, so training them changes what the signatures
  /// compute.
  std::map<std::string, AnyVariable> variables;
  /// The saved object tree (user objects and their variables, under their saved names), so the
  /// model checkpoints with tf::train::Checkpoint and saves again with tf::saved_model::save
  /// under the keys it was loaded with.
  std::shared_ptr<train::Trackable> root;
};

}  // namespace saved_model
TAPEFLOW_END_NAMESPACE
