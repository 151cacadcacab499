// IWYU pragma: private, include <tapeflow/data/features.hpp>
// Slicing, stacking, padding and byte encoding of type-erased tensors (AnyTensor), for the
// components of a `tf::data::Features` element. The work runs on raw element arrays with the
// rank as a run-time value; only allocating the result names `Tensor<T, R>` (one switch over
// dtype x rank). The operations are static members of a class template (`any_element<Tag>`)
// so that they are instantiated only in programs that use Features: including the header (as
// <tapeflow/data.hpp> does) costs almost nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data::detail {

/// "float32 tensor of shape (2, 3)".
inline std::string describe_any(const AnyTensor& t) {
  return std::string(dtype_name(t.dtype())) + " tensor of shape " + t.shape().to_string();
}

inline void require_any_value(const AnyTensor& t, const char* what) {
  if (!t.has_value()) {
    throw failed_precondition(std::string("tf::data: ") + what +
                              ": the tensor holds no value (default-constructed or symbolic)");
  }
}

/// Writable elements of a tensor this code just made with make_any (not yet shared).
template <class T>
T* fresh_data(AnyTensor& t) {
  return static_cast<T*>(t.mutable_raw_data());
}
template <class T>
const T* any_data(const AnyTensor& t) {
  return static_cast<const T*>(t.raw_data());
}

/// The operations on type-erased components (Tag: any type; it only defers instantiation).
template <class Tag>
struct any_element {
  /// A new tensor of `dtype` and `dims` (numeric elements uninitialised, strings empty).
  static AnyTensor make_any(DType dtype, std::span<const std::int64_t> dims) {
    return AnyTensor::uninitialized(dtype, Shape(dims));
  }

  /// Element `i` along dim 0.
  static AnyTensor slice_any(const AnyTensor& t, std::int64_t i) {
    require_any_value(t, "slice");
    if (t.rank() == 0) {
      throw invalid_argument("tf::data: cannot slice a scalar on dim 0");
    }
    const auto dims = t.shape().dims().subspan(1);
    AnyTensor out = make_any(t.dtype(), dims);
    const std::int64_t inner = out.num_elements();
    visit_dtype(t.dtype(), [&]<class T>() {
      const T* src = any_data<T>(t) + i * inner;
      std::copy(src, src + inner, fresh_data<T>(out));
    });
    return out;
  }

  /// Stacks equally shaped tensors of one dtype on a new dim 0; else invalid_argument.
  static AnyTensor stack_any(std::span<const AnyTensor> items) {
    const AnyTensor& first = items.front();
    for (const auto& it : items) {
      require_any_value(it, "batch");
      if (it.dtype() != first.dtype() || it.shape().dims().size() != first.rank() ||
          !std::equal(it.shape().begin(), it.shape().end(), first.shape().begin())) {
        throw invalid_argument("tf::data::batch: cannot stack a " + describe_any(first) +
                               " and a " + describe_any(it) + "; use padded_batch");
      }
    }
    std::vector<std::int64_t> dims{static_cast<std::int64_t>(items.size())};
    dims.insert(dims.end(), first.shape().begin(), first.shape().end());
    AnyTensor out = make_any(first.dtype(), dims);
    visit_dtype(first.dtype(), [&]<class T>() {
      T* dst = fresh_data<T>(out);
      for (const auto& it : items) {
        dst = std::copy(any_data<T>(it), any_data<T>(it) + it.num_elements(), dst);
      }
    });
    return out;
  }

