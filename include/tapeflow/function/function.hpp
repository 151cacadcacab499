// tf::function: graph capture cached on the argument signature (TensorFlow: `@tf.function`).
//
// The first call with a new signature traces: the callable runs once on symbolic tensors and
// every op, variable read and assignment appends a node (Note [Tracing]). The graph is cached
// under the signature; later calls with the same signature run the graph without running the
// callable's C++ body, so `std::cout` in the body prints only while tracing, and `tf::print`
// prints on every call.
//
// Signature: for each tensor argument its dtype, rank and shape, the shape under a policy
// (FunctionOptions::shape_policy): `relaxed` (the default) traces a new shape once more with
// the dims that changed made unknown (-1), and that graph then serves every shape agreeing on
// the remaining dims, so a varying batch size costs one retrace, not one per size (TensorFlow's
// `reduce_retracing=True`); `exact` retraces on every new shape (the first trace is always
// exact, which keeps its elementwise chains fusible). input_signature pins shapes (-1 dims
// accept any size). For each plain C++ number its value (as TensorFlow does for Python numbers, so
// f(1); f(2); f(1) traces twice); for other types their value by ==. Host arrays
// (Eigen::Tensor, std::vector of numbers) convert to tensors and share their traces.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/function/detail/observer.hpp>
#include <tapeflow/function/graph.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// The dtype and shape a tensor argument must have (TensorFlow: `tf.TensorSpec`); -1 dims
/// accept any size.
struct TensorSpec {
  DType dtype = DType::float32;  ///< required element type
  Shape shape;                   ///< required shape; -1 dims match any size
};

/// How tensor shapes enter the signature (see the header comment).
enum class ShapePolicy {
  /// Every new shape traces a new graph.
  exact,
  /// A shape differing only in some dims from a traced one traces once more with those dims
  /// unknown (-1); that graph accepts any size there. Where the body cannot be traced with
  /// them unknown (an op needs the size: a random op's shape, the gradient of a mean over
  /// that dim), the call's exact shapes are traced instead, and the function stops relaxing.
  relaxed,
};

/// Options of tf::function (TensorFlow's keyword arguments).
struct FunctionOptions {
  /// How new shapes of tensor arguments retrace (TensorFlow: `reduce_retracing`).
  ShapePolicy shape_policy = ShapePolicy::relaxed;
  /// Pins the signature: one spec per tensor argument; calls that do not match throw.
  std::optional<std::vector<TensorSpec>> input_signature{};
  /// Warn on stderr once the function has traced more than this many times (TensorFlow: 5).
  int max_traces_before_warning = 5;
  /// Name used in warnings and graph export.
  std::string name = "function";
};

TAPEFLOW_END_NAMESPACE

