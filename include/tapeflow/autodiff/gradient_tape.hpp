// `tapeflow::GradientTape`: records ops on watched tensors and computes gradients by
// reverse-mode differentiation (TensorFlow: `tf.GradientTape`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/detail/tape_record.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// Options of a GradientTape (TensorFlow's constructor arguments).
struct GradientTapeOptions {
  /// Allow several gradient() calls (the recorded ops are kept until the tape dies).
  bool persistent = false;
  /// Watch trainable variables automatically when an op reads them.
  bool watch_accessed_variables = true;
};

/// What gradient() returns for a source the target does not depend on
/// (TensorFlow: `tf.UnconnectedGradients`).
enum class UnconnectedGradients { none, zero };

/// Options of GradientTape::gradient (tf.GradientTape.gradient's keyword arguments).
struct GradientOptions {
  /// What to return for a source the target does not depend on (default: `std::nullopt`).
  UnconnectedGradients unconnected_gradients = UnconnectedGradients::none;
};

/// Records operations while alive and computes gradients of a target with respect to watched
/// tensors and variables.
///
///     tf::GradientTape tape;
///     auto loss = tf::reduce_mean(tf::square(tf::matmul(x, w) - y));
///     auto dw = tape.gradient(loss, w);               // std::optional<Tensor<float, 2>>
///     auto [gw, gb] = tape.gradient(loss, w, b);      // several sources: a tuple
///     auto gs = tape.gradient(loss, std::vector{&w}); // a vector of variables: a vector
///
/// Recording stops when the tape is destroyed, when stop() is called, or, for a non-persistent
/// tape, at its gradient() call (it cannot be asked again, so later ops need no recording); a
/// persistent tape records until stop() or its end. Tapes nest (an outer tape
/// records the inner one's gradient computation, giving second-order gradients). Tapes record
/// ops of their own thread.
class GradientTape {
 public:
  /// Starts recording ops of this thread (entering TensorFlow's `with tf.GradientTape()`).
  explicit GradientTape(GradientTapeOptions options = {}) : recorder_(acquire()) {
    recorder_->persistent = options.persistent;
    recorder_->watch_accessed_variables = options.watch_accessed_variables;
    detail::tape::active().push_back(recorder_);
    recording_ = true;
  }
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;
  ~GradientTape() {
    stop();
    release(recorder_);
  }

  /// Ensures `x` is traced: gradients with respect to it become available.
  template <tensor_like X>
  void watch(const X& x) {
    if constexpr (is_variable<std::remove_cvref_t<X>>::value) {
      recorder_->watch(x.id());
    } else {
      if (!x.is_symbolic()) {
        x.require_value("watch");
      }
      recorder_->watch(x.id());
    }
  }
  /// Ensures a type-erased tensor or variable is traced.
  void watch(const AnyTensor& x) { recorder_->watch(x.id()); }

  /// Stops recording for good (leaving TensorFlow's `with` block); gradient() still works.
  void stop() noexcept {
    if (!recording_) {
      return;
    }
    auto& stack = detail::tape::active();
    for (auto it = stack.end(); it != stack.begin();) {
      --it;
      if (*it == recorder_) {
        stack.erase(it);
        break;
      }
    }
    recording_ = false;
  }

  /// Pauses recording while the returned guard lives (TensorFlow: `tape.stop_recording()`).
  [[nodiscard]] auto stop_recording() {
    struct Guard {
      detail::tape::Recorder* recorder;
      explicit Guard(detail::tape::Recorder* r) : recorder(r) {}
      Guard(const Guard&) = delete;
      Guard& operator=(const Guard&) = delete;
      ~Guard() { --recorder->paused; }
    };
    ++recorder_->paused;
    return Guard{recorder_};
  }

  /// Forgets everything recorded so far (TensorFlow: `tape.reset()`).
  void reset() {
    const bool persistent = recorder_->persistent;
    const bool watch_vars = recorder_->watch_accessed_variables;
    const int paused = recorder_->paused;
    recorder_->reset();
    recorder_->persistent = persistent;
    recorder_->watch_accessed_variables = watch_vars;
    recorder_->paused = paused;
    used_ = false;
  }

