// `tapeflow::TensorArray<T, Rank>`: a growable list of equally shaped tensors with TensorFlow's
// functional API (TensorFlow: `tf.TensorArray`): `arr = arr.write(i, v)`, `arr.read(i)`,
// `arr.stack()`, `arr.unstack(t)`.
//
// Elements are ordinary tensors and every value-producing step (stack, unstack, gather, concat)
// is an ordinary op, so GradientTape and function<> tracing see nothing special: gradients flow
// through write -> stack and unstack -> read without any TensorArray-specific code. For the same
// reason TensorArray never looks at element values, only at shapes, so it holds symbolic
// tensors during tracing as well as eager ones.
//
// Storage is a persistent ("fat node") array: the arrays derived from one another by writes
// share one slot vector in which each slot keeps the values written to it tagged with the
// version that wrote them, and each array reads the newest value not newer than its own
// version. A write from the newest version appends in place (O(1)), so the loop idiom
// `arr = arr.write(i, v)` never copies, while every older array still reads what it held
// before. Writing from an older version (branching) copies the element handles once.
//
// Dense mode (Note [TensorArray in loops]). An index that is a symbolic tensor (a traced
// while_loop's counter) cannot pick a slot at trace time, so such an array is held as one
// stacked tensor of shape (size, element shape...): `write` selects the new value into row
// `index` (SelectV2 with a one-row mask), `read` gathers the row, `stack` is the tensor itself.
// tf::while_loop carries TensorArray loop variables this way. It needs a fixed size and a
// fully known element shape (TensorFlow's TensorList has neither restriction), and a write
// costs O(size) rather than O(1); gradients flow through the same select/gather ops.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/tensor_concepts.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/concat.hpp>
#include <tapeflow/ops/array/gather.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/array/stack.hpp>
#include <tapeflow/ops/array/where.hpp>
#include <tapeflow/ops/math/compare.hpp>
#include <tapeflow/ops/state/variable.hpp>

TAPEFLOW_BEGIN_NAMESPACE

/// Options of a TensorArray (TensorFlow's `tf.TensorArray` keyword arguments).
///
///     tf::TensorArray<float, 1> arr(0, {.dynamic_size = true, .element_shape = tf::Shape{3}});
///
/// TensorFlow's `clear_after_read` has no counterpart: reads never change a (value-semantic)
/// array, so an element can always be read again.
struct TensorArrayOptions {
  /// Let writes past the end grow the array (TensorFlow: `dynamic_size`).
  bool dynamic_size = false;
  /// The shape every element must have; dimensions of -1 are unknown. When it is fully known,
  /// unwritten elements read as zeros (TensorFlow: `element_shape`).
  std::optional<Shape> element_shape = std::nullopt;
  /// Refine the element shape from written values and reject values of an incompatible shape
  /// (TensorFlow: `infer_shape`).
  bool infer_shape = true;
};

namespace detail {

/// The slot vector shared by the arrays derived from one another by writes (see the header
/// comment). Each slot lists (version, value) entries in increasing version order.
template <class T, std::size_t Rank>
struct TensorArrayStorage {
  struct Entry {
    std::int64_t version;
    Tensor<T, Rank> value;
  };

  /// The value of slot `index` that the array of version `version` sees, or null if unwritten.
  [[nodiscard]] const Tensor<T, Rank>* find(std::int64_t index, std::int64_t version) const {
    const auto& history = slots[static_cast<std::size_t>(index)];
    for (auto it = history.rbegin(); it != history.rend(); ++it) {
      if (it->version <= version) {
        return &it->value;
      }
    }
    return nullptr;
  }

  // Copies of a TensorArray may be written from several threads (const member functions must
  // be safe to call concurrently), and they all append to this one vector.
  std::mutex mutex;
  /// The newest version any array of this storage has.
  std::int64_t head = 0;
  std::vector<std::vector<Entry>> slots;
};

}  // namespace detail