// Declared, not included: only a program that passes an Eigen::Tensor (and so includes Eigen)
// converts one, and Eigen stays an include of kernels only (MAINTAINERS.md, "Compile time").
namespace Eigen {
template <typename Scalar, int NumIndices, int Options, typename IndexType>
class Tensor;
}  // namespace Eigen

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::fn {

template <class X>
struct is_eigen_tensor : std::false_type {};
template <class T, int R, int Options, class Index>
struct is_eigen_tensor<Eigen::Tensor<T, R, Options, Index>> : std::true_type {};

template <class X>
struct is_host_vector : std::false_type {};
template <class T, class A>
  requires(element_type<T> && !std::is_same_v<T, bool>)
struct is_host_vector<std::vector<T, A>> : std::true_type {};

/// What a call argument becomes: tensors and variables stay, host arrays become tensors,
/// everything else is passed through as a trace-time value.
template <class A>
decltype(auto) normalize(A&& a) {
  using D = std::remove_cvref_t<A>;
  if constexpr (is_eigen_tensor<D>::value) {
    using T = typename D::Scalar;
    constexpr std::size_t R = static_cast<std::size_t>(D::NumIndices);
    std::array<std::int64_t, R> dims{};
    for (std::size_t i = 0; i < R; ++i) {
      dims[i] = static_cast<std::int64_t>(a.dimension(i));
    }
    const auto n = static_cast<std::size_t>(a.size());
    if constexpr (R <= 1 || static_cast<int>(D::Layout) != 0) {  // 0: Eigen::ColMajor
      return constant<T, R>(std::span<const T>(a.data(), n), dims);
    } else {
      // Eigen tensors default to column-major: walk the source in its order (first axis
      // fastest) and write each element at its row-major offset.
      std::array<std::int64_t, R> stride{};
      stride[R - 1] = 1;
      for (std::size_t i = R - 1; i-- > 0;) {
        stride[i] = stride[i + 1] * dims[i + 1];
      }
      auto row_major = std::make_unique<T[]>(n);
      std::array<std::int64_t, R> index{};
      std::int64_t offset = 0;
      for (std::size_t k = 0; k < n; ++k) {
        row_major[static_cast<std::size_t>(offset)] = a.data()[k];
        for (std::size_t axis = 0; axis < R; ++axis) {
          offset += stride[axis];
          if (++index[axis] < dims[axis]) {
            break;
          }
          offset -= stride[axis] * dims[axis];
          index[axis] = 0;
        }
      }
      return constant<T, R>(std::span<const T>(row_major.get(), n), dims);
    }
  } else if constexpr (is_host_vector<D>::value) {
    return constant<typename D::value_type>(a);
  } else {
    return D(std::forward<A>(a));
  }
}

/// One argument's part of the cache key.
struct KeyPart {
  bool is_tensor = false;
  bool is_device = false;             // the trailing part: where the call runs
  DType dtype = DType::invalid;       // tensors
  Shape shape;                        // tensors
  std::string text;                   // values: "int32 1", "float64 0.1", "variable Variable#12"
  std::shared_ptr<const void> value;  // other types, compared with ==
  bool (*equal)(const void*, const void*) = nullptr;
  const std::type_info* type = nullptr;
  bool is_length = false;  // a list argument's length ("list of 3"), before its elements
  // Where retrace reasons say it is: call argument `argument`, and for a structure's tensor
  // its index `tensor` among them (-1: the argument is this one part).
  std::int32_t argument = -1;
  std::int32_t tensor = -1;

  friend bool operator==(const KeyPart& a, const KeyPart& b) {
    if (a.is_tensor != b.is_tensor || a.text != b.text || a.type != b.type) {
      return false;
    }
    if (a.is_tensor) {
      return a.dtype == b.dtype && a.shape == b.shape;
    }
    if (a.equal != nullptr) {
      return a.equal(a.value.get(), b.value.get());
    }
    return true;
  }
};

/// Whether a traced signature part accepts a call's part: equal, or a tensor of the same
/// dtype and rank whose traced dims are each unknown (-1) or equal.
inline bool accepts(const KeyPart& traced, const KeyPart& call) {
  if (!traced.is_tensor || !call.is_tensor) {
    return traced == call;
  }
  if (traced.dtype != call.dtype || traced.shape.rank() != call.shape.rank()) {
    return false;
  }
  for (std::size_t i = 0; i < traced.shape.rank(); ++i) {
    if (traced.shape[i] >= 0 && traced.shape[i] != call.shape[i]) {
      return false;
    }
  }
  return true;
}

template <class X>
std::string type_label() {
  if constexpr (element_type<X>) {
    return std::string(dtype_traits<X>::name);
  } else {
    return typeid(X).name();
  }
}

/// Whether a call argument is traced as a tensor: a typed tensor, or an AnyTensor (whose
/// dtype and rank are part of the key, as its shape is).
template <class X>
inline constexpr bool is_tensor_argument = is_tensor<X>::value || std::is_same_v<X, AnyTensor>;

template <class X>
KeyPart key_of(const X& x) {
  KeyPart part;
  if constexpr (std::is_same_v<X, AnyTensor>) {
    if (!x.engaged()) {
      throw invalid_argument("tf::function: an AnyTensor argument holds no tensor");
    }
  }
  if constexpr (is_tensor_argument<X>) {
    part.is_tensor = true;
    part.dtype = x.dtype();
    part.shape = x.shape();
  } else if constexpr (is_variable<X>::value) {
    part.text =
        "variable " + x.name() + "#" + std::to_string(x.id() & ((std::int64_t{1} << 48) - 1));
  } else if constexpr (std::is_arithmetic_v<X>) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, x);
    part.text = type_label<X>() + " " + std::string(buf, res.ptr);
  } else if constexpr (std::is_convertible_v<const X&, std::string_view>) {
    part.text = "string '" + std::string(std::string_view(x)) + "'";
  } else {
    static_assert(std::equality_comparable<X> && std::copy_constructible<X>,
                  "tf::function: a non-tensor argument must be copyable and comparable with == "
                  "(it is part of the trace's cache key)");
    part.type = &typeid(X);
    part.text = "value of type " + type_label<X>();
    part.value = std::make_shared<X>(x);
    part.equal = [](const void* a, const void* b) {
      return *static_cast<const X*>(a) == *static_cast<const X*>(b);
    };
  }
  return part;
}

