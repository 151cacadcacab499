// The `Collective` of replicas that are threads of one process (MirroredStrategy over logical
// CPUs, or logical GPUs on one card, as TensorFlow falls back for virtual GPUs).
//
// A rendezvous per operation: each replica files a view of its tensors under its rank and
// waits; the last to arrive computes the result for everyone (reductions add in rank order, so
// every run and every replica gets the same bits) and wakes the others, who take their share;
// the operation is over when all have left, and the next one may start. Nothing is copied into
// a buffer first: callers block, so their tensors outlive the views.
//
// Failure is never a hang. A replica that waits longer than the group's timeout throws
// deadline_exceeded naming the replicas that never arrived, and breaks the group: every replica
// waiting, or calling later, throws the same error. `abort(rank, why)` breaks it at once (a
// replica whose step threw), and the others throw `unavailable` naming it. Replicas that call
// different operations, or tensors that do not match across replicas, are invalid_argument
// for all of them.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/collective.hpp>
#include <tapeflow/distribute/detail/collective_tensors.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// Options of an InProcessGroup.
struct InProcessOptions {
  /// How long a replica waits for the others in one operation before the group fails with
  /// deadline_exceeded.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
};

class InProcessCollective;

namespace detail {

enum class CollectiveKind { all_reduce, broadcast, all_gather, barrier };

inline const char* kind_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce:
      return "all_reduce";
    case CollectiveKind::broadcast:
      return "broadcast";
    case CollectiveKind::all_gather:
      return "all_gather";
    default:
      return "barrier";
  }
}

template <class T>
void reduce_into(AnyTensor& out, const std::vector<const AnyTensor*>& in, ReduceOp op) {
  auto* o = static_cast<T*>(out.mutable_raw_data());
  const auto n = static_cast<std::size_t>(out.num_elements());
  const auto* first = static_cast<const T*>(in[0]->raw_data());
  std::copy(first, first + n, o);
  for (std::size_t r = 1; r < in.size(); ++r) {
    const auto* x = static_cast<const T*>(in[r]->raw_data());
    for (std::size_t e = 0; e < n; ++e) {
      o[e] = static_cast<T>(o[e] + x[e]);
    }
  }
  if (op == ReduceOp::mean) {
    const auto count = static_cast<T>(in.size());
    for (std::size_t e = 0; e < n; ++e) {
      o[e] = static_cast<T>(o[e] / count);
    }
  }
}

// An error every replica throws, each its own exception object (exception objects shared across
// threads race in their reference counts).
struct Failure {
  enum class Kind { none, invalid_argument, deadline_exceeded, unavailable } kind = Kind::none;
  std::string message;
  explicit operator bool() const noexcept { return kind != Kind::none; }
  [[noreturn]] void raise() const {
    switch (kind) {
      case Kind::deadline_exceeded:
        throw deadline_exceeded(message);
      case Kind::unavailable:
        throw unavailable(message);
      default:
        throw invalid_argument(message);
    }
  }
};

struct GroupState {
  GroupState(int n, InProcessOptions o)
      : size(n),
        options(o),
        inputs(static_cast<std::size_t>(n)),
        present(static_cast<std::size_t>(n), false) {}

  const int size;
  const InProcessOptions options;
  std::mutex mutex;
  std::condition_variable cv;
  // The operation being gathered or handed out.
  CollectiveKind kind = CollectiveKind::barrier;
  ReduceOp op = ReduceOp::sum;
  int root = 0;
  std::vector<std::span<AnyTensor>> inputs;  // per rank, valid while that replica waits
  std::vector<bool> present;
  int arrived = 0;
  int departed = 0;
  bool handing_out = false;
  std::uint64_t generation = 0;
  std::vector<AnyTensor> results;
  Failure op_error;     // this operation failed for everyone (mismatch)
  Failure group_error;  // the group is broken (timeout, abort): every call throws

