// tf.keras.Model: compile / fit / evaluate / predict / summary on top of Layer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <ranges>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/config/device_scope.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/visit_rank.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/detail/split_batch.hpp>
#include <tapeflow/distribute/per_replica.hpp>
#include <tapeflow/distribute/replica_context.hpp>
#include <tapeflow/distribute/strategy.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/keras/detail/batching.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/metrics.hpp>
#include <tapeflow/keras/optimizers.hpp>
#include <tapeflow/keras/progbar.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {

/// Metric values by name ("loss", "sparse_categorical_accuracy", "val_loss", ...).
using Logs = std::map<std::string, double>;

template <class Derived>
class Model;

/// Hooks into fit (tf.keras.callbacks.Callback). Override what you need.
class Callback {
 public:
  Callback() = default;
  /// Copyable, so derived callbacks can be.
  Callback(const Callback&) = default;
  /// Copy-assignable, so derived callbacks can be.
  Callback& operator=(const Callback&) = default;
  virtual ~Callback() = default;
  /// Called by fit before on_train_begin with the model being trained (Keras' `set_model`).
  virtual void set_model(Model<void>&) {}
  /// Called once before the first epoch (the logs are empty).
  virtual void on_train_begin(const Logs&) {}
  /// Called once after the last epoch (the logs are empty).
  virtual void on_train_end(const Logs&) {}
  /// Called before each epoch with its 0-based index (the logs are empty).
  virtual void on_epoch_begin(int, const Logs&) {}
  /// Called after each epoch with its 0-based index and logs: mean loss, metrics, and the
  /// `val_` values when fit has validation data.
  virtual void on_epoch_end(int, const Logs&) {}
  /// Called after each training batch with its 0-based index within the epoch and the epoch's
  /// running loss and metrics.
  virtual void on_train_batch_end(std::int64_t, const Logs&) {}
};

/// A callback from lambdas (tf.keras.callbacks.LambdaCallback).
struct LambdaCallback : Callback {
  std::function<void(int, const Logs&)> epoch_end;  ///< on_epoch_end's action; may be empty
  std::function<void(std::int64_t, const Logs&)> batch_end;  ///< on_train_batch_end's action
  /// Runs `on_epoch_end` after each epoch and `on_batch_end` after each training batch (either
  /// may be empty: Keras' `LambdaCallback(on_epoch_end=..., on_train_batch_end=...)`).
  explicit LambdaCallback(std::function<void(int, const Logs&)> on_epoch_end = {},
                          std::function<void(std::int64_t, const Logs&)> on_batch_end = {})
      : epoch_end(std::move(on_epoch_end)), batch_end(std::move(on_batch_end)) {}
  /// Calls `epoch_end` when set.
  void on_epoch_end(int e, const Logs& l) override {
    if (epoch_end) {
      epoch_end(e, l);
    }
  }
  /// Calls `batch_end` when set.
  void on_train_batch_end(std::int64_t b, const Logs& l) override {
    if (batch_end) {
      batch_end(b, l);
    }
  }
};

/// Arguments of `Model::compile`.
struct CompileOptions {
  /// Updates the weights in fit; required by fit (failed_precondition otherwise).
  optimizers::OptimizerHandle optimizer = {};
  /// loss(y_true, y_pred), minimized by fit; required by fit and evaluate.
  losses::LossHandle loss = {};
  std::vector<metrics::MetricHandle> metrics = {};  ///< also reported by fit and evaluate
  /// Runs every step of fit, evaluate and predict eagerly (Keras: `run_eagerly`). By default
  /// each runs its first batch eagerly (fit's creates every variable), then each batch through
  /// a tf::function traced from the same code: a model whose call needs tensor values on the
  /// host (`item()`, `if` on a value) sets this.
  bool run_eagerly = false;
};

/// Arguments of `Model::fit`.
struct FitOptions {
  std::int64_t batch_size = 32;  ///< for in-memory tensors
  int epochs = 1;                ///< passes over the data
  int verbose = 1;               ///< 0 silent, 1 progress bar, 2 one line per epoch
  bool shuffle = true;           ///< reshuffle in-memory tensors every epoch
  /// (inputs, labels) evaluated after each epoch, logged with a `val_` prefix ("val_loss").
  std::optional<std::pair<AnyTensor, AnyTensor>> validation_data = std::nullopt;
  std::vector<std::shared_ptr<Callback>> callbacks = {};  ///< called in order
  std::optional<std::uint64_t> seed = std::nullopt;       ///< shuffling seed
};

/// Arguments of `Model::evaluate`.
struct EvaluateOptions {
  std::int64_t batch_size = 32;  ///< for in-memory tensors
  int verbose = 1;               ///< 0 silent, 1 progress bar, 2 only the final line
};

/// Arguments of `Model::predict`.
struct PredictOptions {
  std::int64_t batch_size = 32;  ///< examples per forward pass
  int verbose = 0;               ///< 0 silent, 1 progress bar, 2 only the final line
};

