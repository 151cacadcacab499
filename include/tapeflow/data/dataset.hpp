// The dataset concept, the CRTP base every source and adaptor derives from, the pipe mechanism,
// and the hooks for iterator state (checkpointing) and autotune statistics (`tf.data.Dataset`).
//
// A dataset is a copyable *description* of a pipeline and a view in both the C++20 and the
// range-v3 sense (MAINTAINERS.md, "Datasets are views"): each `begin()` (or `iter()`) starts a
// fresh epoch with its own iterator state, threads included, so `for (auto&& x : ds)`,
// std::ranges algorithms, std views and range-v3 views (`ds | ranges::views::enumerate`) work on
// it; one iteration is one epoch. Copying a dataset copies the description, never the data.
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
//       MyDataset() = default;                    // a placeholder to assign to (see below)
//       MyIterator make_iterator() const;         // called once per epoch
//       std::int64_t cardinality() const;         // count, infinite_cardinality or
//                                                 // unknown_cardinality
//     };
//
// Views must be semiregular, so every dataset of tf::data is default-constructible: a
// default-constructed source is empty, and an adaptor holding a user function (map, filter,
// interleave, from_generator) throws failed_precondition when an epoch of it starts. A user
// dataset that is not default-constructible still works everywhere except piped as an rvalue
// (`MyDataset(args) | tf::data::map(f)`; range-v3 rejects it as not a viewable_range): name it
// first (`auto ds = MyDataset(args); ds | tf::data::map(f)`) or call
// `tf::data::map(MyDataset(args), f)`.
//
// Iterator state (for checkpoints of input pipelines): `Iterator::save_state()` returns an
// IteratorState with one entry group per stage ("prefetch/batch/shuffle/rng", ...), and
// `restore_state()` on a fresh iterator of the same pipeline resumes exactly there. Supported
// by every source and adaptor except from_generator and from_range over a single-pass range,
// which throw failed_precondition (as TensorFlow: a generator's position is opaque); a user
// iterator without the two members makes saving throw unimplemented. Threaded stages (prefetch,
// parallel map, parallel interleave) pause their input while saving and store the elements
// already computed.
//
// Customization points: the member functions above, and the trait
// `tf::data::element_traits<E>` (element.hpp) for element types beyond tensors, tuples
// and pairs.
//
// Adaptors are range-v3 view closures (MAINTAINERS.md, "Datasets are views"):
// `batch(ds, 32)` and `ds | batch(32)` are one call, and closures compose before they meet a
// dataset: `auto aug = map(f) | shuffle(n); ds | aug`.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <ranges>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/range_fwd.hpp>
#include <range/v3/view/view.hpp>

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
  /// Stores `bytes` under `key`, replacing any entry already there.
  void put(const std::string& key, std::string bytes) { entries_[key] = std::move(bytes); }
  /// Stores an int64 under `key` (its 8 native-endian bytes; read back with get_int).
  void put_int(const std::string& key, std::int64_t v) {
    std::string s(sizeof v, '\0');
    std::memcpy(s.data(), &v, sizeof v);
    put(key, std::move(s));
  }
  /// Whether an entry named `key` exists.
  [[nodiscard]] bool contains(const std::string& key) const { return entries_.count(key) != 0; }
  /// The bytes stored under `key`; throws not_found if there is no such entry.
  [[nodiscard]] const std::string& get(const std::string& key) const {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      throw not_found("tf::data::IteratorState: no entry '" + key + "'");
    }
    return it->second;
  }
  /// The int64 stored by put_int under `key`; throws not_found if there is no such entry and
  /// data_loss if the entry is not 8 bytes long.
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
  /// All entries, mutable (to fill a state being deserialized).
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

/// One epoch's state: `next()` returns `std::optional<element_type>`, nullopt at the end.
template <class I>
concept dataset_iterator = requires(I& it) {
  typename I::element_type;
  { it.next() } -> std::same_as<std::optional<typename I::element_type>>;
};

/// A dataset_iterator with `save_state(state, prefix) const` and `restore_state(state, prefix)`
/// (Iterator::save_state throws unimplemented for a stage without them).
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
  using element_type = typename Impl::element_type;  ///< the dataset's element type

  /// Wraps the stage iterator of a fresh epoch (DatasetBase::iter() builds it).
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
  /// The wrapped stage iterator (its own members, beyond `next()`).
  Impl& impl() noexcept { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;  // stable address: worker threads may point into it
};

/// The iterator of range-for and of range algorithms over a dataset: one epoch, a
/// std::input_iterator (and a range-v3 one) whose end is `std::default_sentinel`.
///
/// Copies share the epoch, as copies of std::istream_iterator share the stream: incrementing one
/// advances all, and the epoch's state, threads included, lives until the last copy is destroyed
/// (so a std or range-v3 view may copy or move it freely; its threads stop when the view's
/// iterator dies). The element is kept in the shared state, so `*it` is a reference that stays
/// valid until the next increment; the hot path is one pointer hop, as before. Like
/// std::istream_iterator it is also a C++17 input iterator: two iterators are equal when both
/// are at the end or both belong to the same epoch, and a default-constructed one is the end
/// (`std::vector<E> v(ds.begin(), decltype(ds.begin()){})`); range-v3's counted_iterator
/// (views::take) reads its iterator_category.
template <dataset_iterator Impl>
class RangeIterator {
  struct Epoch {
    explicit Epoch(Impl i) : impl(std::move(i)), current(impl.next()) {}
    Impl impl;  // stable address: worker threads may point into it
    std::optional<typename Impl::element_type> current;
  };

