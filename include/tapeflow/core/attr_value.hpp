// `tf::AttrValue`: the value of one TensorFlow op attribute, typed as TensorFlow's AttrValue
// proto types it (docs/formats.md 8.1), so a traced graph exports with the attribute kinds
// TensorFlow's op registry checks (a `type` attr is a DataType, `transpose_a` a bool, `strides`
// a list of ints), and ConcreteFunction::to_string shows it as text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// A function attribute (AttrValue `func`): the name of a function in the graph's library,
/// e.g. the branches of an `If`.
struct FunctionName {
  std::string name;  ///< the function's name in the library
  /// Same name.
  friend bool operator==(const FunctionName&, const FunctionName&) = default;
};

/// One attribute value, as TensorFlow's AttrValue: `s` (string), `i` (int), `f` (float),
/// `b` (bool), `type` (DType), `shape`, `list(int)`, `list(type)` or `func`.
class AttrValue {
 public:
  /// The value kinds, in the order of `value()`'s alternatives.
  using Value = std::variant<std::string, std::int64_t, float, bool, DType, Shape,
                             std::vector<std::int64_t>, std::vector<DType>, FunctionName>;

  AttrValue() = default;
  /// A string attribute (`s`), e.g. padding "SAME".
  AttrValue(std::string s) : value_(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  /// A string attribute (`s`).
  AttrValue(const char* s) : value_(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  /// A string attribute (`s`).
  AttrValue(std::string_view s) : value_(std::string(s)) {}  // NOLINT(google-explicit-constructor)
  /// An int attribute (`i`).
  AttrValue(std::int64_t i) : value_(i) {}  // NOLINT(google-explicit-constructor)
  /// An int attribute (`i`).
  AttrValue(int i) : value_(std::int64_t{i}) {}  // NOLINT(google-explicit-constructor)
  /// A float attribute (`f`).
  AttrValue(float f) : value_(f) {}  // NOLINT(google-explicit-constructor)
  /// A bool attribute (`b`).
  AttrValue(bool b) : value_(b) {}  // NOLINT(google-explicit-constructor)
  /// A type attribute (`type`), e.g. `T`.
  AttrValue(DType t) : value_(t) {}  // NOLINT(google-explicit-constructor)
  /// A shape attribute (`shape`); -1 dims are unknown.
  AttrValue(Shape s) : value_(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  /// A list of ints (`list(int)`), e.g. strides.
  AttrValue(std::vector<std::int64_t> l)  // NOLINT(google-explicit-constructor)
      : value_(std::move(l)) {}
  /// A list of types (`list(type)`), e.g. `Tout`.
  AttrValue(std::vector<DType> l) : value_(std::move(l)) {}  // NOLINT(google-explicit-constructor)
  /// A function (`func`).
  AttrValue(FunctionName f) : value_(std::move(f)) {}  // NOLINT(google-explicit-constructor)

  /// The typed value.
  [[nodiscard]] const Value& value() const noexcept { return value_; }

  /// The value as text, as ConcreteFunction::to_string shows it: `SAME`, `2`, `0.5`, `true`,
  /// `float32`, `(2, 3)`, `[1, 2]`, `[float32, int32]`, or the function's name.
  [[nodiscard]] std::string to_string() const {
    return std::visit(
        [](const auto& v) -> std::string {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::string>) {
            return v;
          } else if constexpr (std::is_same_v<V, std::int64_t>) {
            return std::to_string(v);
          } else if constexpr (std::is_same_v<V, float>) {
            std::string text = std::to_string(v);
            // "0.500000" -> "0.5": trailing zeros say nothing.
            while (text.size() > 1 && text.back() == '0' && text[text.size() - 2] != '.') {
              text.pop_back();
            }
            return text;
          } else if constexpr (std::is_same_v<V, bool>) {
            return v ? "true" : "false";
          } else if constexpr (std::is_same_v<V, DType>) {
            return std::string(dtype_name(v));
          } else if constexpr (std::is_same_v<V, Shape>) {
            return v.to_string();
          } else if constexpr (std::is_same_v<V, FunctionName>) {
            return v.name;
          } else {
            std::string out = "[";
            for (std::size_t i = 0; i < v.size(); ++i) {
              if (i > 0) {
                out += ", ";
              }
              if constexpr (std::is_same_v<V, std::vector<DType>>) {
                out += dtype_name(v[i]);
              } else {
                out += std::to_string(v[i]);
              }
            }
            return out + "]";
          }
        },
        value_);
  }

  /// Same kind and same value.
  friend bool operator==(const AttrValue&, const AttrValue&) = default;

 private:
  Value value_ = std::string();
};

/// An op's attributes: (TensorFlow attribute name, value) pairs, e.g. {"padding", "SAME"}.
using OpAttributes = std::vector<std::pair<std::string, AttrValue>>;

TAPEFLOW_END_NAMESPACE
