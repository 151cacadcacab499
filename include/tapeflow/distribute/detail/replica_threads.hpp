// The threads that run a strategy's replicas 1..n-1, kept from one step to the next.
//
// A thread per replica per step cost more than the MNIST MLP's whole step, and a fresh thread
// starts with empty thread-local caches (tensor blocks, GEMM and convolution scratch), so
// every large buffer was allocated and faulted in again (bench/RESULTS.md). The threads wait
// on an atomic generation counter (a futex after a short spin) between steps.
// IWYU pragma: private, include <tapeflow/distribute.hpp>
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute::detail {

class ReplicaThreads {
 public:
  ReplicaThreads() = default;
  ReplicaThreads(const ReplicaThreads&) = delete;
  ReplicaThreads& operator=(const ReplicaThreads&) = delete;
  ~ReplicaThreads() {
    if (threads_.empty()) {
      return;
    }
    stopping_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    threads_.clear();  // joins
  }

  /// Runs task(0) on the caller and task(1), ..., task(n - 1) on the kept threads, returning
  /// once all have. `task` must not throw. False, having run nothing, while another call is
  /// running (a replica that starts a step of its own): the caller then uses fresh threads.
  bool run(int n, const std::function<void(int)>& task) {
    if (busy_.exchange(true, std::memory_order_acquire)) {
      return false;
    }
    try {
      while (static_cast<int>(threads_.size()) < n - 1) {
        const int r = static_cast<int>(threads_.size()) + 1;
        threads_.emplace_back([this, r, seen = generation_.load()] { serve(r, seen); });
      }
    } catch (...) {  // no thread to be had: the caller's fresh threads fail the same way
      busy_.store(false, std::memory_order_release);
      throw;
    }
    task_ = &task;
    n_ = n;
    remaining_.store(static_cast<int>(threads_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    task(0);
    for (int left = remaining_.load(std::memory_order_acquire); left != 0;
         left = remaining_.load(std::memory_order_acquire)) {
      remaining_.wait(left, std::memory_order_acquire);
    }
    task_ = nullptr;
    busy_.store(false, std::memory_order_release);
    return true;
  }

 private:
  void serve(int r, std::uint64_t seen) {
    for (;;) {
      generation_.wait(seen, std::memory_order_acquire);
      seen = generation_.load(std::memory_order_acquire);
      if (stopping_.load(std::memory_order_relaxed)) {
        return;
      }
      if (r < n_) {
        (*task_)(r);
      }
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        remaining_.notify_one();
      }
    }
  }

  std::atomic<std::uint64_t> generation_{0};  // bumped once per step (and to stop)
  std::atomic<int> remaining_{0};             // threads still inside this step
  std::atomic<bool> busy_{false};
  std::atomic<bool> stopping_{false};
  const std::function<void(int)>* task_ = nullptr;  // written before the bump that publishes it
  int n_ = 0;
  std::vector<std::jthread> threads_;  // last: joined before the members they read go
};

}  // namespace distribute::detail
TAPEFLOW_END_NAMESPACE
