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

#include <Eigen/Core>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/any_variable.hpp>
#include <tapeflow/core/detail/flush_denormals.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/variable.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/keras/schedules.hpp>
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
  LearningRate(double value) : value_(value) {}    // NOLINT(google-explicit-constructor)
  LearningRate(schedules::LearningRateSchedule s)  // NOLINT(google-explicit-constructor)
      : schedule_(std::move(s)) {}
  [[nodiscard]] double at(std::int64_t step) const { return schedule_ ? schedule_(step) : value_; }
  [[nodiscard]] bool is_schedule() const noexcept { return bool(schedule_); }

 private:
  double value_ = 0.001;
  schedules::LearningRateSchedule schedule_;
};

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
    build(vars);  // first step only
    detail::trace::Graph* graph = detail::trace::active();
    const detail::ScopedFlushDenormals flush_denormals;
    const std::int64_t step = graph != nullptr ? 0 : iterations();
    const double lr = graph != nullptr ? 0.0 : learning_rate_at(step);
    if (graph == nullptr && learning_rate_.is_schedule()) {
      s_->lr_var.assign(Tensor<float, 0>(float(lr)));  // Keras's current learning rate
    }
    for (std::size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].has_value() && !grads[i].is_symbolic()) {
        continue;
      }
      if (graph != nullptr) {
        add_update_node(*graph, vars[i], grads[i]);
      } else {
        update(vars[i], static_cast<const float*>(grads[i].raw_data()), lr, step);
      }
    }
    s_->iter.assign_add(Tensor<std::int64_t, 0>(1));  // traced: a node after the updates
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

  /// Number of updates applied so far (Keras: `optimizer.iterations`).
  [[nodiscard]] std::int64_t iterations() const { return s_->iter.value().item(); }
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
  [[nodiscard]] bool built() const noexcept { return s_->built; }
  [[nodiscard]] const std::string& name() const noexcept { return s_->name; }
  /// The op name of the update in traced graphs (TensorFlow's kernel for the same rule).
  [[nodiscard]] virtual std::string apply_op_name() const { return "ResourceApply" + name(); }

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
  /// The update rule for one variable: `g` points to its gradient (same size).
  virtual void update(const AnyVariable& var, const float* g, double lr, std::int64_t step) = 0;

  /// A flat float buffer as an Eigen array: the rules below are whole-array expressions, which
  /// Eigen vectorizes (sqrt included) whatever the user's -fno-math-errno setting.
  using FlatArray = Eigen::Map<Eigen::ArrayXf>;
  using ConstFlatArray = Eigen::Map<const Eigen::ArrayXf>;

  /// Runs `rule(n, old, var, slots, g)` over the variable, the slots named by `slot_names` and
  /// the gradient `g`, in place (TensorFlow's ResourceApply* kernels): `var[i]` is written
  /// from `old[i]`, the same buffer unless a live tape holds the variable's value, in which
  /// case `var` is a fresh buffer (copy-on-write without a separate copy pass). The update
  /// is memory-bound, so large variables are split over the thread pool.
  template <class Rule>
  void update_buffers(const AnyVariable& var, const float* g,
                      std::initializer_list<const char*> slot_names, Rule&& rule) {
    std::array<float*, 4> slots{};
    std::size_t num_slots = 0;
    for (const char* s : slot_names) {
      slots.at(num_slots++) = static_cast<float*>(slot(var, s).writable_raw_data());
    }
    const auto [old_raw, out_raw] = var.overwrite_raw_data();
    const auto* old = static_cast<const float*>(old_raw);
    auto* out = static_cast<float*>(out_raw);
    constexpr std::int64_t grain = std::int64_t{1} << 18;  // below, a pool wake-up costs more
    backend::cpu::parallel_for(var.num_elements(), grain, [&](std::int64_t b, std::int64_t e) {
      const detail::ScopedFlushDenormals flush;  // per thread: pool workers have their own mode
      // Blocks that stay in L1/L2, so the rule's several array sweeps cost one pass over memory.
      constexpr std::int64_t block = 2048;
      std::array<float*, 4> part{};
      for (std::int64_t o = b; o < e; o += block) {
        for (std::size_t i = 0; i < num_slots; ++i) {
          part.at(i) = slots.at(i) + o;
        }
        rule(std::min(block, e - o), old + o, out + o, part.data(), g + o);
      }
    });
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

  template <class F>
  static auto with_rank(const AnyVariable& var, F&& f) {
    switch (var.rank()) {
      case 0:
        return f.template operator()<0>();
      case 1:
        return f.template operator()<1>();
      case 2:
        return f.template operator()<2>();
      case 3:
        return f.template operator()<3>();
      case 4:
        return f.template operator()<4>();
      case 5:
        return f.template operator()<5>();
      default:
        throw unimplemented("tf::keras::optimizers: variables of rank " +
                            std::to_string(var.rank()) + " (at most 5)");
    }
  }
  AnyVariable slot(const AnyVariable& var, const std::string& slot_name) {
    auto key = std::make_pair(var.id(), slot_name);
    auto it = s_->slots.find(key);
    if (it != s_->slots.end()) {
      return it->second;
    }
    AnyVariable created = with_rank(var, [&]<std::size_t R>() {
      auto typed = var.as<float, R>();
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

  // A graph node that updates `var` with the gradient in its input slot when the traced
  // function runs; it calls back into this object, so it first checks the object still lives.
  void add_update_node(detail::trace::Graph& graph, const AnyVariable& var, const AnyTensor& grad) {
    detail::trace::GraphNode node;
    node.op = apply_op_name();
    node.attrs = {{"variable", var.name()}};
    node.dtype = DType::float32;
    node.shape = var.shape();
    node.inputs.push_back(with_rank(
        var, [&]<std::size_t R>() { return graph.slot_of(grad.unchecked_as<float, R>()); }));
    node.run = [self = this, alive = std::weak_ptr<const int>(lifetime_.token), var,
                op = node.op](std::span<const AnyTensor> values) {
      if (alive.expired()) {
        throw failed_precondition("tf::function: the optimizer of " + op + " on '" + var.name() +
                                  "' was destroyed (or moved from) after the function traced it");
      }
      const detail::ScopedFlushDenormals flush;
      const std::int64_t step = self->iterations();
      const double lr = self->learning_rate_at(step);
      if (self->learning_rate_.is_schedule()) {
        self->s_->lr_var.assign(Tensor<float, 0>(float(lr)));
      }
      self->update(var, static_cast<const float*>(values[0].raw_data()), lr, step);
      return AnyTensor{};
    };
    graph.add_node(std::move(node), 0);
  }

  // Each optimizer object (not its shared state) has its own token: a copy or move gets a new
  // one, so traced update nodes can tell whether the object they call back into still exists.
  struct LifetimeToken {
    std::shared_ptr<const int> token = std::make_shared<const int>(0);
    LifetimeToken() = default;
    LifetimeToken(const LifetimeToken&) : LifetimeToken() {}
    LifetimeToken& operator=(const LifetimeToken&) { return *this; }
    ~LifetimeToken() = default;
  };

  std::shared_ptr<State> s_;
  LifetimeToken lifetime_;

 protected:
  LearningRate learning_rate_;
};

/// Keyword arguments of SGD.
struct SGDOptions {
  LearningRate learning_rate = 0.01;
  double momentum = 0.0;
  bool nesterov = false;
};

/// Gradient descent, optionally with (Nesterov) momentum (tf.keras.optimizers.SGD):
/// velocity = momentum * velocity - lr * g; var += velocity
/// (nesterov: var += momentum * velocity - lr * g).
class SGD : public Optimizer {
 public:
  [[nodiscard]] std::string apply_op_name() const override {
    return o_.momentum == 0.0 ? "ResourceApplyGradientDescent" : "ResourceApplyKerasMomentum";
  }
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
  void update(const AnyVariable& var, const float* g, double lr, std::int64_t) override {
    const float lr_f = float(lr);
    const float mu = float(o_.momentum);
    if (o_.momentum == 0.0) {
      update_buffers(var, g, {},
                     [&](std::int64_t n, const float* old, float* v, float**, const float* gp) {
                       FlatArray(v, n) = ConstFlatArray(old, n) - lr_f * ConstFlatArray(gp, n);
                     });
      return;
    }
    const bool nesterov = o_.nesterov;
    update_buffers(var, g, {"momentum"},
                   [&](std::int64_t n, const float* old, float* v, float** s, const float* gp) {
                     FlatArray m(s[0], n);
                     const ConstFlatArray grad(gp, n);
                     m = mu * m - lr_f * grad;
                     if (nesterov) {
                       FlatArray(v, n) = ConstFlatArray(old, n) + mu * m - lr_f * grad;
                     } else {
                       FlatArray(v, n) = ConstFlatArray(old, n) + m;
                     }
                   });
  }

 private:
  SGDOptions o_;
};

/// Keyword arguments of Adam (Keras defaults).
struct AdamOptions {
  LearningRate learning_rate = 0.001;
  double beta_1 = 0.9;
  double beta_2 = 0.999;
  double epsilon = 1e-7;
};

/// Adam (tf.keras.optimizers.Adam): m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
/// var -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + epsilon), t = step + 1.
class Adam : public Optimizer {
 public:
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
  void update(const AnyVariable& var, const float* g, double lr, std::int64_t step) override {
    const double t = double(step + 1);
    const float lr_t =
        float(lr * std::sqrt(1.0 - std::pow(o_.beta_2, t)) / (1.0 - std::pow(o_.beta_1, t)));
    const float b1 = float(o_.beta_1), b2 = float(o_.beta_2), eps = float(o_.epsilon);
    update_buffers(var, g, {"m", "v"},
                   [&](std::int64_t n, const float* old, float* v, float** s, const float* gp) {
                     FlatArray m(s[0], n);
                     FlatArray u(s[1], n);
                     const ConstFlatArray grad(gp, n);
                     m = b1 * m + (1.0f - b1) * grad;
                     u = b2 * u + (1.0f - b2) * grad.square();
                     FlatArray(v, n) = ConstFlatArray(old, n) - lr_t * m / (u.sqrt() + eps);
                   });
  }

 private:
  AdamOptions o_;
};

/// Keyword arguments of RMSprop (Keras defaults).
struct RMSpropOptions {
  LearningRate learning_rate = 0.001;
  double rho = 0.9;
  double epsilon = 1e-7;
};

/// RMSprop (tf.keras.optimizers.RMSprop, no momentum, not centered):
/// rms = rho rms + (1 - rho) g^2; var -= lr g / sqrt(rms + epsilon) (epsilon inside the root,
/// as Keras 3, tf_keras and TensorFlow's ApplyRMSProp kernel have it).
class RMSprop : public Optimizer {
 public:
  [[nodiscard]] std::string apply_op_name() const override { return "ResourceApplyRMSProp"; }
  explicit RMSprop(RMSpropOptions o = {}) : Optimizer("RMSprop", o.learning_rate), o_(o) {
    hyper("rho", o.rho);
  }

 protected:
  [[nodiscard]] std::vector<const char*> slot_names() const override { return {"rms"}; }
  [[nodiscard]] std::vector<std::pair<const char*, const char*>> slot_lists(
      train::Layout) const override {
    return {{"_velocities", "rms"}, {"_momentums", nullptr}, {"_average_gradients", nullptr}};
  }
  void update(const AnyVariable& var, const float* g, double lr, std::int64_t) override {
    const float lr_f = float(lr), rho = float(o_.rho), eps = float(o_.epsilon);
    update_buffers(var, g, {"rms"},
                   [&](std::int64_t n, const float* old, float* v, float** s, const float* gp) {
                     FlatArray r(s[0], n);
                     const ConstFlatArray grad(gp, n);
                     r = rho * r + (1.0f - rho) * grad.square();
                     FlatArray(v, n) = ConstFlatArray(old, n) - lr_f * grad / (r + eps).sqrt();
                   });
  }

 private:
  RMSpropOptions o_;
};

/// A shared handle to an optimizer (what `compile` stores); converts from any Optimizer, and
/// shares its state with the object it was made from.
class OptimizerHandle {
 public:
  OptimizerHandle() = default;
  template <class O>
    requires std::derived_from<std::remove_cvref_t<O>, Optimizer>
  OptimizerHandle(O&& o)  // NOLINT(google-explicit-constructor)
      : p_(std::make_shared<std::remove_cvref_t<O>>(std::forward<O>(o))) {}
  [[nodiscard]] bool has_value() const noexcept { return p_ != nullptr; }
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