/// Lists of argument structures: std::vector, and types another module describes (a
/// distribute::PerReplica is its replicas' values) with `element`, `elements(x)` and `from`.
template <class X>
struct list_structure;
template <class E>
struct list_structure<std::vector<E>> {
  using element = E;
  static const std::vector<E>& elements(const std::vector<E>& x) { return x; }
  static std::vector<E> from(std::vector<E> elements) { return elements; }
};

template <class X>
constexpr bool is_structure_argument();

template <class X>
concept tuple_like_argument = requires { std::tuple_size<X>::value; };

// Whether each element of tuple-like X is a structure (a tuple of tensors).
template <class X, std::size_t... I>
constexpr bool all_structures(std::index_sequence<I...>) {
  return sizeof...(I) > 0 && (is_structure_argument<std::tuple_element_t<I, X>>() && ...);
}

/// Whether a call argument is traced as the tensors it holds (TensorFlow's nested structures):
/// a tensor, or a tuple, pair or list of structures. A list's length is part of the key.
template <class X>
constexpr bool is_structure_argument() {
  if constexpr (is_tensor_argument<X>) {
    return true;
  } else if constexpr (requires { typename list_structure<X>::element; }) {
    return is_structure_argument<typename list_structure<X>::element>();
  } else if constexpr (tuple_like_argument<X>) {
    return all_structures<X>(std::make_index_sequence<std::tuple_size_v<X>>{});
  } else {
    return false;
  }
}

/// Calls `leaf(t)` on each tensor of structure `x`, in key order.
template <class X, class Leaf>
void for_each_tensor(const X& x, Leaf& leaf) {
  if constexpr (is_tensor_argument<X>) {
    leaf(x);
  } else if constexpr (requires { typename list_structure<X>::element; }) {
    for (const auto& e : list_structure<X>::elements(x)) {
      for_each_tensor(e, leaf);
    }
  } else {
    std::apply([&](const auto&... e) { (for_each_tensor(e, leaf), ...); }, x);
  }
}

/// Structure `x` with each tensor replaced by `leaf(t)` (of the same type), in key order.
template <class X, class Leaf>
X map_tensors(const X& x, Leaf& leaf) {
  if constexpr (is_tensor_argument<X>) {
    return leaf(x);
  } else if constexpr (requires { typename list_structure<X>::element; }) {
    std::vector<typename list_structure<X>::element> mapped;
    for (const auto& e : list_structure<X>::elements(x)) {
      mapped.push_back(map_tensors(e, leaf));
    }
    return list_structure<X>::from(std::move(mapped));
  } else {
    // Braced: elements are mapped left to right.
    return std::apply([&](const auto&... e) { return X{map_tensors(e, leaf)...}; }, x);
  }
}

/// Appends argument `x`'s parts of the cache key: one per tensor of a structure (after each
/// list's length), else one.
template <class X>
void append_key(std::vector<KeyPart>& key, const X& x) {
  if constexpr (!is_structure_argument<X>() || is_tensor_argument<X>) {
    key.push_back(key_of(x));
  } else if constexpr (requires { typename list_structure<X>::element; }) {
    const auto& elements = list_structure<X>::elements(x);
    KeyPart length;
    length.is_length = true;
    length.text = "list of " + std::to_string(elements.size());
    key.push_back(std::move(length));
    for (const auto& e : elements) {
      append_key(key, e);
    }
  } else {
    std::apply([&](const auto&... e) { (append_key(key, e), ...); }, x);
  }
}

