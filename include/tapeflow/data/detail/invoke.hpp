// IWYU pragma: private, include <tapeflow/data.hpp>
// Calling a user function on an element the way tf.data does: a tuple element is unpacked into
// the function's arguments when the function does not take the tuple itself.
#pragma once

#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data::detail {

template <class T>
struct is_tuple_like : std::false_type {};
template <class... Ts>
struct is_tuple_like<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};

template <class F, class E>
decltype(auto) invoke_on_element(F& f, E&& e) {
  if constexpr (std::is_invocable_v<F&, E&&>) {
    return std::invoke(f, std::forward<E>(e));
  } else {
    static_assert(is_tuple_like<std::remove_cvref_t<E>>::value,
                  "tf::data: the function cannot be called with this element type");
    return std::apply(f, std::forward<E>(e));
  }
}

template <class F, class E>
using invoke_result_on_element_t =
    std::remove_cvref_t<decltype(invoke_on_element(std::declval<F&>(), std::declval<E>()))>;

/// A predicate result as bool (bool or a scalar bool tensor).
template <class R>
bool to_bool(const R& r) {
  if constexpr (std::is_same_v<R, Tensor<bool, 0>>) {
    return r.item();
  } else {
    return static_cast<bool>(r);
  }
}

}  // namespace data::detail
TAPEFLOW_END_NAMESPACE
