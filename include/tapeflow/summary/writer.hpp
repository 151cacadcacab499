// tf::summary::SummaryWriter: an event file written on a background thread
// (TensorFlow: `tf.summary.create_file_writer`, `writer.as_default()`).
//
// Note [Summary writer]: summary calls on the training thread only stamp the wall time and
// append a small item to a queue under a mutex (no encoding, no I/O, no allocation for short
// tags); a background thread encodes the items as Event records and writes them. It is woken
// when `max_queue` items are pending, on `flush()`/`close()`, and every `flush_millis`, which
// are also TensorFlow's flush points. The default writer and the default step are per thread,
// as in TensorFlow; one writer may be used from several threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/summary/detail/encode.hpp>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace summary {

/// Options of create_file_writer (TensorFlow's keyword arguments).
struct WriterOptions {
  /// Flush to disk when more than this many events are pending.
  int max_queue = 10;
  /// Flush at least this often (milliseconds).
  int flush_millis = 120000;
  /// Appended to the file name; a '.' is inserted if missing.
  std::string filename_suffix = ".v2";
};

namespace detail {

/// One queued summary (Note [Summary writer]).
struct Item {
  enum class Kind : std::uint8_t { scalar, value, event };
  Kind kind = Kind::scalar;
  float scalar = 0.0f;
  std::int64_t step = 0;
  double wall_time = 0.0;
  std::string tag;    // scalar: the tag
  std::string bytes;  // value: a serialized Summary.Value; event: a serialized Event
};

/// Seconds since the epoch with microsecond resolution, as TensorFlow stamps events.
inline double wall_time_now() noexcept {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return static_cast<double>(us) / 1e6;
}

inline std::string host_name() {
#if defined(__unix__) || defined(__APPLE__)
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) == 0 && buf[0] != '\0') {
    return buf;
  }
#endif
  return "localhost";
}

inline long process_id() noexcept {
#if defined(__unix__) || defined(__APPLE__)
  return static_cast<long>(getpid());
#else
  return 0;
#endif
}

/// `events.out.tfevents.<%010d seconds>.<host>.<pid>.<n><suffix>` (docs/formats.md 6.1).
inline std::string event_file_name(std::int64_t seconds, std::string suffix) {
  static std::atomic<int> counter{0};
  if (!suffix.empty() && suffix.front() != '.') {
    suffix.insert(0, ".");
  }
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "%010lld", static_cast<long long>(seconds));
  return "events.out.tfevents." + std::string(stamp) + "." + host_name() + "." +
         std::to_string(process_id()) + "." + std::to_string(counter.fetch_add(1)) + suffix;
}

/// The shared state of a writer: its file, queue and background thread.
class WriterState {
 public:
  WriterState(std::filesystem::path logdir, WriterOptions options)
      : logdir_(std::move(logdir)), options_(std::move(options)) {
    if (logdir_.empty()) {
      throw invalid_argument("tf::summary::create_file_writer: logdir is empty");
    }
    if (options_.max_queue < 0 || options_.flush_millis <= 0) {
      throw invalid_argument(
          "tf::summary::create_file_writer: max_queue must be >= 0 and flush_millis > 0 (got " +
          std::to_string(options_.max_queue) + ", " + std::to_string(options_.flush_millis) + ")");
    }
    std::error_code ec;
    std::filesystem::create_directories(logdir_, ec);
    if (ec) {
      throw not_found("tf::summary::create_file_writer: cannot create logdir '" + logdir_.string() +
                      "': " + ec.message());
    }
    const double now = wall_time_now();
    const auto seconds = static_cast<std::int64_t>(now);
    path_ = logdir_ / event_file_name(seconds, options_.filename_suffix);
    file_ = std::fopen(path_.string().c_str(), "wb");
    if (file_ == nullptr) {
      throw not_found("tf::summary::create_file_writer: cannot open '" + path_.string() +
                      "' for writing: " + std::strerror(errno));
    }
    // The version record first, with whole seconds as TensorFlow's writer stamps it; written
    // at once so a reader sees a valid (empty) run immediately.
    std::string record;
    append_record(record, version_event(static_cast<double>(seconds)));
    write_out(record);
    flush_file();
    thread_ = std::thread([this] { loop(); });
  }
  WriterState(const WriterState&) = delete;
  WriterState& operator=(const WriterState&) = delete;
  ~WriterState() {
    try {
      close();
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
  }

  /// Queues an item; called on the training thread (Note [Summary writer]).
  void push(Item&& item) {
    bool wake = false;
    {
      std::unique_lock lock(mutex_);
      admit(lock);
      pending_.push_back(std::move(item));
      wake = pending_.size() == static_cast<std::size_t>(options_.max_queue) + 1;
    }
    if (wake) {
      cv_.notify_one();
    }
  }
  /// Queues a scalar without building an Item on the caller's side.
  void push_scalar(std::string_view tag, float value, std::int64_t step) {
    const double wall_time = wall_time_now();
    bool wake = false;
    {
      std::unique_lock lock(mutex_);
      admit(lock);
      Item& item = pending_.emplace_back();
      item.kind = Item::Kind::scalar;
      item.scalar = value;
      item.step = step;
      item.wall_time = wall_time;
      item.tag.assign(tag);
      wake = pending_.size() == static_cast<std::size_t>(options_.max_queue) + 1;
    }
    if (wake) {
      cv_.notify_one();
    }
  }

  /// Most items queued before a summary call waits for the writer thread: a bound on memory
  /// when summaries come faster than the disk takes them.
  static constexpr std::size_t max_pending = std::size_t{1} << 16;

  /// Writes everything queued so far to disk; rethrows a background write error.
  void flush() {
    std::unique_lock lock(mutex_);
    if (closed_) {
      return;
    }
    const std::uint64_t ticket = ++flush_requested_;
    cv_.notify_one();
    done_cv_.wait(lock, [&] { return flushed_ >= ticket || stopped_; });
    rethrow_locked();
  }

  /// Flushes, stops the thread and closes the file. Idempotent.
  void close() {
    {
      std::lock_guard lock(mutex_);
      if (closed_) {
        rethrow_locked();
        return;
      }
      closed_ = true;
      stop_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) {
      thread_.join();
    }
    if (file_ != nullptr) {
      std::fclose(file_);
      file_ = nullptr;
    }
    std::lock_guard lock(mutex_);
    rethrow_locked();
  }

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  [[nodiscard]] const std::filesystem::path& logdir() const noexcept { return logdir_; }
  [[nodiscard]] bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }

