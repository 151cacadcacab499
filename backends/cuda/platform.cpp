// The "GPU" platform: the CUDA devices the driver reports, for tf::config, with their memory
// and kernels. Host code: the C++ compiler builds it.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels.hpp"
#include <tapeflow/backend/cuda/platform.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: clear the sticky error, report none
    return 0;
  }
  return count;
}

int runtime_version() noexcept {
  int version = 0;
  if (cudaRuntimeGetVersion(&version) != cudaSuccess) {
    return 0;
  }
  return version;
}

Platform gpu_platform() {
  static const BackendId backend = [] {
    auto const id = register_backend("CUDA");
    register_kernels(id);
    return id;
  }();
  Platform platform{"GPU", [] {
                    std::vector<PlatformDevice> devices;
                    int const count = device_count();
                    for (int i = 0; i < count; ++i) {
                      cudaDeviceProp properties{};
                      if (cudaGetDeviceProperties(&properties, i) != cudaSuccess) {
                        (void)cudaGetLastError();
                        continue;
                      }
                      devices.push_back(
                          {properties.name, static_cast<std::int64_t>(properties.totalGlobalMem)});
                    }
                    return devices;
                  }};
  platform.backend = backend;
  platform.host_memory = false;
  platform.device_memory = make_device_memory;
  return platform;
}

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