/// A list of `Tensor<T, Rank>` elements of one shape with a functional API
/// (TensorFlow: `tf.TensorArray(dtype, size, dynamic_size, element_shape, infer_shape)`).
///
///     tf::TensorArray<float, 0> arr(3);
///     arr = arr.write(0, 0.0f);
///     arr = arr.write(1, 1.0f);
///     arr = arr.write(2, 2.0f);
///     std::cout << arr.read(1);  // tf.Tensor(1.0, shape=(), dtype=float32)
///     auto all = arr.stack();    // tf.Tensor([0. 1. 2.], shape=(3,), dtype=float32)
///
/// Every "modifying" member returns a new array and leaves this one unchanged; copies are
/// cheap. `stack`, `unstack`, `gather` and `concat` are ops, so a GradientTape differentiates
/// through them and through `write`/`read`.
template <element_type T, std::size_t Rank>
class TensorArray {
  static_assert(Rank < max_rank,
                "tf::TensorArray<T, Rank>: Rank + 1 (the rank of stack()) must not exceed "
                "tapeflow's maximum rank (8)");

 public:
  using value_type = T;                        ///< element type of the stored tensors
  using tensor_type = Tensor<T, Rank>;         ///< type of one element of the array
  static constexpr std::size_t rank_v = Rank;  ///< rank of one element

  /// An array of `size` unwritten elements. Throws invalid_argument for a negative size or an
  /// `element_shape` whose rank is not `Rank`.
  explicit TensorArray(std::int64_t size, TensorArrayOptions options = {})
      : storage_(std::make_shared<Storage>()),
        size_(size),
        element_shape_(std::move(options.element_shape)),
        dynamic_size_(options.dynamic_size),
        infer_shape_(options.infer_shape) {
    if (size < 0) {
      throw invalid_argument("TensorArray: size " + std::to_string(size) + " is negative");
    }
    if (element_shape_ && element_shape_->rank() != Rank) {
      throw invalid_argument("TensorArray: element_shape " + element_shape_->to_string() +
                             " has rank " + std::to_string(element_shape_->rank()) +
                             ", but the elements are tensors of rank " + std::to_string(Rank));
    }
    storage_->slots.resize(static_cast<std::size_t>(size));
  }

  /// Element type as a run-time value.
  [[nodiscard]] static constexpr DType dtype() noexcept { return dtype_v<T>; }
  /// Number of elements, written or not (TensorFlow: `size()`).
  [[nodiscard]] std::int64_t size() const noexcept { return size_; }
  /// Whether writes past the end grow the array.
  [[nodiscard]] bool dynamic_size() const noexcept { return dynamic_size_; }
  /// The element shape known so far: the `element_shape` option refined by written values
  /// (when `infer_shape`); std::nullopt if nothing is known (TensorFlow: `element_shape`).
  [[nodiscard]] const std::optional<Shape>& element_shape() const noexcept {
    return element_shape_;
  }

  /// A new array with element `index` set to `value` (TensorFlow: `write`); this array is
  /// unchanged. Throws invalid_argument for a negative index or (with `infer_shape`) a value
  /// whose shape is incompatible with the element shape, and out_of_range for an index past the
  /// end unless `dynamic_size`, in which case the array grows to `index + 1` elements.
  [[nodiscard]] TensorArray write(std::int64_t index, const Tensor<T, Rank>& value) const {
    if (dense_) {
      if (index < 0 || index >= size_) {
        throw out_of_range("TensorArray::write: index " + std::to_string(index) +
                           " is out of range for a TensorArray of size " + std::to_string(size_));
      }
      return dense_write(Tensor<std::int64_t, 0>(index), value);
    }
    return with_writes({{index, value}}, "write");
  }
  /// Writes a variable's current value.
  template <tensor_of<T, Rank> V>
  [[nodiscard]] TensorArray write(std::int64_t index, const V& value) const {
    return write(index, detail::as_tensor(value));
  }
  /// Writes at an index given as an int32/int64 scalar tensor. A symbolic index (inside a
  /// traced tf::function or while_loop) turns the array into its dense form (see the header
  /// comment): it then needs a fixed size and a fully known element shape.
  template <class I>
    requires(std::same_as<I, std::int32_t> || std::same_as<I, std::int64_t>)
  [[nodiscard]] TensorArray write(const Tensor<I, 0>& index, const Tensor<T, Rank>& value) const {
    if (!dense_ && !index.is_symbolic()) {
      return write(static_cast<std::int64_t>(index.item()), value);
    }
    return densified("write").dense_write(index, value);
  }

