// Host-compilable declarations of the CUDA backend's platform (compiled in tapeflow::cuda,
// backends/cuda/platform.cu): what tf::config lists as "GPU" devices.
#pragma once

#include <tapeflow/backend/platform.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// The tag the CUDA kernels specialise `tapeflow::kernel<Op, Backend>` on (backends/cuda/
/// kernels.cpp); its id in the backend registry is "CUDA".
struct Backend {};

/// The "GPU" platform: one device per CUDA device the driver reports (honouring
/// CUDA_VISIBLE_DEVICES), each logical GPU with its own memory (a stream-ordered pool), and
/// the CUDA kernels registered for its ops. With no driver or no device it enumerates nothing.
Platform gpu_platform();

/// CUDA devices the driver reports (0 without a driver or device; never throws).
int device_count() noexcept;

/// The CUDA runtime's version (e.g. 12080), or 0 when no driver is present.
int runtime_version() noexcept;

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
