// tf.keras.optimizers: SGD (momentum, nesterov), Adam, RMSprop, with `apply_gradients` and a
// learning rate given as a value or a schedule.
//
// The update rules are Keras's (Keras 3 and tf_keras agree on them). An optimizer builds on its
// first step: it creates every slot for every variable it is given, in Keras's order (per
// variable, each slot in turn), so its object graph matches Keras's under each layout
// (Note [Object-graph layouts]): Keras 3 and tf_keras list `_iterations`, `_learning_rate` and
// the slots as a flat `_variables` list; tf_keras legacy optimizers track "iter",
// "learning_rate", "decay" and the hyperparameters as variables and the slots ("m", "v" for
// Adam, "rms" for RMSprop, "momentum" for SGD with momentum) as slot references.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/visit_rank.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/replica_context.hpp>
#include <tapeflow/function/detail/control_flow_gradient.hpp>
#include <tapeflow/keras/schedules.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/cast.hpp>
#include <tapeflow/ops/op_concepts.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/ops/state/variable.hpp>
#include <tapeflow/ops/training/resource_apply.hpp>
#include <tapeflow/train/trackable.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace keras {

/// d loss / d var for each variable (empty AnyTensor where the loss does not depend on it):
/// `tape.gradient(loss, model.trainable_variables())` for mixed-rank variable lists.
inline std::vector<AnyTensor> gradient(GradientTape& tape, const Tensor<float, 0>& loss,
                                       const std::vector<AnyVariable>& vars) {
  return tape.gradient_by_id(loss, ids_of(vars));
}

namespace optimizers {

/// A learning rate: a number or a schedule (`schedules::ExponentialDecay(...)`, any
/// `double(std::int64_t step)` callable).
class LearningRate {
 public:
  /// A constant rate.
  LearningRate(double value) : value_(value) {}  // NOLINT(google-explicit-constructor)
  /// A rate that depends on the step (the optimizer's `iterations` before the update).
  LearningRate(schedules::LearningRateSchedule s)  // NOLINT(google-explicit-constructor)
      : schedule_(std::move(s)) {}
  /// The rate at `step`.
  [[nodiscard]] double at(std::int64_t step) const { return schedule_ ? schedule_(step) : value_; }
  /// Whether it is a schedule rather than a constant.
  [[nodiscard]] bool is_schedule() const noexcept { return bool(schedule_); }
  /// The schedule (empty for a constant rate).
  [[nodiscard]] const schedules::LearningRateSchedule& schedule() const noexcept {
    return schedule_;
  }

 private:
  double value_ = 0.001;
  schedules::LearningRateSchedule schedule_;
};

}  // namespace optimizers
}  // namespace keras

namespace ops {
/// Evaluates a learning-rate schedule at a step (the `iterations` variable's value). Keras
/// writes a schedule in ops that TensorFlow traces; a tapeflow schedule is any C++ callable, so
/// a traced function calls it from this op, which has no TensorFlow counterpart (it cannot be
/// exported to a SavedModel; training steps are not).
struct ScheduleLearningRate {
  static constexpr std::string_view name = "ScheduleLearningRate";
  static constexpr bool stateful = true;  // calls user code
  static constexpr bool differentiable = false;
  keras::optimizers::schedules::LearningRateSchedule schedule;

  [[nodiscard]] OutSpec<float, 0> infer(const Tensor<std::int64_t, 0>&) const { return {}; }
  void compute(Tensor<float, 0>& lr, const Tensor<std::int64_t, 0>& step) const {
    *detail::tensor_access::mutable_data(lr) = float(schedule(*step.data()));
  }
};
}  // namespace ops

