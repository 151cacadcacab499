// `tf::data::range(stop)`, `range(start, stop, step)`: scalar int64 elements
// (TensorFlow: `tf.data.Dataset.range`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// Elements start, start+step, ... before stop, as `Tensor<int64_t, 0>`.
class RangeDataset : public DatasetBase<RangeDataset, Tensor<std::int64_t, 0>> {
 public:
  RangeDataset() = default;  // no elements
  /// start, start+step, ... up to (excluding) stop; invalid_argument if step is 0.
  RangeDataset(std::int64_t start, std::int64_t stop, std::int64_t step)
      : start_(start), stop_(stop), step_(step) {
    if (step == 0) {
      throw invalid_argument("tf::data::range: step must not be 0");
    }
  }
  struct iterator {
    using element_type = Tensor<std::int64_t, 0>;
    std::int64_t cur, stop, step;
    std::optional<element_type> next() {
      if (step > 0 ? cur >= stop : cur <= stop) {
        return std::nullopt;
      }
      const std::int64_t v = cur;
      cur += step;
      return element_type(v);
    }
    void save_state(IteratorState& s, const std::string& prefix) const {
      s.put_int(prefix + "range/cur", cur);
    }
    void restore_state(const IteratorState& s, const std::string& prefix) {
      cur = s.get_int(prefix + "range/cur");
    }
  };
  /// Starts an epoch at `start`.
  [[nodiscard]] iterator make_iterator() const { return {start_, stop_, step_}; }
  /// ceil((stop - start) / step), or 0 if the range is empty.
  [[nodiscard]] std::int64_t cardinality() const noexcept {
    const std::int64_t span = step_ > 0 ? stop_ - start_ : start_ - stop_;
    const std::int64_t st = step_ > 0 ? step_ : -step_;
    return span <= 0 ? 0 : (span + st - 1) / st;
  }

 private:
  std::int64_t start_ = 0, stop_ = 0, step_ = 1;
};

/// `range(stop)`: 0, 1, ..., stop - 1 (`tf.data.Dataset.range`).
inline RangeDataset range(std::int64_t stop) { return {0, stop, 1}; }
/// `range(start, stop, step)`: start, start+step, ... before stop; invalid_argument if step
/// is 0.
inline RangeDataset range(std::int64_t start, std::int64_t stop, std::int64_t step = 1) {
  return {start, stop, step};
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
