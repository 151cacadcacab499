// The dataset concept, the CRTP base every source and adaptor derives from, the pipe mechanism,
// and the hooks for iterator state (checkpointing) and autotune statistics (`tf.data.Dataset`).
//
// A dataset is a copyable *description* of a pipeline; it is a re-iterable range: each
// `begin()` (or `iter()`) starts a fresh epoch with its own iterator state, threads included.
//
// To write a dataset (this is how `TFRecordDataset` and every adaptor plug in):
//
//     struct MyIterator {                        // one epoch's state; may own threads
//       using element_type = tf::Tensor<std::string, 0>;
//       std::optional<element_type> next();      // nullopt at the end of the epoch
//       // optional: void save_state(IteratorState&, const std::string& prefix) const;
//       //           void restore_state(const IteratorState&, const std::string& prefix);
//       //           void collect_stats(std::vector<StageStats>&) const;
//     };
//     class MyDataset : public tf::data::DatasetBase<MyDataset, tf::Tensor<std::string, 0>> {
//      public:
//       MyIterator make_iterator() const;         // called once per epoch
//       std::int64_t cardinality() const;         // count, infinite_cardinality or
//       unknown_cardinality
//     };
//
// Iterator state (for checkpoints of input pipelines): `Iterator::save_state()` returns an
// IteratorState with one entry group per stage ("prefetch/batch/shuffle/rng", ...), and
// `restore_state()` on a fresh iterator of the same pipeline resumes exactly there. Supported
// by every source and adaptor except from_generator, which throws failed_precondition (as
// TensorFlow: a generator's position is opaque); a user iterator without the two members makes
// saving throw unimplemented. Threaded stages (prefetch, parallel map, parallel interleave)
// pause their input while saving and store the elements already computed.
//
// Customization points: the member functions above, and the trait
// `tf::data::element_traits<E>` (element.hpp) for element types beyond tensors, tuples
// and pairs.
//
// Why not range-v3 view closures: the pipe here is a 30-line C++20 closure with the same user
// syntax (`ds | batch(32)`, `batch(ds, 32)`, `auto aug = map(f) | shuffle(n)`), and it keeps an
// example including <tapeflow/data.hpp> compiling in seconds; datasets still model
// std::ranges::input_range, so range algorithms work on them.
#pragma once

#include <concepts>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// Pass as `num_parallel_calls` or a prefetch buffer size to let the tuner choose
/// (TensorFlow: `tf.data.AUTOTUNE`).
inline constexpr int autotune = -1;
/// `cardinality()` of a dataset that never ends (TensorFlow: `tf.data.INFINITE_CARDINALITY`).
inline constexpr std::int64_t infinite_cardinality = -1;
/// `cardinality()` when the count is not known without iterating (`tf.data.UNKNOWN_CARDINALITY`).
inline constexpr std::int64_t unknown_cardinality = -2;

/// Saved position of a dataset iterator: named byte strings, keys prefixed by the pipeline
/// stage ("shuffle/input/..."). Used by checkpoints of iterators (issue 7) and by tests.
class IteratorState {
 public:
  void put(const std::string& key, std::string bytes) { entries_[key] = std::move(bytes); }
  void put_int(const std::string& key, std::int64_t v) {
    std::string s(sizeof v, '\0');
    std::memcpy(s.data(), &v, sizeof v);
    put(key, std::move(s));
  }
  [[nodiscard]] bool contains(const std::string& key) const { return entries_.count(key) != 0; }
  [[nodiscard]] const std::string& get(const std::string& key) const {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      throw not_found("tf::data::IteratorState: no entry '" + key + "'");
    }
    return it->second;
  }
  [[nodiscard]] std::int64_t get_int(const std::string& key) const {
    const auto& s = get(key);
    if (s.size() != sizeof(std::int64_t)) {
      throw data_loss("tf::data::IteratorState: entry '" + key + "' is not an int64");
    }
    std::int64_t v = 0;
    std::memcpy(&v, s.data(), sizeof v);
    return v;
  }
  /// All entries, ordered by key (to serialize the state as a whole).
  [[nodiscard]] const std::map<std::string, std::string>& entries() const noexcept {
    return entries_;
  }
  std::map<std::string, std::string>& entries() noexcept { return entries_; }

 private:
  std::map<std::string, std::string> entries_;
};