/// What fit returns: per-epoch values of every logged metric (tf.keras.callbacks.History).
struct History {
  std::map<std::string, std::vector<double>> history;  ///< name -> one value per epoch
  int epochs = 0;                                      ///< epochs run
};

template <class Derived = void>
class Model;

/// Options of `Model::save_weights`.
struct SaveWeightsOptions {
  /// Object-graph names of a TensorFlow-checkpoint (prefix) file. tf_keras is the Keras that
  /// reads such files (Keras 3 reads `.weights.h5`), so its names are the default.
  train::Layout layout = train::Layout::tf_keras;
};

/// Options of `Model::load_weights`.
struct LoadWeightsOptions {
  /// Keep going past weights whose count, shape or dtype differ from the model's (HDF5: that
  /// layer is left unchanged; checkpoints: the value is left unapplied), reporting them in the
  /// returned status instead of throwing invalid_argument (Keras: `skip_mismatch=True`).
  bool skip_mismatch = false;
};

/// The type-erased base of models (tf.keras.Model): a layer that can be compiled and trained.
/// Models derive from `Model<Self>` (below), which adds `model(x)` and what fit, evaluate and
/// predict call.
template <>
class Model<void> : public Layer<void> {
 public:
  /// `base_name` is uniquified ("model" -> "model_1"); `options.name` is used verbatim.
  /// A model created under a strategy's scope trains under it (`fit` splits each batch across
  /// its replicas), as in TensorFlow.
  explicit Model(const std::string& base_name = "model", LayerOptions options = {})
      : Layer<void>(base_name, std::move(options)),
        strategy_(distribute::detail::scoped_strategy()) {}

  /// The strategy the model was created under (TensorFlow: `model.distribute_strategy`); the
  /// default strategy when none.
  [[nodiscard]] distribute::Strategy distribute_strategy() const {
    return strategy_ != nullptr ? distribute::Strategy(strategy_) : distribute::Strategy();
  }

  /// The forward pass on a type-erased batch (what fit/evaluate/predict use).
  virtual AnyTensor call_any(const AnyTensor& x, bool training) {
    (void)x;
    (void)training;
    throw unimplemented("tf::keras::Model '" + name() +
                        "': derive the model from tf::keras::Model<Self> (or override call_any) "
                        "to use fit/evaluate/predict");
  }

  /// Sets the optimizer, loss and metrics used by fit and evaluate.
  void compile(CompileOptions options) {
    compiled_ = std::move(options);
    is_compiled_ = true;
    // A new optimizer or loss, or changed trainable flags: trace again.
    train_function_.reset();
    test_function_.reset();
    predict_function_.reset();
  }
  /// The traced training step fit runs after its first step (Keras: `model.train_function`):
  /// its trace_count() and concrete_functions() show what was traced. Null before the first
  /// step, after compile, and under CompileOptions::run_eagerly.
  [[nodiscard]] const auto* train_function() const noexcept { return train_function_.function(); }
  /// The traced step of evaluate (and of fit's validation): loss and predictions of a batch
  /// (Keras: `model.test_function`); as train_function().
  [[nodiscard]] const auto* test_function() const noexcept { return test_function_.function(); }
  /// The traced forward pass of predict (Keras: `model.predict_function`); as train_function().
  [[nodiscard]] const auto* predict_function() const noexcept {
    return predict_function_.function();
  }
  /// Whether `compile` has been called.
  [[nodiscard]] bool is_compiled() const noexcept { return is_compiled_; }
  /// The compiled optimizer (Keras: `model.optimizer`); throws failed_precondition when none.
  [[nodiscard]] optimizers::Optimizer& optimizer() const { return compiled_.optimizer.get(); }

  /// Compiled models track their optimizer as child "optimizer" (Keras 3 and tf_keras).
  [[nodiscard]] std::vector<TrackableReference> trackable_children(Layout layout) override {
    auto out = Layer::trackable_children(layout);
    if (auto opt = compiled_optimizer()) {
      out.push_back(std::move(*opt));
    }
    return out;
  }

  /// The "optimizer" child once compiled.
  [[nodiscard]] std::optional<TrackableReference> compiled_optimizer() const {
    if (is_compiled_ && compiled_.optimizer.has_value()) {
      return TrackableReference{.name = "optimizer", .object = &compiled_.optimizer.get()};
    }
    return std::nullopt;
  }