/// Appends the key parts of call argument number `index`, marked for retrace reasons.
template <class X>
void append_argument_key(std::vector<KeyPart>& key, const X& x, std::size_t index) {
  const std::size_t first = key.size();
  append_key(key, x);
  std::int32_t tensor = 0;
  for (std::size_t k = first; k < key.size(); ++k) {
    key[k].argument = static_cast<std::int32_t>(index);
    if (key[k].is_tensor && key.size() - first > 1) {
      key[k].tensor = tensor++;
    }
  }
}

/// "argument 1", "argument 1, tensor 2" or "argument 1 (a list)".
inline std::string label_of(const KeyPart& part, std::size_t position) {
  std::string label =
      "argument " + std::to_string(part.argument >= 0 ? std::size_t(part.argument) : position);
  if (part.tensor >= 0) {
    label += ", tensor " + std::to_string(part.tensor);
  } else if (part.is_length) {
    label += " (a list)";
  }
  return label;
}

/// The key's last part: the device the enclosing tf::device scopes place on ("" outside any),
/// so each device gets its own trace, as TensorFlow's cache key includes the device.
inline KeyPart device_key() {
  KeyPart part;
  part.is_device = true;
  auto const id = devices::scope_device();
  part.text = id == devices::unsatisfiable ? std::string("(unsatisfiable)")
                                           : std::string(devices::name(id));
  return part;
}

/// Says how `now` differs from `before`, for retrace explanations.
inline std::string describe_difference(const std::vector<KeyPart>& before,
                                       const std::vector<KeyPart>& now) {
  std::string out;
  for (std::size_t i = 0; i < std::min(before.size(), now.size()); ++i) {
    const auto& a = before[i];
    const auto& b = now[i];
    if (a == b) {
      continue;
    }
    std::string what;
    if (a.is_device || b.is_device) {
      auto label = [](const KeyPart& p) { return p.text.empty() ? std::string("none") : p.text; };
      out += (out.empty() ? "" : "; ") + std::string("device ") + label(a) + " -> " + label(b);
      continue;
    }
    if (a.is_tensor && b.is_tensor) {
      if (a.dtype != b.dtype) {
        what =
            "dtype " + std::string(dtype_name(a.dtype)) + " -> " + std::string(dtype_name(b.dtype));
      } else if (a.shape.rank() != b.shape.rank()) {
        what = "rank " + std::to_string(a.shape.rank()) + " -> " + std::to_string(b.shape.rank()) +
               " (shape " + a.shape.to_string() + " -> " + b.shape.to_string() + ")";
      } else {
        what = "shape " + a.shape.to_string() + " -> " + b.shape.to_string();
      }
    } else if (a.is_tensor != b.is_tensor) {
      what = std::string(a.is_tensor ? "tensor" : "value") + " -> " +
             (b.is_tensor ? "tensor" : "value");
    } else {
      what = "value " + a.text + " -> " + b.text;
    }
    if (!out.empty()) {
      out += "; ";
    }
    out += label_of(b, i) + ": " + what;
    if (a.is_length) {
      break;  // the parts after a list of another length no longer pair up
    }
  }
  return out.empty() ? "a new signature" : out;
}

