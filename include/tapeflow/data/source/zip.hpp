// `tf::data::zip(a, b, ...)`: tuples of the datasets' elements, ending with the shortest
// (TensorFlow: `tf.data.Dataset.zip`).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// The dataset `zip` returns (`tf.data.Dataset.zip`): tuples of one element of each input.
template <dataset... Ds>
class ZipDataset : public DatasetBase<ZipDataset<Ds...>, std::tuple<element_t<Ds>...>> {
 public:
  using element_type = std::tuple<element_t<Ds>...>;  ///< one element of each input, in order
  ZipDataset() = default;
  /// Zips the datasets `ds...`.
  explicit ZipDataset(Ds... ds) : ds_(std::move(ds)...) {}

  struct iterator {
    using element_type = ZipDataset::element_type;
    std::tuple<iterator_impl_t<Ds>...> its;
    std::optional<element_type> next() {
      return [&]<std::size_t... K>(std::index_sequence<K...>) -> std::optional<element_type> {
        std::tuple<std::optional<element_t<Ds>>...> parts;
        bool ok = true;
        // stop at the first exhausted input, like TensorFlow
        ((ok = ok && (std::get<K>(parts) = std::get<K>(its).next()).has_value()), ...);
        if (!ok) {
          return std::nullopt;
        }
        return element_type{std::move(*std::get<K>(parts))...};
      }(std::index_sequence_for<Ds...>{});
    }
    void save_state(IteratorState& s, const std::string& prefix) const {
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        (detail::save_state_of(std::get<K>(its), s, prefix + "zip/" + std::to_string(K) + "/"),
         ...);
      }(std::index_sequence_for<Ds...>{});
    }
    void restore_state(const IteratorState& s, const std::string& prefix) {
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        (detail::restore_state_of(std::get<K>(its), s, prefix + "zip/" + std::to_string(K) + "/"),
         ...);
      }(std::index_sequence_for<Ds...>{});
    }
  };
  /// Starts an epoch of every input; it ends with the first input that ends.
  [[nodiscard]] iterator make_iterator() const {
    return std::apply([](const auto&... d) { return iterator{{d.make_iterator()...}}; }, ds_);
  }
  /// The smallest finite input count; unknown if any input's is unknown; infinite if all are.
  [[nodiscard]] std::int64_t cardinality() const {
    return std::apply(
        [](const auto&... d) {
          std::int64_t out = infinite_cardinality;
          for (std::int64_t c : {static_cast<std::int64_t>(d.cardinality())...}) {
            if (c == unknown_cardinality) {
              return unknown_cardinality;
            }
            if (c != infinite_cardinality) {
              out = out == infinite_cardinality ? c : std::min(out, c);
            }
          }
          return out;
        },
        ds_);
  }

  /// A copy reading `f(d)` for each input d (see "pipeline rewrites" in data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] ZipDataset transform_inputs(Rewrite&& f) const {
    ZipDataset out = *this;
    std::apply([&](auto&... d) { ((d = f(d)), ...); }, out.ds_);
    return out;
  }

 private:
  std::tuple<Ds...> ds_;
};

/// `zip(a, b, ...)`: tuples `(a_i, b_i, ...)`, ending with the shortest input.
template <dataset D, dataset... Ds>
auto zip(D d, Ds... ds) {
  return ZipDataset<D, Ds...>(std::move(d), std::move(ds)...);
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