  /// Element `index` (TensorFlow: `read`): the tensor written there, or zeros if it was never
  /// written and the element shape is fully known. Throws out_of_range for an index outside
  /// [0, size()) and failed_precondition for an unwritten element of unknown shape.
  [[nodiscard]] Tensor<T, Rank> read(std::int64_t index) const {
    if (index < 0 || index >= size_) {
      throw out_of_range("TensorArray::read: index " + std::to_string(index) +
                         " is out of range for a TensorArray of size " + std::to_string(size_));
    }
    if (dense_) {
      return ::tapeflow::gather(*dense_, Tensor<std::int64_t, 0>(index));
    }
    return std::move(elements({index}, "read").front());
  }
  /// Reads at an index given as an int32/int64 scalar tensor (symbolic in traced loops; an
  /// index out of range then throws invalid_argument when the function runs).
  template <class I>
    requires(std::same_as<I, std::int32_t> || std::same_as<I, std::int64_t>)
  [[nodiscard]] Tensor<T, Rank> read(const Tensor<I, 0>& index) const {
    if (!dense_ && !index.is_symbolic()) {
      return read(static_cast<std::int64_t>(index.item()));
    }
    return ::tapeflow::gather(densified("read").dense(), index);
  }

  /// All elements stacked along a new axis 0, shape (size, element shape...) (TensorFlow:
  /// `stack`); unwritten elements are zeros. Throws failed_precondition if an element is
  /// unwritten (or the array is empty) and the element shape is not fully known.
  [[nodiscard]] Tensor<T, Rank + 1> stack() const {
    if (dense_) {
      return *dense_;
    }
    std::vector<std::int64_t> all(static_cast<std::size_t>(size_));
    for (std::int64_t i = 0; i < size_; ++i) {
      all[static_cast<std::size_t>(i)] = i;
    }
    return stack_indices(all, "stack");
  }

  /// The elements at `indices` stacked along a new axis 0 (TensorFlow: `gather`). Throws
  /// out_of_range for an index outside [0, size()).
  [[nodiscard]] Tensor<T, Rank + 1> gather(const std::vector<std::int64_t>& indices) const {
    for (auto index : indices) {
      if (index < 0 || index >= size_) {
        throw out_of_range("TensorArray::gather: index " + std::to_string(index) +
                           " is out of range for a TensorArray of size " + std::to_string(size_));
      }
    }
    if (dense_) {
      const auto ids = constant<std::int64_t, 1>(
          std::span<const std::int64_t>(indices),
          std::array<std::int64_t, 1>{static_cast<std::int64_t>(indices.size())});
      return ::tapeflow::gather(*dense_, ids);
    }
    return stack_indices(indices, "gather");
  }

  /// All elements joined along their axis 0 (TensorFlow: `concat`), rank `Rank` >= 1.
  [[nodiscard]] Tensor<T, Rank> concat() const
    requires(Rank >= 1)
  {
    if (size_ == 0) {
      std::array<std::int64_t, Rank> dims = known_dims("concat");
      dims[0] = 0;
      return zeros<T, Rank>(dims);
    }
    if (dense_) {
      std::array<std::int64_t, Rank> dims{};
      dims[0] = size_ * dense_->dim(1);
      for (std::size_t i = 1; i < Rank; ++i) {
        dims[i] = dense_->dim(i + 1);
      }
      return reshape(*dense_, dims);
    }
    std::vector<std::int64_t> all(static_cast<std::size_t>(size_));
    for (std::int64_t i = 0; i < size_; ++i) {
      all[static_cast<std::size_t>(i)] = i;
    }
    return ::tapeflow::concat(elements(all, "concat"), 0);
  }

