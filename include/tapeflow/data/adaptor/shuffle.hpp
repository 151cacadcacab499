// `ds | tf::data::shuffle(buffer_size, {.seed, .reshuffle_each_iteration})` (`Dataset.shuffle`).
//
// The buffer algorithm is the one the tf.data chapter describes, exactly:
//   1. fill a buffer with the first `buffer_size` elements;
//   2. to produce an element, pick a uniformly random slot of the buffer and return its element;
//   3. put the next input element into that same slot (once the input is exhausted, the slot is
//      closed by moving the last buffered element into it), so the buffer keeps its size.
// A buffer of 1 is therefore no shuffle, and a buffer >= the dataset size gives a uniformly
// random permutation. The buffer may instead be a byte budget (`shuffle(buffer_bytes(64 << 20))`):
// the buffer then holds as many elements as fit in that many bytes (at least one).
//
// Seeds: with `.seed`, the orders are reproducible; each epoch (`begin()`) uses a different
// order derived from (seed, epoch number) when reshuffle_each_iteration (the default), else the
// same order every epoch. The iterator state (buffer, RNG, input position) can be saved.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// A shuffle buffer measured in bytes rather than elements.
struct buffer_bytes {
  std::int64_t bytes = 0;  ///< the budget in bytes (elements measured by element_byte_size)
  /// A budget of `b` bytes (> 0, else shuffle throws invalid_argument).
  constexpr explicit buffer_bytes(std::int64_t b) : bytes(b) {}
};

/// Options of `shuffle` (tf.data.Dataset.shuffle's keyword arguments).
struct ShuffleOptions {
  std::optional<std::uint64_t> seed{};   ///< None: a random seed per dataset
  bool reshuffle_each_iteration = true;  ///< a new order each epoch (TensorFlow's default)
};

/// The dataset `shuffle` returns (`Dataset.shuffle`): `ds` through a shuffle buffer (see the
/// file comment).
template <dataset D>
class ShuffleDataset : public DatasetBase<ShuffleDataset<D>, element_t<D>> {
 public:
  using element_type = element_t<D>;  ///< the input's element type
  ShuffleDataset() = default;
  /// Shuffles `ds` through a buffer of `count` elements if count > 0, else of `bytes` bytes;
  /// invalid_argument if neither is > 0. Without `o.seed` a random seed is drawn here.
  ShuffleDataset(D ds, std::int64_t count, std::int64_t bytes, ShuffleOptions o)
      : ds_(std::move(ds)),
        count_(count),
        bytes_(bytes),
        seed_(o.seed ? *o.seed : std::random_device{}() * 0x100000001ULL ^ std::random_device{}()),
        reshuffle_(o.reshuffle_each_iteration),
        epoch_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
    if (count_ <= 0 && bytes_ <= 0) {
      throw invalid_argument("tf::data::shuffle: buffer_size must be > 0");
    }
  }

  struct iterator {
    using element_type = element_t<D>;
    iterator_impl_t<D> input;
    std::int64_t count;
    std::int64_t bytes;
    std::mt19937_64 rng;
    std::vector<element_type> buffer{};
    std::int64_t buffered_bytes = 0;
    bool input_done = false;
    bool filled = false;

    bool full() const {
      if (count > 0) {
        return static_cast<std::int64_t>(buffer.size()) >= count;
      }
      return !buffer.empty() && buffered_bytes >= bytes;
    }
    std::optional<element_type> pull() {
      if (input_done) {
        return std::nullopt;
      }
      auto e = input.next();
      if (!e) {
        input_done = true;
      }
      return e;
    }
    std::optional<element_type> next() {
      if (!filled) {  // 1. fill
        filled = true;
        while (!full()) {
          auto e = pull();
          if (!e) {
            break;
          }
          if (count <= 0) {
            buffered_bytes += static_cast<std::int64_t>(element_byte_size(*e));
          }
          buffer.push_back(std::move(*e));
        }
      }
      if (buffer.empty()) {
        return std::nullopt;
      }
      // 2. sample
      std::uniform_int_distribution<std::size_t> pick(0, buffer.size() - 1);
      const std::size_t j = pick(rng);
      element_type out = std::move(buffer[j]);
      if (count <= 0) {
        buffered_bytes -= static_cast<std::int64_t>(element_byte_size(out));
      }
      // 3. replace in the same slot
      bool slot_open = true;
      const auto full_now = [&] {
        const auto held = static_cast<std::int64_t>(buffer.size()) - (slot_open ? 1 : 0);
        return count > 0 ? held >= count : (held > 0 && buffered_bytes >= bytes);
      };
      while (!full_now()) {
        auto e = pull();
        if (!e) {
          break;
        }
        if (count <= 0) {
          buffered_bytes += static_cast<std::int64_t>(element_byte_size(*e));
        }
        if (slot_open) {
          buffer[j] = std::move(*e);
          slot_open = false;
        } else {
          buffer.push_back(std::move(*e));
        }
      }
      if (slot_open) {
        buffer[j] = std::move(buffer.back());
        buffer.pop_back();
      }
      return out;
    }
    void save_state(IteratorState& s, const std::string& p) const {
      std::ostringstream r;
      r << rng;
      s.put(p + "shuffle/rng", r.str());
      s.put_int(p + "shuffle/flags", (input_done ? 1 : 0) | (filled ? 2 : 0));
      s.put_int(p + "shuffle/bytes", buffered_bytes);
      std::string buf;
      const std::uint64_t n = buffer.size();
      buf.append(reinterpret_cast<const char*>(&n), sizeof n);
      for (const auto& e : buffer) {
        element_traits<element_type>::encode(e, buf);
      }
      s.put(p + "shuffle/buffer", std::move(buf));
      detail::save_state_of(input, s, p + "shuffle/");
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      std::istringstream r(s.get(p + "shuffle/rng"));
      r >> rng;
      const auto flags = s.get_int(p + "shuffle/flags");
      input_done = (flags & 1) != 0;
      filled = (flags & 2) != 0;
      buffered_bytes = s.get_int(p + "shuffle/bytes");
      std::string_view in = s.get(p + "shuffle/buffer");
      std::uint64_t n = 0;
      detail::get_raw(in, &n, sizeof n);
      buffer.clear();
      for (std::uint64_t i = 0; i < n; ++i) {
        buffer.push_back(element_traits<element_type>::decode(in));
      }
      detail::restore_state_of(input, s, p + "shuffle/");
    }
    void collect_stats(std::vector<StageStats>& out) const { detail::collect_stats_of(input, out); }
  };

  /// Starts an epoch of `ds`, its RNG seeded from (seed, epoch number) with
  /// reshuffle_each_iteration, else from the seed alone; epochs are counted across copies.
  [[nodiscard]] iterator make_iterator() const {
    const std::uint64_t epoch = reshuffle_ && epoch_ ? (*epoch_)++ : 0;
    std::seed_seq seq{static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32),
                      static_cast<std::uint32_t>(epoch), static_cast<std::uint32_t>(epoch >> 32)};
    return iterator{ds_.make_iterator(), count_, bytes_, std::mt19937_64(seq)};
  }
  /// The input's cardinality.
  [[nodiscard]] std::int64_t cardinality() const { return ds_.cardinality(); }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] ShuffleDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &ShuffleDataset::ds_, f);
  }

 private:
  D ds_;
  std::int64_t count_ = 1;
  std::int64_t bytes_ = 0;
  std::uint64_t seed_ = 0;
  bool reshuffle_ = false;
  // epochs started, shared by copies (a default-constructed dataset counts none)
  std::shared_ptr<std::atomic<std::uint64_t>> epoch_{};
};