/// What the tuner of one pipeline stage (prefetch, parallel map) chose and measured.
struct StageStats {
  std::string stage;                ///< "prefetch", "map", ...
  bool autotuned = false;           ///< whether the tuner chose the figures below
  int parallelism = 1;              ///< worker threads in use
  int buffer_size = 0;              ///< elements the stage may hold ahead of the consumer
  std::int64_t memory_budget = 0;   ///< bytes the tuner may fill with buffered elements
  double producer_rate = 0;         ///< elements/s one worker produces (measured)
  double consumer_rate = 0;         ///< elements/s the consumer asks for (measured)
  double input_bound_fraction = 0;  ///< share of the consumer's time spent waiting on input
  std::int64_t elements = 0;        ///< elements delivered so far
};

template <class I>
concept dataset_iterator = requires(I& it) {
  typename I::element_type;
  { it.next() } -> std::same_as<std::optional<typename I::element_type>>;
};

template <class I>
concept saveable_iterator =
    dataset_iterator<I> && requires(I& it, const I& cit, IteratorState& s, const std::string& p) {
      cit.save_state(s, p);
      it.restore_state(std::as_const(s), p);
    };

/// A re-iterable pipeline description (TensorFlow: `tf.data.Dataset`).
template <class D>
concept dataset =
    std::copy_constructible<std::remove_cvref_t<D>> && requires(const std::remove_cvref_t<D>& d) {
      typename std::remove_cvref_t<D>::element_type;
      { d.make_iterator() } -> dataset_iterator;
      { d.cardinality() } -> std::convertible_to<std::int64_t>;
    };

/// The element type of a dataset.
template <dataset D>
using element_t = typename std::remove_cvref_t<D>::element_type;
/// The per-epoch iterator type of a dataset.
template <dataset D>
using iterator_impl_t = decltype(std::declval<const std::remove_cvref_t<D>&>().make_iterator());

namespace detail {
template <class It>
void save_state_of(const It& it, IteratorState& s, const std::string& prefix) {
  if constexpr (saveable_iterator<It>) {
    it.save_state(s, prefix);
  } else {
    throw unimplemented("tf::data: iterator state of this pipeline stage cannot be saved (" +
                        prefix + ")");
  }
}
template <class It>
void restore_state_of(It& it, const IteratorState& s, const std::string& prefix) {
  if constexpr (saveable_iterator<It>) {
    it.restore_state(s, prefix);
  } else {
    throw unimplemented("tf::data: iterator state of this pipeline stage cannot be restored (" +
                        prefix + ")");
  }
}
template <class It>
void collect_stats_of(const It& it, std::vector<StageStats>& out) {
  if constexpr (requires { it.collect_stats(out); }) {
    it.collect_stats(out);
  }
}
}  // namespace detail

/// An explicit iterator over one epoch (Python: `it = iter(ds); next(it)`). Move-only; owns
/// the epoch's threads and joins them when destroyed.
template <dataset_iterator Impl>
class Iterator {
 public:
  using element_type = typename Impl::element_type;

  explicit Iterator(Impl impl) : impl_(std::make_unique<Impl>(std::move(impl))) {}

