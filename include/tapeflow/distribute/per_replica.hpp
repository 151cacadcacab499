// `PerReplica<T>`: one value per replica (TensorFlow: `tf.distribute.DistributedValues`), what
// `strategy.run` returns and what a distributed dataset yields.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// One value per replica, in replica order.
template <class T>
struct PerReplica {
  std::vector<T> values;  ///< values[r] is replica r's

  /// How many replicas hold a value.
  [[nodiscard]] std::size_t size() const noexcept { return values.size(); }
  /// Replica `r`'s value (invalid_argument past the last replica).
  [[nodiscard]] const T& operator[](std::size_t r) const {
    if (r >= values.size()) {
      throw invalid_argument("PerReplica: no replica " + std::to_string(r) + " among " +
                             std::to_string(values.size()));
    }
    return values[r];
  }
  /// Prints as TensorFlow does: "PerReplica:{\n  0: ...,\n  1: ...\n}".
  friend std::ostream& operator<<(std::ostream& os, const PerReplica& p)
    requires requires(std::ostream& o, const T& v) { o << v; }
  {
    os << "PerReplica:{";
    for (std::size_t r = 0; r < p.values.size(); ++r) {
      os << (r == 0 ? "\n  " : ",\n  ") << r << ": " << p.values[r];
    }
    return os << "\n}";
  }
};

template <class T>
PerReplica(std::vector<T>) -> PerReplica<T>;

namespace detail {
template <class T>
inline constexpr bool is_per_replica = false;
template <class T>
inline constexpr bool is_per_replica<PerReplica<T>> = true;
}  // namespace detail

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