namespace keras {
namespace optimizers {

/// A slot variable: optimizer state kept per model variable.
struct SlotVariable {
  AnyVariable original;   ///< the model variable
  std::string slot_name;  ///< "m", "v", "momentum", "rms"
  AnyVariable slot;       ///< the state (same shape as the original)
};

/// Base of optimizers (tf.keras.optimizers.Optimizer). Copies share state (slots, iterations),
/// as Python references to one optimizer do.
class Optimizer : public train::Trackable {
 public:
  /// Applies one update per (gradient, variable) pair; empty gradients are skipped (Keras
  /// warns and skips them too). Increments `iterations` once.
  void apply_gradients(std::span<const AnyTensor> grads, std::span<const AnyVariable> vars) {
    apply_step(grads, vars, nullptr);
  }
  /// As above, taking the gradients (`apply_gradients(tf::keras::gradient(...), vars)`): inside
  /// strategy.run, the all-reduce may then sum into their buffers instead of copies.
  void apply_gradients(std::vector<AnyTensor>&& grads, std::span<const AnyVariable> vars) {
    apply_step(grads, vars, &grads);
  }
  /// Typed form: `optimizer.apply_gradients(grads, {&w, &b})` with optional gradients.
  template <std::size_t R>
  void apply_gradients(const std::vector<std::optional<Tensor<float, R>>>& grads,
                       const std::vector<Variable<float, R>*>& vars) {
    std::vector<AnyTensor> g;
    std::vector<AnyVariable> v;
    for (std::size_t i = 0; i < grads.size() && i < vars.size(); ++i) {
      g.push_back(grads[i] ? AnyTensor(*grads[i]) : AnyTensor{});
      v.emplace_back(*vars[i]);
    }
    apply_gradients(std::span<const AnyTensor>(g), std::span<const AnyVariable>(v));
    if (grads.size() != vars.size()) {
      throw invalid_argument("Optimizer::apply_gradients: gradient and variable counts differ");
    }
  }

 private:
  // apply_gradients; `owned` (when given) holds `grads` and may be moved from, so only the
  // all-reduce under a strategy takes a copy of a caller's gradients.
  void apply_step(std::span<const AnyTensor> grads, std::span<const AnyVariable> vars,
                  std::vector<AnyTensor>* owned) {
    if (grads.size() != vars.size()) {
      throw invalid_argument("Optimizer::apply_gradients: " + std::to_string(grads.size()) +
                             " gradients for " + std::to_string(vars.size()) + " variables");
    }
    // Inside a tf::function being traced, each update becomes a graph node running the same
    // in-place kernel when the function runs (TensorFlow's ResourceApply* ops), and the
    // learning rate is read from its schedule then, at the step the function runs.
    for (std::size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].has_value() && !grads[i].is_symbolic()) {
        continue;
      }
      if (vars[i].dtype() != DType::float32 || grads[i].dtype() != DType::float32) {
        throw invalid_argument("Optimizer::apply_gradients: variable '" + vars[i].name() +
                               "' and its gradient must be float32");
      }
      if (grads[i].shape() != vars[i].shape()) {
        throw invalid_argument("Optimizer::apply_gradients: gradient of shape " +
                               grads[i].shape().to_string() + " for variable '" + vars[i].name() +
                               "' of shape " + vars[i].shape().to_string());
      }
    }
    if (auto* replica = distribute::get_replica_context();
        replica != nullptr && replica->num_replicas_in_sync() > 1) {
      // Inside strategy.run: sum the replicas' gradients, then every replica applies the same
      // update to its copies (Note [Mirrored variables]).
      const bool traced =
          std::ranges::any_of(grads, [](const AnyTensor& g) { return g.is_symbolic(); });
      const std::vector<AnyTensor> summed =
          traced ? all_reduce_traced(grads, vars)
                 : all_reduce_gradients(*replica,
                                        owned != nullptr
                                            ? std::move(*owned)
                                            : std::vector<AnyTensor>(grads.begin(), grads.end()),
                                        vars);
      if (!s_->built) {
        replica->merge_call([&] { build(vars); });
      }
      require_mirrored(vars, replica->num_local_replicas());
      apply_built(summed, vars);
      return;
    }
    for (const auto& v : vars) {
      if (v.num_copies() > 1) {
        throw failed_precondition("Optimizer::apply_gradients: variable '" + v.name() +
                                  "' is mirrored; apply its gradients inside strategy.run");
      }
    }
    build(vars);  // first step only
    apply_built(grads, vars);
  }