  /// Stacks tensors of one dtype and rank after padding each dim to `target[k]` (-1 or absent:
  /// the largest in the batch) with `value` (a one-element tensor of that dtype; none: zero).
  static AnyTensor padded_stack_any(std::span<const AnyTensor> items,
                                    std::span<const std::int64_t> target, const AnyTensor& value) {
    const AnyTensor& first = items.front();
    const std::size_t rank = first.rank();
    for (const auto& it : items) {
      require_any_value(it, "padded_batch");
      if (it.dtype() != first.dtype() || it.rank() != rank) {
        throw invalid_argument("tf::data::padded_batch: cannot stack a " + describe_any(first) +
                               " and a " + describe_any(it) + " (dtype and rank must agree)");
      }
    }
    if (!target.empty() && target.size() != rank) {
      throw invalid_argument("tf::data::padded_batch: padded_shape has " +
                             std::to_string(target.size()) + " dims for a " + describe_any(first));
    }
    if (value.has_value() && (value.dtype() != first.dtype() || value.num_elements() != 1)) {
      throw invalid_argument("tf::data::padded_batch: padding_value must be a scalar of dtype " +
                             std::string(dtype_name(first.dtype())) + ", got a " +
                             describe_any(value));
    }
    const auto dims_of = [](const AnyTensor& t) { return t.shape().dims(); };
    const auto padded = padded_dims(items, target, rank, dims_of);
    std::vector<std::int64_t> dims{static_cast<std::int64_t>(items.size())};
    dims.insert(dims.end(), padded.begin(), padded.end());
    AnyTensor out = make_any(first.dtype(), dims);
    std::int64_t stride = 1;
    for (auto d : padded) {
      stride *= d;
    }
    visit_dtype(first.dtype(), [&]<class T>() {
      T* dst = fresh_data<T>(out);
      const T pad = value.has_value() ? any_data<T>(value)[0] : T{};
      std::fill(dst, dst + out.num_elements(), pad);
      for (std::size_t b = 0; b < items.size(); ++b) {
        copy_into_padded(any_data<T>(items[b]), items[b].shape().dims(),
                         dst + static_cast<std::int64_t>(b) * stride,
                         std::span<const std::int64_t>(padded));
      }
    });
    return out;
  }

  static std::size_t byte_size_any(const AnyTensor& t) {
    if (t.dtype() != DType::string) {
      return static_cast<std::size_t>(t.num_elements()) * dtype_size(t.dtype());
    }
    std::size_t n = 0;
    const auto* s = any_data<std::string>(t);
    for (std::int64_t i = 0; s != nullptr && i < t.num_elements(); ++i) {
      n += s[i].size() + sizeof(std::string);
    }
    return n;
  }

  /// Encoding: i32 dtype, u32 rank, i64 dims, then the elements (strings: u64 length + bytes).
  static void encode_any(const AnyTensor& t, std::string& out) {
    require_any_value(t, "encode");
    const auto dtype = static_cast<std::int32_t>(t.dtype());
    const auto rank = static_cast<std::uint32_t>(t.rank());
    put_raw(out, &dtype, sizeof dtype);
    put_raw(out, &rank, sizeof rank);
    for (auto d : t.shape()) {
      put_raw(out, &d, sizeof d);
    }
    visit_dtype(t.dtype(), [&]<class T>() {
      const T* p = any_data<T>(t);
      if constexpr (std::is_same_v<T, std::string>) {
        for (std::int64_t i = 0; i < t.num_elements(); ++i) {
          const std::uint64_t n = p[i].size();
          put_raw(out, &n, sizeof n);
          out.append(p[i]);
        }
      } else {
        put_raw(out, p, static_cast<std::size_t>(t.num_elements()) * sizeof(T));
      }
    });
  }

  static AnyTensor decode_any(std::string_view& in) {
    std::int32_t dtype = 0;
    std::uint32_t rank = 0;
    get_raw(in, &dtype, sizeof dtype);
    get_raw(in, &rank, sizeof rank);
    if (dtype_name(static_cast<DType>(dtype)) == "invalid" || rank > max_rank) {
      throw data_loss("tf::data: corrupt tensor encoding (dtype " + std::to_string(dtype) +
                      ", rank " + std::to_string(rank) + ")");
    }
    std::vector<std::int64_t> dims(rank);
    std::uint64_t n = 1;
    for (auto& d : dims) {
      get_raw(in, &d, sizeof d);
      if (d < 0 || d > (std::int64_t{1} << 40)) {
        throw data_loss("tf::data: corrupt tensor encoding (dim " + std::to_string(d) + ")");
      }
      n *= static_cast<std::uint64_t>(d);
    }
    const auto dt = static_cast<DType>(dtype);
    if (dt != DType::string && n * dtype_size(dt) > in.size()) {
      throw data_loss("tf::data: truncated tensor encoding");
    }
    AnyTensor out = make_any(dt, dims);
    visit_dtype(dt, [&]<class T>() {
      T* p = fresh_data<T>(out);
      if constexpr (std::is_same_v<T, std::string>) {
        for (std::uint64_t i = 0; i < n; ++i) {
          std::uint64_t len = 0;
          get_raw(in, &len, sizeof len);
          if (len > in.size()) {
            throw data_loss("tf::data: truncated string in tensor encoding");
          }
          p[i].assign(in.data(), len);
          in.remove_prefix(len);
        }
      } else {
        get_raw(in, p, n * sizeof(T));
      }
    });
    return out;
  }
};

}  // namespace data::detail
TAPEFLOW_END_NAMESPACE