  /// A new array holding the pieces of `value` along its axis 0, with size value.dim(0)
  /// (TensorFlow: `unstack`). Throws invalid_argument if that exceeds size() and the array is
  /// not `dynamic_size`, or (with `infer_shape`) if the pieces' shape is incompatible.
  [[nodiscard]] TensorArray unstack(const Tensor<T, Rank + 1>& value) const {
    const std::int64_t n = value.dim(0);
    if (n > size_ && !dynamic_size_) {
      throw invalid_argument("TensorArray::unstack: cannot unstack " + std::to_string(n) +
                             " tensors (value of shape " + value.shape().to_string() +
                             ") into a TensorArray of static size " + std::to_string(size_));
    }
    TensorArray out(*this);
    if (infer_shape_) {
      // Checked here as well as per piece, so that an empty value refines the shape too.
      std::array<std::int64_t, Rank> piece{};
      for (std::size_t i = 0; i < Rank; ++i) {
        piece[i] = value.dim(i + 1);
      }
      out.element_shape_ =
          checked_merge(element_shape_, Shape(piece), "unstack",
                        "a piece of the value of shape " + value.shape().to_string());
    }
    // The result replaces every element (as TensorFlow's TensorListFromTensor does), so it
    // starts from fresh storage rather than from a version of this one.
    out.storage_ = std::make_shared<Storage>();
    out.version_ = 0;
    out.size_ = n;
    if (dense_) {
      out.dense_ = value;  // a dense array stays dense: the value is its stacked form
      return out;
    }
    auto pieces = ::tapeflow::unstack(value);
    std::vector<std::pair<std::int64_t, Tensor<T, Rank>>> writes;
    writes.reserve(pieces.size());
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      writes.emplace_back(static_cast<std::int64_t>(i), std::move(pieces[i]));
    }
    return out.with_writes(std::move(writes), "unstack");
  }
  /// unstack() of a variable's current value.
  template <tensor_of<T, Rank + 1> V>
  [[nodiscard]] TensorArray unstack(const V& value) const {
    return unstack(detail::as_tensor(value));
  }

  /// A new array with element `indices[i]` set to `value`'s piece i along axis 0 (TensorFlow:
  /// `scatter`). Throws invalid_argument if value.dim(0) differs from indices.size(), and what
  /// write() throws for a bad index or shape.
  [[nodiscard]] TensorArray scatter(const std::vector<std::int64_t>& indices,
                                    const Tensor<T, Rank + 1>& value) const {
    if (value.dim(0) != static_cast<std::int64_t>(indices.size())) {
      throw invalid_argument("TensorArray::scatter: " + std::to_string(indices.size()) +
                             " indices, but the value of shape " + value.shape().to_string() +
                             " has " + std::to_string(value.dim(0)) + " pieces along axis 0");
    }
    auto pieces = ::tapeflow::unstack(value);
    if (dense_) {
      TensorArray out(*this);
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        out = out.write(indices[i], pieces[i]);
      }
      return out;
    }
    std::vector<std::pair<std::int64_t, Tensor<T, Rank>>> writes;
    writes.reserve(pieces.size());
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      writes.emplace_back(indices[i], std::move(pieces[i]));
    }
    return with_writes(std::move(writes), "scatter");
  }
  /// scatter() of a variable's current value.
  template <tensor_of<T, Rank + 1> V>
  [[nodiscard]] TensorArray scatter(const std::vector<std::int64_t>& indices,
                                    const V& value) const {
    return scatter(indices, detail::as_tensor(value));
  }

  /// Whether the array is in its dense form (see the header comment).
  [[nodiscard]] bool is_dense() const noexcept { return dense_.has_value(); }
  /// This array in dense form: its elements stacked (what tf::while_loop carries as the loop
  /// variable). Throws unimplemented for a dynamic_size array, failed_precondition when an
  /// unwritten element's shape is unknown.
  [[nodiscard]] TensorArray densified(const char* what) const {
    if (dense_) {
      return *this;
    }
    if (dynamic_size_) {
      throw unimplemented(std::string("TensorArray::") + what +
                          ": a dynamic_size array cannot be indexed by a symbolic tensor or "
                          "carried through a traced tf::while_loop (give it a fixed size)");
    }
    TensorArray out(*this);
    out.dense_ = stack();
    out.element_shape_ = Shape(known_dims(what));
    return out;
  }
  /// The stacked tensor of a dense array.
  [[nodiscard]] const Tensor<T, Rank + 1>& dense() const {
    if (!dense_) {
      throw failed_precondition("TensorArray::dense: the array is not in dense form");
    }
    return *dense_;
  }
  /// A dense array like this one (same options) holding `stacked` (size = its dim 0).
  [[nodiscard]] TensorArray with_dense(Tensor<T, Rank + 1> stacked) const {
    TensorArray out(*this);
    out.size_ = stacked.dim(0);
    out.dense_ = std::move(stacked);
    return out;
  }

 private:
  using Storage = detail::TensorArrayStorage<T, Rank>;

  // Row `index` of the dense tensor replaced by `value`: where(rows == index, value, dense).
  // The row ids are gathered at `index` first, so an index out of range fails there (when the
  // function runs) instead of silently writing nothing.
  template <class I>
  [[nodiscard]] TensorArray dense_write(const Tensor<I, 0>& index,
                                        const Tensor<T, Rank>& value) const {
    if (infer_shape_) {
      (void)checked_merge(element_shape_, value.shape(), "write", "the value");
    }
    const Tensor<I, 1> rows = range<I>(static_cast<I>(size_));
    std::array<std::int64_t, Rank + 1> mask_dims{};
    mask_dims.fill(1);
    mask_dims[0] = size_;
    auto mask = reshape(equal(rows, ::tapeflow::gather(rows, index)), mask_dims);
    return with_dense(where(mask, value, *dense_));
  }

  static bool compatible(const Shape& a, const Shape& b) noexcept {
    for (std::size_t i = 0; i < Rank; ++i) {
      if (a[i] >= 0 && b[i] >= 0 && a[i] != b[i]) {
        return false;
      }
    }
    return true;
  }
  /// `a` with its unknown dimensions taken from `b` (a and b compatible).
  static Shape merged(Shape a, const Shape& b) noexcept {
    for (std::size_t i = 0; i < Rank; ++i) {
      if (a[i] < 0) {
        a[i] = b[i];
      }
    }
    return a;
  }

  /// The fully known element shape, for making zeros; throws failed_precondition otherwise.
  [[nodiscard]] std::array<std::int64_t, Rank> known_dims(const char* what) const {
    if (!element_shape_ || !element_shape_->fully_defined()) {
      throw failed_precondition(
          std::string("TensorArray::") + what +
          ": an element was never written and the element shape " +
          (element_shape_ ? element_shape_->to_string() : std::string("<unknown>")) +
          " is not fully defined, so it cannot be filled with zeros (write it, or give "
          "TensorArrayOptions::element_shape)");
    }
    std::array<std::int64_t, Rank> dims{};
    // Loops, not std::copy: for Rank 0 that would pass a null pointer to memmove (-Wnonnull).
    for (std::size_t i = 0; i < Rank; ++i) {
      dims[i] = (*element_shape_)[i];
    }
    return dims;
  }

  /// The elements at `indices` (all in range), with zeros for unwritten ones.
  [[nodiscard]] std::vector<Tensor<T, Rank>> elements(const std::vector<std::int64_t>& indices,
                                                      const char* what) const {
    std::vector<std::optional<Tensor<T, Rank>>> found;
    found.reserve(indices.size());
    {
      std::lock_guard lock(storage_->mutex);
      for (auto index : indices) {
        const Tensor<T, Rank>* value = storage_->find(index, version_);
        found.push_back(value ? std::optional(*value) : std::nullopt);
      }
    }
    // Made outside the lock, once: unwritten elements may all share one zeros tensor.
    std::optional<Tensor<T, Rank>> zero;
    std::vector<Tensor<T, Rank>> out;
    out.reserve(indices.size());
    for (auto& value : found) {
      if (!value) {
        if (!zero) {
          zero = zeros<T, Rank>(known_dims(what));
        }
        value = zero;
      }
      out.push_back(std::move(*value));
    }
    return out;
  }

  [[nodiscard]] Tensor<T, Rank + 1> stack_indices(const std::vector<std::int64_t>& indices,
                                                  const char* what) const {
    if (indices.empty()) {
      // tf::stack needs at least one tensor; TensorFlow gives an empty (0, shape...) tensor.
      std::array<std::int64_t, Rank> dims = known_dims(what);
      std::array<std::int64_t, Rank + 1> out{};
      for (std::size_t i = 0; i < Rank; ++i) {
        out[i + 1] = dims[i];
      }
      return zeros<T, Rank + 1>(out);
    }
    return ::tapeflow::stack(elements(indices, what), 0);
  }

  /// A new array with `writes` applied in order: the one place elements change.
  [[nodiscard]] TensorArray with_writes(
      std::vector<std::pair<std::int64_t, Tensor<T, Rank>>> writes, const char* what) const {
    // Validate everything before touching the shared storage, so a throw leaves no trace.
    std::int64_t new_size = size_;
    std::optional<Shape> new_shape = element_shape_;
    for (const auto& [index, value] : writes) {
      if (index < 0) {
        throw invalid_argument(std::string("TensorArray::") + what + ": index " +
                               std::to_string(index) + " is negative");
      }
      if (index >= new_size) {
        if (!dynamic_size_) {
          throw out_of_range(std::string("TensorArray::") + what + ": index " +
                             std::to_string(index) + " is out of range for a TensorArray of size " +
                             std::to_string(size_) + " (dynamic_size is false)");
        }
        new_size = index + 1;
      }
      if (infer_shape_) {
        new_shape = checked_merge(new_shape, value.shape(), what,
                                  "the value for index " + std::to_string(index));
      }
    }

    std::shared_ptr<Storage> storage;
    std::int64_t version = 0;
    {
      std::lock_guard lock(storage_->mutex);
      if (version_ != storage_->head) {
        // Another array already wrote after this one's version: branch off into fresh storage
        // holding this array's view (element handles only; no element data is copied).
        storage = std::make_shared<Storage>();
        storage->slots.resize(static_cast<std::size_t>(size_));
        for (std::int64_t i = 0; i < size_; ++i) {
          if (const Tensor<T, Rank>* value = storage_->find(i, version_)) {
            storage->slots[static_cast<std::size_t>(i)].push_back({0, *value});
          }
        }
      } else {
        // This array is the newest, so it appends in place. If it is also the storage's only
        // holder, no array older than it can exist any more: drop the entries it cannot see
        // in the slots written now, which bounds the history of a slot written again and again.
        if (storage_.use_count() == 1) {
          for (const auto& write : writes) {
            if (write.first < static_cast<std::int64_t>(storage_->slots.size())) {
              auto& history = storage_->slots[static_cast<std::size_t>(write.first)];
              if (history.size() > 1) {
                // Every entry is <= version_ (== head): the last one is the visible one.
                history.erase(history.begin(), history.end() - 1);
              }
            }
          }
        }
        storage = storage_;
      }
      // `storage` is either under `lock` or not yet shared with anyone.
      if (storage->slots.size() < static_cast<std::size_t>(new_size)) {
        storage->slots.resize(static_cast<std::size_t>(new_size));
      }
      version = ++storage->head;
      for (auto& [index, value] : writes) {
        storage->slots[static_cast<std::size_t>(index)].push_back({version, std::move(value)});
      }
    }
    TensorArray out(*this);
    out.storage_ = std::move(storage);
    out.version_ = version;
    out.size_ = new_size;
    out.element_shape_ = std::move(new_shape);
    return out;
  }

  /// `known` refined by a value of shape `shape`; invalid_argument if they are incompatible.
  [[nodiscard]] static Shape checked_merge(const std::optional<Shape>& known, const Shape& shape,
                                           const char* what, const std::string& operand) {
    if (!known) {
      return shape;
    }
    if (!compatible(*known, shape)) {
      throw invalid_argument(std::string("TensorArray::") + what + ": " + operand + " has shape " +
                             shape.to_string() + ", which is incompatible with the element shape " +
                             known->to_string());
    }
    return merged(*known, shape);
  }

  std::shared_ptr<Storage> storage_;
  /// Which writes of storage_ this array sees: those tagged with a version <= version_.
  std::int64_t version_ = 0;
  std::int64_t size_ = 0;
  std::optional<Shape> element_shape_{};
  bool dynamic_size_ = false;
  bool infer_shape_ = true;
  /// Set in dense form: the elements stacked, shape (size_, element shape...).
  std::optional<Tensor<T, Rank + 1>> dense_{};
};

TAPEFLOW_END_NAMESPACE