  // The updates of one step, on this thread's copies of the variables.
  void apply_built(std::span<const AnyTensor> grads, std::span<const AnyVariable> vars) {
    // Every update is an op (ResourceApply*, ReadVariableOp, ...): eager, they run now; in a
    // tf::function being traced, they become nodes that run, in this order, at each call, with
    // the learning rate of the step that call runs.
    const Tensor<float, 0> lr = learning_rate_tensor();
    const std::vector<Tensor<float, 0>> step = prepare_step(lr);
    for (std::size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].has_value() && !grads[i].is_symbolic()) {
        continue;
      }
      apply_update(vars[i], grads[i], lr, step);
    }
    s_->iter.assign_add(Tensor<std::int64_t, 0>(1));
  }

  // In a tf::function traced inside strategy.run: one graph node (GradientAllReduce) that at
  // each call sums the gradients as the eager step does, in packs (all_reduce_gradients), not
  // one rendezvous per gradient. Every replica traces the same code, so every replica's graph
  // has the same gradients and the same node.
  static std::vector<AnyTensor> all_reduce_traced(std::span<const AnyTensor> grads,
                                                  std::span<const AnyVariable> vars) {
    detail::trace::Graph& graph = *detail::trace::active();
    detail::trace::GraphNode node;
    node.op = "GradientAllReduce";
    node.stateful = true;  // talks to the other replicas
    node.export_error =
        "apply_gradients under a strategy: the gradients' all-reduce needs the replicas of "
        "strategy.run, which a TensorFlow graph does not have";
    std::vector<std::size_t> engaged;
    std::vector<AnyTensor> outputs;
    std::vector<AnyVariable> reduced_vars;
    for (std::size_t i = 0; i < grads.size(); ++i) {
      if (grads[i].engaged()) {
        engaged.push_back(i);
        node.inputs.push_back(graph.slot_of(grads[i]));
        outputs.push_back(AnyTensor::symbolic(grads[i].dtype(), grads[i].shape()));
        reduced_vars.push_back(vars[i]);
      }
    }
    std::vector<AnyTensor> out(grads.size());
    if (engaged.empty()) {
      return out;
    }
    auto stash = std::make_shared<std::vector<AnyTensor>>();
    node.run = [reduced_vars, stash](std::span<const AnyTensor> values) -> AnyTensor {
      auto* replica = distribute::get_replica_context();
      if (replica == nullptr) {
        throw failed_precondition(
            "GradientAllReduce: a graph traced inside strategy.run ran outside it");
      }
      return detail::cf::hand_out(
          all_reduce_gradients(*replica, std::vector<AnyTensor>(values.begin(), values.end()),
                               reduced_vars),
          *stash);
    };
    detail::cf::append(graph, std::move(node), outputs, stash);
    for (std::size_t k = 0; k < engaged.size(); ++k) {
      out[engaged[k]] = outputs[k];
    }
    return out;
  }

  // The replicas' gradients summed, in packs of at most bytes_per_pack, last variable first
  // (the backward pass produces those first). A gradient some replica lacks counts as zeros
  // there; one no replica has stays empty, so the update skips it as a single replica would.
  // Which replicas had which gradient travels in the first pack: one rendezvous fewer per step.
  static std::vector<AnyTensor> all_reduce_gradients(distribute::ReplicaContext& replica,
                                                     std::vector<AnyTensor> grads,
                                                     std::span<const AnyVariable> vars) {
    const std::size_t n = grads.size();
    std::vector<std::int32_t> present(n);
    std::vector<AnyTensor> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      present[i] = grads[i].has_value() ? 1 : 0;
      out[i] = grads[i].has_value() ? std::move(grads[i]) : vars[i].zeros_like();
    }
    AnyTensor counts(tapeflow::from_vector(std::move(present)));
    const std::int64_t pack_bytes = replica.bytes_per_pack();
    std::vector<AnyTensor> pack;
    std::vector<std::size_t> pack_index;
    std::int64_t bytes = 0;
    bool counted = false;
    const auto flush = [&] {
      if (pack.empty()) {
        return;
      }
      if (!counted) {
        pack.push_back(std::move(counts));
      }
      replica.all_reduce(distribute::ReduceOp::sum, std::span<AnyTensor>(pack));
      if (!counted) {
        counts = std::move(pack.back());
        pack.pop_back();
        counted = true;
      }
      for (std::size_t k = 0; k < pack.size(); ++k) {
        out[pack_index[k]] = std::move(pack[k]);
      }
      pack.clear();
      pack_index.clear();
      bytes = 0;
    };
    for (std::size_t i = n; i-- > 0;) {
      const std::int64_t size = out[i].num_elements() * std::int64_t(sizeof(float));
      if (!pack.empty() && bytes + size > pack_bytes) {
        flush();
      }
      pack.push_back(std::move(out[i]));
      pack_index.push_back(i);
      bytes += size;
    }
    flush();
    const auto* count = static_cast<const std::int32_t*>(counts.raw_data());
    for (std::size_t i = 0; i < n; ++i) {
      if (count[i] == 0) {
        out[i] = AnyTensor();
      }
    }
    return out;
  }

  // Every variable a replica updates must have one copy per replica; a variable made outside
  // the strategy's scope would be updated by every replica at once.
  void require_mirrored(std::span<const AnyVariable> vars, int replicas) const {
    auto check = [&](const AnyVariable& v) {
      if (v.num_copies() != static_cast<std::size_t>(replicas)) {
        throw invalid_argument("Optimizer::apply_gradients: variable '" + v.name() + "' has " +
                               std::to_string(v.num_copies()) + " copies for " +
                               std::to_string(replicas) +
                               " replicas; create the model and optimizer under "
                               "strategy.scope()");
      }
    };
    for (const auto& v : vars) {
      check(v);
    }
    check(AnyVariable(s_->iter));
    for (const auto& sv : s_->slot_list) {
      check(sv.slot);
    }
  }

 public:
  /// Number of updates applied so far (Keras: `optimizer.iterations`).
  [[nodiscard]] std::int64_t iterations() const { return s_->iter.value().item(); }
  /// The variable counting the updates (checkpointed as `iter` / `_iterations`).
  [[nodiscard]] const Variable<std::int64_t, 0>& iterations_variable() const { return s_->iter; }
  /// The learning rate at the current step.
  [[nodiscard]] double current_learning_rate() const { return learning_rate_at(iterations()); }
  /// Creates the slots of every variable in `vars`, in Keras's order (each variable's slots in
  /// turn). apply_gradients does it on the first step; calling it earlier lets a checkpoint
  /// restore the slots before training starts.
  void build(std::span<const AnyVariable> vars) {
    if (s_->built) {
      return;
    }
    s_->built = true;
    s_->built_vars.assign(vars.begin(), vars.end());
    for (const auto& v : vars) {
      if (v.dtype() != DType::float32) {
        continue;  // not updated (apply_gradients refuses its gradients)
      }
      for (const char* name : slot_names()) {
        (void)slot(v, name);
      }
    }
    notify_children_changed();
  }
  /// Whether the slots exist (after the first step or `build`).
  [[nodiscard]] bool built() const noexcept { return s_->built; }
  /// "SGD", "Adam", "RMSprop": the prefix of its variables' names.
  [[nodiscard]] const std::string& name() const noexcept { return s_->name; }
  /// The op name of the update in traced graphs (TensorFlow's kernel for the same rule).
  [[nodiscard]] virtual std::string apply_op_name() const = 0;

  /// The optimizer's state under `layout` (Note [Object-graph layouts]).
  [[nodiscard]] std::vector<train::TrackableReference> trackable_children(
      train::Layout layout) override {
    using train::Layout;
    using train::TrackableList;
    std::vector<train::TrackableReference> out;
    if (layout == Layout::tf_keras_legacy) {
      out.push_back({.name = "iter", .variable = s_->iter});
      for (auto& [n, v] : s_->hyper) {
        out.push_back({.name = n, .variable = v});
      }
      return out;
    }
    if (layout == Layout::tf_keras) {
      for (const char* name : tf_keras_extra_slot_names()) {
        for (const auto& v : s_->built_vars) {
          (void)slot(v, name);  // tf_keras creates them even where the rule never reads them
        }
      }
    }
    const bool keras3 = layout == Layout::keras3;
    // Keras 3 tracks a schedule as an object, not a variable; tf_keras keeps its current value
    // in `_current_learning_rate`.
    const bool lr_variable = !(keras3 && learning_rate_.is_schedule());
    auto variables = std::make_shared<TrackableList>();
    variables->push_back({.variable = s_->iter});
    if (keras3 && lr_variable) {
      variables->push_back({.variable = s_->lr_var});
    }
    for (const auto& sv : s_->slot_list) {
      variables->push_back({.variable = sv.slot});
    }
    out.push_back({.name = "_variables", .owned = std::move(variables)});
    if (keras3) {
      out.push_back({.name = "_trainable_variables", .owned = TrackableList::of(s_->built_vars)});
      out.push_back({.name = "_trainable_variables_indices",
                     .owned = std::make_shared<train::TrackableNode>()});
    }
    out.push_back({.name = "_iterations", .variable = s_->iter});
    if (lr_variable) {
      out.push_back({.name = !keras3 && learning_rate_.is_schedule() ? "_current_learning_rate"
                                                                     : "_learning_rate",
                     .variable = s_->lr_var});
    }
    if (!keras3) {
      out.push_back({.name = "_index_dict", .owned = std::make_shared<train::TrackableNode>()});
    }
    for (const auto& [list_name, slot_name] : slot_lists(layout)) {
      auto list = std::make_shared<TrackableList>();
      for (const auto& v : s_->built_vars) {
        if (slot_name != nullptr) {
          if (auto sv = get_slot(v, slot_name)) {
            list->push_back({.variable = *sv});
          }
        }
      }
      out.push_back({.name = list_name, .owned = std::move(list)});
    }
    return out;
  }
  /// tf_keras legacy optimizers reference their slots from the object graph.
  [[nodiscard]] std::vector<train::SlotVariableReference> trackable_slot_variables(
      train::Layout layout) override {
    std::vector<train::SlotVariableReference> out;
    if (layout == train::Layout::tf_keras_legacy) {
      for (const auto& sv : s_->slot_list) {
        out.push_back({sv.original, sv.slot_name, sv.slot});
      }
    }
    return out;
  }
  [[nodiscard]] bool may_create_children() const override { return !s_->built; }
  /// Optimizer copies share state, so they share the deferred-restoration hook too.
  void set_children_changed_hook(ChildrenChangedHook hook) override { s_->hook = std::move(hook); }

  /// Every slot variable created so far, in creation order.
  [[nodiscard]] std::vector<SlotVariable> slot_variables() const { return s_->slot_list; }
  /// The slot `slot_name` of `var`, if created.
  [[nodiscard]] std::optional<AnyVariable> get_slot(const AnyVariable& var,
                                                    const std::string& slot_name) const {
    for (const auto& s : s_->slot_list) {
      if (s.original.same_as(var) && s.slot_name == slot_name) {
        return s.slot;
      }
    }
    return std::nullopt;
  }

 protected:
  /// Creates the `iterations` variable and the hyperparameter variables Keras tracks.
  Optimizer(std::string name, LearningRate lr)
      : s_(std::make_shared<State>()), learning_rate_(std::move(lr)) {
    s_->name = std::move(name);
    s_->iter = Variable<std::int64_t, 0>(std::int64_t{0},
                                         {.name = s_->name + "/iter", .trainable = false});
    s_->lr_var = hyper("learning_rate", learning_rate_.at(0));
    hyper("decay", 0.0);
  }
  /// A tracked scalar hyperparameter.
  Variable<float, 0> hyper(const std::string& n, double value) {
    Variable<float, 0> v(float(value), {.name = s_->name + "/" + n, .trainable = false});
    s_->hyper.emplace_back(n, v);
    return v;
  }
  /// The slots each variable gets, in creation order (legacy names: "m", "v", "rms", ...).
  [[nodiscard]] virtual std::vector<const char*> slot_names() const = 0;
  /// Slots tf_keras creates although the rule does not read them (SGD without momentum).
  [[nodiscard]] virtual std::vector<const char*> tf_keras_extra_slot_names() const { return {}; }
  /// The Python list attributes holding the slots under `layout`, with the slot each lists
  /// (nullptr: a list Keras keeps empty with these options).
  [[nodiscard]] virtual std::vector<std::pair<const char*, const char*>> slot_lists(
      train::Layout layout) const = 0;
  void notify_children_changed() const override {
    if (s_->hook) {
      s_->hook();
    }
  }
  /// The rate at `step`: the schedule's, or the `learning_rate` variable's (a checkpoint
  /// restores it, as Keras's does).
  [[nodiscard]] double learning_rate_at(std::int64_t step) const {
    if (learning_rate_.is_schedule()) {
      return learning_rate_.at(step);
    }
    return double(s_->lr_var.value().item());
  }
  /// Computes what every variable's update of this step shares (Adam's beta powers) from the
  /// learning rate and the `iterations` variable, as ops. Returned, not stored: the replicas
  /// of a strategy run one step each at the same time.
  virtual std::vector<Tensor<float, 0>> prepare_step(const Tensor<float, 0>& lr) {
    (void)lr;
    return {};
  }
  /// Runs the update op (a ResourceApply*) of one variable (`run_update`); `step` is what
  /// prepare_step returned.
  virtual void apply_update(const AnyVariable& var, const AnyTensor& grad,
                            const Tensor<float, 0>& lr, std::span<const Tensor<float, 0>> step) = 0;
  /// `f.template operator()<R>()` with the variable's rank R.
  template <class F>
  static auto with_rank(const AnyVariable& var, F&& f) {
    return detail::visit_rank<0, 5>(var.rank(),
                                    "tf::keras::optimizers: variable '" + var.name() + "'", f);
  }
  /// Calls `run(grad)` with the gradient typed by the variable's rank (the update ops take it
  /// among other inputs, in TensorFlow's order).
  template <class Run>
  static void run_update(const AnyVariable& var, const AnyTensor& grad, Run&& run) {
    with_rank(var, [&]<std::size_t R>() { (void)run(grad.unchecked_as<float, R>()); });
  }
  /// A scalar hyperparameter as an input of the update ops.
  static Tensor<float, 0> scalar(double v) { return Tensor<float, 0>(float(v)); }
  /// The slot `slot_name` of `var`, created (zeros) on first use.
  AnyVariable slot(const AnyVariable& var, const std::string& slot_name) {
    auto key = std::make_pair(var.id(), slot_name);
    auto it = s_->slots.find(key);
    if (it != s_->slots.end()) {
      return it->second;
    }
    AnyVariable created = with_rank(var, [&]<std::size_t R>() {
      auto typed = var.as<float, R>();
      // Slots live with their variable, as TensorFlow colocates them, even when the update
      // that asks for them runs elsewhere (an op with no kernel on the variable's device).
      detail::devices::AllocationScope const with_variable(
          detail::devices::resolve(typed.device()));
      auto z = Tensor<float, R>::uninitialized(typed.dims());
      std::fill_n(detail::tensor_access::mutable_data(z), z.num_elements(), 0.0f);
      // Keras 2 names slots "<var name>/<slot>" (e.g. "dense/kernel/m").
      return AnyVariable(
          Variable<float, R>(z, {.name = var.name() + "/" + slot_name, .trainable = false}));
    });
    s_->slots.emplace(key, created);
    s_->slot_list.push_back({var, slot_name, created});
    return created;
  }

 private:
  struct State {
    std::string name;
    Variable<std::int64_t, 0> iter;
    Variable<float, 0> lr_var;
    std::vector<std::pair<std::string, Variable<float, 0>>> hyper;
    std::map<std::pair<std::int64_t, std::string>, AnyVariable> slots;
    std::vector<SlotVariable> slot_list;
    bool built = false;
    std::vector<AnyVariable> built_vars;
    ChildrenChangedHook hook;
  };

  // The learning rate of this step as a tensor: the schedule's at `iterations` (an op that
  // calls it when a traced function runs), kept in the learning-rate variable as Keras does;
  // or that variable's value, which a checkpoint restores.
  Tensor<float, 0> learning_rate_tensor() {
    if (!learning_rate_.is_schedule()) {
      return s_->lr_var.value();
    }
    auto lr =
        detail::execute(ops::ScheduleLearningRate{learning_rate_.schedule()}, s_->iter.value());
    s_->lr_var.assign(lr);
    return lr;
  }

  std::shared_ptr<State> s_;

 protected:
  LearningRate learning_rate_;  ///< as given (a value or a schedule)
};

