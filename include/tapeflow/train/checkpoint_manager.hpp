// `tf::train::CheckpointManager` (tf.train.CheckpointManager): numbered saves in a directory,
// keeping the newest `max_to_keep` (plus one every `keep_checkpoint_every_n_hours`) and deleting
// older files as TensorFlow does (docs/formats.md 10.3).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/train/checkpoint.hpp>
#include <tapeflow/train/checkpoint_state.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace train {

/// Keyword arguments of CheckpointManager (Python's defaults; max_to_keep None = keep all).
struct CheckpointManagerOptions {
  std::string checkpoint_name = "ckpt";  ///< file name prefix inside the directory
  /// How many recent checkpoints to keep (>= 0, else invalid_argument); unset keeps all.
  std::optional<int> max_to_keep = std::nullopt;
  /// Of the checkpoints max_to_keep would delete, keep one every this many hours for good.
  std::optional<double> keep_checkpoint_every_n_hours = std::nullopt;
};

/// Keyword arguments of CheckpointManager::save.
struct CheckpointManagerSaveOptions {
  /// The number in the file name (default: save_counter after incrementing it).
  std::optional<std::int64_t> checkpoint_number = std::nullopt;
};

/// Manages numbered checkpoints of one Checkpoint in one directory.
///
///     tf::train::CheckpointManager manager(ckpt, "./save",
///                                          {.checkpoint_name = "model.ckpt", .max_to_keep = 3});
///     manager.save({.checkpoint_number = batch_index});   // ./save/model.ckpt-<batch_index>
///
/// Holds a reference to `checkpoint`, which must outlive it.
class CheckpointManager {
 public:
  /// Manages `checkpoint`'s saves in `directory`, resuming from the directory's `checkpoint`
  /// state file if an earlier run left one (its latest checkpoint and the checkpoints it
  /// manages). Throws invalid_argument for a negative max_to_keep.
  CheckpointManager(Checkpoint& checkpoint, std::string directory,
                    CheckpointManagerOptions options = {})
      : ckpt_(&checkpoint), dir_(std::move(directory)), o_(std::move(options)) {
    if (o_.max_to_keep && *o_.max_to_keep < 0) {
      throw invalid_argument("tf::train::CheckpointManager: max_to_keep must be >= 0");
    }
    prefix_ = detail_state::join(dir_, o_.checkpoint_name);
    const double now = detail_state::now_seconds();
    auto st = get_checkpoint_state(dir_);
    if (!st) {
      last_preserved_ = now - 1.0;
      return;
    }
    latest_ = st->model_checkpoint_path;
    last_preserved_ = st->last_preserved_timestamp.value_or(now - 1.0);
    for (std::size_t i = 0; i < st->all_model_checkpoint_paths.size(); ++i) {
      double t = i < st->all_model_checkpoint_timestamps.size()
                     ? st->all_model_checkpoint_timestamps[i]
                     : last_preserved_;
      t = std::min(t, now);
      if (t > last_preserved_) {
        managed_.emplace_back(st->all_model_checkpoint_paths[i], t);
      }
    }
  }

  /// The managed checkpoints, oldest first.
  [[nodiscard]] std::vector<std::string> checkpoints() const {
    std::vector<std::string> out;
    for (const auto& [p, t] : managed_) {
      out.push_back(p);
    }
    return out;
  }
  /// The newest checkpoint (from the state file at construction, then the last save), or "".
  [[nodiscard]] std::string latest_checkpoint() const { return latest_; }
  /// The directory given to the constructor.
  [[nodiscard]] const std::string& directory() const noexcept { return dir_; }

  /// Saves `<directory>/<checkpoint_name>-<N>`, records it, deletes checkpoints beyond
  /// max_to_keep and returns the new prefix.
  std::string save(CheckpointManagerSaveOptions options = {}) {
    auto counter = ckpt_->save_counter();  // shares the variable
    counter.assign_add(Tensor<std::int64_t, 0>(1));
    const std::int64_t n = options.checkpoint_number.value_or(counter.value().item());
    const std::string path = ckpt_->write(prefix_ + "-" + std::to_string(n));
    const double now = detail_state::now_seconds();
    std::erase_if(managed_, [&](const auto& e) { return e.first == path; });
    managed_.emplace_back(path, now);
    latest_ = path;
    detail_bundle::stage("state");
    write_state();
    sweep();
    write_state();
    remove_stale_temporaries();
    return path;
  }

 private:
  void write_state() {
    CheckpointState st;
    st.model_checkpoint_path = latest_;
    for (const auto& [p, t] : managed_) {
      st.all_model_checkpoint_paths.push_back(p);
      st.all_model_checkpoint_timestamps.push_back(t);
    }
    st.last_preserved_timestamp = last_preserved_;
    detail_state::write_state(dir_, st);
  }
  void sweep() {
    if (!o_.max_to_keep) {
      return;
    }
    while (managed_.size() > static_cast<std::size_t>(*o_.max_to_keep)) {
      auto [path, t] = managed_.front();
      managed_.erase(managed_.begin());
      if (o_.keep_checkpoint_every_n_hours &&
          t - *o_.keep_checkpoint_every_n_hours * 3600.0 >= last_preserved_) {
        last_preserved_ = t;
        continue;
      }
      remove_checkpoint(path);
    }
  }
  /// Deletes the temporary files a save killed mid-way left (`<name>-N.*.tempstate*`,
  /// `checkpoint.tempstate*`): a save writes temporaries and renames them, so after a
  /// complete save none of this manager's own remain. One process saves into a directory.
  void remove_stale_temporaries() const {
    std::error_code ec;
    const std::string ours = detail_state::basename(prefix_) + "-";
    for (const auto& e : std::filesystem::directory_iterator(dir_.empty() ? "." : dir_, ec)) {
      const std::string name = e.path().filename().string();
      if (name.find(".tempstate") != std::string::npos &&
          (name.rfind(ours, 0) == 0 || name.rfind("checkpoint.tempstate", 0) == 0)) {
        std::filesystem::remove(e.path(), ec);
      }
    }
  }
  /// Deletes `<p>.index` and every `<p>.data-?????-of-?????`.
  static void remove_checkpoint(const std::string& prefix) {
    std::error_code ec;
    std::filesystem::remove(prefix + ".index", ec);
    const std::string dir = detail_state::dirname(prefix);
    const std::string base = detail_state::basename(prefix) + ".data-";
    for (const auto& e : std::filesystem::directory_iterator(dir.empty() ? "." : dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.size() == base.size() + 14 && name.rfind(base, 0) == 0 &&
          name.compare(base.size() + 5, 4, "-of-") == 0) {
        std::filesystem::remove(e.path(), ec);
      }
    }
  }

  Checkpoint* ckpt_;
  std::string dir_;
  CheckpointManagerOptions o_;
  std::string prefix_;
  std::string latest_;
  double last_preserved_ = 0;
  std::vector<std::pair<std::string, double>> managed_;
};

}  // namespace train
TAPEFLOW_END_NAMESPACE