  /// One optimization step on a batch; returns the batch loss.
  double train_step(const AnyTensor& x, const AnyTensor& y) {
    require_compiled("fit");
    if (strategy_ != nullptr && strategy_->num_replicas_in_sync() > 1) {
      return distributed_train_step(x, y);
    }
    auto [loss, y_pred] = train_function_(this, compiled_.run_eagerly, x, y);
    for (auto& m : compiled_.metrics) {
      m->update_state(y, y_pred);
    }
    return loss.item();
  }
  /// train_step under the model's strategy: each replica takes its rows of the batch and
  /// minimizes its share of the batch loss (its mean loss times its share of the rows), so the
  /// summed gradients are those of the whole batch's mean loss; metrics see this process's
  /// replicas' predictions. Across workers, every worker passes the same global batch and its
  /// replicas take their rows. Returns the batch loss, summed over every worker.
  double distributed_train_step(const AnyTensor& x, const AnyTensor& y) {
    const distribute::Strategy strategy(strategy_);
    const int n = strategy.num_replicas_in_sync();
    const int local = strategy_->num_local_replicas();
    const int first = strategy_->first_local_replica();
    check_xy(x, y, "fit");
    build_mirrored(x);
    distribute::PerReplica<AnyTensor> xs;
    distribute::PerReplica<AnyTensor> ys;
    for (int r = 0; r < local; ++r) {
      const config::DeviceScope on_replica(
          DeviceSpec::from_string(strategy.worker_devices()[std::size_t(r)]));
      xs.values.push_back(distribute::detail::replica_piece(x, n, first + r));
      ys.values.push_back(distribute::detail::replica_piece(y, n, first + r));
    }
    return replicas_train_step(xs, ys, x.shape()[0]);
  }
  /// The replicas' part of distributed_train_step: this process's replicas train on their
  /// pieces `xs`, `ys` of a global batch of `rows` rows (every worker's replicas together).
  /// Returns the batch loss, summed over every worker.
  double replicas_train_step(const distribute::PerReplica<AnyTensor>& xs,
                             const distribute::PerReplica<AnyTensor>& ys, std::int64_t rows) {
    const distribute::Strategy strategy(strategy_);
    const int local = strategy_->num_local_replicas();
    const auto vars = trainable_variables();
    // Walks the layers only when one of this worker's replicas has no rows (rare).
    const bool every_replica_steps =
        std::ranges::any_of(xs.values, [](const AnyTensor& x) { return x.shape()[0] == 0; }) &&
        uses_replica_collectives();
    struct ReplicaResult {
      double loss = 0;
      AnyTensor y_pred;
    };
    auto results = strategy.run(
        [&](const AnyTensor& bx, const AnyTensor& by) {
          ReplicaResult out;
          std::vector<AnyTensor> grads(vars.size());
          if (bx.shape()[0] > 0) {
            GradientTape tape;
            out.y_pred = call_any(bx, true);
            const float share = float(double(bx.shape()[0]) / double(rows));
            const Tensor<float, 0> loss = compiled_.loss.get()(by, out.y_pred) * share;
            tape.stop();
            grads = tape.gradient_by_id(loss, ids_of(vars));
            out.loss = loss.item();
          } else if (every_replica_steps) {
            // No rows, but the layers' collectives need this replica in the forward and
            // backward passes: seeded with zeros at the predictions, it adds zero gradients.
            GradientTape tape;
            const AnyTensor y_pred = call_any(bx, true);
            tape.stop();
            grads = zero_seeded_gradients(tape, y_pred, vars);
          }
          compiled_.optimizer.get().apply_gradients(std::move(grads), vars);
          return out;
        },
        xs, ys);
    double loss = 0;
    for (int r = 0; r < local; ++r) {
      const auto& result = results.values[std::size_t(r)];
      loss += result.loss;
      if (result.y_pred.has_value()) {
        for (auto& m : compiled_.metrics) {
          m->update_state(ys.values[std::size_t(r)], result.y_pred);
        }
      }
    }
    if (strategy_->num_workers > 1) {
      AnyTensor total{Tensor<double, 0>(loss)};
      strategy_->all_reduce_across_workers(std::span<AnyTensor>(&total, 1));
      loss = total.as<double, 0>().item();
    }
    return loss;
  }

  /// Builds the weights once, mirrored, from inputs like `x`, before the replicas split a batch
  /// (a replica may get no rows).
  void build_mirrored(const AnyTensor& x) {
    if (!built()) {
      const distribute::detail::ContextScope mirrored(&strategy_->device_ids,
                                                      strategy_->initial_value_sync.get());
      (void)call_any(x, false);
    }
  }

  /// Loss and metrics on one batch without training; returns the batch loss.
  double test_step(const AnyTensor& x, const AnyTensor& y) {
    require_compiled("evaluate");
    auto [loss_tensor, y_pred] = test_function_(this, runs_eagerly(), x, y);
    const double loss = loss_tensor.item();
    for (auto& m : compiled_.metrics) {
      m->update_state(y, y_pred);
    }
    return loss;
  }