/// Keyword arguments of SGD.
struct SGDOptions {
  LearningRate learning_rate = 0.01;  ///< a value or a schedule
  double momentum = 0.0;              ///< 0: plain gradient descent, no slot
  bool nesterov = false;              ///< Nesterov momentum
};

/// Gradient descent, optionally with (Nesterov) momentum (tf.keras.optimizers.SGD):
/// velocity = momentum * velocity - lr * g; var += velocity
/// (nesterov: var += momentum * velocity - lr * g).
class SGD : public Optimizer {
 public:
  [[nodiscard]] std::string apply_op_name() const override {
    return std::string(o_.momentum == 0.0 ? ops::ResourceApplyGradientDescent::name
                                          : ops::ResourceApplyKerasMomentum::name);
  }
  /// `tf.keras.optimizers.SGD(learning_rate, momentum, nesterov)`.
  explicit SGD(SGDOptions o = {}) : Optimizer("SGD", o.learning_rate), o_(o) {
    hyper("momentum", o.momentum);
  }

 protected:
  [[nodiscard]] std::vector<const char*> slot_names() const override {
    return o_.momentum == 0.0 ? std::vector<const char*>{} : std::vector<const char*>{"momentum"};
  }
  [[nodiscard]] std::vector<const char*> tf_keras_extra_slot_names() const override {
    return slot_names().empty() ? std::vector<const char*>{"momentum"} : std::vector<const char*>{};
  }
  [[nodiscard]] std::vector<std::pair<const char*, const char*>> slot_lists(
      train::Layout layout) const override {
    const bool has = o_.momentum != 0.0 || layout == train::Layout::tf_keras;
    return {{"momentums", has ? "momentum" : nullptr}};
  }
  void apply_update(const AnyVariable& var, const AnyTensor& grad, const Tensor<float, 0>& lr,
                    std::span<const Tensor<float, 0>> /*step*/) override {
    if (o_.momentum == 0.0) {
      run_update(var, grad, [&](const auto& g) {
        return detail::execute(ops::ResourceApplyGradientDescent{var}, lr, g);
      });
    } else {
      const ops::ResourceApplyKerasMomentum op{var, slot(var, "momentum"), o_.nesterov};
      run_update(var, grad, [&](const auto& g) { return detail::execute(op, lr, g, momentum_); });
    }
  }

