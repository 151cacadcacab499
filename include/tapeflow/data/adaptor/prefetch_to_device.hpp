// `ds | tf::data::experimental::prefetch_to_device("/cpu:1")`: copies each element's tensors
// to a device on a background thread, keeping up to n elements ready there
// (`tf.data.experimental.prefetch_to_device`). Pipelines stay on the host; this is their last
// stage, so the training step finds its batch already on its device.
//
// Why data resolves the name through core: data sits below tf::config, which installs the
// resolver in core's device table (Note [Placement]). The name resolves as a tf::device scope
// would place it, when the adaptor is applied.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/detail/device_table.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/adaptor/map.hpp>
#include <tapeflow/data/adaptor/prefetch.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/features.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {
namespace detail {

/// Copies an element's tensors to one device (tensors, AnyTensors, Features, and tuples and
/// pairs of them); elements already there are shared, not copied.
struct CopyToDevice {
  tapeflow::detail::devices::DeviceId device = 0;

  template <class E>
  E operator()(E element) const {
    tapeflow::detail::devices::AllocationScope const scope(device);
    return copy(std::move(element));
  }

 private:
  template <class T, std::size_t R>
  static Tensor<T, R> copy(Tensor<T, R> t) {
    return tapeflow::detail::tensor_access::on_allocation_device(t);
  }
  static AnyTensor copy(AnyTensor t) { return t.on_allocation_device(); }
  static Features copy(Features features) {
    Features out;
    for (const auto& [key, value] : features) {
      out.set(key, value.on_allocation_device());
    }
    return out;
  }
  template <class... Es>
  static std::tuple<Es...> copy(std::tuple<Es...> parts) {
    return std::apply([](auto&&... p) { return std::tuple<Es...>(copy(std::move(p))...); },
                      std::move(parts));
  }
  template <class A, class B>
  static std::pair<A, B> copy(std::pair<A, B> parts) {
    return {copy(std::move(parts.first)), copy(std::move(parts.second))};
  }
};

/// The device `name` names, for prefetch_to_device: one whose tensors live in host memory or
/// in the device's own memory (Note [Device memory]).
inline tapeflow::detail::devices::DeviceId prefetch_device(std::string_view name) {
  namespace devices = tapeflow::detail::devices;
  devices::DeviceId const id = devices::resolve(name);
  if (!devices::host_memory(id) && devices::device_memory(id) == nullptr) {
    throw unimplemented("tf::data::experimental::prefetch_to_device: '" +
                        std::string(devices::name(id)) +
                        "' has no memory tapeflow can place tensors in (its platform gives none)");
  }
  return id;
}

}  // namespace detail

namespace experimental {

/// The dataset-first form of `prefetch_to_device` (`prefetch_to_device(ds, device, n)`);
/// prefetch_to_device_fn adds the pipeable one.
struct prefetch_to_device_base_fn {
  /// `ds` with its elements copied to `device`, `buffer_size` kept ready there.
  template <dataset D>
  auto operator()(D&& ds, std::string_view device, std::int64_t buffer_size = autotune) const {
    return std::forward<D>(ds) |
           map(data::detail::CopyToDevice{data::detail::prefetch_device(device)}) |
           prefetch(buffer_size);
  }
};
/// The type of `prefetch_to_device`: both the dataset-first and the pipeable form.
struct prefetch_to_device_fn : prefetch_to_device_base_fn {
  using prefetch_to_device_base_fn::operator();
  /// `ds | prefetch_to_device("/gpu:0")`: `buffer_size` elements kept ready on the device
  /// (autotune by default, as TensorFlow's None).
  auto operator()(std::string_view device, std::int64_t buffer_size = autotune) const {
    return ranges::make_view_closure(
        ranges::bind_back(prefetch_to_device_base_fn{}, std::string(device), buffer_size));
  }
};
/// `tf.data.experimental.prefetch_to_device(device, buffer_size)`.
inline constexpr prefetch_to_device_fn prefetch_to_device{};

}  // namespace experimental
}  // namespace data
TAPEFLOW_END_NAMESPACE