  /// Trains on in-memory tensors (x: inputs, y: labels, first axis = examples). As in Keras,
  /// the steps after the first run as a traced tf::function (train_function()), one trace per
  /// batch shape, unless compiled with `run_eagerly`; under a strategy with several replicas
  /// they run eagerly.
  History fit(const AnyTensor& x, const AnyTensor& y, FitOptions options = {}) {
    check_xy(x, y, "fit");
    const std::int64_t n = x.shape()[0];
    const std::int64_t bs = std::max<std::int64_t>(1, options.batch_size);
    const std::int64_t steps = (n + bs - 1) / bs;
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::mt19937_64 rng(options.seed ? *options.seed : std::random_device{}());
    return run_fit(options, steps, [&](auto&& step) {
      if (options.shuffle) {
        std::shuffle(order.begin(), order.end(), rng);
      }
      for (std::int64_t s = 0; s < steps; ++s) {
        std::span<const std::int64_t> rows(order.data() + s * bs,
                                           std::size_t(std::min(bs, n - s * bs)));
        step(train_step(detail::keras_impl::take_rows(x, rows),
                        detail::keras_impl::take_rows(y, rows)),
             double(rows.size()));
      }
    });
  }
  /// Trains on a dataset: any range whose elements are (inputs, labels) pairs of tensors,
  /// e.g. a tf::data pipeline (one pass = one epoch). Under MultiWorkerMirroredStrategy a
  /// pipeline reading a file list is sharded by file across the workers (TensorFlow's
  /// AutoShardPolicy AUTO); other datasets give every worker the same global batches.
  template <std::ranges::input_range Dataset>
    requires(!std::same_as<std::remove_cvref_t<Dataset>, AnyTensor>)
  History fit(Dataset&& dataset, FitOptions options = {}) {
    if constexpr (std::ranges::viewable_range<Dataset&>) {
      if (strategy_ != nullptr && strategy_->num_workers > 1) {
        // Across workers a pipeline reading files is sharded by file, as TensorFlow's
        // AutoShardPolicy AUTO does; others pass every worker the same global batches.
        auto distributed = distribute::Strategy(strategy_).experimental_distribute_dataset(dataset);
        if (distributed.own_batches()) {
          return fit_worker_batches(distributed, options);
        }
      }
    }
    std::optional<std::int64_t> steps;
    if constexpr (std::ranges::sized_range<Dataset>) {
      steps = std::int64_t(std::ranges::size(dataset));
    }
    return run_fit(options, steps, [&](auto&& step) {
      for (auto&& element : dataset) {
        auto&& [bx, by] = element;
        const AnyTensor x(bx);
        step(train_step(x, AnyTensor(by)), double(x.shape()[0]));
      }
    });
  }

  /// Loss and metrics on in-memory tensors (Keras returns them in compile order; here by name).
  Logs evaluate(const AnyTensor& x, const AnyTensor& y, EvaluateOptions options = {}) {
    check_xy(x, y, "evaluate");
    const std::int64_t n = x.shape()[0];
    const std::int64_t bs = std::max<std::int64_t>(1, options.batch_size);
    const std::int64_t steps = (n + bs - 1) / bs;
    return run_evaluate(options.verbose, steps, [&](auto&& step) {
      std::vector<std::int64_t> rows;
      for (std::int64_t s = 0; s < steps; ++s) {
        rows.clear();
        for (std::int64_t i = s * bs; i < std::min(n, (s + 1) * bs); ++i) {
          rows.push_back(i);
        }
        step(detail::keras_impl::take_rows(x, rows), detail::keras_impl::take_rows(y, rows));
      }
    });
  }
  /// Loss and metrics over a dataset of (inputs, labels) pairs.
  template <std::ranges::input_range Dataset>
    requires(!std::same_as<std::remove_cvref_t<Dataset>, AnyTensor>)
  Logs evaluate(Dataset&& dataset, EvaluateOptions options = {}) {
    std::optional<std::int64_t> steps;
    if constexpr (std::ranges::sized_range<Dataset>) {
      steps = std::int64_t(std::ranges::size(dataset));
    }
    return run_evaluate(options.verbose, steps, [&](auto&& step) {
      for (auto&& element : dataset) {
        auto&& [bx, by] = element;
        step(AnyTensor(bx), AnyTensor(by));
      }
    });
  }

  /// Outputs for every example of `x`, computed in batches (training = false).
  AnyTensor predict(const AnyTensor& x, PredictOptions options = {}) {
    if (x.rank() == 0) {
      throw invalid_argument("Model::predict: inputs must have a batch axis");
    }
    const std::int64_t n = x.shape()[0];
    const std::int64_t bs = std::max<std::int64_t>(1, options.batch_size);
    std::vector<AnyTensor> parts;
    std::vector<std::int64_t> rows;
    utils::Progbar bar((n + bs - 1) / bs, options.verbose);
    for (std::int64_t s = 0; s * bs < n; ++s) {
      rows.clear();
      for (std::int64_t i = s * bs; i < std::min(n, (s + 1) * bs); ++i) {
        rows.push_back(i);
      }
      parts.push_back(
          predict_function_(this, runs_eagerly(), detail::keras_impl::take_rows(x, rows)));
      bar.update(s + 1, {});
    }
    return detail::keras_impl::concat_rows(parts);
  }