 private:
  SGDOptions o_;
  Tensor<float, 0> momentum_ = scalar(o_.momentum);  // ResourceApplyKerasMomentum's input
};

/// Keyword arguments of Adam (Keras defaults).
struct AdamOptions {
  LearningRate learning_rate = 0.001;  ///< a value or a schedule
  double beta_1 = 0.9;                 ///< decay of the first-moment estimate
  double beta_2 = 0.999;               ///< decay of the second-moment estimate
  double epsilon = 1e-7;               ///< added to the root of the second moment
};

/// Adam (tf.keras.optimizers.Adam): m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
/// var -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + epsilon), t = step + 1.
class Adam : public Optimizer {
 public:
  [[nodiscard]] std::string apply_op_name() const override {
    return std::string(ops::ResourceApplyAdam::name);
  }
  /// `tf.keras.optimizers.Adam(learning_rate, beta_1, beta_2, epsilon)`.
  explicit Adam(AdamOptions o = {}) : Optimizer("Adam", o.learning_rate), o_(o) {
    hyper("beta_1", o.beta_1);
    hyper("beta_2", o.beta_2);
  }

 protected:
  [[nodiscard]] std::vector<const char*> slot_names() const override { return {"m", "v"}; }
  [[nodiscard]] std::vector<std::pair<const char*, const char*>> slot_lists(
      train::Layout) const override {
    return {{"_momentums", "m"}, {"_velocities", "v"}};
  }
  // Keras's bias correction, in float32 as Keras computes it: beta^t with t = iterations + 1.
  std::vector<Tensor<float, 0>> prepare_step(const Tensor<float, 0>&) override {
    const auto t = cast<float>(iterations_variable().value()) + 1.0f;
    return {pow(beta_1_, t), pow(beta_2_, t)};
  }
  void apply_update(const AnyVariable& var, const AnyTensor& grad, const Tensor<float, 0>& lr,
                    std::span<const Tensor<float, 0>> step) override {
    const ops::ResourceApplyAdam op{var, slot(var, "m"), slot(var, "v")};
    run_update(var, grad, [&](const auto& g) {
      return detail::execute(op, step[0], step[1], lr, beta_1_, beta_2_, epsilon_, g);
    });
  }