/// The dataset-first form of `shuffle` (`shuffle(ds, n)`); shuffle_fn adds the pipeable one.
struct shuffle_base_fn {
  /// A ShuffleDataset of `ds` with a buffer of `buffer_size` (> 0, else invalid_argument)
  /// elements.
  template <dataset D>
  auto operator()(D&& ds, std::int64_t buffer_size, ShuffleOptions o = {}) const {
    return ShuffleDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), buffer_size, 0, o);
  }
  /// A ShuffleDataset of `ds` with a buffer of `b.bytes` (> 0, else invalid_argument) bytes.
  template <dataset D>
  auto operator()(D&& ds, buffer_bytes b, ShuffleOptions o = {}) const {
    if (b.bytes <= 0) {
      throw invalid_argument("tf::data::shuffle: buffer_bytes must be > 0");
    }
    return ShuffleDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), 0, b.bytes, o);
  }
};
/// The type of `shuffle`: both the dataset-first and the pipeable forms.
struct shuffle_fn : shuffle_base_fn {
  using shuffle_base_fn::operator();
  /// A closure shuffling the dataset piped into it: `ds | shuffle(1000)`.
  auto operator()(std::int64_t buffer_size, ShuffleOptions o = {}) const {
    return ranges::make_view_closure(ranges::bind_back(shuffle_base_fn{}, buffer_size, o));
  }
  /// A closure with a byte budget: `ds | shuffle(buffer_bytes(64 << 20))`.
  auto operator()(buffer_bytes b, ShuffleOptions o = {}) const {
    return ranges::make_view_closure(ranges::bind_back(shuffle_base_fn{}, b, o));
  }
};
/// `ds | shuffle(10000)`, `ds | shuffle(buffer_bytes(64 << 20), {.seed = 42})`.
inline constexpr shuffle_fn shuffle{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
