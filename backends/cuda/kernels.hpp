// What the GPU platform (platform.cpp) takes from the kernels' translation unit. Internal to
// tapeflow::cuda.
#pragma once

#include <memory>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/backend/device_memory.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// Registers every CUDA kernel under backend `id`.
void register_kernels(BackendId id);
/// Registers the convolution and pooling kernels (nn_kernels.cpp); register_kernels calls it.
void register_nn_kernels(BackendId id);
/// Registers the optimizer update kernels (training_kernels.cpp); register_kernels calls it.
void register_training_kernels(BackendId id);

/// One logical GPU's memory (device_memory.hpp's CudaMemory).
std::unique_ptr<DeviceMemory> make_device_memory(const DeviceMemoryRequest& request);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