 private:
  AdamOptions o_;
  // The update ops' constant inputs, made once (prepare_step computes the powers).
  Tensor<float, 0> beta_1_ = scalar(o_.beta_1), beta_2_ = scalar(o_.beta_2);
  Tensor<float, 0> epsilon_ = scalar(o_.epsilon);
};

/// Keyword arguments of RMSprop (Keras defaults).
struct RMSpropOptions {
  LearningRate learning_rate = 0.001;  ///< a value or a schedule
  double rho = 0.9;                    ///< decay of the mean square
  double epsilon = 1e-7;               ///< added inside the root
};

/// RMSprop (tf.keras.optimizers.RMSprop, no momentum, not centered):
/// rms = rho rms + (1 - rho) g^2; var -= lr g / sqrt(rms + epsilon) (epsilon inside the root,
/// as Keras 3, tf_keras and TensorFlow's ApplyRMSProp kernel have it).
class RMSprop : public Optimizer {
 public:
  [[nodiscard]] std::string apply_op_name() const override {
    return std::string(ops::ResourceApplyRMSProp::name);
  }
  /// `tf.keras.optimizers.RMSprop(learning_rate, rho, epsilon)`.
  explicit RMSprop(RMSpropOptions o = {}) : Optimizer("RMSprop", o.learning_rate), o_(o) {
    hyper("rho", o.rho);
  }