 public:
  using value_type = typename Impl::element_type;     ///< the dataset's element type
  using reference = value_type&;                      ///< `*it`: the element held by the epoch
  using pointer = value_type*;                        ///< `it.operator->()`
  using difference_type = std::ptrdiff_t;             ///< required by std::input_iterator
  using iterator_concept = std::input_iterator_tag;   ///< a single-pass input iterator
  using iterator_category = std::input_iterator_tag;  ///< also a C++17 input iterator

  /// The end iterator (equal to `std::default_sentinel`).
  RangeIterator() = default;
  /// Starts the epoch: takes ownership of the stage iterators and reads the first element.
  explicit RangeIterator(Impl impl) : epoch_(std::make_shared<Epoch>(std::move(impl))) {}

  /// The current element; valid until the next increment (undefined at the end).
  reference operator*() const { return *epoch_->current; }
  /// Member access to the current element.
  value_type* operator->() const { return &*epoch_->current; }
  /// Reads the next element of the epoch (every copy of this iterator advances too).
  RangeIterator& operator++() {
    epoch_->current = epoch_->impl.next();
    return *this;
  }
  /// Input iterators return nothing from post-increment (the old element is gone).
  void operator++(int) { ++*this; }
  /// True at the end of the epoch (and for a default-constructed iterator).
  friend bool operator==(const RangeIterator& it, std::default_sentinel_t) noexcept {
    return !it.epoch_ || !it.epoch_->current;
  }
  /// True when both are at the end, or neither is and both belong to the same epoch.
  friend bool operator==(const RangeIterator& a, const RangeIterator& b) noexcept {
    const bool a_end = a == std::default_sentinel;
    const bool b_end = b == std::default_sentinel;
    return a_end || b_end ? a_end == b_end : a.epoch_ == b.epoch_;
  }
  /// Autotune and wait statistics of the epoch's threaded stages (see Iterator::stats).
  [[nodiscard]] std::vector<StageStats> stats() const {
    std::vector<StageStats> out;
    if (epoch_) {
      detail::collect_stats_of(epoch_->impl, out);
    }
    return out;
  }

 private:
  std::shared_ptr<Epoch> epoch_;
};

/// CRTP base: gives a dataset `begin()`/`end()` (one epoch per `begin()`) and `iter()`, and
/// makes it a view for std::ranges and range-v3 (both view_base tags).
template <class Derived, class Element>
class DatasetBase : public std::ranges::view_base, public ranges::view_base {
 public:
  using element_type = Element;  ///< what one step of an epoch yields

  /// Starts an epoch (Python: `iter(ds)`).
  [[nodiscard]] auto iter() const { return Iterator(self().make_iterator()); }
  /// Starts an epoch for range-for and range algorithms.
  [[nodiscard]] auto begin() const { return RangeIterator(self().make_iterator()); }
  /// The end of any epoch (`std::default_sentinel`).
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

// ---- pipeline rewrites -----------------------------------------------------------------------
//
// An adaptor exposes its input dataset to rewrites of the whole pipeline (sharding the input
// files by worker: data/detail/shard_input_files.hpp) through
//     template <class F> Self transform_inputs(F&& f) const;
// a copy of itself reading f(input) instead, where f returns a dataset of the input's type.
// Sources have none: a rewrite stops there.

namespace detail {
/// A copy of `self` whose member `input` is `f(self.*input)` (adaptors' transform_inputs).
template <class Self, class Input, class F>
Self with_input(const Self& self, Input Self::*input, F& f) {
  Self out = self;
  out.*input = f(self.*input);
  return out;
}
}  // namespace detail

// ---- pipe mechanism --------------------------------------------------------------------------
//
// Every adaptor is built one way (MAINTAINERS.md, "Datasets are views"): `name_base_fn` takes
// `(dataset, args...)` and returns the adaptor's dataset; `name_fn : name_base_fn` adds the
// args-only overload, which returns
//     ranges::make_view_closure(ranges::bind_back(name_base_fn{}, args...))
// So `ds | name(args...)` and `name(ds, args...)` are the same call; closures compose with each
// other and with range-v3's own (`map(f) | shuffle(n)`, `batch(2) | ranges::views::take(3)`);
// and piping a range that is not viewable (an rvalue container) hits range-v3's deleted
// operator|, whose comment explains viewable_range.

/// The pipeable form of a callable taking a dataset: for user adaptors without arguments to
/// bind (`auto twice = tf::data::make_closure([](auto ds) { return ds | repeat(2); });`).
template <class F>
auto make_closure(F&& f) {
  return ranges::make_view_closure(std::forward<F>(f));
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