/// How a body's result maps to graph outputs and back.
template <class X>
struct result_traits {
  static_assert(
      sizeof(X) == 0,
      "tf::function: the body must return a tensor, a variable, a tuple/pair of them, or nothing");
};
template <>
struct result_traits<void> {
  using type = void;
  static void collect(trace::Graph&) {}
};
template <class T, std::size_t R>
struct result_traits<Tensor<T, R>> {
  using type = Tensor<T, R>;
  static void collect(trace::Graph& g, const Tensor<T, R>& t) {
    g.output_slots.push_back(g.slot_of(t));
  }
  static type rebuild(std::span<const AnyTensor> v, std::size_t& k) {
    return v[k++].template unchecked_as<T, R>();
  }
};
template <>
struct result_traits<AnyTensor> {
  using type = AnyTensor;
  static void collect(trace::Graph& g, const AnyTensor& t) {
    g.output_slots.push_back(g.slot_of(t));
  }
  static type rebuild(std::span<const AnyTensor> v, std::size_t& k) { return v[k++]; }
};
template <class T, std::size_t R>
struct result_traits<Variable<T, R>> {
  using type = Tensor<T, R>;
  static void collect(trace::Graph& g, const Variable<T, R>& v) {
    result_traits<Tensor<T, R>>::collect(g, v.value());
  }
  static type rebuild(std::span<const AnyTensor> v, std::size_t& k) {
    return v[k++].template unchecked_as<T, R>();
  }
};
template <class... X>
struct result_traits<std::tuple<X...>> {
  using type = std::tuple<typename result_traits<X>::type...>;
  static void collect(trace::Graph& g, const std::tuple<X...>& t) {
    std::apply(
        [&](const auto&... e) {
          (result_traits<std::remove_cvref_t<decltype(e)>>::collect(g, e), ...);
        },
        t);
  }
  static type rebuild(std::span<const AnyTensor> v, std::size_t& k) {
    return type{result_traits<X>::rebuild(v, k)...};  // braced: evaluated left to right
  }
};
template <class A, class B>
struct result_traits<std::pair<A, B>> {
  using type = std::pair<typename result_traits<A>::type, typename result_traits<B>::type>;
  static void collect(trace::Graph& g, const std::pair<A, B>& p) {
    result_traits<A>::collect(g, p.first);
    result_traits<B>::collect(g, p.second);
  }
  static type rebuild(std::span<const AnyTensor> v, std::size_t& k) {
    return type{result_traits<A>::rebuild(v, k), result_traits<B>::rebuild(v, k)};
  }
};

}  // namespace detail::fn

/// A callable traced into graphs, one per argument signature (TensorFlow: `tf.function`).
///
///     auto f = tf::function([](const auto& x) {
///       std::cout << "traced\n";   // runs while tracing only
///       tf::print(x);               // runs on every call
///     });
///     f(tf::constant(1)); f(tf::constant(2));   // traces once
///
/// An AnyTensor argument is keyed on its dtype and rank as well as its shape, and reaches the
/// body as a symbolic AnyTensor; a body may return AnyTensors (as Keras' train step does).
///
/// Threads may call one Function together, as the replicas of `strategy.run` do: the cache is
/// locked, and each thread traces outside the lock (a replica's trace may wait for the others
/// in a merge_call). Replicas run on their own devices, which are part of the signature, so each
/// traces and runs its own graph. trace_count, retrace_reasons and concrete_functions are for
/// when no call is running.
template <class F>
class Function {
 public:
  /// Wraps the callable `f`; nothing is traced until the first call.
  explicit Function(F f, FunctionOptions options = {})
      : f_(std::move(f)), options_(std::move(options)) {}

  /// Runs the graph cached for these arguments' signature, tracing `f` first if there is none;
  /// returns what `f` returns (tensors as real tensors). Called while another function traces,
  /// `f` runs inline into that trace. Throws invalid_argument when the tensor arguments do not
  /// match FunctionOptions::input_signature.
  template <class... Args>
  decltype(auto) operator()(Args&&... args) {
    return call(detail::fn::normalize(std::forward<Args>(args))...);
  }

  /// How many graphs were traced.
  [[nodiscard]] int trace_count() const noexcept { return static_cast<int>(cache_.size()); }
  /// Why each trace after the first happened ("argument 0: dtype int32 -> float32").
  [[nodiscard]] const std::vector<std::string>& retrace_reasons() const noexcept {
    return reasons_;
  }
  /// The graphs traced so far, in trace order.
  [[nodiscard]] std::vector<const ConcreteFunction*> concrete_functions() const {
    std::vector<const ConcreteFunction*> out;
    for (const auto& entry : cache_) {
      out.push_back(entry.function.get());
    }
    return out;
  }

 private:
  struct Entry {
    std::vector<detail::fn::KeyPart> key;
    std::unique_ptr<ConcreteFunction> function;
  };

