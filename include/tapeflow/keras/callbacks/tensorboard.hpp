// tf::keras::callbacks::TensorBoard: fit's losses and metrics as TensorBoard scalars
// (TensorFlow: `tf.keras.callbacks.TensorBoard(log_dir, update_freq)`).
//
// As Keras does: training values go to `<log_dir>/train`, validation values (the `val_` logs,
// without the prefix) to `<log_dir>/validation`; per-epoch scalars are named `epoch_<metric>`
// with step = epoch, per-batch ones (update_freq "batch" or N) `batch_<metric>` with step =
// the global batch number, counted across epochs and fit calls. Under a multi-worker
// strategy only the chief's logs are kept: the other workers write to a temporary folder
// (distribute/file_paths.hpp) removed when training ends, as Keras does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/file_paths.hpp>
#include <tapeflow/distribute/strategy.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/summary/scalar.hpp>
#include <tapeflow/summary/writer.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras::callbacks {

/// Options of the TensorBoard callback (Keras' keyword arguments).
struct TensorBoardOptions {
  /// "epoch" (scalars once per epoch), "batch" (also after every batch), or N (also after
  /// every N batches).
  std::variant<std::string, std::int64_t> update_freq = std::string("epoch");
};

/// Logs fit's metrics for TensorBoard (TensorFlow: `tf.keras.callbacks.TensorBoard`).
///
///     auto tb = std::make_shared<tf::keras::callbacks::TensorBoard>("./logs");
///     model.fit(x, y, {.epochs = 5, .callbacks = {tb}});
///     // tensorboard --logdir ./logs   (runs "train" and "validation")
class TensorBoard : public Callback {
 public:
  /// Logs under `log_dir` (created when training begins); throws invalid_argument for an
  /// `update_freq` other than "epoch", "batch" or a positive number.
  explicit TensorBoard(std::filesystem::path log_dir = "logs", TensorBoardOptions options = {})
      : log_dir_(std::move(log_dir)) {
    if (const auto* s = std::get_if<std::string>(&options.update_freq)) {
      if (*s == "batch") {
        every_ = 1;
      } else if (*s != "epoch") {
        throw invalid_argument(
            "tf::keras::callbacks::TensorBoard: update_freq must be \"epoch\", \"batch\" or a "
            "number of batches, got \"" +
            *s + "\"");
      }
    } else {
      every_ = std::get<std::int64_t>(options.update_freq);
      if (every_ <= 0) {
        throw invalid_argument(
            "tf::keras::callbacks::TensorBoard: update_freq must be positive, got " +
            std::to_string(every_));
      }
    }
  }
  TensorBoard(const TensorBoard&) = delete;
  TensorBoard& operator=(const TensorBoard&) = delete;
  ~TensorBoard() override {
    try {
      train_.close();
      validation_.close();
    } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
  }

  /// Notes the model's strategy: which worker this is.
  void set_model(Model<void>& model) override { strategy_ = model.distribute_strategy(); }
  /// Opens the train writer (`<log_dir>/train`) unless open already (from an earlier fit).
  void on_train_begin(const Logs&) override {
    if (train_.is_noop()) {
      train_ = summary::create_file_writer(write_dir() / "train");
    }
  }
  /// Writes `batch_<metric>` scalars when update_freq asks for this batch.
  void on_train_batch_end(std::int64_t, const Logs& logs) override {
    const std::int64_t step = batches_++;
    if (every_ > 0 && (step + 1) % every_ == 0) {
      auto scope = train_.as_default();
      for (const auto& [name, value] : logs) {
        summary::scalar("batch_" + name, value, step);
      }
    }
  }
  /// Writes `epoch_<metric>` scalars at step `epoch`: training values to the train writer,
  /// `val_` values to the validation writer (opened on first use).
  void on_epoch_end(int epoch, const Logs& logs) override {
    for (const auto& [name, value] : logs) {
      const bool validation = name.rfind("val_", 0) == 0;
      if (validation && validation_.is_noop()) {
        validation_ = summary::create_file_writer(write_dir() / "validation");
      }
      auto scope = (validation ? validation_ : train_).as_default();
      summary::scalar("epoch_" + (validation ? name.substr(4) : name), value, epoch);
    }
  }
  /// Flushes both writers (they stay open for later fit calls); a worker other than the
  /// chief closes them and deletes its temporary logs.
  void on_train_end(const Logs&) override {
    train_.flush();
    validation_.flush();
    if (!strategy_.should_save_summary()) {
      train_.close();
      validation_.close();
      train_ = summary::SummaryWriter();
      validation_ = summary::SummaryWriter();
      distribute::remove_temp_dirpath(log_dir_, strategy_);
    }
  }

  /// The train writer (a no-op writer until fit starts).
  [[nodiscard]] const summary::SummaryWriter& train_writer() const noexcept { return train_; }
  /// The validation writer (a no-op writer until validation values appear).
  [[nodiscard]] const summary::SummaryWriter& validation_writer() const noexcept {
    return validation_;
  }

 private:
  std::filesystem::path write_dir() const { return distribute::write_dirpath(log_dir_, strategy_); }

  std::filesystem::path log_dir_;
  distribute::Strategy strategy_;  // the trained model's (the default strategy: the chief)
  std::int64_t every_ = 0;         // 0: per epoch only
  std::int64_t batches_ = 0;
  summary::SummaryWriter train_;
  summary::SummaryWriter validation_;
};

}  // namespace keras::callbacks
TAPEFLOW_END_NAMESPACE