  /// Writes the weights (and a compiled optimizer's state) in the format the file name picks,
  /// as Keras 3 picks it: `*.weights.h5` is Keras 3's HDF5 file (needs tapeflow::keras_io);
  /// any other path is a TensorFlow checkpoint prefix (`P.index`, `P.data-00000-of-00001` and
  /// the directory's `checkpoint` file), as tf_keras writes. Defined in keras/weights.hpp
  /// (in the keras umbrella).
  template <class D = void>
  auto save_weights(const std::string& filepath, const SaveWeightsOptions& options = {});
  /// Reads weights written by `save_weights` or by Keras: `*.weights.h5`, a whole-model `.keras`
  /// archive (its `model.weights.h5`), or a TensorFlow checkpoint prefix. HDF5 files need the
  /// model built and are checked completely before any weight changes; a checkpoint prefix
  /// restores into an unbuilt model when its layers build (`tf::train::Checkpoint` rules).
  /// Defined in keras/weights.hpp.
  template <class D = void>
  auto load_weights(const std::string& filepath, const LoadWeightsOptions& options = {});

  /// Prints Keras' summary table: layer (type), output shape, parameter count.
  virtual void summary(std::ostream& os = std::cout) {
    constexpr int w1 = 29, w2 = 26, w3 = 10;
    const std::string rule(65, '_'), thick(65, '=');
    os << "Model: \"" << name() << "\"\n" << rule << "\n";
    os << std::left << std::setw(w1) << " Layer (type)" << std::setw(w2) << "Output Shape"
       << std::setw(w3) << "Param #"
       << "\n"
       << thick << "\n";
    auto rows = summary_rows();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& [label, shape, params] = rows[i];
      os << std::left << std::setw(w1) << (" " + label) << std::setw(w2) << shape << std::setw(w3)
         << params << "\n";
      if (i + 1 < rows.size()) {
        os << "\n";  // Keras 2 separates rows with a blank line
      }
    }
    os << thick << "\n";
    const auto total = count_params();
    std::int64_t trainable = 0;
    for (const auto& v : trainable_variables()) {
      trainable += v.num_elements();
    }
    os << "Total params: " << with_commas(total) << "\n";
    os << "Trainable params: " << with_commas(trainable) << "\n";
    os << "Non-trainable params: " << with_commas(total - trainable) << "\n" << rule << "\n";
  }

  /// The class name shown by summary ("Sequential", "Dense", ...).
  [[nodiscard]] std::string class_name() const override { return "Model"; }

 protected:
  /// Rows of the summary table: "name (Type)", output shape text, parameter count.
  struct SummaryRow {
    std::string label;    ///< "name (Type)"
    std::string shape;    ///< output shape, e.g. "(None, 10)"
    std::int64_t params;  ///< parameter count
  };
  /// One row per child layer (its name, "multiple", its parameter count); Sequential overrides
  /// it with the layers' types and output shapes.
  virtual std::vector<SummaryRow> summary_rows() {
    std::vector<SummaryRow> rows;
    for (Layer<>* l : sublayers()) {
      rows.push_back({l->name(), "multiple", l->count_params()});
    }
    return rows;
  }

  /// Calls a typed member `call(const Tensor<float, R>&, bool)` on a type-erased batch,
  /// casting numeric inputs to float (Keras layers cast their inputs).
  template <class Self, class Out, std::size_t R>
  static AnyTensor call_typed(Self& self, Out (Self::*fn)(const Tensor<float, R>&, bool),
                              const AnyTensor& x, bool training) {
    if (x.rank() != R) {
      throw invalid_argument("Model '" + self.name() + "': expected inputs of rank " +
                             std::to_string(R) + ", got shape " + x.shape().to_string());
    }
    return AnyTensor((self.*fn)(detail::keras_impl::as_float<R>(x), training));
  }

  /// Keras' text of an output shape, the batch axis as None: [32, 10] -> "(None, 10)".
  static std::string shape_text(const Shape& s) {
    std::string t = "(None";
    for (std::size_t i = 1; i < s.rank(); ++i) {
      t += ", " + std::to_string(s[i]);
    }
    return t + ")";
  }

 private:
  // The gradients of `vars` from `tape` seeded with zeros at `y_pred` (float, rank 1 to 4):
  // the backward pass runs (and joins its collectives) and every gradient is zero.
  static std::vector<AnyTensor> zero_seeded_gradients(GradientTape& tape, const AnyTensor& y_pred,
                                                      const std::vector<AnyVariable>& vars) {
    return tapeflow::detail::visit_rank<1, 4>(
        y_pred.rank(), "fit: predictions of shape " + y_pred.shape().to_string(),
        [&]<std::size_t R>() {
          const auto p = y_pred.as<float, R>();
          return tape.gradient_by_id(p, ids_of(vars), std::optional(zeros_like(p)));
        });
  }
  static std::string with_commas(std::int64_t v) {
    std::string s = std::to_string(v);
    for (int i = int(s.size()) - 3; i > 0; i -= 3) {
      s.insert(std::size_t(i), ",");
    }
    return s;
  }
  void require_compiled(const char* what) const {
    if (!is_compiled_) {
      throw failed_precondition(std::string("Model::") + what +
                                ": the model must be compiled first (call compile)");
    }
  }
  static void check_xy(const AnyTensor& x, const AnyTensor& y, const char* what) {
    if (x.rank() == 0 || y.rank() == 0 || x.shape()[0] != y.shape()[0]) {
      throw invalid_argument(std::string("Model::") + what + ": inputs of shape " +
                             x.shape().to_string() + " and labels of shape " +
                             y.shape().to_string() + " must share the first (example) axis");
    }
  }
  void reset_metrics() {
    for (auto& m : compiled_.metrics) {
      m->reset_state();
    }
  }
  // The loss and the metrics' values. In fit across workers, each worker's metrics saw only its
  // replicas' rows: their states are summed over the workers (every Keras metric's state adds
  // up, as TensorFlow's SUM-aggregated metric variables do), read, and restored.
  utils::Progbar::Values current_values(double loss, bool across_workers = false) const {
    std::vector<AnyVariable> states;
    std::vector<AnyTensor> local;
    if (across_workers && strategy_ != nullptr && strategy_->num_workers > 1) {
      for (const auto& m : compiled_.metrics) {
        for (const auto& child : m->trackable_children(train::Layout::keras3)) {
          if (child.variable.has_value()) {
            states.push_back(child.variable);
            local.push_back(child.variable.value());
          }
        }
      }
      std::vector<AnyTensor> summed = local;
      strategy_->all_reduce_across_workers(summed);
      for (std::size_t i = 0; i < states.size(); ++i) {
        states[i].assign(summed[i]);
      }
    }
    utils::Progbar::Values v{{"loss", loss}};
    for (const auto& m : compiled_.metrics) {
      v.emplace_back(m->name(), m->result());
    }
    for (std::size_t i = 0; i < states.size(); ++i) {
      states[i].assign(local[i]);
    }
    return v;
  }

  // fit over each worker's own batches (AutoShardPolicy FILE): each step, this worker's
  // replicas take their pieces, and the global batch's rows are summed over the workers.
  template <class Distributed>
  History fit_worker_batches(Distributed& distributed, const FitOptions& options) {
    return run_fit(options, std::nullopt, [&](auto&& step) {
      for (const auto& batch : distributed) {
        distribute::PerReplica<AnyTensor> xs;
        distribute::PerReplica<AnyTensor> ys;
        double local_rows = 0;
        for (const auto& element : batch.values) {
          const auto& [bx, by] = element;
          xs.values.emplace_back(bx);
          ys.values.emplace_back(by);
          local_rows += double(xs.values.back().shape()[0]);
        }
        check_xy(xs.values[0], ys.values[0], "fit");
        build_mirrored(xs.values[0]);
        AnyTensor rows{Tensor<double, 0>(local_rows)};
        strategy_->all_reduce_across_workers(std::span<AnyTensor>(&rows, 1));
        const double global_rows = rows.as<double, 0>().item();
        step(replicas_train_step(xs, ys, std::int64_t(global_rows)), global_rows);
      }
    });
  }

  template <class Loop>
  History run_fit(const FitOptions& options, std::optional<std::int64_t> steps, Loop&& loop) {
    require_compiled("fit");
    History history;
    for (auto& c : options.callbacks) {
      c->set_model(*this);
      c->on_train_begin({});
    }
    for (int epoch = 0; epoch < options.epochs; ++epoch) {
      if (options.verbose != 0) {
        std::cout << "Epoch " << epoch + 1 << "/" << options.epochs << "\n";
      }
      for (auto& c : options.callbacks) {
        c->on_epoch_begin(epoch, {});
      }
      reset_metrics();
      utils::Progbar bar(steps, options.verbose);  // after epoch 1, steps is known (as in Keras)
      double loss_sum = 0, count = 0;
      std::int64_t step = 0;
      loop([&](double batch_loss, double batch) {
        loss_sum += batch_loss * batch;
        count += batch;
        ++step;
        auto values = current_values(loss_sum / count, true);
        bar.update(step, values);
        if (!options.callbacks.empty()) {
          Logs logs(values.begin(), values.end());
          for (auto& c : options.callbacks) {
            c->on_train_batch_end(step - 1, logs);
          }
        }
      });
      auto values = current_values(count > 0 ? loss_sum / count : 0.0, true);
      if (options.validation_data) {
        auto val = evaluate(options.validation_data->first, options.validation_data->second,
                            {.batch_size = options.batch_size, .verbose = 0});
        for (auto& [k, v] : val) {
          values.emplace_back("val_" + k, v);
        }
      }
      bar.update(step, values, true);
      Logs logs(values.begin(), values.end());
      for (auto& [k, v] : logs) {
        history.history[k].push_back(v);
      }
      history.epochs = epoch + 1;
      if (!steps) {
        steps = step;
      }
      for (auto& c : options.callbacks) {
        c->on_epoch_end(epoch, logs);
      }
    }
    for (auto& c : options.callbacks) {
      c->on_train_end({});
    }
    return history;
  }

  template <class Loop>
  Logs run_evaluate(int verbose, std::optional<std::int64_t> steps, Loop&& loop) {
    require_compiled("evaluate");
    reset_metrics();
    utils::Progbar bar(steps, verbose);
    double loss_sum = 0, count = 0;
    std::int64_t step = 0;
    loop([&](const AnyTensor& bx, const AnyTensor& by) {
      const double batch = double(bx.shape()[0]);
      loss_sum += test_step(bx, by) * batch;
      count += batch;
      ++step;
      bar.update(step, current_values(loss_sum / count));
    });
    auto values = current_values(count > 0 ? loss_sum / count : 0.0);
    bar.update(step, values, true);
    return Logs(values.begin(), values.end());
  }

  // Whether evaluate and predict run eagerly: as compiled, and always under a strategy with
  // several replicas (whose steps are not traced yet).
  [[nodiscard]] bool runs_eagerly() const {
    return compiled_.run_eagerly || (strategy_ != nullptr && strategy_->num_replicas_in_sync() > 1);
  }

  // A step that fit, evaluate or predict runs on each batch, as Keras runs its train, test and
  // predict functions: the first call runs `Body` eagerly (creating what it creates: the
  // layers' weights, the optimizer's slots), later ones run it as a tf::function, one trace per
  // batch shape. Shapes are exact: every dim is known at trace time (what fusion sizes its
  // chunks by, and what Dropout's mask and a mean's gradient need). Batches of ever-new shapes
  // (variable-length sequences) step eagerly past kMaxTraces shapes instead of tracing each.
  template <class Body>
  class TracedStep {
   public:
    template <class... Batch>
    std::invoke_result_t<Body, Model*, const Batch&...> operator()(Model* model, bool run_eagerly,
                                                                   const Batch&... batch) {
      if (run_eagerly || !function_ || !traces(batch...)) {
        auto result = Body{}(model, batch...);
        if (!run_eagerly && !function_) {
          // The step caps its traces itself, so the retrace warning never fires.
          function_.emplace(Body{}, FunctionOptions{.shape_policy = ShapePolicy::exact,
                                                    .max_traces_before_warning = kMaxTraces,
                                                    .name = Body::name});
        }
        return result;
      }
      try {
        return (*function_)(model, batch...);
      } catch (const failed_precondition& e) {
        // Most likely the model's call read a value on the host while being traced.
        throw failed_precondition(std::string(e.what()) + " [in the traced " + Body::name +
                                  ": compile the model with {.run_eagerly = true} to run "
                                  "every step eagerly]");
      }
    }
    void reset() {
      function_.reset();
      signatures_.clear();
    }
    [[nodiscard]] const Function<Body>* function() const noexcept {
      return function_ ? &*function_ : nullptr;
    }

   private:
    static constexpr int kMaxTraces = 8;
    // Whether this batch's signature runs traced: it was traced, or there is room for it.
    template <class... Batch>
    bool traces(const Batch&... batch) {
      std::vector<TensorSpec> signature{TensorSpec{batch.dtype(), batch.shape()}...};
      const auto same = [&](const std::vector<TensorSpec>& s) {
        return std::ranges::equal(s, signature, [](const TensorSpec& a, const TensorSpec& b) {
          return a.dtype == b.dtype && a.shape == b.shape;
        });
      };
      if (std::ranges::any_of(signatures_, same)) {
        return true;
      }
      if (signatures_.size() == std::size_t(kMaxTraces)) {
        return false;
      }
      signatures_.push_back(std::move(signature));
      return true;
    }
    std::optional<Function<Body>> function_;
    std::vector<std::vector<TensorSpec>> signatures_;  // one per trace
  };

  // The steps' tensor work; metrics update outside, on the host. The model is an argument,
  // not a member, so a moved model retraces.
  struct TrainStepBody {
    static constexpr const char* name = "train_function";
    std::pair<Tensor<float, 0>, AnyTensor> operator()(Model* model, const AnyTensor& x,
                                                      const AnyTensor& y) const {
      GradientTape tape;
      AnyTensor y_pred = model->call_any(x, true);
      Tensor<float, 0> loss = model->compiled_.loss.get()(y, y_pred);
      tape.stop();
      auto vars = model->trainable_variables();
      auto grads = tape.gradient_by_id(loss, ids_of(vars));
      model->compiled_.optimizer.get().apply_gradients(grads, vars);
      return {loss, y_pred};
    }
  };
  struct TestStepBody {
    static constexpr const char* name = "test_function";
    std::pair<Tensor<float, 0>, AnyTensor> operator()(Model* model, const AnyTensor& x,
                                                      const AnyTensor& y) const {
      AnyTensor y_pred = model->call_any(x, false);
      return {model->compiled_.loss.get()(y, y_pred), y_pred};
    }
  };
  struct PredictStepBody {
    static constexpr const char* name = "predict_function";
    AnyTensor operator()(Model* model, const AnyTensor& x) const {
      return model->call_any(x, false);
    }
  };

  CompileOptions compiled_;
  bool is_compiled_ = false;
  TracedStep<TrainStepBody> train_function_;
  TracedStep<TestStepBody> test_function_;
  TracedStep<PredictStepBody> predict_function_;
  std::shared_ptr<distribute::detail::StrategyState> strategy_;
};

