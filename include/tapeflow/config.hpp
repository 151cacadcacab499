// tf.config: physical and logical devices, visibility, memory growth, threading and soft
// placement, the graph optimizer's switches, plus tf::DeviceSpec and tf::device scopes. Linking
// tapeflow::cuda makes GPUs appear here.
#pragma once

#include <tapeflow/config/config.hpp>                // IWYU pragma: export
#include <tapeflow/config/device_scope.hpp>          // IWYU pragma: export
#include <tapeflow/config/device_spec.hpp>           // IWYU pragma: export
#include <tapeflow/config/devices.hpp>               // IWYU pragma: export
#include <tapeflow/config/log_device_placement.hpp>  // IWYU pragma: export
#include <tapeflow/config/memory_info.hpp>           // IWYU pragma: export
#include <tapeflow/config/optimizer.hpp>             // IWYU pragma: export