 private:
  void loop() {
    std::vector<Item> batch;
    std::string buffer;
    std::string value;
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait_for(lock, std::chrono::milliseconds(options_.flush_millis), [&] {
        return stop_ || flush_requested_ > flushed_ ||
               pending_.size() > static_cast<std::size_t>(options_.max_queue);
      });
      const std::uint64_t ticket = flush_requested_;
      const bool stopping = stop_;
      batch.swap(pending_);
      lock.unlock();
      buffer.clear();
      for (const Item& item : batch) {
        switch (item.kind) {
          case Item::Kind::scalar:
            value.clear();
            append_scalar_value(value, item.tag, item.scalar);
            append_record(buffer, summary_event(item.wall_time, item.step, value));
            break;
          case Item::Kind::value:
            append_record(buffer, summary_event(item.wall_time, item.step, item.bytes));
            break;
          case Item::Kind::event:
            append_record(buffer, item.bytes);
            break;
        }
      }
      batch.clear();
      std::string failure;
      try {
        write_out(buffer);
        flush_file();
      } catch (const std::exception& e) {
        failure = e.what();
      }
      lock.lock();
      if (!failure.empty() && error_.empty()) {
        error_ = failure;
      }
      flushed_ = ticket;
      done_cv_.notify_all();
      if (stopping && pending_.empty()) {
        stopped_ = true;
        done_cv_.notify_all();
        return;
      }
    }
  }

  // Throws on a closed writer; waits while the queue is full (backpressure).
  void admit(std::unique_lock<std::mutex>& lock) {
    if (TAPEFLOW_UNLIKELY(pending_.size() >= max_pending)) {
      cv_.notify_one();
      done_cv_.wait(lock, [&] { return pending_.size() < max_pending || stopped_; });
    }
    if (closed_) {
      throw failed_precondition("tf::summary: the writer for '" + path_.string() + "' is closed");
    }
  }
  void write_out(const std::string& bytes) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
      throw data_loss("tf::summary: writing '" + path_.string() +
                      "' failed: " + std::strerror(errno));
    }
  }
  void flush_file() {
    if (std::fflush(file_) != 0) {
      throw data_loss("tf::summary: flushing '" + path_.string() +
                      "' failed: " + std::strerror(errno));
    }
  }
  void rethrow_locked() {
    if (!error_.empty()) {
      throw data_loss(error_);
    }
  }

  std::filesystem::path logdir_;
  std::filesystem::path path_;
  WriterOptions options_;
  std::FILE* file_ = nullptr;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable done_cv_;
  std::vector<Item> pending_;
  std::uint64_t flush_requested_ = 0;
  std::uint64_t flushed_ = 0;
  bool stop_ = false;
  bool stopped_ = false;
  bool closed_ = false;
  std::string error_;
  std::thread thread_;
};

/// This thread's default writer and step (TensorFlow keeps both per thread).
struct ThreadDefaults {
  std::shared_ptr<WriterState> writer;
  std::optional<std::int64_t> step;
};
inline ThreadDefaults& thread_defaults() noexcept {
  thread_local ThreadDefaults defaults;
  return defaults;
}

