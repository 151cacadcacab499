// IWYU pragma: private, include <tapeflow/data.hpp>
// `Box<F>`: holds a user function (map's f, filter's predicate, interleave's f, from_generator's
// factory) so that the dataset holding it stays semiregular, as std and range-v3 views must be
// (MAINTAINERS.md, "Datasets are views"): a lambda with captures is neither default-constructible
// nor assignable; the box is both (assignment rebuilds the function). A default-constructed box
// holds nothing and refuses to be called with failed_precondition, so iterating a
// default-constructed adaptor is a typed error rather than a crash. (range-v3's semiregular_box
// has no way to ask whether it holds a value.)
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data::detail {

template <class F>
class Box {
 public:
  Box() = default;
  explicit Box(F f) : f_(std::in_place, std::move(f)) {}
  Box(const Box&) = default;
  Box(Box&&) = default;
  Box& operator=(const Box& other) {
    if (this != &other) {
      assign(other.f_);
    }
    return *this;
  }
  Box& operator=(Box&& other) noexcept(std::is_nothrow_move_constructible_v<F>) {
    if (this != &other) {
      assign(std::move(other.f_));
    }
    return *this;
  }
  ~Box() = default;

  /// The function; `what` names the stage in the error for an empty (default-constructed) box.
  [[nodiscard]] const F& get(const char* what) const {
    if (!f_) {
      throw failed_precondition(std::string(what) +
                                ": this dataset was default-constructed (a placeholder for "
                                "assignment) and has no function; assign a pipeline to it first");
    }
    return *f_;
  }
  [[nodiscard]] bool has_value() const noexcept { return f_.has_value(); }

 private:
  template <class O>
  void assign(O&& o) {
    if constexpr (std::is_copy_assignable_v<F> && std::is_move_assignable_v<F>) {
      f_ = std::forward<O>(o);
    } else {
      f_.reset();
      if (o) {
        f_.emplace(*std::forward<O>(o));
      }
    }
  }
  std::optional<F> f_;
};

}  // namespace data::detail
TAPEFLOW_END_NAMESPACE
