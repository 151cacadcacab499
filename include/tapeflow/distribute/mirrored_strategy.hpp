// `tf::distribute::MirroredStrategy`: synchronous data parallelism on one machine (TensorFlow:
// `tf.distribute.MirroredStrategy`). One replica per device, each a thread of this process;
// variables are mirrored (Note [Mirrored variables] in distribute/strategy.hpp) and gradients
// are summed by NCCL across GPUs on their own cards (where tapeflow::nccl is linked), else by
// the in-process collective, as TensorFlow falls back to for logical devices.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <tapeflow/config/config.hpp>
#include <tapeflow/config/context.hpp>
#include <tapeflow/config/device_scope.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/distribute/nccl_collective.hpp>
#include <tapeflow/distribute/strategy.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace distribute {

/// How MirroredStrategy's replicas exchange gradients (TensorFlow: `cross_device_ops`).
enum class CrossDeviceOps {
  auto_,       ///< `nccl` for GPUs each on its own card where tapeflow::nccl is linked, else
               ///< `in_process` (TensorFlow's default: NCCL across GPUs)
  nccl,        ///< NCCL communicators, one per GPU (`tf.distribute.NcclAllReduce()`)
  in_process,  ///< through host memory between the replica threads (logical devices)
};

/// Options of MirroredStrategy (TensorFlow's keyword arguments, and the collective's).
struct MirroredStrategyOptions {
  /// The replicas' devices ("/gpu:0", "/cpu:1", ...); empty: every logical GPU, or every
  /// logical CPU where there is no GPU.
  std::vector<std::string> devices = {};
  /// How long a replica waits for the others in a collective before every replica fails with
  /// deadline_exceeded.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  /// The most gradient bytes one all-reduce call carries (TensorFlow:
  /// `CommunicationOptions.bytes_per_pack`); a larger tensor goes alone.
  std::int64_t bytes_per_pack = std::int64_t{32} << 20;
  /// The collective the replicas use.
  CrossDeviceOps cross_device_ops = CrossDeviceOps::auto_;
};

/// Replicates the model on every device, splits each global batch across them and keeps the
/// replicas' variables identical.
///
///     tf::config::set_logical_device_configuration(cpus[0], {{}, {}});  // CPU:0, CPU:1
///     tf::distribute::MirroredStrategy strategy;
///     auto scope = strategy.scope();  // create the model and optimizer here
class MirroredStrategy : public Strategy {
 public:
  /// A strategy over `options.devices` (invalid_argument for a device that does not exist,
  /// or one named twice).
  explicit MirroredStrategy(MirroredStrategyOptions options = {}) {
    auto& s = *s_;
    s.class_name = "MirroredStrategy";
    s.timeout = options.timeout;
    s.bytes_per_pack = options.bytes_per_pack;
    s.device_names.clear();
    s.device_ids.clear();
    std::vector<std::string> wanted = options.devices;
    if (wanted.empty()) {
      auto devices = config::list_logical_devices("GPU");
      if (devices.empty()) {
        devices = config::list_logical_devices("CPU");
      }
      for (const auto& d : devices) {
        wanted.push_back(d.name);
      }
    }
    for (const auto& name : wanted) {
      s.add_replica_device(name);
    }
    if (s.device_names.empty()) {
      throw invalid_argument("MirroredStrategy: no devices");
    }
    const auto nccl = detail::nccl_group_factory().load();
    if (options.cross_device_ops == CrossDeviceOps::nccl ||
        (options.cross_device_ops == CrossDeviceOps::auto_ && nccl != nullptr &&
         s.device_ids.size() > 1 && gpus_on_own_cards(s.device_ids))) {
      if (nccl == nullptr) {
        throw failed_precondition(
            "MirroredStrategy: cross_device_ops nccl needs tapeflow::nccl linked (built where "
            "CMake finds NCCL)");
      }
      s.replica_group = nccl(s.device_names, s.timeout);
    }
  }

 private:
  // Whether every device is a GPU on a card of its own (what NCCL needs).
  static bool gpus_on_own_cards(const std::vector<tapeflow::detail::devices::DeviceId>& ids) {
    std::vector<int> cards;
    for (const auto& info : config::detail_context::logical_device_infos()) {
      if (std::ranges::find(ids, info.id) != ids.end()) {
        if (info.device.device_type != "GPU" ||
            std::ranges::find(cards, info.physical_index) != cards.end()) {
          return false;
        }
        cards.push_back(info.physical_index);
      }
    }
    return true;
  }
};

}  // namespace distribute
TAPEFLOW_END_NAMESPACE
