// `ds | tf::data::interleave(f, {.cycle_length, .block_length, .num_parallel_calls})`
// (`Dataset.interleave`): f maps each input element to a dataset; up to cycle_length of those
// are open at once and visited round-robin, block_length elements at a time. When one ends, its
// slot is refilled from the next input element on the next visit (TensorFlow's order, e.g.
// range(1,6) -> from_tensors(x).repeat(6), cycle 2, block 4 gives 1111 2222 11 22 3333 4444 ...).
// With num_parallel_calls, each open dataset runs on its own background thread (a prefetch
// of a few elements), so e.g. several files are read at once; the output order is unchanged.
// The iterator state can be saved: it records, per open dataset, the input element it came from
// (so the input element type needs element_traits, as filenames and tensors have).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/detail/box.hpp>
#include <tapeflow/data/detail/invoke.hpp>
#include <tapeflow/data/detail/parallel_stage.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// Options of `interleave` (tf.data.Dataset.interleave's keyword arguments).
struct InterleaveOptions {
  int cycle_length = autotune;  ///< autotune: the number of hardware threads
  int block_length = 1;         ///< consecutive elements taken from one dataset per visit (>= 1)
  std::optional<int> num_parallel_calls{};  ///< set: open datasets are prefetched on threads
};

/// The dataset `interleave` returns (`Dataset.interleave`): the elements of the datasets
/// `f(x)` for each input element x, visited round-robin (see the file comment).
template <dataset D, class F>
class InterleaveDataset
    : public DatasetBase<InterleaveDataset<D, F>,
                         element_t<detail::invoke_result_on_element_t<F, element_t<D>>>> {
  using Inner = detail::invoke_result_on_element_t<F, element_t<D>>;
  static_assert(dataset<Inner>, "tf::data::interleave: f must return a dataset");
  using InnerIt = iterator_impl_t<Inner>;

 public:
  using element_type = element_t<Inner>;  ///< the element type of the datasets f returns
  /// The background thread that reads one open dataset ahead, with num_parallel_calls.
  using stage = detail::ParallelStage<InnerIt, detail::identity_fn, element_type>;

  InterleaveDataset() = default;
  /// Interleaves `f(x)` over the elements x of `ds`; a cycle_length of autotune becomes the
  /// number of hardware threads; invalid_argument if cycle_length or block_length is < 1.
  InterleaveDataset(D ds, F f, InterleaveOptions o) : ds_(std::move(ds)), f_(std::move(f)), o_(o) {
    if (o_.cycle_length == autotune) {
      o_.cycle_length = detail::hardware_threads();
    }
    if (o_.cycle_length < 1 || o_.block_length < 1) {
      throw invalid_argument("tf::data::interleave: cycle_length and block_length must be >= 1");
    }
  }

  struct iterator {
    using element_type = InterleaveDataset::element_type;
    using InElem = element_t<D>;
    // Saving the state re-creates each open dataset from the input element that made it, so
    // that element is kept (a cheap copy: tensors share buffers) when it can be encoded.
    static constexpr bool keeps_source =
        requires(const InElem& e, std::string& out, std::string_view& in) {
          element_traits<InElem>::encode(e, out);
          element_traits<InElem>::decode(in);
        };
    struct Slot {
      std::optional<InnerIt> seq;
      std::unique_ptr<stage> par;
      std::optional<InElem> source;
      std::optional<element_type> next() { return par ? par->next() : seq->next(); }
    };
    iterator_impl_t<D> input;
    F f;
    InterleaveOptions o;
    std::vector<std::optional<Slot>> slots{};
    std::size_t cur = 0;
    int block = 0;
    bool input_done = false;

    void advance() {
      cur = (cur + 1) % slots.size();
      block = 0;
    }
    Slot open(InElem e) {
      Slot s;
      if constexpr (keeps_source) {
        s.source.emplace(e);
      }
      Inner inner = detail::invoke_on_element(f, std::move(e));
      if (o.num_parallel_calls) {
        detail::StageConfig cfg;
        cfg.name = "interleave";
        cfg.buffer = std::max(2, o.block_length);
        s.par = std::make_unique<stage>(inner.make_iterator(), detail::identity_fn{}, cfg);
      } else {
        s.seq.emplace(inner.make_iterator());
      }
      return s;
    }
    std::optional<element_type> next() {
      if (slots.empty()) {
        slots.resize(static_cast<std::size_t>(o.cycle_length));
      }
      for (;;) {
        auto& slot = slots[cur];
        if (!slot) {
          if (!input_done) {
            if (auto e = input.next()) {
              slot.emplace(open(std::move(*e)));
              block = 0;
            } else {
              input_done = true;
            }
          }
          if (!slot) {
            if (input_done && all_empty()) {
              return std::nullopt;
            }
            advance();
            continue;
          }
        }
        auto e = slot->next();
        if (e) {
          if (++block >= o.block_length) {
            advance();
          }
          return e;
        }
        slot.reset();
        advance();
      }
    }
    bool all_empty() const {
      for (const auto& s : slots) {
        if (s) {
          return false;
        }
      }
      return true;
    }

    /// Saves the cycle position, the input, and per open dataset the input element it came
    /// from and its own iterator state (restoring calls f again on that element).
    void save_state(IteratorState& s, const std::string& p) const {
      const std::string k = p + "interleave/";
      s.put_int(k + "cur", static_cast<std::int64_t>(cur));
      s.put_int(k + "block", block);
      s.put_int(k + "input_done", input_done ? 1 : 0);
      s.put_int(k + "slots", static_cast<std::int64_t>(slots.size()));
      for (std::size_t i = 0; i < slots.size(); ++i) {
        const std::string sk = k + "slot" + std::to_string(i) + "/";
        s.put_int(sk + "active", slots[i] ? 1 : 0);
        if (!slots[i]) {
          continue;
        }
        if constexpr (keeps_source) {
          std::string src;
          element_traits<InElem>::encode(*slots[i]->source, src);
          s.put(sk + "source", std::move(src));
        } else {
          throw unimplemented(
              "tf::data::interleave: cannot save the iterator state: the input element type "
              "has no element_traits encoding (" +
              sk + ")");
        }
        if (slots[i]->par) {
          slots[i]->par->save_state(s, sk);
        } else {
          detail::save_state_of(*slots[i]->seq, s, sk);
        }
      }
      detail::save_state_of(input, s, k);
    }
    void restore_state(const IteratorState& s, const std::string& p) {
      const std::string k = p + "interleave/";
      const auto n = s.get_int(k + "slots");
      const auto at = s.get_int(k + "cur");
      if ((n != 0 && n != o.cycle_length) || at < 0 || (n == 0 ? at != 0 : at >= n)) {
        throw invalid_argument(
            "tf::data::interleave: the iterator state does not fit this "
            "pipeline (" +
            std::to_string(n) + " slots, cycle_length " + std::to_string(o.cycle_length) + ")");
      }
      cur = static_cast<std::size_t>(at);
      block = static_cast<int>(s.get_int(k + "block"));
      input_done = s.get_int(k + "input_done") != 0;
      slots.clear();
      slots.resize(static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < slots.size(); ++i) {
        const std::string sk = k + "slot" + std::to_string(i) + "/";
        if (s.get_int(sk + "active") == 0) {
          continue;
        }
        if constexpr (keeps_source) {
          std::string_view src = s.get(sk + "source");
          slots[i].emplace(open(element_traits<InElem>::decode(src)));
        } else {
          throw unimplemented(
              "tf::data::interleave: cannot restore the iterator state: the input element type "
              "has no element_traits encoding (" +
              sk + ")");
        }
        if (slots[i]->par) {
          slots[i]->par->restore_state(s, sk);
        } else {
          detail::restore_state_of(*slots[i]->seq, s, sk);
        }
      }
      detail::restore_state_of(input, s, k);
    }
  };
  /// Starts an epoch of `ds` (datasets are opened as the cycle needs them); failed_precondition
  /// for a default-constructed InterleaveDataset (it has no function).
  [[nodiscard]] iterator make_iterator() const {
    return iterator{ds_.make_iterator(), f_.get("tf::data::interleave"), o_};
  }
  /// 0 if the input is empty, else unknown_cardinality.
  [[nodiscard]] std::int64_t cardinality() const {
    return ds_.cardinality() == 0 ? 0 : unknown_cardinality;
  }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp).
  template <class Rewrite>
  [[nodiscard]] InterleaveDataset transform_inputs(Rewrite&& f) const {
    return detail::with_input(*this, &InterleaveDataset::ds_, f);
  }

 private:
  D ds_;
  detail::Box<F> f_{};
  InterleaveOptions o_{.cycle_length = 1};
};

/// The dataset-first form of `interleave` (`interleave(ds, f, o)`); interleave_fn adds the
/// pipeable one.
struct interleave_base_fn {
  /// An InterleaveDataset of `ds`: `f` maps an element (tuples unpacked) to a dataset.
  template <dataset D, class F>
  auto operator()(D&& ds, F f, InterleaveOptions o = {}) const {
    return InterleaveDataset<std::remove_cvref_t<D>, F>(std::forward<D>(ds), std::move(f), o);
  }
};
/// The type of `interleave`: both the dataset-first and the pipeable form.
struct interleave_fn : interleave_base_fn {
  using interleave_base_fn::operator();
  /// A closure interleaving the dataset piped into it: `ds | interleave(f, o)`.
  template <class F>
    requires(!dataset<F>)
  auto operator()(F f, InterleaveOptions o = {}) const {
    return ranges::make_view_closure(ranges::bind_back(interleave_base_fn{}, std::move(f), o));
  }
};
/// `ds | interleave(f, {.cycle_length = 4})`, `interleave(ds, f)`: see the file comment.
inline constexpr interleave_fn interleave{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
