// Run-time tensor shapes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// The largest rank a tensor may have (TensorFlow allows more; 8 covers every layer we ship and
/// lets shapes live inline without heap allocation).
inline constexpr std::size_t max_rank = 8;

/// A run-time shape of known rank; -1 marks an unknown dimension (in traced graphs only).
class Shape {
 public:
  Shape() = default;
  /// A shape with the given dims, e.g. `Shape{2, 3}`; throws invalid_argument above max_rank.
  Shape(std::initializer_list<std::int64_t> dims)
      : Shape(std::span<const std::int64_t>(dims.begin(), dims.size())) {}
  /// A shape with the given dims; throws invalid_argument above max_rank.
  explicit Shape(std::span<const std::int64_t> dims) : rank_(dims.size()) {
    if (dims.size() > max_rank) {
      throw invalid_argument("Shape: rank " + std::to_string(dims.size()) +
                             " exceeds tapeflow's maximum rank " + std::to_string(max_rank));
    }
    std::copy(dims.begin(), dims.end(), dims_.begin());
  }
  /// A shape with the dims of a static-rank tensor (Tensor::dims()).
  template <std::size_t Rank>
  explicit Shape(const std::array<std::int64_t, Rank>& dims)
      : Shape(std::span<const std::int64_t>(dims)) {}

  /// Number of dimensions.
  [[nodiscard]] std::size_t rank() const noexcept { return rank_; }
  /// Dimension `i` (-1 if unknown); `i` is not checked.
  [[nodiscard]] std::int64_t operator[](std::size_t i) const noexcept { return dims_[i]; }
  /// Writable dimension `i`; `i` is not checked.
  [[nodiscard]] std::int64_t& operator[](std::size_t i) noexcept { return dims_[i]; }
  /// The `rank()` dimensions.
  [[nodiscard]] std::span<const std::int64_t> dims() const noexcept {
    return {dims_.data(), rank_};
  }
  /// Iterator to the first dimension.
  [[nodiscard]] auto begin() const noexcept { return dims_.begin(); }
  /// Iterator past the last dimension.
  [[nodiscard]] auto end() const noexcept {
    return dims_.begin() + static_cast<std::ptrdiff_t>(rank_);
  }

  /// Product of the dimensions (1 for a scalar); -1 if any dimension is unknown.
  [[nodiscard]] std::int64_t num_elements() const noexcept {
    std::int64_t n = 1;
    for (std::size_t i = 0; i < rank_; ++i) {
      if (dims_[i] < 0) {
        return -1;
      }
      n *= dims_[i];
    }
    return n;
  }
  /// Whether every dimension is known (TensorFlow: `TensorShape.is_fully_defined()`).
  [[nodiscard]] bool fully_defined() const noexcept { return num_elements() >= 0; }

  /// Appends a dimension; throws invalid_argument when the rank is already max_rank.
  void push_back(std::int64_t dim) {
    if (rank_ == max_rank) {
      throw invalid_argument("Shape: rank exceeds tapeflow's maximum rank " +
                             std::to_string(max_rank));
    }
    dims_[rank_++] = dim;
  }

  /// Same rank and the same dimensions.
  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

  /// TensorFlow's spelling: "()", "(3,)", "(2, 2)"; unknown dimensions print as "None".
  [[nodiscard]] std::string to_string() const {
    std::string out = "(";
    for (std::size_t i = 0; i < rank_; ++i) {
      if (i > 0) {
        out += ", ";
      }
      out += dims_[i] < 0 ? std::string("None") : std::to_string(dims_[i]);
    }
    if (rank_ == 1) {
      out += ",";
    }
    out += ")";
    return out;
  }

 private:
  std::array<std::int64_t, max_rank> dims_{};
  std::size_t rank_ = 0;
};

TAPEFLOW_END_NAMESPACE
