// `tf::data::AnyDataset<E>`: a type-erased dataset of elements E, for pipelines whose shape is
// chosen at run time (`if (train) ds = ds | shuffle(1000);`) or that cross a function boundary
// without spelling the adaptor types. Costs one virtual call per element.
//
//     tf::data::AnyDataset<tf::Tensor<std::int64_t, 0>> ds = tf::data::range(10);
//     if (shuffle) ds = ds | tf::data::shuffle(10);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/detail/shard_input_files.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// A type-erased dataset of elements E, for pipelines chosen at run time or passed across
/// function boundaries; copies share the wrapped pipeline. One virtual call per element.
template <class E>
class AnyDataset : public DatasetBase<AnyDataset<E>, E> {
  struct IteratorConcept {
    virtual ~IteratorConcept() = default;
    virtual std::optional<E> next() = 0;
    virtual void save_state(IteratorState& s, const std::string& p) const = 0;
    virtual void restore_state(const IteratorState& s, const std::string& p) = 0;
    virtual void collect_stats(std::vector<StageStats>& out) const = 0;
  };
  template <class It>
  struct IteratorModel final : IteratorConcept {
    explicit IteratorModel(It i) : it(std::move(i)) {}
    std::optional<E> next() override { return it.next(); }
    void save_state(IteratorState& s, const std::string& p) const override {
      detail::save_state_of(it, s, p);
    }
    void restore_state(const IteratorState& s, const std::string& p) override {
      detail::restore_state_of(it, s, p);
    }
    void collect_stats(std::vector<StageStats>& out) const override {
      detail::collect_stats_of(it, out);
    }
    It it;
  };
  struct EmptyIterator {
    using element_type = E;
    std::optional<E> next() { return std::nullopt; }
    void save_state(IteratorState&, const std::string&) const {}
    void restore_state(const IteratorState&, const std::string&) {}
  };
  struct DatasetConcept {
    virtual ~DatasetConcept() = default;
    virtual std::unique_ptr<IteratorConcept> make_iterator() const = 0;
    virtual std::int64_t cardinality() const = 0;
    virtual std::shared_ptr<const DatasetConcept> shard_input_files(
        std::int64_t num_shards, std::int64_t index, detail::FileShardReport& report) const = 0;
  };
  template <class D>
  struct DatasetModel final : DatasetConcept {
    explicit DatasetModel(D d) : ds(std::move(d)) {}
    std::unique_ptr<IteratorConcept> make_iterator() const override {
      return std::make_unique<IteratorModel<iterator_impl_t<D>>>(ds.make_iterator());
    }
    std::int64_t cardinality() const override { return ds.cardinality(); }
    std::shared_ptr<const DatasetConcept> shard_input_files(
        std::int64_t num_shards, std::int64_t index,
        detail::FileShardReport& report) const override {
      return std::make_shared<const DatasetModel>(
          detail::shard_input_files(ds, num_shards, index, report));
    }
    D ds;
  };

 public:
  using element_type = E;  ///< the element type of every dataset it can hold

  /// Wraps any dataset with element type E. (The self check comes first: checking `dataset`
  /// on AnyDataset itself would recurse through this constructor.)
  template <class D>
    requires(!std::is_same_v<std::remove_cvref_t<D>, AnyDataset> && dataset<D> &&
             std::is_same_v<element_t<D>, E>)
  AnyDataset(D&& ds)  // NOLINT(google-explicit-constructor): erasure is the point
      : impl_(std::make_shared<const DatasetModel<std::remove_cvref_t<D>>>(std::forward<D>(ds))) {}

  struct iterator {
    using element_type = E;
    std::unique_ptr<IteratorConcept> impl;
    std::optional<E> next() { return impl->next(); }
    void save_state(IteratorState& s, const std::string& p) const { impl->save_state(s, p); }
    void restore_state(const IteratorState& s, const std::string& p) { impl->restore_state(s, p); }
    void collect_stats(std::vector<StageStats>& out) const { impl->collect_stats(out); }
  };
  /// An empty dataset (a placeholder to assign a pipeline to).
  AnyDataset() = default;

  /// Starts an epoch of the wrapped dataset (an empty one if default-constructed).
  [[nodiscard]] iterator make_iterator() const {
    if (!impl_) {
      return iterator{std::make_unique<IteratorModel<EmptyIterator>>(EmptyIterator{})};
    }
    return iterator{impl_->make_iterator()};
  }
  /// The wrapped dataset's cardinality; 0 if default-constructed.
  [[nodiscard]] std::int64_t cardinality() const { return impl_ ? impl_->cardinality() : 0; }
  /// A copy whose file sources keep shard `index` of `num_shards` of their files
  /// (data/detail/shard_input_files.hpp; the wrapped pipeline's type is hidden here).
  [[nodiscard]] AnyDataset shard_input_files(std::int64_t num_shards, std::int64_t index,
                                             detail::FileShardReport& report) const {
    AnyDataset out;
    if (impl_) {
      out.impl_ = impl_->shard_input_files(num_shards, index, report);
    }
    return out;
  }

 private:
  std::shared_ptr<const DatasetConcept> impl_{};  // null: default-constructed, empty
};

/// Deduces `AnyDataset<E>` from a dataset, `E` being its element type.
template <dataset D>
AnyDataset(D) -> AnyDataset<element_t<D>>;

}  // namespace data
TAPEFLOW_END_NAMESPACE