namespace detail_model {
/// `x` as the tensor type `call` takes for rank R: the input's own integer dtype when call
/// takes int32/int64 tensors (token ids), else float32 (Keras layers cast inputs to float).
/// Whether `Derived::call` takes an `In` (with or without the training flag) and returns a
/// tensor.
template <class Derived, class In>
concept callable_with = requires(Derived& d, const In& in) { AnyTensor(d.call(in, true)); } ||
                        requires(Derived& d, const In& in) { AnyTensor(d.call(in)); };

template <class Derived, std::size_t R, class Self>
AnyTensor call_erased(Self& self, const AnyTensor& x, bool training) {
  auto run = [&]<class T>() -> std::optional<AnyTensor> {
    if constexpr (callable_with<Derived, Tensor<T, R>>) {
      return AnyTensor(self(detail::keras_impl::convert<T, R>(x, "tf::keras::Model input"),
                            CallOptions{.training = training}));
    } else {
      return std::nullopt;
    }
  };
  std::optional<AnyTensor> out;
  if (x.dtype() == DType::int32 || x.dtype() == DType::int64) {
    out = x.dtype() == DType::int32 ? run.template operator()<std::int32_t>()
                                    : run.template operator()<std::int64_t>();
    if (!out) {
      out = x.dtype() == DType::int32 ? run.template operator()<std::int64_t>()
                                      : run.template operator()<std::int32_t>();
    }
  }
  if (!out) {
    out = run.template operator()<float>();
  }
  if (!out) {
    throw invalid_argument("tf::keras::Model '" + self.name() +
                           "': call() takes no input of rank " + std::to_string(R) +
                           " (got shape " + x.shape().to_string() + ", " +
                           std::string(dtype_name(x.dtype())) + ")");
  }
  return *out;
}
}  // namespace detail_model