  template <class... Args>
  decltype(auto) call(Args&&... args) {
    using Result = std::invoke_result_t<F&, Args&...>;
    using Traits = detail::fn::result_traits<std::remove_cvref_t<Result>>;
    if (detail::trace::active() != nullptr) {
      // Called from another function's body: inline into the outer trace.
      if constexpr (std::is_void_v<Result>) {
        f_(args...);
        return;
      } else {
        return typename Traits::type(f_(args...));
      }
    } else {
      check_signature(args...);
      std::vector<detail::fn::KeyPart> key;
      key.reserve(sizeof...(Args) + 1);
      std::size_t argument = 0;
      (detail::fn::append_argument_key(key, args, argument++), ...);
      key.push_back(detail::fn::device_key());
      if (options_.input_signature) {
        // The signature is pinned: every matching call shares one trace.
        std::size_t t = 0;
        for (auto& part : key) {
          if (part.is_tensor) {
            part.shape = (*options_.input_signature)[t++].shape;
          }
        }
      }
      const ConcreteFunction* fn = nullptr;
      {
        const std::lock_guard lock(cache_mutex_.mutex);
        fn = find(key);
      }
      if (fn == nullptr) {
        fn = trace(std::move(key), args...);
      }
      std::vector<AnyTensor> inputs;
      inputs.reserve(sizeof...(Args));
      (collect_input(inputs, args), ...);
      auto outputs = fn->run(inputs);
      if constexpr (!std::is_void_v<Result>) {
        std::size_t k = 0;
        return Traits::rebuild(outputs, k);
      }
    }
  }

  const ConcreteFunction* find(const std::vector<detail::fn::KeyPart>& key) const {
    // An exact trace first (fully known shapes fuse best), then a relaxed one accepting it.
    for (const auto& entry : cache_) {
      if (entry.key == key) {
        return entry.function.get();
      }
    }
    for (const auto& entry : cache_) {
      if (entry.key.size() == key.size() &&
          std::equal(entry.key.begin(), entry.key.end(), key.begin(), detail::fn::accepts)) {
        return entry.function.get();
      }
    }
    return nullptr;
  }

  template <class X>
  static void collect_input(std::vector<AnyTensor>& inputs, const X& x) {
    if constexpr (detail::fn::is_structure_argument<X>()) {
      auto add = [&](const auto& t) { inputs.emplace_back(t); };
      detail::fn::for_each_tensor(x, add);
    }
  }

  template <class... Args>
  void check_signature(const Args&... args) const {
    if (!options_.input_signature) {
      return;
    }
    const auto& specs = *options_.input_signature;
    std::size_t tensors = 0;
    std::size_t index = 0;
    auto check_tensor = [&](const auto& x) {
      {
        if (tensors >= specs.size()) {
          throw invalid_argument("tf::function '" + options_.name + "': argument " +
                                 std::to_string(index) + " is a tensor beyond the " +
                                 std::to_string(specs.size()) + " of input_signature");
        }
        const auto& spec = specs[tensors++];
        bool ok = spec.dtype == x.dtype() && spec.shape.rank() == x.shape().rank();
        for (std::size_t i = 0; ok && i < spec.shape.rank(); ++i) {
          ok = spec.shape[i] < 0 || spec.shape[i] == x.shape()[i];
        }
        if (!ok) {
          throw invalid_argument(
              "tf::function '" + options_.name + "': argument " + std::to_string(index) + " (" +
              std::string(dtype_name(x.dtype())) + ", shape " + x.shape().to_string() +
              ") does not match input_signature (" + std::string(dtype_name(spec.dtype)) +
              ", shape " + spec.shape.to_string() + ")");
        }
      }
    };
    auto check = [&](const auto& x) {
      using X = std::remove_cvref_t<decltype(x)>;
      if constexpr (detail::fn::is_structure_argument<X>()) {
        detail::fn::for_each_tensor(x, check_tensor);
      }
      ++index;
    };
    (check(args), ...);
    (void)check;  // a call without arguments checks nothing
    if (tensors != specs.size()) {
      throw invalid_argument("tf::function '" + options_.name + "': input_signature has " +
                             std::to_string(specs.size()) + " tensor specs but the call passes " +
                             std::to_string(tensors) + " tensors");
    }
  }

