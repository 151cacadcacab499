// tf::device scopes and placement: which logical device a new tensor or op goes to.
//
// `auto scope = tf::device("/GPU:0");` is Python's `with tf.device("/GPU:0"):`. Scopes nest per
// thread, each inner spec overriding the fields it sets (DeviceSpec::merged_with);
// `tf::device(nullptr)` clears them (`tf.device(None)`). Placement resolves the merged spec
// against the logical devices as TensorFlow does: unset means the default device (GPU:0 where
// there is one, else CPU:0); a device that does not exist falls back, under soft placement, to
// the same type's first device and then to CPU:0, and without it is invalid_argument in
// TensorFlow's words.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/config/context.hpp>
#include <tapeflow/config/device_spec.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace config {

/// The prefix TensorFlow's eager runtime gives every local device's full name.
inline constexpr std::string_view local_device_prefix = "/job:localhost/replica:0/task:0";

namespace detail_context {
// The scopes' merged specs, innermost last; per thread, as TensorFlow's device stack.
inline std::vector<std::optional<DeviceSpec>>& scope_stack() {
  thread_local std::vector<std::optional<DeviceSpec>> stack;
  return stack;
}

inline std::string full_name(const LogicalDeviceInfo& info) {
  return std::string(local_device_prefix) + info.device.name;
}

inline bool is_local(const DeviceSpec& spec) {
  return (!spec.job || *spec.job == "localhost") && spec.replica.value_or(0) == 0 &&
         spec.task.value_or(0) == 0;
}

inline const LogicalDeviceInfo* find(const std::vector<LogicalDeviceInfo>& devices,
                                     std::string_view type, std::optional<int> index) {
  for (const auto& info : devices) {
    if (info.device.device_type == type && (!index || info.index == *index)) {
      return &info;
    }
  }
  return nullptr;
}

/// The logical device `spec` places on (see the header comment).
inline LogicalDeviceInfo place(const std::optional<DeviceSpec>& spec) {
  auto const devices = logical_device_infos();
  bool const soft = detail::devices::table().soft_placement.load();
  auto const* default_device = find(devices, "GPU", std::nullopt);
  if (default_device == nullptr) {
    default_device = find(devices, "CPU", 0);
  }
  if (!spec || !spec->device_type) {
    if (spec && !is_local(*spec) && !soft) {
      throw invalid_argument("Could not satisfy device specification '" + spec->to_string() +
                             "': tapeflow runs one local task (/job:localhost/replica:0/task:0)");
    }
    return *default_device;
  }
  if (is_local(*spec)) {
    if (auto const* exact = find(devices, *spec->device_type, spec->device_index)) {
      return *exact;
    }
  }
  if (!soft) {
    DeviceSpec wanted = DeviceSpec::from_string(local_device_prefix).merged_with(*spec);
    std::string types;
    std::string all;
    for (const auto& info : devices) {
      if (types.find(info.device.device_type) == std::string::npos) {
        types += (types.empty() ? "" : ", ") + info.device.device_type;
      }
      all += (all.empty() ? "" : ", ") + full_name(info);
    }
    throw invalid_argument("Could not satisfy device specification '" + wanted.to_string() +
                           "'. enable_soft_placement=0. Supported device types [" + types +
                           "]. All available devices [" + all + "].");
  }
  if (auto const* same_type = find(devices, *spec->device_type, std::nullopt)) {
    return *same_type;
  }
  return *find(devices, "CPU", 0);
}

// How core resolves device names for the layers below config (data's prefetch_to_device):
// placement of the name as a tf::device scope would place it.
inline detail::devices::DeviceId resolve_device_id(std::string_view name) {
  return static_cast<detail::devices::DeviceId>(place(DeviceSpec::from_string(name)).id);
}
inline const bool resolver_installed =
    (detail::devices::table().resolver.store(&resolve_device_id, std::memory_order_release), true);
}  // namespace detail_context

/// The device spec the enclosing tf::device scopes ask for (unset outside any scope).
inline std::optional<DeviceSpec> current_device_spec() {
  auto const& stack = detail_context::scope_stack();
  return stack.empty() ? std::nullopt : stack.back();
}

/// The full name of the logical device new tensors and ops go to here, e.g.
/// "/job:localhost/replica:0/task:0/device:CPU:1". Initializes the runtime.
inline std::string current_device() {
  return detail_context::full_name(detail_context::place(current_device_spec()));
}

/// A tf::device scope; see tf::device.
class [[nodiscard]] DeviceScope {
 public:
  /// Enters a scope placing on `spec` merged into the enclosing one's; none clears them.
  explicit DeviceScope(std::optional<DeviceSpec> spec)
      : previous_scope_(detail::devices::scope_device()),
        previous_allocation_(detail::devices::allocation_device()),
        previous_reason_(detail::devices::unsatisfiable_reason()) {
    namespace devices = detail::devices;
    auto& stack = detail_context::scope_stack();
    if (spec && !stack.empty() && stack.back()) {
      spec = stack.back()->merged_with(*spec);
    }
    // Entering a scope initializes the runtime (device settings freeze), as placing does.
    detail_context::logical_device_infos();
    devices::DeviceId id = devices::none;
    if (spec) {
      try {
        id = static_cast<devices::DeviceId>(detail_context::place(spec).id);
      } catch (const invalid_argument& e) {
        // Without soft placement, TensorFlow fails the ops placed here, not the scope.
        id = devices::unsatisfiable;
        devices::unsatisfiable_reason() = e.what();
      }
    }
    devices::scope_device() = id;
    // Values made under the scope (constants, variables) go to its device, as in TensorFlow.
    devices::allocation_device() =
        devices::host_memory(id) || devices::device_memory(id) != nullptr ? id : 0;
    stack.push_back(std::move(spec));
    depth_ = stack.size();
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope() {
    auto& stack = detail_context::scope_stack();
    // Scopes are objects on one thread's stack, so they close innermost first.
    if (stack.size() == depth_) {
      stack.pop_back();
      detail::devices::scope_device() = previous_scope_;
      detail::devices::allocation_device() = previous_allocation_;
      detail::devices::unsatisfiable_reason() = std::move(previous_reason_);
    }
  }

 private:
  std::size_t depth_ = 0;
  detail::devices::DeviceId previous_scope_;
  detail::devices::DeviceId previous_allocation_;
  std::string previous_reason_;
};

}  // namespace config

/// Places new tensors and ops on `spec` while the returned scope lives (TensorFlow:
/// `with tf.device(spec):`). A malformed spec is invalid_argument naming it.
inline config::DeviceScope device(std::string_view spec) {
  return config::DeviceScope(DeviceSpec::from_string(spec));
}
/// Clears the enclosing scopes' placement (`tf.device(None)`).
inline config::DeviceScope device(std::nullptr_t) { return config::DeviceScope(std::nullopt); }

TAPEFLOW_END_NAMESPACE
