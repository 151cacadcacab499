// IWYU pragma: private, include <tapeflow/data.hpp>
// The threaded engine behind `prefetch`, parallel `map` and parallel `interleave`, with the
// autotuner.
//
// Workers take a run of consecutive input elements (a "chunk") and their sequence numbers under
// one input lock, so sequence order is input order; they apply the stage's function outside any
// lock and file the results (elements, or exceptions naming their element: element_error.hpp)
// under their sequence numbers. The consumer moves every consecutive finished result to a
// private queue in one locked step and returns from that queue without locking; an exception is
// rethrown at the element where it happened.
// Chunks amortise locking over elements that take microseconds (an MNIST image), while a slow
// element (a JPEG) goes alone. At most `buffer` sequence numbers are handed out ahead of what the
// consumer has taken, so at most 2 x buffer finished elements exist at once. Destroying the stage
// sets `stop`, wakes everyone and joins: a worker finishes at most the chunk it is working on.
//
// Note [Autotune]. Every `tune_period` elements the consumer measures
//   c = its own time per element between calls (e.g. the training step), EWMA;
//   p = one worker's time per element (input pull + function), EWMA;
//   w = the share of the period it spent waiting for input;
//   m = the mean element size in bytes.
// chunk = clamp(50 us / p, 1, 64) (for a stage with a user-fixed buffer also <= that buffer).
// Parallelism (autotuned map only) = clamp(ceil(1.25 * p / c), 1, hardware threads): enough
// workers to produce as fast as the consumer takes, following the measured rates up and down.
// Buffer (autotuned stages) starts at parallelism * chunk; when the consumer waited (w > 1%)
// although the workers keep up on average (p / parallelism < c), the waits come from jitter and
// the buffer doubles; when the workers cannot keep up even at full parallelism the stage is
// input-bound and a bigger buffer would only cost memory, so it is not grown. The buffer never
// exceeds memory_budget / (2 m) (two buffers' worth may exist, see above) nor 4096. `stats()`
// reports the choices, the rates and the input-bound fraction (time waited / time iterating).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/detail/element_error.hpp>
#include <tapeflow/data/detail/stopwatch.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data::detail {

inline int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 2 : static_cast<int>(n);
}

struct identity_fn {
  template <class E>
  std::remove_cvref_t<E> operator()(E&& e) const {
    return std::forward<E>(e);
  }
};

struct StageConfig {
  std::string name;
  bool tune_parallelism = false;
  bool tune_buffer = false;
  int parallelism = 1;  // fixed, or initial when tuned
  int max_threads = 1;
  int buffer = 1;  // fixed, or initial when tuned
  bool deterministic = true;
  std::int64_t memory_budget = std::int64_t{256} << 20;
};

template <class Input, class F, class Out>
class ParallelStage {
  using Result = std::variant<Out, std::exception_ptr>;

  struct State {
    explicit State(Input in, F fn, StageConfig c)
        : input(std::move(in)), f(std::move(fn)), cfg(std::move(c)) {
      parallelism = cfg.parallelism;
      buffer = std::max(cfg.buffer, 1);
    }
    Input input;
    F f;
    StageConfig cfg;

    std::mutex input_mutex;  // guards input, next_in, input_done
    std::int64_t next_in = 0;
    bool input_done = false;

    std::mutex m;  // guards everything below
    std::condition_variable worker_cv, consumer_cv;
    // finished results: in order, slot i holds sequence number consumed + i (deterministic);
    // in completion order (not deterministic)
    std::deque<std::optional<Result>> ready;
    std::int64_t reserved = 0;  // sequence numbers handed out (taken or about to be)
    std::int64_t consumed = 0;  // results moved to the consumer
    std::int64_t end_seq = -1;  // sequence number at which the input ended
    bool stop = false;
    bool consumer_waiting = false;
    int waiting_workers = 0;
    int parallelism = 1;
    int buffer = 1;
    int chunk = 1;
    double producer_time = 0;  // EWMA seconds per element per worker
    double bytes_per_element = 0;
  };