  // Runs `f_` on placeholders of the shapes in `key`, recording its graph.
  template <class... Args>
  std::unique_ptr<detail::trace::Graph> trace_graph(const std::vector<detail::fn::KeyPart>& key,
                                                    Args&... args) {
    using Result = std::invoke_result_t<F&, Args&...>;
    using Traits = detail::fn::result_traits<std::remove_cvref_t<Result>>;
    auto graph = std::make_unique<detail::trace::Graph>();
    std::vector<Shape> tensor_shapes;
    for (const auto& part : key) {
      if (part.is_tensor) {
        tensor_shapes.push_back(part.shape);
      }
    }
    std::size_t tensor_index = 0;
    auto leaf_placeholder = [&](const auto& x) {
      using X = std::remove_cvref_t<decltype(x)>;
      if constexpr (std::is_same_v<X, AnyTensor>) {
        return graph->add_argument(x.dtype(), tensor_shapes[tensor_index++]);
      } else {
        // The key holds the traced shape: the call's, the input_signature's, or relaxed.
        auto dims = x.dims();
        const Shape& traced = tensor_shapes[tensor_index];
        for (std::size_t i = 0; i < X::rank_v; ++i) {
          dims[i] = traced[i];
        }
        ++tensor_index;
        return graph->template add_argument<typename X::value_type, X::rank_v>(dims);
      }
    };
    auto placeholder = [&](auto& x) -> decltype(auto) {
      using X = std::remove_cvref_t<decltype(x)>;
      if constexpr (detail::fn::is_tensor_argument<X>) {
        return leaf_placeholder(x);
      } else if constexpr (detail::fn::is_structure_argument<X>()) {
        return detail::fn::map_tensors(x, leaf_placeholder);  // a tuple or list of tensors
      } else {
        return (x);
      }
    };
    {
      detail::trace::Scope scope(graph.get());
      // Braces: placeholders are created left to right, matching the call's tensor order.
      auto traced_args = std::tuple<decltype(placeholder(args))...>{placeholder(args)...};
      if constexpr (std::is_void_v<Result>) {
        std::apply(f_, traced_args);
      } else {
        auto result = std::apply(f_, traced_args);
        Traits::collect(*graph, result);
      }
    }
    return graph;
  }

  template <class... Args>
  const ConcreteFunction* trace(std::vector<detail::fn::KeyPart> key, Args&... args) {
    std::optional<std::string> reason;
    std::vector<detail::fn::KeyPart> exact_key;
    {
      const std::lock_guard lock(cache_mutex_.mutex);
      exact_key = key;
      reason = retrace_reason(key);
    }
    std::unique_ptr<detail::trace::Graph> graph;
    if (key != exact_key) {
      try {
        graph = trace_graph(key, args...);
      } catch (const std::exception& e) {
        // Some op of the body needs the dims left unknown (a random op's shape, a gradient's
        // element count): trace the call's own shapes, and stop relaxing this function.
        std::string why = e.what();
        why = why.substr(0, why.find('\n'));
        reason = reason->substr(0, reason->find(" (relaxed to")) + " (not relaxed: " + why + ")";
        key = std::move(exact_key);
        const std::lock_guard lock(cache_mutex_.mutex);
        relaxing_failed_ = true;
      }
    }
    if (graph == nullptr) {
      graph = trace_graph(key, args...);
    }
    const ConcreteFunction* traced = nullptr;
    bool warn = false;
    {
      const std::lock_guard lock(cache_mutex_.mutex);
      for (const auto& entry : cache_) {
        if (entry.key == key) {
          return entry.function.get();  // another thread traced this signature meanwhile
        }
      }
      if (reason) {
        reasons_.push_back(*std::move(reason));
      }
      // Optimizing the graph under the lock is short, and waits for no other replica.
      cache_.push_back(Entry{std::move(key),
                             std::make_unique<ConcreteFunction>(std::move(graph), options_.name)});
      traced = cache_.back().function.get();
      warn = trace_count() > options_.max_traces_before_warning && !warned_;
      warned_ = warned_ || warn;
      if (warn) {
        std::cerr << "tapeflow: tf::function '" << options_.name << "' has been traced "
                  << trace_count()
                  << " times; retracing is expensive. Last retrace: " << reasons_.back()
                  << ". Pass tensors instead of changing C++ numbers, or pin shapes with "
                     "input_signature (retrace_reasons() lists every cause).\n";
      }
    }
    if (auto* observer = detail::trace::observer().load(std::memory_order_acquire)) {
      observer->traced(*traced);  // Note [Trace observer]
    }
    return traced;
  }