  // Called by the last replica to arrive.
  void compute() {
    results.clear();
    const std::size_t count = inputs[0].size();
    for (int r = 1; r < size; ++r) {
      if (inputs[static_cast<std::size_t>(r)].size() != count) {
        throw invalid_argument(std::string(kind_name(kind)) + ": replica " + std::to_string(r) +
                               " passed " +
                               std::to_string(inputs[static_cast<std::size_t>(r)].size()) +
                               " tensors, replica 0 passed " + std::to_string(count));
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      std::vector<const AnyTensor*> column;
      for (int r = 0; r < size; ++r) {
        const AnyTensor& t = inputs[static_cast<std::size_t>(r)][i];
        if (!t.has_value() || t.dtype() != inputs[0][i].dtype() ||
            !(t.shape() == inputs[0][i].shape())) {
          throw invalid_argument(
              std::string(kind_name(kind)) + ": tensor " + std::to_string(i) + " of replica " +
              std::to_string(r) + " is " + std::string(dtype_name(t.dtype())) +
              t.shape().to_string() + ", replica 0's is " +
              std::string(dtype_name(inputs[0][i].dtype())) + inputs[0][i].shape().to_string() +
              (t.has_value() ? "" : " (it holds no value)"));
        }
        column.push_back(&t);
      }
      if (kind == CollectiveKind::broadcast || kind == CollectiveKind::all_gather) {
        for (const AnyTensor* t : column) {
          results.push_back(*t);  // broadcast reads results[root]
        }
        continue;
      }
      AnyTensor out = AnyTensor::uninitialized(column[0]->dtype(), column[0]->shape());
      switch (out.dtype()) {
        case DType::float32:
          reduce_into<float>(out, column, op);
          break;
        case DType::float64:
          reduce_into<double>(out, column, op);
          break;
        case DType::int32:
          reduce_into<std::int32_t>(out, column, op);
          break;
        case DType::int64:
          reduce_into<std::int64_t>(out, column, op);
          break;
        default:
          throw invalid_argument("all_reduce: " + std::string(dtype_name(out.dtype())) +
                                 " tensors cannot be reduced (float, double, int32, int64)");
      }
      results.push_back(std::move(out));
    }
  }

  std::string missing() const {
    std::string names;
    for (int r = 0; r < size; ++r) {
      if (!present[static_cast<std::size_t>(r)]) {
        names += (names.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    return names;
  }

  // The rendezvous; returns the results this replica takes (see the file comment).
  std::vector<AnyTensor> call(int rank, CollectiveKind k, std::span<AnyTensor> tensors,
                              ReduceOp reduce, int from) {
    std::unique_lock lock(mutex);
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    const auto fail = [&](Failure::Kind why, std::string message) {
      group_error = {why, std::move(message)};
      cv.notify_all();
      group_error.raise();
    };
    const auto fail_on_timeout = [&](const std::string& waiting_for) {
      fail(Failure::Kind::deadline_exceeded,
           std::string(kind_name(k)) + ": replica " + std::to_string(rank) + " waited " +
               std::to_string(options.timeout.count()) + " ms for " + waiting_for);
    };
    if (!cv.wait_until(lock, deadline, [&] { return !handing_out || bool(group_error); })) {
      fail_on_timeout("the previous operation to finish");
    }
    if (group_error) {
      group_error.raise();
    }
    if (arrived > 0 && (kind != k || (k == CollectiveKind::all_reduce && op != reduce) ||
                        (k == CollectiveKind::broadcast && root != from))) {
      fail(Failure::Kind::invalid_argument, "replica " + std::to_string(rank) + " called " +
                                                kind_name(k) + " while the others called " +
                                                kind_name(kind) + " (with other arguments)");
    }
    kind = k;
    op = reduce;
    root = from;
    inputs[static_cast<std::size_t>(rank)] = tensors;
    present[static_cast<std::size_t>(rank)] = true;
    if (++arrived == size) {
      try {
        compute();
      } catch (const invalid_argument& e) {
        op_error = {Failure::Kind::invalid_argument, e.what()};
      }
      handing_out = true;
      ++generation;
      cv.notify_all();
    } else {
      const std::uint64_t mine = generation;
      if (!cv.wait_until(lock, deadline, [&] { return generation != mine || bool(group_error); })) {
        fail_on_timeout("replica(s) " + missing() + " to arrive");
      }
      if (group_error) {
        group_error.raise();
      }
    }
    std::vector<AnyTensor> mine;
    if (k == CollectiveKind::broadcast) {
      const std::size_t count = tensors.size();
      for (std::size_t i = 0; i < count && !op_error; ++i) {
        mine.push_back(
            results[i * static_cast<std::size_t>(size) + static_cast<std::size_t>(root)]);
      }
    } else if (!op_error) {
      mine = results;
    }
    const Failure failed = op_error;
    if (++departed == size) {
      arrived = 0;
      departed = 0;
      handing_out = false;
      std::fill(present.begin(), present.end(), false);
      std::fill(inputs.begin(), inputs.end(), std::span<AnyTensor>{});
      results.clear();
      op_error = {};
      cv.notify_all();
    }
    if (failed) {
      failed.raise();
    }
    return mine;
  }
};

}  // namespace detail

/// A group of `num_replicas` replicas that are threads of this process; each thread takes its
/// handle with `replica(rank)`. Copies share the group.
class InProcessGroup {
 public:
  /// A group of `num_replicas` (>= 1) replicas; invalid_argument otherwise.
  explicit InProcessGroup(int num_replicas, InProcessOptions options = {}) {
    if (num_replicas < 1) {
      throw invalid_argument("InProcessGroup: num_replicas must be >= 1, got " +
                             std::to_string(num_replicas));
    }
    state_ = std::make_shared<detail::GroupState>(num_replicas, options);
  }
  /// How many replicas the group has.
  [[nodiscard]] int num_replicas() const noexcept { return state_->size; }
  /// Replica `rank`'s handle (invalid_argument outside 0 .. num_replicas() - 1).
  [[nodiscard]] InProcessCollective replica(int rank) const;
  /// Breaks the group because replica `rank` failed (`why`): every replica waiting in, or
  /// later calling, an operation throws `unavailable` naming it. The first abort wins.
  void abort(int rank, const std::string& why) const {
    std::lock_guard lock(state_->mutex);
    if (!state_->group_error) {
      state_->group_error = {detail::Failure::Kind::unavailable,
                             "replica " + std::to_string(rank) + " failed: " + why};
    }
    state_->cv.notify_all();
  }

 private:
  std::shared_ptr<detail::GroupState> state_;
};

/// One replica's handle on an InProcessGroup; models Collective.
class InProcessCollective {
 public:
  /// This replica's index in the group.
  [[nodiscard]] int rank() const noexcept { return rank_; }
  /// How many replicas the group has.
  [[nodiscard]] int num_replicas() const noexcept { return state_->size; }
  /// Replaces each tensor by its sum (or mean) over the replicas, added in rank order.
  void all_reduce(std::span<AnyTensor> tensors, ReduceOp op) {
    auto out = state_->call(rank_, detail::CollectiveKind::all_reduce, tensors, op, 0);
    std::move(out.begin(), out.end(), tensors.begin());
  }
  /// Replaces each tensor by replica `root`'s (invalid_argument for a root outside the group).
  void broadcast(std::span<AnyTensor> tensors, int root) {
    if (root < 0 || root >= state_->size) {
      throw invalid_argument("broadcast: root " + std::to_string(root) + " is not a replica of " +
                             std::to_string(state_->size));
    }
    auto out = state_->call(rank_, detail::CollectiveKind::broadcast, tensors, ReduceOp::sum, root);
    std::move(out.begin(), out.end(), tensors.begin());
  }
  /// Every replica's `t`, in rank order (they must agree in dtype and shape).
  std::vector<AnyTensor> all_gather(const AnyTensor& t) {
    AnyTensor mine = t;
    return state_->call(rank_, detail::CollectiveKind::all_gather, std::span<AnyTensor>(&mine, 1),
                        ReduceOp::sum, 0);
  }
  /// Returns when every replica has called it.
  void barrier() {
    (void)state_->call(rank_, detail::CollectiveKind::barrier, {}, ReduceOp::sum, 0);
  }

 private:
  friend class InProcessGroup;
  InProcessCollective(std::shared_ptr<detail::GroupState> state, int rank)
      : state_(std::move(state)), rank_(rank) {}
  std::shared_ptr<detail::GroupState> state_;
  int rank_;
};

inline InProcessCollective InProcessGroup::replica(int rank) const {
  if (rank < 0 || rank >= state_->size) {
    throw invalid_argument("InProcessGroup::replica: rank " + std::to_string(rank) +
                           " is not in 0.." + std::to_string(state_->size - 1));
  }
  return InProcessCollective(state_, rank);
}

static_assert(Collective<InProcessCollective>);

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
