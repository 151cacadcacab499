// `tf::data::TFRecordDataset(files, {.compression, .buffer_size, .num_parallel_reads})`: the
// records of TFRecord files as scalar string tensors (TensorFlow: `tf.data.TFRecordDataset`).
//
// With `num_parallel_reads > 1` the files are read concurrently, each by its own thread a few
// records ahead, and their records interleaved in TensorFlow's deterministic order
// (`interleave(cycle_length=num_parallel_reads, block_length=1)`). Both modes save and restore
// their position (tf::data iterator checkpoints).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/tfrecord_options.hpp>
#include <tapeflow/io/tfrecord_reader.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// Options of `TFRecordDataset` (TensorFlow's keyword arguments).
struct TFRecordDatasetOptions {
  /// `compression_type`: none, zlib or gzip (`tf::io::compression_type("GZIP")` parses names).
  io::Compression compression = io::Compression::none;
  /// Read buffer per file in bytes (TensorFlow's default: 256 KiB).
  std::size_t buffer_size = 256 * 1024;
  /// Files read at once; 1 reads them one after another; `tf::data::autotune` picks
  /// min(files, hardware threads).
  int num_parallel_reads = 1;
  /// Skip corrupt or truncated records instead of raising data_loss; the count is
  /// `TFRecordDataset::corrupt_records_skipped()`.
  bool skip_corrupt = false;
};

namespace tfrecord_detail {

using Record = Tensor<std::string, 0>;

// Note [Record recycling]: a string tensor holds a std::string, so a fresh record tensor costs
// two allocations (the tensor's buffer and the string's bytes) and a copy. A pool keeps the
// last few tensors it handed out; once a consumer has dropped one (its buffer's reference
// count is back to 1: only the pool holds it, and nobody can copy it any more), its string is
// overwritten with the next record and handed out again under a fresh tensor id. Tensors stay
// immutable for everyone who can see them. Strings grown past `max_recycled_bytes` are not
// kept, so the pool never pins a huge record's memory.
/// Internal to TFRecordDataset: recycles the record tensors of one reader (Note [Record
/// recycling] above).
class RecordPool {
 public:
  /// Strings with a larger capacity (1 MiB) are not reused.
  static constexpr std::size_t max_recycled_bytes = std::size_t{1} << 20;

  /// A pool remembering the last `slots` (at least 1) tensors it handed out.
  explicit RecordPool(std::size_t slots = 4) : ring_(std::max<std::size_t>(slots, 1)) {}

  /// A string to read the next record into; `hand_out()` then returns it as a tensor.
  std::string& acquire() {
    // The oldest slots are the likeliest to have been dropped: look at a few, from the oldest.
    const std::size_t n = ring_.size();
    for (std::size_t i = 0; i < std::min<std::size_t>(n, 4); ++i) {
      const std::size_t at = (next_ + i) % n;
      Record& t = ring_[at];
      if (t.has_value() && ::tapeflow::detail::tensor_access::buffer(t)->unique()) {
        current_ = at;
        std::string& s = *::tapeflow::detail::tensor_access::mutable_data(t);
        if (s.capacity() > max_recycled_bytes) {
          std::string().swap(s);
        }
        return s;
      }
    }
    current_ = next_;
    ring_[current_] = Record::uninitialized({});  // drops our share of a tensor still in use
    return *::tapeflow::detail::tensor_access::mutable_data(ring_[current_]);
  }
  /// The string of the last `acquire()` as a new tensor (shared with the pool).
  Record hand_out() {
    next_ = (current_ + 1) % ring_.size();
    Record& slot = ring_[current_];
    Record out = ::tapeflow::detail::tensor_access::wrap<std::string, 0>(
        ::tapeflow::detail::tensor_access::buffer(slot), {}, ::tapeflow::detail::new_tensor_id());
    if (::tapeflow::detail::tensor_access::mutable_data(slot)->capacity() > max_recycled_bytes) {
      slot = Record();  // not kept: the consumer alone decides how long a huge record lives
    }
    return out;
  }

 private:
  std::vector<Record> ring_;
  std::size_t next_ = 0;
  std::size_t current_ = 0;
};

/// Reads one file on its own thread, keeping up to `capacity` records ready, each with the
/// stream offset just after it (the position to resume from once it has been consumed).
/// Internal to TFRecordDataset (num_parallel_reads > 1).
class FileWorker {
 public:
  /// One record read ahead.
  struct Item {
    Record record;                 ///< the record, a scalar string tensor
    std::uint64_t end_offset = 0;  ///< stream offset just after the record
  };

