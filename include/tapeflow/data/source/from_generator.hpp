// `tf::data::from_generator(factory)`: elements produced by C++ code
// (TensorFlow: `tf.data.Dataset.from_generator`). `factory()` is called at the start of each
// epoch and returns either a callable `() -> std::optional<E>` (nullopt ends the epoch) or a
// range of E (iterated once). An exception thrown by the generator reaches the consumer at the
// element where it happened, also through prefetch and parallel map. Its iterator state cannot
// be saved (failed_precondition), as in TensorFlow.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <ranges>
#include <string>
#include <type_traits>
#include <utility>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/detail/box.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

namespace detail {
template <class G>
struct generator_element;
template <class G>
  requires std::invocable<G&>
struct generator_element<G> {
  using type = typename std::invoke_result_t<G&>::value_type;  // std::optional<E>
};
template <class G>
  requires(!std::invocable<G&> && std::ranges::input_range<G>)
struct generator_element<G> {
  using type = std::ranges::range_value_t<G>;
};
template <class G>
struct generator_cursor {
  using type = int;  // callable generators need no cursor
};
template <class G>
  requires(!std::invocable<G&>)
struct generator_cursor<G> {
  using type = std::ranges::iterator_t<G>;
};
}  // namespace detail

/// The dataset `from_generator` returns (`tf.data.Dataset.from_generator`): each epoch calls
/// the factory for a fresh generator (a callable or a range) and yields what it produces.
template <class Factory>
class GeneratorDataset
    : public DatasetBase<
          GeneratorDataset<Factory>,
          typename detail::generator_element<std::invoke_result_t<const Factory&>>::type> {
  using Gen = std::invoke_result_t<const Factory&>;

 public:
  /// E of the generator: the callable's `std::optional<E>`, or the range's value type.
  using element_type = typename detail::generator_element<Gen>::type;

  GeneratorDataset() = default;
  /// Uses `f` as the per-epoch factory; `cardinality` is what cardinality() reports (not
  /// checked against what the generator produces).
  explicit GeneratorDataset(Factory f, std::int64_t cardinality)
      : factory_(std::move(f)), cardinality_(cardinality) {}

  struct iterator {
    using element_type = GeneratorDataset::element_type;
    std::unique_ptr<Gen> gen;
    // for the range form: iterators into *gen (stable: gen is heap-allocated)
    std::optional<typename detail::generator_cursor<Gen>::type> it{};

    std::optional<element_type> next() {
      if constexpr (std::invocable<Gen&>) {
        return (*gen)();
      } else {
        if (!it) {
          it = std::ranges::begin(*gen);
        }
        if (*it == std::ranges::end(*gen)) {
          return std::nullopt;
        }
        element_type e = **it;
        ++*it;
        return e;
      }
    }
    /// Always throws failed_precondition: the position lives inside the C++ generator, which
    /// tf::data cannot see or rebuild (TensorFlow refuses to checkpoint from_generator too).
    [[noreturn]] void save_state(IteratorState&, const std::string& p) const {
      throw failed_precondition(
          "tf::data::from_generator: the iterator state of a generator cannot be saved (" + p +
          "from_generator): its position lives inside the generator, which tf::data cannot "
          "see; use a source with state (from_tensor_slices, range, TFRecordDataset) or save "
          "after a cache() stage has recorded the data");
    }
    [[noreturn]] void restore_state(const IteratorState&, const std::string& p) {
      throw failed_precondition(
          "tf::data::from_generator: the iterator state of a generator cannot be restored (" + p +
          "from_generator)");
    }
  };
  /// Starts an epoch: calls the factory; failed_precondition for a default-constructed
  /// GeneratorDataset (it has no factory).
  [[nodiscard]] iterator make_iterator() const {
    return iterator{std::make_unique<Gen>(factory_.get("tf::data::from_generator")())};
  }
  /// The cardinality given at construction (GeneratorOptions::cardinality).
  [[nodiscard]] std::int64_t cardinality() const noexcept { return cardinality_; }

 private:
  detail::Box<Factory> factory_{};
  std::int64_t cardinality_ = 0;
};

/// Options of from_generator.
struct GeneratorOptions {
  /// Number of elements if known (for cardinality()); unknown_cardinality otherwise.
  std::int64_t cardinality = unknown_cardinality;
};

/// `from_generator(factory)`: `factory()` runs at the start of each epoch and returns a callable
/// `() -> std::optional<E>` (nullopt ends the epoch) or a range of E (see the file comment).
template <class Factory>
  requires std::invocable<const Factory&>
auto from_generator(Factory factory, GeneratorOptions options = {}) {
  return GeneratorDataset<Factory>(std::move(factory), options.cardinality);
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
