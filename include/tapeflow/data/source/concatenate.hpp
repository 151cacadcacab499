// `tf::data::concatenate(a, b)` / `a | concatenate(b)`: the elements of a, then those of b
// (TensorFlow: `Dataset.concatenate`). Element types must match.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// The dataset `concatenate` returns (`Dataset.concatenate`): an epoch of `a`, then one of
/// `b`.
template <dataset A, dataset B>
class ConcatenateDataset : public DatasetBase<ConcatenateDataset<A, B>, element_t<A>> {
  static_assert(std::is_same_v<element_t<A>, element_t<B>>,
                "tf::data::concatenate: both datasets need the same element type");

 public:
  ConcatenateDataset() = default;
  /// The elements of `a`, then those of `b` (the same element type, else a compile error).
  ConcatenateDataset(A a, B b) : a_(std::move(a)), b_(std::move(b)) {}
  struct iterator {
    using element_type = element_t<A>;
    iterator_impl_t<A> first;
    std::optional<iterator_impl_t<B>> second;
    B b;  // a copy: the iterator must not point into the dataset
    std::optional<element_type> next() {
      if (!second) {
        if (auto e = first.next()) {
          return e;
        }
        second.emplace(b.make_iterator());
      }
      return second->next();
    }
    void save_state(IteratorState& s, const std::string& p) const {
      s.put_int(p + "concatenate/second", second ? 1 : 0);
      if (second) {
        detail::save_state_of(*second, s, p + "concatenate/b/");
      } else {
        detail::save_state_of(first, s, p + "concatenate/a/");
      }
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      if (s.get_int(p + "concatenate/second") != 0) {
        second.emplace(b.make_iterator());
        detail::restore_state_of(*second, s, p + "concatenate/b/");
      } else {
        detail::restore_state_of(first, s, p + "concatenate/a/");
      }
    }
  };
  /// Starts an epoch of `a`; the epoch of `b` starts when `a`'s ends.
  [[nodiscard]] iterator make_iterator() const { return iterator{a_.make_iterator(), {}, b_}; }
  /// The sum; infinite if either is infinite, else unknown if either is unknown.
  [[nodiscard]] std::int64_t cardinality() const {
    const std::int64_t x = a_.cardinality(), y = b_.cardinality();
    if (x == infinite_cardinality || y == infinite_cardinality) {
      return infinite_cardinality;
    }
    if (x < 0 || y < 0) {
      return unknown_cardinality;
    }
    return x + y;
  }

  /// A copy reading `f(a)` and `f(b)` (see "pipeline rewrites" in data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] ConcatenateDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(detail::with_input(*this, &ConcatenateDataset::a_, f),
                              &ConcatenateDataset::b_, f);
  }

 private:
  A a_;
  B b_;
};

/// The dataset-first form of `concatenate` (`concatenate(a, b)`); concatenate_fn adds the
/// pipeable one.
struct concatenate_base_fn {
  /// A ConcatenateDataset: `a`, then `b`.
  template <dataset A, dataset B>
  auto operator()(A&& a, B b) const {
    return ConcatenateDataset<std::remove_cvref_t<A>, B>(std::forward<A>(a), std::move(b));
  }
};
/// The type of `concatenate`: both the dataset-first and the pipeable form.
struct concatenate_fn : concatenate_base_fn {
  using concatenate_base_fn::operator();
  /// A closure appending `b` to the dataset piped into it: `a | concatenate(b)`.
  template <dataset B>
  auto operator()(B b) const {
    return ranges::make_view_closure(ranges::bind_back(concatenate_base_fn{}, std::move(b)));
  }
};
/// `concatenate(a, b)`, `a | concatenate(b)`.
inline constexpr concatenate_fn concatenate{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