  // Why `key` needs a new trace, against the most similar earlier signature (none for the
  // first trace); relaxes `key`'s shapes under ShapePolicy::relaxed. Called under the lock.
  std::optional<std::string> retrace_reason(std::vector<detail::fn::KeyPart>& key) const {
    if (!cache_.empty()) {
      // Explain against the most similar earlier signature.
      const Entry* closest = &cache_.front();
      std::size_t best = 0;
      for (const auto& entry : cache_) {
        std::size_t same = 0;
        for (std::size_t i = 0; i < std::min(entry.key.size(), key.size()); ++i) {
          const auto& a = entry.key[i];
          const auto& b = key[i];
          same += a == b ? 4 : 0;
          same += a.is_tensor && b.is_tensor && a.dtype == b.dtype ? 2 : 0;
          same += a.is_tensor && b.is_tensor && a.shape.rank() == b.shape.rank() ? 1 : 0;
        }
        if (same >= best) {
          best = same;
          closest = &entry;
        }
      }
      std::string reason = detail::fn::describe_difference(closest->key, key);
      if (options_.shape_policy == ShapePolicy::relaxed && !options_.input_signature &&
          !relaxing_failed_ && relax(closest->key, key)) {
        reason += " (relaxed to";
        for (const auto& part : key) {
          if (part.is_tensor) {
            reason += " " + part.shape.to_string();
          }
        }
        reason += ")";
      }
      return reason;
    }
    return std::nullopt;
  }

  // ShapePolicy::relaxed: when `key` differs from `closest` only in dims of same-dtype,
  // same-rank tensors, marks those dims unknown in `key`; returns whether it did.
  static bool relax(const std::vector<detail::fn::KeyPart>& closest,
                    std::vector<detail::fn::KeyPart>& key) {
    if (closest.size() != key.size()) {
      return false;
    }
    for (std::size_t i = 0; i < key.size(); ++i) {
      const auto& a = closest[i];
      const auto& b = key[i];
      const bool same_kind =
          a.is_tensor && b.is_tensor && a.dtype == b.dtype && a.shape.rank() == b.shape.rank();
      if (!same_kind && !(a == b)) {
        return false;  // a dtype, rank or value change: an exact retrace
      }
    }
    bool relaxed = false;
    for (std::size_t i = 0; i < key.size(); ++i) {
      if (!key[i].is_tensor) {
        continue;
      }
      std::vector<std::int64_t> dims(key[i].shape.rank());
      for (std::size_t d = 0; d < dims.size(); ++d) {
        const std::int64_t before = closest[i].shape[d];
        dims[d] = key[i].shape[d];
        if (before < 0 || before != dims[d]) {
          relaxed = relaxed || before >= 0;
          dims[d] = -1;
        }
      }
      key[i].shape = Shape(std::span<const std::int64_t>(dims));
    }
    return relaxed;
  }

  // A mutex that a moved Function does not take along: the cache moves, the lock is new.
  struct CacheMutex {
    std::mutex mutex;
    CacheMutex() = default;
    CacheMutex(const CacheMutex&) noexcept {}
    CacheMutex& operator=(const CacheMutex&) noexcept { return *this; }
    ~CacheMutex() = default;
  };

  F f_;
  FunctionOptions options_;
  CacheMutex cache_mutex_;
  std::vector<Entry> cache_;
  std::vector<std::string> reasons_;
  bool warned_ = false;
  bool relaxing_failed_ = false;  // a relaxed trace threw: later retraces keep exact shapes
};

/// Wraps a callable as a tf::function.
template <class F>
Function<std::decay_t<F>> function(F&& f, FunctionOptions options = {}) {
  return Function<std::decay_t<F>>(std::forward<F>(f), std::move(options));
}

TAPEFLOW_END_NAMESPACE
