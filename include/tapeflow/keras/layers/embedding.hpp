// tf.keras.layers.Embedding: integer ids -> dense vectors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/array/gather.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {
namespace layers {

/// Keyword arguments of Embedding.
struct EmbeddingOptions {
  /// Initial values of the table; default uniform in [-0.05, 0.05] (as Keras).
  initializers::Initializer embeddings_initializer = initializers::RandomUniform();
  std::optional<std::string> name = std::nullopt;  ///< default "embedding", "embedding_1", ...
};

/// Looks up rows of an [input_dim, output_dim] table (weight "embeddings"):
/// ids [N, ...] (int32/int64) -> [N, ..., output_dim] (tf.keras.layers.Embedding).
class Embedding : public Layer<Embedding> {
 public:
  static constexpr int min_input_rank = 1;  ///< needs the batch axis
  /// One axis more than the ids (output_dim); unknown (-1) stays unknown.
  static constexpr int output_rank(int in) { return in < 0 ? -1 : in + 1; }

  /// A table of `input_dim` rows (the vocabulary size: ids in [0, input_dim)) of `output_dim`
  /// floats; throws invalid_argument unless both are positive.
  Embedding(std::int64_t input_dim, std::int64_t output_dim, EmbeddingOptions options = {})
      : Layer("embedding", {.name = options.name}),
        input_dim_(input_dim),
        output_dim_(output_dim),
        options_(std::move(options)) {
    keras3_attribute("embeddings", "_embeddings");  // Keras 3's attribute name
    if (input_dim <= 0 || output_dim <= 0) {
      throw invalid_argument(
          "tf::keras::layers::Embedding: input_dim and output_dim must be "
          "positive");
    }
  }
  /// "Embedding".
  [[nodiscard]] std::string class_name() const override { return "Embedding"; }
  /// The table [input_dim, output_dim] (after build).
  [[nodiscard]] const Variable<float, 2>& embeddings() const noexcept { return embeddings_; }

  /// Creates the table (its shape does not depend on the input's).
  void build(const Shape&) override {
    embeddings_ = add_weight<float, 2>("embeddings", {input_dim_, output_dim_},
                                       options_.embeddings_initializer);
  }
  /// The rows of `ids` (int32 or int64): [N, ...] -> [N, ..., output_dim]; an id outside
  /// [0, input_dim) throws invalid_argument (from `tf::gather`).
  template <class I, std::size_t R>
  Tensor<float, R + 1> call(const Tensor<I, R>& ids) {
    static_assert(std::same_as<I, std::int32_t> || std::same_as<I, std::int64_t>,
                  "tf::keras::layers::Embedding: ids must be int32 or int64");
    return gather(embeddings_, ids);
  }

 private:
  std::int64_t input_dim_;
  std::int64_t output_dim_;
  EmbeddingOptions options_;
  Variable<float, 2> embeddings_;
};

}  // namespace layers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