  /// Ids of the variables this tape watches (read while recording, or watch()ed).
  [[nodiscard]] const std::vector<std::int64_t>& watched_variable_ids() const noexcept {
    return recorder_->watched_variables();
  }

  /// d target / d source for one source (a tensor or variable): `std::nullopt` if the
  /// target does not depend on it (zeros with UnconnectedGradients::zero).
  /// Non-scalar targets are summed first, as in TensorFlow.
  template <tensor_like Target, tensor_like Source>
  std::optional<tensor_type_of<Source>> gradient(const Target& target, const Source& source,
                                                 GradientOptions options = {}) {
    std::int64_t const ids[1] = {source.id()};
    auto grads = run(detail::as_tensor(target), ids, nullptr);
    return typed<Source>(grads[0], source, options);
  }

  /// Several sources: a tuple with one optional gradient each.
  template <tensor_like Target, tensor_like... Sources>
    requires(sizeof...(Sources) >= 2)
  auto gradient(const Target& target, const Sources&... sources) {
    std::int64_t const ids[] = {sources.id()...};
    auto grads = run(detail::as_tensor(target), ids, nullptr);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<std::optional<tensor_type_of<Sources>>...>{
          typed<Sources>(grads[I], sources, {})...};
    }(std::index_sequence_for<Sources...>{});
  }

  /// A vector of variables (or tensors): a vector of optional gradients.
  template <tensor_like Target, class Source>
    requires tensor_like<Source>
  std::vector<std::optional<tensor_type_of<Source>>> gradient(const Target& target,
                                                              const std::vector<Source*>& sources,
                                                              GradientOptions options = {}) {
    std::vector<std::int64_t> ids;
    ids.reserve(sources.size());
    for (const auto* s : sources) {
      ids.push_back(s->id());
    }
    auto grads = run(detail::as_tensor(target), ids, nullptr);
    std::vector<std::optional<tensor_type_of<Source>>> out;
    out.reserve(sources.size());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      out.push_back(typed<Source>(grads[i], *sources[i], options));
    }
    return out;
  }
  /// A vector of tensors: a vector of optional gradients, in the same order.
  template <tensor_like Target, class T, std::size_t R>
  std::vector<std::optional<Tensor<T, R>>> gradient(const Target& target,
                                                    const std::vector<Tensor<T, R>>& sources,
                                                    GradientOptions options = {}) {
    std::vector<const Tensor<T, R>*> ptrs;
    for (const auto& s : sources) {
      ptrs.push_back(&s);
    }
    std::vector<std::int64_t> ids;
    for (const auto& s : sources) {
      ids.push_back(s.id());
    }
    auto grads = run(detail::as_tensor(target), ids, nullptr);
    std::vector<std::optional<Tensor<T, R>>> out;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      out.push_back(typed<Tensor<T, R>>(grads[i], sources[i], options));
    }
    return out;
  }

  /// A list of variables of mixed dtypes and ranks (`model.trainable_variables()`): one
  /// AnyTensor each, what `optimizer.apply_gradients(grads, vars)` takes; empty where the
  /// target does not depend on the variable (zeros with UnconnectedGradients::zero).
  template <tensor_like Target>
  std::vector<AnyTensor> gradient(const Target& target, const std::vector<AnyVariable>& sources,
                                  GradientOptions options = {}) {
    auto grads = run(detail::as_tensor(target), ids_of(sources), nullptr);
    if (options.unconnected_gradients == UnconnectedGradients::zero) {
      for (std::size_t i = 0; i < grads.size(); ++i) {
        if (!grads[i].engaged()) {
          grads[i] = sources[i].zeros_like();
        }
      }
    }
    return grads;
  }

  /// Type-erased form for heterogeneous sources (ids of tensors or variables); the gradient of
  /// the target is seeded with `output_gradient` when given (TensorFlow: `output_gradients`).
  template <class T, std::size_t R>
  std::vector<AnyTensor> gradient_by_id(
      const Tensor<T, R>& target, std::span<const std::int64_t> source_ids,
      const std::optional<Tensor<T, R>>& output_gradient = std::nullopt) {
    return run(target, source_ids, output_gradient ? &*output_gradient : nullptr);
  }

 private:
  template <class Source>
  static std::optional<tensor_type_of<Source>> typed(const AnyTensor& g, const Source& source,
                                                     GradientOptions options) {
    using Out = tensor_type_of<Source>;
    if (g.engaged()) {
      return g.template unchecked_as<typename Out::value_type, Out::rank_v>();
    }
    if (options.unconnected_gradients == UnconnectedGradients::zero) {
      return zeros_like(detail::as_tensor(source));
    }
    return std::nullopt;
  }

  template <class T, std::size_t R>
  std::vector<AnyTensor> run(const Tensor<T, R>& target, std::span<const std::int64_t> sources,
                             const std::type_identity_t<Tensor<T, R>>* output_gradient) {
    static_assert(floating_element<T>,
                  "GradientTape::gradient: the target must be a floating-point tensor");
    if (!target.is_symbolic()) {
      target.require_value("gradient(target)");
    }
    if (used_ && !recorder_->persistent) {
      throw failed_precondition(
          "GradientTape::gradient can only be called once on a non-persistent tape "
          "(construct it with {.persistent = true} to call it several times)");
    }
    used_ = true;
    if (!recorder_->persistent) {
      stop();  // a non-persistent tape is done: ops after gradient() need not be recorded
    }
    ++recorder_
          ->paused;  // the backward pass is not recorded on this tape (outer tapes do record it)
    struct Unpause {
      detail::tape::Recorder* r;
      ~Unpause() { --r->paused; }
    } unpause{recorder_};

    const auto& nodes = recorder_->nodes();
    // Which tensors depend on a watched source: only their gradients are computed (a source
    // the tape does not watch gets no gradient, as in TensorFlow).
    auto& storage = recorder_->backprop_storage;
    storage.clear();
    struct Clear {
      detail::tape::BackpropStorage& s;
      ~Clear() { s.clear(); }  // drop gradient tensors as soon as the call ends
    } clear_after{storage};
    detail::tape::IdSet& needed = storage.needed;
    for (auto id : sources) {
      if (recorder_->watching(id)) {
        needed.insert(id);
      }
    }
    for (const auto* node : nodes) {
      for (std::uint32_t i = 0; i < node->num_in; ++i) {
        if (needed.contains(node->in_ids[i])) {
          needed.insert(node->out_id);
          break;
        }
      }
    }
    detail::tape::Backprop bp(storage);
    if (needed.contains(target.id())) {
      if (output_gradient != nullptr) {
        if (output_gradient->dims() != target.dims()) {
          throw invalid_argument("GradientTape::gradient: output gradient of shape " +
                                 output_gradient->shape().to_string() +
                                 " does not match the target's shape " +
                                 target.shape().to_string());
        }
        bp.set(target.id(), *output_gradient);
      } else {
        bp.set(target.id(), ones_like(target));
      }
      for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
        if (needed.contains((*it)->out_id)) {
          (*it)->backward(bp);
        }
      }
    }
    std::vector<AnyTensor> out;
    out.reserve(sources.size());
    for (auto id : sources) {
      AnyTensor* g = bp.find(id);
      out.push_back(g != nullptr ? *g : AnyTensor{});
    }
    if (!recorder_->persistent) {
      recorder_->release_nodes();
    }
    return out;
  }

  // Recorders are reused per thread (Note [Tape storage]).
  static std::vector<std::unique_ptr<detail::tape::Recorder>>& pool() {
    thread_local std::vector<std::unique_ptr<detail::tape::Recorder>> recorders;
    return recorders;
  }
  static detail::tape::Recorder* acquire() {
    auto& p = pool();
    if (p.empty()) {
      return new detail::tape::Recorder;
    }
    auto* r = p.back().release();
    p.pop_back();
    return r;
  }
  static void release(detail::tape::Recorder* r) noexcept {
    r->reset();
    auto& p = pool();
    if (p.size() < 8) {
      try {
        p.emplace_back(r);
        return;
      } catch (...) {
      }
    }
    delete r;
  }

  detail::tape::Recorder* recorder_;
  bool recording_ = false;
  bool used_ = false;
};

TAPEFLOW_END_NAMESPACE
