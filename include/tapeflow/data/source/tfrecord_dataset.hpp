// `tf::data::TFRecordDataset(files, {.compression, .buffer_size, .num_parallel_reads})`: the
// records of TFRecord files as scalar string tensors (TensorFlow: `tf.data.TFRecordDataset`).
//
// With `num_parallel_reads > 1` the files are read concurrently, each by its own thread a few
// records ahead, and their records interleaved in TensorFlow's deterministic order
// (`interleave(cycle_length=num_parallel_reads, block_length=1)`).
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

/// Reads one file on its own thread, keeping up to `capacity` records ready.
class FileWorker {
 public:
  FileWorker(std::string path, io::TFRecordReaderOptions options,
             std::shared_ptr<std::atomic<std::int64_t>> skipped, std::size_t capacity = 32)
      : capacity_(capacity) {
    thread_ = std::thread([this, path = std::move(path), options, skipped = std::move(skipped)] {
      run(path, options, *skipped);
    });
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
  std::optional<std::string> next() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (!queue_.empty()) {
      std::string r = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      cv_.notify_all();
      return r;
    }
    if (error_) {
      std::rethrow_exception(std::exchange(error_, nullptr));
    }
    return std::nullopt;
  }

 private:
  void run(const std::string& path, const io::TFRecordReaderOptions& options,
           std::atomic<std::int64_t>& skipped) {
    try {
      io::TFRecordReader reader(path, options);
      std::string record;
      while (reader.read(record)) {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return queue_.size() < capacity_ || stop_; });
        if (stop_) {
          break;
        }
        queue_.push_back(std::move(record));
        lock.unlock();
        cv_.notify_all();
        record = std::string();
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
  std::deque<std::string> queue_;
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
  TFRecordDataset(std::initializer_list<std::string> filenames, TFRecordDatasetOptions options = {})
      : TFRecordDataset(std::vector<std::string>(filenames), options) {}
  TFRecordDataset(const std::string& filename, TFRecordDatasetOptions options = {})
      : TFRecordDataset(std::vector<std::string>{filename}, options) {}
  TFRecordDataset(const char* filename, TFRecordDatasetOptions options = {})
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

    /// Position: current file and byte offset in it (sequential reading only).
    void save_state(IteratorState& s, const std::string& prefix) const {
      require_sequential("save_state");
      s.put_int(prefix + "tfrecord/file", static_cast<std::int64_t>(file_));
      s.put_int(prefix + "tfrecord/offset",
                reader_ ? static_cast<std::int64_t>(reader_->offset()) : 0);
    }
    void restore_state(const IteratorState& s, const std::string& prefix) {
      require_sequential("restore_state");
      file_ = static_cast<std::size_t>(s.get_int(prefix + "tfrecord/file"));
      const auto offset = static_cast<std::uint64_t>(s.get_int(prefix + "tfrecord/offset"));
      reader_.reset();
      if (file_ < files_->size()) {
        open(file_);
        reader_->skip_to(offset);
      }
    }

   private:
    io::TFRecordReaderOptions reader_options() const {
      return {.compression = options_.compression,
              .buffer_size = options_.buffer_size,
              .skip_corrupt = options_.skip_corrupt};
    }
    void require_sequential(const char* what) const {
      if (!slots_.empty()) {
        throw unimplemented(std::string("tf::data::TFRecordDataset: ") + what +
                            " with num_parallel_reads > 1");
      }
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
    std::optional<element_type> next_sequential() {
      while (file_ < files_->size()) {
        if (!reader_) {
          open(file_);
        }
        std::string record;
        if (reader_->read(record)) {
          return element_type(std::move(record));
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
        auto& slot = slots_[cycle_index_];
        if (slot) {
          auto record = slot->next();
          if (record) {
            cycle_index_ = (cycle_index_ + 1) % cycle;
            return element_type(std::move(*record));
          }
          slot.reset();
          --open_;
          cycle_index_ = (cycle_index_ + 1) % cycle;
        } else if (next_file_ < files_->size()) {
          slot = std::make_unique<tfrecord_detail::FileWorker>((*files_)[next_file_++],
                                                               reader_options(), skipped_);
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
    // interleaved
    std::vector<std::unique_ptr<tfrecord_detail::FileWorker>> slots_;
    std::size_t cycle_index_ = 0;
    std::size_t next_file_ = 0;
    std::size_t open_ = 0;
  };

  [[nodiscard]] iterator make_iterator() const { return {files_, options_, skipped_}; }
  /// Unknown without reading the files (as TensorFlow).
  [[nodiscard]] std::int64_t cardinality() const noexcept { return unknown_cardinality; }
  [[nodiscard]] const std::vector<std::string>& filenames() const noexcept { return *files_; }
  /// Corrupt records skipped so far (with `.skip_corrupt`), over all epochs and copies.
  [[nodiscard]] std::int64_t corrupt_records_skipped() const noexcept { return *skipped_; }

 private:
  std::shared_ptr<const std::vector<std::string>> files_;
  TFRecordDatasetOptions options_;
  std::shared_ptr<std::atomic<std::int64_t>> skipped_;
};

}  // namespace data
TAPEFLOW_END_NAMESPACE