 protected:
  [[nodiscard]] std::vector<const char*> slot_names() const override { return {"rms"}; }
  [[nodiscard]] std::vector<std::pair<const char*, const char*>> slot_lists(
      train::Layout) const override {
    return {{"_velocities", "rms"}, {"_momentums", nullptr}, {"_average_gradients", nullptr}};
  }
  void apply_update(const AnyVariable& var, const AnyTensor& grad, const Tensor<float, 0>& lr,
                    std::span<const Tensor<float, 0>> /*step*/) override {
    const ops::ResourceApplyRMSProp op{var, slot(var, "rms")};
    run_update(var, grad,
               [&](const auto& g) { return detail::execute(op, lr, rho_, epsilon_, g); });
  }

 private:
  RMSpropOptions o_;
  Tensor<float, 0> rho_ = scalar(o_.rho), epsilon_ = scalar(o_.epsilon);  // update op inputs
};

/// A shared handle to an optimizer (what `compile` stores); converts from any Optimizer, and
/// shares its state with the object it was made from.
class OptimizerHandle {
 public:
  OptimizerHandle() = default;
  /// Copies optimizer `o` into shared storage; its state (slots, iterations) stays shared.
  template <class O>
    requires std::derived_from<std::remove_cvref_t<O>, Optimizer>
  OptimizerHandle(O&& o)  // NOLINT(google-explicit-constructor)
      : p_(std::make_shared<std::remove_cvref_t<O>>(std::forward<O>(o))) {}
  /// False when no optimizer was given.
  [[nodiscard]] bool has_value() const noexcept { return p_ != nullptr; }
  /// The optimizer; failed_precondition when there is none.
  [[nodiscard]] Optimizer& get() const {
    if (!p_) {
      throw failed_precondition("tf::keras: no optimizer (pass .optimizer to compile)");
    }
    return *p_;
  }

 private:
  std::shared_ptr<Optimizer> p_;
};

}  // namespace optimizers
}  // namespace keras
TAPEFLOW_END_NAMESPACE