  /// The next element, or nullopt at the end of the epoch (Python raises StopIteration).
  std::optional<element_type> next() { return impl_->next(); }
  /// The next element; throws out_of_range at the end (like Python's `next(it)`).
  element_type get_next() {
    auto e = impl_->next();
    if (!e) {
      throw out_of_range("tf::data::Iterator::get_next(): end of sequence");
    }
    return std::move(*e);
  }
  /// Saves the position (and buffers, RNG state) of every stage of the pipeline.
  [[nodiscard]] IteratorState save_state() const {
    IteratorState s;
    detail::save_state_of(*impl_, s, "");
    return s;
  }
  /// Restores a position saved from an iterator of the same pipeline.
  void restore_state(const IteratorState& s) { detail::restore_state_of(*impl_, s, ""); }
  /// Autotune and wait statistics of the stages that have them (prefetch, parallel map).
  [[nodiscard]] std::vector<StageStats> stats() const {
    std::vector<StageStats> out;
    detail::collect_stats_of(*impl_, out);
    return out;
  }
  Impl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;  // stable address: worker threads may point into it
};

/// The std::input_iterator behind range-for over a dataset: `for (auto&& [x, y] : ds)`.
template <dataset_iterator Impl>
class RangeIterator {
 public:
  using value_type = typename Impl::element_type;
  using difference_type = std::ptrdiff_t;
  using iterator_concept = std::input_iterator_tag;

  RangeIterator() = default;
  explicit RangeIterator(Impl impl) : it_(std::make_unique<Iterator<Impl>>(std::move(impl))) {
    current_ = it_->next();
  }
  value_type& operator*() const { return *current_; }
  value_type* operator->() const { return &*current_; }
  RangeIterator& operator++() {
    current_ = it_->next();
    return *this;
  }
  void operator++(int) { ++*this; }
  friend bool operator==(const RangeIterator& it, std::default_sentinel_t) noexcept {
    return !it.current_.has_value();
  }
  /// The epoch's explicit iterator (stats, save_state).
  Iterator<Impl>& iterator() noexcept { return *it_; }

 private:
  std::unique_ptr<Iterator<Impl>> it_;
  mutable std::optional<value_type> current_;
};

/// CRTP base: gives a dataset `begin()`/`end()` (one epoch per `begin()`) and `iter()`.
template <class Derived, class Element>
class DatasetBase {
 public:
  using element_type = Element;

  /// Starts an epoch (Python: `iter(ds)`).
  [[nodiscard]] auto iter() const { return Iterator(self().make_iterator()); }
  [[nodiscard]] auto begin() const { return RangeIterator(self().make_iterator()); }
  [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }

 private:
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

/// The number of elements of `ds` if known (TensorFlow: `ds.cardinality()`), else
/// infinite_cardinality or unknown_cardinality.
template <dataset D>
std::int64_t cardinality(const D& ds) {
  return static_cast<std::int64_t>(ds.cardinality());
}

// ---- pipe mechanism --------------------------------------------------------------------------

/// A pipeline stage waiting for its input: `ds | closure` calls `closure(ds)`; two closures
/// compose into one (`auto aug = map(f) | shuffle(100); ds | aug`).
template <class F>
class AdaptorClosure {
 public:
  explicit AdaptorClosure(F f) : f_(std::move(f)) {}

  template <dataset D>
  auto operator()(D&& ds) const {
    return f_(std::forward<D>(ds));
  }
  template <dataset D>
  friend auto operator|(D&& ds, const AdaptorClosure& c) {
    return c.f_(std::forward<D>(ds));
  }
  template <class G>
  friend auto operator|(AdaptorClosure a, AdaptorClosure<G> b) {
    return AdaptorClosure<ComposeFn<G>>(ComposeFn<G>{std::move(a.f_), std::move(b).fn()});
  }
  F fn() && { return std::move(f_); }

 private:
  template <class G>
  struct ComposeFn {
    F first;
    G second;
    template <class D>
    auto operator()(D&& ds) const {
      return second(first(std::forward<D>(ds)));
    }
  };
  template <class>
  friend class AdaptorClosure;
  F f_;
};

/// Builds the pipeable form of an adaptor from a callable taking the dataset.
template <class F>
AdaptorClosure<std::decay_t<F>> make_closure(F&& f) {
  return AdaptorClosure<std::decay_t<F>>(std::forward<F>(f));
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