/// The step to use: the given one, else the default step; throws if neither is set.
inline std::int64_t resolve_step(std::optional<std::int64_t> step, std::string_view what) {
  if (step) {
    return *step;
  }
  if (auto& d = thread_defaults().step) {
    return *d;
  }
  throw invalid_argument("tf::summary::" + std::string(what) +
                         ": no step given and no default step set (pass a step, or call "
                         "tf::summary::experimental::set_step, or use writer.as_default(step))");
}

}  // namespace detail

/// Restores the previous default writer (and step) when it dies; returned by as_default().
class DefaultWriterScope {
 public:
  DefaultWriterScope(const DefaultWriterScope&) = delete;
  DefaultWriterScope& operator=(const DefaultWriterScope&) = delete;
  /// Takes over `other`'s duty to restore the previous default; `other` then restores nothing.
  DefaultWriterScope(DefaultWriterScope&& other) noexcept
      : saved_(std::move(other.saved_)), active_(std::exchange(other.active_, false)) {}
  DefaultWriterScope& operator=(DefaultWriterScope&&) = delete;
  ~DefaultWriterScope() {
    if (active_) {
      detail::thread_defaults() = std::move(saved_);
    }
  }

 private:
  friend class SummaryWriter;
  explicit DefaultWriterScope(detail::ThreadDefaults saved) : saved_(std::move(saved)) {}
  detail::ThreadDefaults saved_;
  bool active_ = true;
};

/// A handle to an event file writer (TensorFlow: `tf.summary.SummaryWriter`). Copies share
/// the writer; the file is closed by close() or when the last handle dies.
///
///     auto writer = tf::summary::create_file_writer("./tensorboard");
///     { auto scope = writer.as_default(); tf::summary::scalar("loss", loss, step); }
class SummaryWriter {
 public:
  /// A no-op writer (TensorFlow: `tf.summary.create_noop_writer`): summaries under it are
  /// dropped and return false.
  SummaryWriter() = default;

  /// Makes this the thread's default writer (and `step` the default step, if given) until
  /// the returned scope dies; nested scopes restore the previous default.
  [[nodiscard]] DefaultWriterScope as_default(std::optional<std::int64_t> step = {}) const {
    auto& defaults = detail::thread_defaults();
    DefaultWriterScope scope(defaults);
    defaults.writer = state_;
    if (step) {
      defaults.step = step;
    }
    return scope;
  }
  /// Makes this the thread's default writer for good (TensorFlow: `set_as_default`).
  void set_as_default(std::optional<std::int64_t> step = {}) const {
    auto& defaults = detail::thread_defaults();
    defaults.writer = state_;
    if (step) {
      defaults.step = step;
    }
  }
  /// Writes pending events to disk.
  void flush() const {
    if (state_) {
      state_->flush();
    }
  }
  /// Flushes and closes the file; later summaries through this writer throw
  /// failed_precondition.
  void close() const {
    if (state_) {
      state_->close();
    }
  }
  /// The event file's path (empty for a no-op writer).
  [[nodiscard]] std::filesystem::path path() const { return state_ ? state_->path() : ""; }
  /// The directory given to create_file_writer (empty for a no-op writer).
  [[nodiscard]] std::filesystem::path logdir() const { return state_ ? state_->logdir() : ""; }
  /// Whether this is a no-op writer (default-constructed or create_noop_writer()).
  [[nodiscard]] bool is_noop() const noexcept { return state_ == nullptr; }

  /// Internal: the shared state (summary ops write through it).
  [[nodiscard]] const std::shared_ptr<detail::WriterState>& state() const noexcept {
    return state_;
  }

 private:
  friend SummaryWriter create_file_writer(const std::filesystem::path&, WriterOptions);
  explicit SummaryWriter(std::shared_ptr<detail::WriterState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::WriterState> state_;
};

/// Creates `logdir` if needed and a new event file in it (TensorFlow:
/// `tf.summary.create_file_writer(logdir, max_queue, flush_millis, filename_suffix)`).
inline SummaryWriter create_file_writer(const std::filesystem::path& logdir,
                                        WriterOptions options = {}) {
  return SummaryWriter(std::make_shared<detail::WriterState>(logdir, std::move(options)));
}

/// A writer that drops everything (TensorFlow: `tf.summary.create_noop_writer`).
inline SummaryWriter create_noop_writer() { return SummaryWriter(); }

/// Flushes this thread's default writer (TensorFlow: `tf.summary.flush()`).
inline void flush() {
  if (auto& w = detail::thread_defaults().writer) {
    w->flush();
  }
}

namespace experimental {
/// Sets this thread's default step, used when a summary call passes none.
inline void set_step(std::optional<std::int64_t> step) { detail::thread_defaults().step = step; }
/// This thread's default step, if set.
[[nodiscard]] inline std::optional<std::int64_t> get_step() {
  return detail::thread_defaults().step;
}
}  // namespace experimental

namespace detail {
/// The default writer's state if summaries should be written now, else null.
inline WriterState* active_writer() noexcept { return thread_defaults().writer.get(); }
}  // namespace detail

}  // namespace summary
TAPEFLOW_END_NAMESPACE
