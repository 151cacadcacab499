// Element types and their TensorFlow names.
//
// Customization point: `tapeflow::dtype_traits<T>` (a trait struct) maps a C++ element type to
// its DType. The enum values are TensorFlow's `DataType` numbers, so file formats can store
// them directly.
#pragma once

#include <concepts>
#include <cstddef>
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

/// `float` is TensorFlow's `tf.float32`.
template <>
struct dtype_traits<float> {
  static constexpr DType value = DType::float32;       ///< the DType of `float`
  static constexpr std::string_view name = "float32";  ///< TensorFlow's dtype name
};
/// `double` is TensorFlow's `tf.float64`.
template <>
struct dtype_traits<double> {
  static constexpr DType value = DType::float64;       ///< the DType of `double`
  static constexpr std::string_view name = "float64";  ///< TensorFlow's dtype name
};
/// `std::int32_t` is TensorFlow's `tf.int32`.
template <>
struct dtype_traits<std::int32_t> {
  static constexpr DType value = DType::int32;       ///< the DType of `std::int32_t`
  static constexpr std::string_view name = "int32";  ///< TensorFlow's dtype name
};
/// `std::int64_t` is TensorFlow's `tf.int64`.
template <>
struct dtype_traits<std::int64_t> {
  static constexpr DType value = DType::int64;       ///< the DType of `std::int64_t`
  static constexpr std::string_view name = "int64";  ///< TensorFlow's dtype name
};
/// `std::uint8_t` is TensorFlow's `tf.uint8`.
template <>
struct dtype_traits<std::uint8_t> {
  static constexpr DType value = DType::uint8;       ///< the DType of `std::uint8_t`
  static constexpr std::string_view name = "uint8";  ///< TensorFlow's dtype name
};
/// `bool` is TensorFlow's `tf.bool`.
template <>
struct dtype_traits<bool> {
  static constexpr DType value = DType::bool_;      ///< the DType of `bool`
  static constexpr std::string_view name = "bool";  ///< TensorFlow's dtype name
};
/// `std::string` is TensorFlow's `tf.string`.
template <>
struct dtype_traits<std::string> {
  static constexpr DType value = DType::string;       ///< the DType of `std::string`
  static constexpr std::string_view name = "string";  ///< TensorFlow's dtype name
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

/// The DType of element type `T` (TensorFlow: `tf.as_dtype`), e.g. `dtype_v<float>` is
/// `DType::float32`.
template <element_type T>
inline constexpr DType dtype_v = dtype_traits<T>::value;

/// A list of types.
template <class... T>
struct type_list {};

/// Every element type, once: the run-time dtype functions below are generated from this list
/// and `dtype_traits`, so adding a dtype is one specialization and one entry here.
using element_types =
    type_list<float, double, std::int32_t, std::uint8_t, std::string, std::int64_t, bool>;

namespace detail {
template <class Fun, class T, class... Rest>
decltype(auto) visit_dtype_in(DType dtype, Fun& f, type_list<T, Rest...>) {
  if constexpr (sizeof...(Rest) == 0) {
    if (dtype != dtype_traits<T>::value) {
      throw invalid_argument("visit_dtype: invalid dtype " +
                             std::to_string(static_cast<int>(dtype)));
    }
    return f.template operator()<T>();
  } else {
    if (dtype == dtype_traits<T>::value) {
      return f.template operator()<T>();
    }
    return visit_dtype_in(dtype, f, type_list<Rest...>{});
  }
}
}  // namespace detail

/// TensorFlow's name of a dtype ("float32", "int64", ...); "invalid" for any other value.
constexpr std::string_view dtype_name(DType dtype) noexcept {
  return []<class... T>(DType d, type_list<T...>) {
    std::string_view name = "invalid";
    (void)((d == dtype_traits<T>::value ? (name = dtype_traits<T>::name, true) : false) || ...);
    return name;
  }(dtype, element_types{});
}

/// Bytes per element in memory (strings: sizeof(std::string)); 0 for an invalid dtype.
constexpr std::size_t dtype_size(DType dtype) noexcept {
  return []<class... T>(DType d, type_list<T...>) {
    std::size_t size = 0;
    (void)((d == dtype_traits<T>::value ? (size = sizeof(T), true) : false) || ...);
    return size;
  }(dtype, element_types{});
}

/// Calls `f.template operator()<T>()` with `T` the C++ element type of `dtype`; throws
/// invalid_argument for a value that names no dtype.
template <class Fun>
decltype(auto) visit_dtype(DType dtype, Fun&& f) {
  return detail::visit_dtype_in(dtype, f, element_types{});
}

TAPEFLOW_END_NAMESPACE
