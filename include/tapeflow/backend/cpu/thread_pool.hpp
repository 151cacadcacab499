// The CPU backend's intra-op thread pool.
//
// Why our own pool instead of Eigen's ThreadPoolDevice: headers that only move bytes (data
// pipelines, io) must not pull in Eigen, and the ops need one blocking `parallel_for` whose
// caller takes a share of the work, so a 2-core machine runs 2 chunks, not 1 + a wake-up.
//
// Why threads spin before they sleep: a training step is dozens of parallel_for calls a few
// microseconds apart. A worker that sleeps between them costs a futex wake and a context switch
// per call (~12% of an MLP step under perf, and it kept products under ~11M multiply-adds on
// one thread), so workers and the waiting caller spin a while before they block (MAINTAINERS.md,
// Note [CPU thread pool]). A spinner that finds itself on its counterpart's CPU blocks at once:
// it would only take half that CPU from the thread it waits for.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#if defined(__linux__)
#include <sched.h>
#endif
#include <vector>

#include <tapeflow/backend/cpu/thread_budget.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cpu {

/// A fixed set of worker threads running one `parallel_for` at a time.
class ThreadPool {
 public:
  /// Starts `num_threads - 1` workers (the caller of parallel_for is the last thread);
  /// values below 1 count as 1.
  explicit ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
    for (int i = 1; i < num_threads_; ++i) {
      workers_.emplace_back([this, i] { worker_loop(i); });
    }
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_.store(true, std::memory_order_relaxed);
    }
    wake_.notify_all();
    for (auto& worker : workers_) {
      worker.join();
    }
  }

  /// Threads a parallel_for called here can use, the caller's included (at least 1): the
  /// pool's, or fewer where the calling thread's budget (its op's device's share) says so.
  [[nodiscard]] int num_threads() const noexcept {
    int const budget = thread_budget();
    return budget > 0 && budget < num_threads_ ? budget : num_threads_;
  }
  /// Threads the pool has, the caller's included.
  [[nodiscard]] int pool_threads() const noexcept { return num_threads_; }

  /// Calls `body(begin, end)` on disjoint chunks covering [0, n), at most one chunk per thread,
  /// each at least `min_chunk` long. Blocks until all chunks finished; rethrows the first
  /// exception a chunk threw. Nested calls (from inside a chunk) run inline.
  template <class Body>
  void parallel_for(std::int64_t n, std::int64_t min_chunk, Body&& body) {
    if (n <= 0) {
      return;
    }
    std::int64_t const grain = std::max<std::int64_t>(min_chunk, 1);
    std::int64_t const chunks = std::min<std::int64_t>(num_threads(), (n + grain - 1) / grain);
    if (chunks <= 1 || inside_pool_ || workers_.empty()) {
      body(std::int64_t{0}, n);
      return;
    }
    // A plain function pointer over the caller's body (no std::function): no allocation, and
    // all but this trampoline is compiled once, not once per call site (compile time).
    auto* body_ptr = &body;
    run_chunks([](void* ctx, std::int64_t b,
                  std::int64_t e) { (*static_cast<decltype(body_ptr)>(ctx))(b, e); },
               const_cast<void*>(static_cast<const void*>(body_ptr)), n, chunks);
  }

  /// The process-wide pool, sized to the machine (`std::thread::hardware_concurrency`).
  static ThreadPool& global() {
    static ThreadPool pool(global_size());
    return pool;
  }

  /// Threads the global pool is started with, asked for by
  /// tf::config::threading::set_intra_op_parallelism_threads (0: one per hardware thread).
  /// Read once, when the pool starts; after that tf::config refuses changes.
  static std::atomic<int>& requested_global_threads() noexcept {
    static std::atomic<int> threads{0};
    return threads;
  }
  /// Threads the global pool has or will have when it starts (without starting it).
  static int configured_threads() noexcept {
    int const requested = requested_global_threads().load();
    return requested > 0 ? requested
                         : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  /// Whether the global pool has started (tf::config counts that as the runtime initialized).
  static std::atomic<bool>& global_started() noexcept {
    static std::atomic<bool> started{false};
    return started;
  }

 private:
  static int global_size() noexcept {
    global_started().store(true);
    return configured_threads();
  }

  // How long an idle thread spins before it blocks: longer than the gap between two ops of a
  // step, short enough that an idle pool leaves its cores within a blink.
  static constexpr auto spin_period = std::chrono::microseconds(50);

  static void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  // The CPU the calling thread runs on, or -1 where that is unknown.
  static int current_cpu() noexcept {
#if defined(__linux__)
    return sched_getcpu();
#else
    return -1;
#endif
  }

  // Spins on `ready` for up to spin_period, then returns whether it became true. Yields between
  // rounds: where other processes want the core (tests run side by side), a spinner must not
  // hold it for a whole time slice. Gives up at once on the CPU of the thread it waits for
  // (`mine` records where the spinner runs, `theirs` where that thread last ran): the scheduler
  // keeps two busy threads together for milliseconds, and blocking lets the wake-up that
  // follows pick an idle CPU.
  template <class Ready>
  static bool spin_until(Ready&& ready, std::atomic<int>& mine, const std::atomic<int>& theirs) {
    auto const deadline = std::chrono::steady_clock::now() + spin_period;
    for (;;) {
      int const cpu = current_cpu();
      mine.store(cpu, std::memory_order_relaxed);
      if (cpu >= 0 && cpu == theirs.load(std::memory_order_relaxed)) {
        return ready();
      }
      for (int i = 0; i < 64; ++i) {
        if (ready()) {
          return true;
        }
        cpu_relax();
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return ready();
      }
      std::this_thread::yield();
    }
  }

  // The caller's wait for its job: spin, then block until a leaving worker notifies.
  template <class Ready>
  void await(Ready&& ready) {
    if (spin_until(ready, caller_cpu_, worker_cpu_)) {
      return;
    }
    std::unique_lock lock(mutex_);
    ++caller_waiting_;
    done_.wait(lock, ready);
    --caller_waiting_;
  }

  // One parallel_for call. It lives on the caller's stack; workers reach it only while
  // registered in `workers_inside`, and the caller waits for that count to drop to zero after
  // unpublishing it.
  struct Job {
    using Call = void (*)(void*, std::int64_t, std::int64_t);
    Job(Call c, void* ctx, std::int64_t n, std::int64_t k)
        : call(c), context(ctx), total(n), chunks(k) {}
    void task(std::int64_t b, std::int64_t e) const { call(context, b, e); }
    Call call;
    void* context;
    std::int64_t total;
    std::int64_t chunks;
    std::atomic<std::int64_t> next{0};
    std::atomic<std::int64_t> finished{0};
    std::atomic<int> workers_inside{0};  // incremented under the pool's mutex_ only
    std::exception_ptr error;            // guarded by the pool's mutex_

    void work(std::mutex& mutex) {
      std::int64_t completed = 0;
      std::exception_ptr failure;
      for (std::int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
        const bool was_inside = inside_pool_;
        inside_pool_ = true;
        try {
          task(total * c / chunks, total * (c + 1) / chunks);
        } catch (...) {
          if (!failure) {
            failure = std::current_exception();
          }
        }
        inside_pool_ = was_inside;
        ++completed;
      }
      if (failure) {
        std::lock_guard lock(mutex);
        if (!error) {
          error = failure;
        }
      }
      finished.fetch_add(completed, std::memory_order_release);
    }
  };

  // The part of parallel_for that does not depend on the body: publish the job, take a share,
  // wait for the workers, rethrow a chunk's exception.
  TAPEFLOW_NOINLINE void run_chunks(void (*call)(void*, std::int64_t, std::int64_t), void* context,
                                    std::int64_t n, std::int64_t chunks) {
    std::lock_guard run_lock(run_mutex_);  // one parallel_for at a time across caller threads
    Job job(call, context, n, chunks);
    bool any_sleeping = false;
    {
      std::lock_guard lock(mutex_);
      current_ = &job;
      caller_cpu_.store(current_cpu(), std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      any_sleeping = sleepers_ > 0;
    }
    if (any_sleeping) {
      wake_.notify_all();
    }
    job.work(mutex_);
    await([&] { return job.finished.load(std::memory_order_acquire) == job.chunks; });
    {
      // No worker can enter the job once it is unpublished; those inside are leaving it.
      std::lock_guard lock(mutex_);
      current_ = nullptr;
    }
    await([&] { return job.workers_inside.load(std::memory_order_acquire) == 0; });
    if (job.error) {
      std::rethrow_exception(job.error);
    }
  }

  void worker_loop(int /*index*/) {
    std::uint64_t seen = 0;
    for (;;) {
      spin_until(
          [&] {
            return generation_.load(std::memory_order_acquire) != seen ||
                   stopping_.load(std::memory_order_relaxed);
          },
          worker_cpu_, caller_cpu_);
      Job* job = nullptr;
      {
        std::unique_lock lock(mutex_);
        ++sleepers_;
        wake_.wait(lock, [&] {
          return stopping_.load(std::memory_order_relaxed) ||
                 generation_.load(std::memory_order_relaxed) != seen;
        });
        --sleepers_;
        if (stopping_.load(std::memory_order_relaxed)) {
          return;
        }
        seen = generation_.load(std::memory_order_relaxed);
        job = current_;
        if (job == nullptr) {
          continue;
        }
        job->workers_inside.fetch_add(1, std::memory_order_relaxed);
      }
      worker_cpu_.store(current_cpu(), std::memory_order_relaxed);
      job->work(mutex_);
      // The last touch of the job: after this the caller may return and free it.
      job->workers_inside.fetch_sub(1, std::memory_order_release);
      std::lock_guard lock(mutex_);
      if (caller_waiting_ > 0) {
        done_.notify_all();
      }
    }
  }

  static inline thread_local bool inside_pool_ = false;

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::atomic<bool> stopping_{false};         // written under mutex_
  std::atomic<std::uint64_t> generation_{0};  // written under mutex_, spun on without it
  std::atomic<int> caller_cpu_{-1};           // where the last caller ran (spinners compare)
  std::atomic<int> worker_cpu_{-1};           // where a worker last ran
  int sleepers_ = 0;                          // guarded by mutex_
  int caller_waiting_ = 0;                    // guarded by mutex_
  Job* current_ = nullptr;                    // guarded by mutex_
};

/// Runs `body(begin, end)` over [0, n) on the global pool (see ThreadPool::parallel_for).
template <class Body>
void parallel_for(std::int64_t n, std::int64_t min_chunk, Body&& body) {
  ThreadPool::global().parallel_for(n, min_chunk, std::forward<Body>(body));
}

}  // namespace backend::cpu
TAPEFLOW_END_NAMESPACE