/// A model class (tf.keras.Model subclass): child layers are data members (registered with
/// `TAPEFLOW_TRACK`), the forward pass is `call`, and `model(x)`, `fit`, `evaluate` and
/// `predict` come with it:
///
///     struct MLP : tf::keras::Model<MLP> {
///       tf::keras::layers::Flatten flatten;
///       tf::keras::layers::Dense dense1{100, {.activation = tf::nn::relu}}, dense2{10};
///       MLP() { TAPEFLOW_TRACK(flatten, dense1, dense2); }
///       tf::Tensor<float, 2> call(const tf::Tensor<float, 4>& inputs) {
///         return tf::nn::softmax(dense2(dense1(flatten(inputs))));
///       }
///     };
///
/// `call` may take a `bool training` second parameter (`model(x, {.training = true})`).
template <class Derived>
class Model : public Model<void> {
 public:
  /// Named after the class in snake_case ("MLP" -> "mlp", uniquified).
  Model() : Model<void>(detail::keras_impl::default_layer_name<Derived>()) {}
  /// Takes the common layer options; without `options.name`, named as the default constructor
  /// names it.
  explicit Model(LayerOptions options)
      : Model<void>(detail::keras_impl::default_layer_name<Derived>(), std::move(options)) {}
  using Model<void>::Model;