 public:
  ParallelStage(Input input, F f, StageConfig cfg)
      : s_(std::make_unique<State>(std::move(input), std::move(f), std::move(cfg))) {}
  ParallelStage(ParallelStage&&) noexcept = default;
  ParallelStage& operator=(ParallelStage&&) = delete;
  ~ParallelStage() { shutdown(); }

  std::optional<Out> next() {
    if (threads_.empty()) {
      start();
    }
    const auto now = clock::now();
    if (!started_timing_) {
      started_timing_ = true;
      first_call_ = period_start_ = now;
    } else {
      const double c = std::chrono::duration<double>(now - last_return_).count();
      consumer_time_ = consumer_time_ == 0 ? c : 0.9 * consumer_time_ + 0.1 * c;
    }
    if (local_.empty()) {
      refill();
    }
    last_return_ = clock::now();
    if (local_.empty()) {
      return std::nullopt;  // end of epoch
    }
    Result r = std::move(local_.front());
    local_.pop_front();
    ++delivered_;
    if (++period_count_ >= tune_period) {
      tune();
    }
    if (auto* ep = std::get_if<std::exception_ptr>(&r)) {
      std::rethrow_exception(*ep);
    }
    return std::move(std::get<Out>(r));
  }

  /// Saves the position: quiesces the workers (no new input is pulled while saving), waits for
  /// the elements in flight, then records every finished-but-undelivered element (element_traits
  /// encoding) and the input's own state, which is exactly that many elements ahead.
  void save_state(IteratorState& st, const std::string& p) const {
    State& s = *s_;
    std::lock_guard in(s.input_mutex);
    std::unique_lock lk(s.m);
    const auto filed = [&] {
      std::int64_t n = 0;
      for (const auto& r : s.ready) {
        n += r.has_value() ? 1 : 0;
      }
      return n;
    };
    s.consumer_waiting = true;
    s.consumer_cv.wait(lk, [&] { return filed() == s.next_in - s.consumed; });
    s.consumer_waiting = false;
    std::string buf;
    std::uint64_t n = 0;
    const auto put = [&](const Result& r) {
      if (r.index() != 0) {
        throw unimplemented("tf::data::" + s.cfg.name +
                            ": cannot save an iterator holding an undelivered error");
      }
      element_traits<Out>::encode(std::get<0>(r), buf);
      ++n;
    };
    for (const auto& r : local_) {
      put(r);
    }
    for (const auto& r : s.ready) {
      put(*r);
    }
    std::string head(sizeof n, '\0');
    std::memcpy(head.data(), &n, sizeof n);
    st.put(p + s.cfg.name + "/buffer", head + buf);
    save_state_of(s.input, st, p + s.cfg.name + "/");
  }
  /// Restores a saved position; only on an iterator that has not started (no next() yet).
  void restore_state(const IteratorState& st, const std::string& p) {
    if (!threads_.empty()) {
      throw failed_precondition("tf::data::" + s_->cfg.name +
                                ": restore_state needs a fresh iterator (before next())");
    }
    std::string_view in = st.get(p + s_->cfg.name + "/buffer");
    std::uint64_t n = 0;
    get_raw(in, &n, sizeof n);
    local_.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      local_.emplace_back(std::in_place_index<0>, element_traits<Out>::decode(in));
    }
    restore_state_of(s_->input, st, p + s_->cfg.name + "/");
  }

  void collect_stats(std::vector<StageStats>& out) const {
    {
      State& s = *s_;
      std::lock_guard lk(s.m);
      StageStats st;
      st.stage = s.cfg.name;
      st.autotuned = s.cfg.tune_buffer || s.cfg.tune_parallelism;
      st.parallelism = s.parallelism;
      st.buffer_size = s.buffer;
      st.memory_budget = s.cfg.memory_budget;
      st.producer_rate = s.producer_time > 0 ? 1.0 / s.producer_time : 0;
      st.consumer_rate = consumer_time_ > 0 ? 1.0 / consumer_time_ : 0;
      const double total = started_timing_ ? seconds_since(first_call_) : 0;
      st.input_bound_fraction = total > 0 ? std::min(1.0, total_wait_ / total) : 0;
      st.elements = delivered_;
      out.push_back(st);
    }
    std::lock_guard in(s_->input_mutex);
    collect_stats_of(s_->input, out);
  }

 private:
  static constexpr std::int64_t tune_period = 16;

  // Moves the finished results the consumer may take next into local_, waiting if none.
  void refill() {
    State& s = *s_;
    std::unique_lock lk(s.m);
    const auto has_result = [&] { return !s.ready.empty() && s.ready.front().has_value(); };
    const auto ended = [&] { return s.end_seq >= 0 && s.consumed >= s.end_seq; };
    if (!has_result() && !ended()) {
      const auto t0 = clock::now();
      s.consumer_waiting = true;
      s.consumer_cv.wait(lk, [&] { return has_result() || ended(); });
      s.consumer_waiting = false;
      const double w = seconds_since(t0);
      total_wait_ += w;
      period_wait_ += w;
    }
    while (!s.ready.empty() && s.ready.front().has_value()) {
      local_.push_back(std::move(*s.ready.front()));
      s.ready.pop_front();
      ++s.consumed;
    }
    // wake workers only when one waits and a whole chunk fits (fewer context switches)
    const bool wake = s.waiting_workers > 0 && room(s) >= std::min(s.chunk, s.buffer);
    lk.unlock();
    if (wake) {
      s.worker_cv.notify_all();
    }
  }

  static std::int64_t room(const State& s) { return s.buffer - (s.reserved - s.consumed); }

  void tune() {
    State& s = *s_;
    const double period = seconds_since(period_start_);
    const double w = period > 0 ? period_wait_ / period : 0;
    const double c = consumer_time_;
    {
      std::lock_guard lk(s.m);
      const double p = s.producer_time;
      if (p > 0) {
        int chunk = static_cast<int>(std::clamp(50e-6 / p, 1.0, 64.0));
        if (!s.cfg.tune_buffer && s.cfg.name == "prefetch") {
          chunk = std::min(chunk, s.buffer);  // the user fixed the buffer
        }
        s.chunk = chunk;
      }
      if (s.cfg.tune_parallelism && p > 0) {
        const double want = c > 0 ? std::ceil(1.25 * p / c) : s.cfg.max_threads;
        s.parallelism = std::clamp(static_cast<int>(want), 1, s.cfg.max_threads);
      }
      const double per_elem = std::max(s.bytes_per_element, 1.0);
      const int mem_cap = static_cast<int>(
          std::clamp(static_cast<double>(s.cfg.memory_budget) / (2 * per_elem), 1.0, 4096.0));
      if (s.cfg.tune_buffer) {
        int b = std::max(s.buffer, std::max(2, s.parallelism * s.chunk));
        const bool keeps_up = c <= 0 || p / s.parallelism < c;
        if (w > 0.01 && keeps_up) {
          b *= 2;
        }
        s.buffer = std::min(b, mem_cap);
      } else if (s.cfg.name != "prefetch") {
        // a fixed num_parallel_calls: room for every worker's chunk, within the budget
        s.buffer = std::min(std::max(s.buffer, 2 * s.parallelism * s.chunk),
                            std::max(mem_cap, s.parallelism));
      }
    }
    s.worker_cv.notify_all();
    period_count_ = 0;
    period_wait_ = 0;
    period_start_ = clock::now();
  }

  void start() {
    State* s = s_.get();
    const int n = s->cfg.tune_parallelism ? s->cfg.max_threads : std::max(s->parallelism, 1);
    threads_.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([s, i] { work(*s, i); });
    }
  }

  static void work(State& s, int index) {
    std::vector<std::optional<typename Input::element_type>> inputs;
    std::vector<Result> results;
    for (;;) {
      std::int64_t want = 0;
      {
        std::unique_lock lk(s.m);
        ++s.waiting_workers;
        s.worker_cv.wait(lk, [&] {
          return s.stop || s.end_seq >= 0 ||
                 (index < s.parallelism && room(s) >= std::min(s.chunk, s.buffer));
        });
        --s.waiting_workers;
        if (s.stop || s.end_seq >= 0) {
          return;
        }
        want = std::min<std::int64_t>(s.chunk, s.buffer - (s.reserved - s.consumed));
        s.reserved += want;
      }
      const auto t0 = clock::now();
      inputs.clear();
      results.clear();
      std::int64_t base = 0;
      bool saw_end = false;
      {
        std::lock_guard ilk(s.input_mutex);
        base = s.next_in;
        while (!s.input_done && static_cast<std::int64_t>(results.size()) < want) {
          try {
            auto in = s.input.next();
            if (!in) {
              s.input_done = true;
              saw_end = true;
              break;
            }
            inputs.push_back(std::move(in));
            results.emplace_back(std::in_place_index<1>, nullptr);  // placeholder: run f below
          } catch (...) {
            inputs.emplace_back();  // keeps indices aligned
            results.emplace_back(std::current_exception());
          }
        }
        s.next_in += static_cast<std::int64_t>(results.size());
      }
      double bytes = 0;
      for (std::size_t i = 0; i < results.size(); ++i) {
        auto* ep = std::get_if<std::exception_ptr>(&results[i]);
        if (ep != nullptr && *ep != nullptr) {
          continue;  // the input itself failed at this element
        }
        try {
          results[i].template emplace<0>(s.f(std::move(*inputs[i])));
          bytes += static_cast<double>(element_byte_size(std::get<0>(results[i])));
        } catch (...) {
          results[i] = at_element(std::current_exception(), s.cfg.name, base + i);
        }
      }
      const auto got = static_cast<std::int64_t>(results.size());
      const double dt = seconds_since(t0);
      bool wake = false;
      {
        std::lock_guard lk(s.m);
        if (got > 0) {
          const double per = dt / static_cast<double>(got);
          s.producer_time = s.producer_time == 0 ? per : 0.9 * s.producer_time + 0.1 * per;
          const double b = bytes / static_cast<double>(got);
          s.bytes_per_element = s.bytes_per_element == 0 ? b : 0.9 * s.bytes_per_element + 0.1 * b;
        }
        for (std::int64_t i = 0; i < got; ++i) {
          auto& r = results[static_cast<std::size_t>(i)];
          if (s.cfg.deterministic) {
            const auto slot = static_cast<std::size_t>(base + i - s.consumed);
            if (s.ready.size() <= slot) {
              s.ready.resize(slot + 1);
            }
            s.ready[slot].emplace(std::move(r));
          } else {
            s.ready.emplace_back(std::move(r));
          }
        }
        s.reserved -= want - got;  // hand back unused reservations
        if (saw_end) {
          s.end_seq = base + got;
        } else if (got == 0 && s.end_seq < 0) {
          s.end_seq = base;  // another worker saw the end and is about to record it
        }
        wake = s.consumer_waiting || saw_end;
      }
      if (wake) {
        s.consumer_cv.notify_all();
      }
      if (saw_end) {
        s.worker_cv.notify_all();
      }
    }
  }

  void shutdown() noexcept {
    if (!s_) {
      return;
    }
    {
      std::lock_guard lk(s_->m);
      s_->stop = true;
    }
    s_->worker_cv.notify_all();
    for (auto& t : threads_) {
      if (t.joinable()) {
        t.join();
      }
    }
    threads_.clear();
  }

  std::unique_ptr<State> s_;
  std::vector<std::thread> threads_;
  // consumer-side (only the consumer's thread touches these)
  std::deque<Result> local_;
  bool started_timing_ = false;
  clock::time_point first_call_{}, period_start_{}, last_return_{};
  double consumer_time_ = 0;
  double total_wait_ = 0, period_wait_ = 0;
  std::int64_t period_count_ = 0;
  std::int64_t delivered_ = 0;
};

}  // namespace data::detail
TAPEFLOW_END_NAMESPACE