  /// Starts the thread reading `path` from `start_offset`; corrupt records skipped (with
  /// options.skip_corrupt) are added to `*skipped` at the end of the file. Errors (not_found,
  /// data_loss) are rethrown by next().
  FileWorker(std::string path, io::TFRecordReaderOptions options,
             std::shared_ptr<std::atomic<std::int64_t>> skipped, std::uint64_t start_offset = 0,
             std::size_t capacity = 32)
      : capacity_(capacity) {
    thread_ = std::thread([this, path = std::move(path), options, skipped = std::move(skipped),
                           start_offset] { run(path, options, *skipped, start_offset); });
  }
  FileWorker(const FileWorker&) = delete;
  FileWorker& operator=(const FileWorker&) = delete;
  ~FileWorker() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  /// The next record of the file, or nothing at its end; rethrows the reader's errors.
  std::optional<Item> next() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (!queue_.empty()) {
      Item r = std::move(queue_.front());
      queue_.pop_front();
      const bool wake = queue_.size() + 1 == capacity_;  // the reader may wait for room
      lock.unlock();
      if (wake) {
        cv_.notify_all();
      }
      return r;
    }
    if (error_) {
      std::rethrow_exception(std::exchange(error_, nullptr));
    }
    return std::nullopt;
  }

 private:
  void run(const std::string& path, const io::TFRecordReaderOptions& options,
           std::atomic<std::int64_t>& skipped, std::uint64_t start_offset) {
    try {
      io::TFRecordReader reader(path, options);
      reader.skip_to(start_offset);
      // Queued records, the one being read and a few the consumer still holds.
      RecordPool pool(capacity_ + 8);
      while (reader.read(pool.acquire())) {
        Item item{pool.hand_out(), reader.offset()};
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return queue_.size() < capacity_ || stop_; });
        if (stop_) {
          break;
        }
        queue_.push_back(std::move(item));
        const bool wake = queue_.size() == 1;  // the consumer may wait for a record
        lock.unlock();
        if (wake) {
          cv_.notify_all();
        }
      }
      skipped += reader.corrupt_records_skipped();
    } catch (...) {
      std::lock_guard lock(mu_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
  }

  std::size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  std::exception_ptr error_;
  bool done_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tfrecord_detail

/// The records of one or more TFRecord files, in order (TensorFlow: `tf.data.TFRecordDataset`).
///
///     auto ds = tf::data::TFRecordDataset({"train.tfrecords"}) | tf::data::map(parse);
///     for (const tf::Tensor<std::string, 0>& record : tf::data::TFRecordDataset({"a.tfrecord"}))
///     {}
///
/// Errors (raised while iterating): not_found for a missing file, data_loss naming the file and
/// byte offset of a corrupt or truncated record.
class TFRecordDataset : public DatasetBase<TFRecordDataset, Tensor<std::string, 0>> {
 public:
  TFRecordDataset() = default;  // no files
  /// The records of `filenames`, read in order (or interleaved with num_parallel_reads > 1);
  /// invalid_argument if num_parallel_reads is neither >= 1 nor autotune. Files are opened
  /// only while iterating.
  TFRecordDataset(std::vector<std::string> filenames, TFRecordDatasetOptions options = {})
      : files_(std::make_shared<const std::vector<std::string>>(std::move(filenames))),
        options_(options),
        skipped_(std::make_shared<std::atomic<std::int64_t>>(0)) {
    if (options_.num_parallel_reads == 0 || options_.num_parallel_reads < autotune) {
      throw invalid_argument(
          "tf::data::TFRecordDataset: num_parallel_reads must be >= 1 or "
          "tf::data::autotune, got " +
          std::to_string(options_.num_parallel_reads));
    }
  }
  /// `TFRecordDataset({"a.tfrecord", "b.tfrecord"})`.
  TFRecordDataset(std::initializer_list<std::string> filenames, TFRecordDatasetOptions options = {})
      : TFRecordDataset(std::vector<std::string>(filenames), options) {}
  // No `const char*` overload: `TFRecordDataset({"a.tfrecord"})` would choose it (a braced
  // scalar, which Clang warns about) over the initializer_list; literals convert to this one.
  /// The records of one file.
  TFRecordDataset(const std::string& filename, TFRecordDatasetOptions options = {})
      : TFRecordDataset(std::vector<std::string>{filename}, options) {}
  /// File names from a string tensor (e.g. a batch of `list_files`).
  TFRecordDataset(const Tensor<std::string, 1>& filenames, TFRecordDatasetOptions options = {})
      : TFRecordDataset(filenames.numpy(), options) {}

  class iterator {
   public:
    using element_type = Tensor<std::string, 0>;

    iterator(std::shared_ptr<const std::vector<std::string>> files,
             const TFRecordDatasetOptions& options,
             std::shared_ptr<std::atomic<std::int64_t>> skipped)
        : files_(std::move(files)), options_(options), skipped_(std::move(skipped)) {
      int cycle = options_.num_parallel_reads;
      if (cycle == autotune) {
        cycle = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
      }
      cycle = std::min<int>(cycle, static_cast<int>(files_->size()));
      if (cycle > 1) {
        slots_.resize(static_cast<std::size_t>(cycle));
      }
    }

    std::optional<element_type> next() {
      return slots_.empty() ? next_sequential() : next_interleaved();
    }

    /// Position. Sequential reading: the current file and the byte offset in it. Interleaved
    /// reading (num_parallel_reads > 1): the cycle position, the next file to open and, per
    /// slot, its file and the offset after the last record taken from it; records the worker
    /// threads have read ahead are read again after a restore.
    void save_state(IteratorState& s, const std::string& prefix) const {
      const std::string p = prefix + "tfrecord/";
      if (slots_.empty()) {
        s.put_int(p + "file", static_cast<std::int64_t>(file_));
        s.put_int(p + "offset", reader_ ? static_cast<std::int64_t>(reader_->offset()) : 0);
        return;
      }
      s.put_int(p + "cycle_length", static_cast<std::int64_t>(slots_.size()));
      s.put_int(p + "cycle_index", static_cast<std::int64_t>(cycle_index_));
      s.put_int(p + "next_file", static_cast<std::int64_t>(next_file_));
      for (std::size_t i = 0; i < slots_.size(); ++i) {
        const Slot& slot = slots_[i];
        const std::string q = p + "slot/" + std::to_string(i) + "/";
        s.put_int(q + "file", slot.worker ? static_cast<std::int64_t>(slot.file) : -1);
        s.put_int(q + "offset", static_cast<std::int64_t>(slot.offset));
      }
    }
    void restore_state(const IteratorState& s, const std::string& prefix) {
      const std::string p = prefix + "tfrecord/";
      const bool saved_interleaved = s.contains(p + "cycle_length");
      if (saved_interleaved != !slots_.empty()) {
        throw invalid_argument("tf::data::TFRecordDataset: cannot restore a position saved with " +
                               std::string(saved_interleaved ? "interleaved" : "sequential") +
                               " reading into an iterator with num_parallel_reads " +
                               (slots_.empty() ? "1" : "> 1") + " (" + p + ")");
      }
      if (slots_.empty()) {
        file_ = checked_index(s.get_int(p + "file"), files_->size(), p + "file");
        const auto offset = static_cast<std::uint64_t>(s.get_int(p + "offset"));
        reader_.reset();
        if (file_ < files_->size()) {
          open(file_);
          reader_->skip_to(offset);
        }
        return;
      }
      const auto cycle = static_cast<std::uint64_t>(s.get_int(p + "cycle_length"));
      if (cycle != slots_.size()) {
        throw invalid_argument("tf::data::TFRecordDataset: the saved position interleaves " +
                               std::to_string(cycle) + " files, this iterator " +
                               std::to_string(slots_.size()) + " (num_parallel_reads must match)");
      }
      const std::size_t cycle_index =
          checked_index(s.get_int(p + "cycle_index"), slots_.size() - 1, p + "cycle_index");
      const std::size_t next_file =
          checked_index(s.get_int(p + "next_file"), files_->size(), p + "next_file");
      std::vector<Slot> slots(slots_.size());
      std::size_t open = 0;
      for (std::size_t i = 0; i < slots.size(); ++i) {
        const std::string q = p + "slot/" + std::to_string(i) + "/";
        const std::int64_t file = s.get_int(q + "file");
        if (file < 0) {
          continue;
        }
        if (next_file == 0) {  // no file opened yet, so none can be in a slot
          throw data_loss("tf::data::TFRecordDataset: saved state entry '" + q +
                          "file' names a file before any was opened");
        }
        slots[i].file = checked_index(file, next_file - 1, q + "file");
        slots[i].offset = static_cast<std::uint64_t>(s.get_int(q + "offset"));
        slots[i].worker = start_worker(slots[i].file, slots[i].offset);
        ++open;
      }
      slots_ = std::move(slots);
      cycle_index_ = cycle_index;
      next_file_ = next_file;
      open_ = open;
    }

   private:
    struct Slot {
      std::unique_ptr<tfrecord_detail::FileWorker> worker;
      std::size_t file = 0;
      std::uint64_t offset = 0;  // after the last record taken from this slot's file
    };

    static std::size_t checked_index(std::int64_t v, std::size_t max, const std::string& key) {
      if (v < 0 || static_cast<std::uint64_t>(v) > max) {
        throw data_loss("tf::data::TFRecordDataset: saved state entry '" + key + "' is " +
                        std::to_string(v) + ", outside [0, " + std::to_string(max) + "]");
      }
      return static_cast<std::size_t>(v);
    }
    io::TFRecordReaderOptions reader_options() const {
      return {.compression = options_.compression,
              .buffer_size = options_.buffer_size,
              .skip_corrupt = options_.skip_corrupt};
    }
    void open(std::size_t i) {
      reader_ = std::make_unique<io::TFRecordReader>((*files_)[i], reader_options());
    }
    void close_reader() {
      if (reader_) {
        *skipped_ += reader_->corrupt_records_skipped();
        reader_.reset();
      }
    }
    std::unique_ptr<tfrecord_detail::FileWorker> start_worker(std::size_t file,
                                                              std::uint64_t offset) const {
      return std::make_unique<tfrecord_detail::FileWorker>((*files_)[file], reader_options(),
                                                           skipped_, offset);
    }
    std::optional<element_type> next_sequential() {
      while (file_ < files_->size()) {
        if (!reader_) {
          open(file_);
        }
        if (reader_->read(pool_.acquire())) {  // Note [Record recycling]
          return pool_.hand_out();
        }
        close_reader();
        ++file_;
      }
      return std::nullopt;
    }
    // TensorFlow's deterministic interleave (block_length 1): visit slots in turn; an empty
    // slot takes the next file; an exhausted slot is emptied and the turn moves on.
    std::optional<element_type> next_interleaved() {
      const std::size_t cycle = slots_.size();
      while (next_file_ < files_->size() || open_ > 0) {
        Slot& slot = slots_[cycle_index_];
        if (slot.worker) {
          auto item = slot.worker->next();
          if (item) {
            slot.offset = item->end_offset;
            cycle_index_ = (cycle_index_ + 1) % cycle;
            return std::move(item->record);
          }
          slot.worker.reset();
          --open_;
          cycle_index_ = (cycle_index_ + 1) % cycle;
        } else if (next_file_ < files_->size()) {
          slot.file = next_file_++;
          slot.offset = 0;
          slot.worker = start_worker(slot.file, 0);
          ++open_;
        } else {
          cycle_index_ = (cycle_index_ + 1) % cycle;
        }
      }
      return std::nullopt;
    }

    std::shared_ptr<const std::vector<std::string>> files_;
    TFRecordDatasetOptions options_;
    std::shared_ptr<std::atomic<std::int64_t>> skipped_;
    // sequential
    std::size_t file_ = 0;
    std::unique_ptr<io::TFRecordReader> reader_;
    tfrecord_detail::RecordPool pool_;
    // interleaved
    std::vector<Slot> slots_;
    std::size_t cycle_index_ = 0;
    std::size_t next_file_ = 0;
    std::size_t open_ = 0;
  };

  /// Starts an epoch from the first file. With num_parallel_reads > 1 (autotune: the number of
  /// hardware threads), min(num_parallel_reads, files) files are read at once, each on its own
  /// thread.
  [[nodiscard]] iterator make_iterator() const {
    if (!files_) {  // default-constructed
      return {std::make_shared<const std::vector<std::string>>(), options_,
              std::make_shared<std::atomic<std::int64_t>>(0)};
    }
    return {files_, options_, skipped_};
  }
  /// Unknown without reading the files (as TensorFlow).
  [[nodiscard]] std::int64_t cardinality() const noexcept { return unknown_cardinality; }
  /// The files, in reading order (empty if default-constructed).
  [[nodiscard]] const std::vector<std::string>& filenames() const noexcept {
    static const std::vector<std::string> none;
    return files_ ? *files_ : none;
  }
  /// A copy reading `filenames` instead, with the same options (sharding by file:
  /// data/detail/shard_input_files.hpp).
  [[nodiscard]] TFRecordDataset with_filenames(std::vector<std::string> filenames) const {
    return TFRecordDataset(std::move(filenames), options_);
  }
  /// Corrupt records skipped so far (with `.skip_corrupt`), over all epochs and copies.
  [[nodiscard]] std::int64_t corrupt_records_skipped() const noexcept {
    return skipped_ ? skipped_->load() : 0;
  }

 private:
  std::shared_ptr<const std::vector<std::string>> files_{};  // null: default-constructed
  TFRecordDatasetOptions options_{};
  std::shared_ptr<std::atomic<std::int64_t>> skipped_{};
};

}  // namespace data
TAPEFLOW_END_NAMESPACE
