// Element types and their TensorFlow names.
//
// Customization point: `tapeflow::dtype_traits<T>` (a trait struct) maps a C++ element type to
// its DType. The enum values are TensorFlow's `DataType` numbers, so file formats can store
// them directly.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// Element type of a tensor; values are TensorFlow's `DataType` enum numbers.
enum class DType : int {
  invalid = 0,
  float32 = 1,
  float64 = 2,
  int32 = 3,
  uint8 = 4,
  string = 7,
  int64 = 9,
  bool_ = 10,
};

/// Maps a C++ element type to its DType; specialised for every supported element type only, so
/// `Tensor<char, 1>` fails to compile with a message naming `dtype_traits<char>`.
template <class T>
struct dtype_traits;

template <>
struct dtype_traits<float> {
  static constexpr DType value = DType::float32;
  static constexpr std::string_view name = "float32";
};
template <>
struct dtype_traits<double> {
  static constexpr DType value = DType::float64;
  static constexpr std::string_view name = "float64";
};
template <>
struct dtype_traits<std::int32_t> {
  static constexpr DType value = DType::int32;
  static constexpr std::string_view name = "int32";
};
template <>
struct dtype_traits<std::int64_t> {
  static constexpr DType value = DType::int64;
  static constexpr std::string_view name = "int64";
};
template <>
struct dtype_traits<std::uint8_t> {
  static constexpr DType value = DType::uint8;
  static constexpr std::string_view name = "uint8";
};
template <>
struct dtype_traits<bool> {
  static constexpr DType value = DType::bool_;
  static constexpr std::string_view name = "bool";
};
template <>
struct dtype_traits<std::string> {
  static constexpr DType value = DType::string;
  static constexpr std::string_view name = "string";
};

/// Satisfied by the element types a tensor may hold.
template <class T>
concept element_type = requires { dtype_traits<T>::value; };

/// Floating-point element types: the ones gradients flow through.
template <class T>
concept floating_element = element_type<T> && std::floating_point<T>;

/// Numeric element types (everything but bool and string).
template <class T>
concept numeric_element = element_type<T> && std::is_arithmetic_v<T> && !std::same_as<T, bool>;

template <element_type T>
inline constexpr DType dtype_v = dtype_traits<T>::value;

/// TensorFlow's name of a dtype ("float32", "int64", ...).
constexpr std::string_view dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32:
      return "float32";
    case DType::float64:
      return "float64";
    case DType::int32:
      return "int32";
    case DType::uint8:
      return "uint8";
    case DType::string:
      return "string";
    case DType::int64:
      return "int64";
    case DType::bool_:
      return "bool";
    case DType::invalid:
      break;
  }
  return "invalid";
}

/// Bytes per element in memory (strings: sizeof(std::string)).
constexpr std::size_t dtype_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32:
      return 4;
    case DType::float64:
      return 8;
    case DType::int32:
      return 4;
    case DType::uint8:
      return 1;
    case DType::string:
      return sizeof(std::string);
    case DType::int64:
      return 8;
    case DType::bool_:
      return 1;
    case DType::invalid:
      break;
  }
  return 0;
}

/// Calls `f.template operator()<T>()` with `T` the C++ element type of `dtype`.
template <class Fun>
decltype(auto) visit_dtype(DType dtype, Fun&& f) {
  switch (dtype) {
    case DType::float32:
      return f.template operator()<float>();
    case DType::float64:
      return f.template operator()<double>();
    case DType::int32:
      return f.template operator()<std::int32_t>();
    case DType::uint8:
      return f.template operator()<std::uint8_t>();
    case DType::string:
      return f.template operator()<std::string>();
    case DType::int64:
      return f.template operator()<std::int64_t>();
    case DType::bool_:
      return f.template operator()<bool>();
    case DType::invalid:
      break;
  }
  throw invalid_argument("visit_dtype: invalid dtype " + std::to_string(static_cast<int>(dtype)));
}

TAPEFLOW_END_NAMESPACE