  /// The class's own name ("MLP"), as a nested model's summary row shows it.
  [[nodiscard]] std::string class_name() const override {
    return detail::keras_impl::class_name_of<Derived>();
  }

  /// Builds on the first call, then runs `call` (Keras: `model(x)`, `model(x, training=True)`).
  template <class X>
  decltype(auto) operator()(const X& x, CallOptions options = {}) {
    return detail::keras_impl::invoke_call(static_cast<Derived&>(*this), *this, x, options);
  }
  /// Extra arguments go to `call`.
  template <class X, class A, class... More>
  decltype(auto) operator()(const X& x, A&& a, More&&... more) {
    return detail::keras_impl::invoke_call(static_cast<Derived&>(*this), *this, x,
                                           std::forward<A>(a), std::forward<More>(more)...);
  }

  /// fit/evaluate/predict's entry: dispatches on the batch's rank to `call`.
  AnyTensor call_any(const AnyTensor& x, bool training) override {
    return detail::keras_impl::with_rank(x.rank(), "tf::keras::Model", [&]<std::size_t R>() {
      return detail_model::call_erased<Derived, R>(*this, x, training);
    });
  }

 protected:
  /// `sizeof(Derived)`, which bounds `track`'s membership check.
  [[nodiscard]] std::size_t object_size() const noexcept override { return sizeof(Derived); }
};

}  // namespace keras
TAPEFLOW_END_NAMESPACE
