// The platforms of the compiled backends this program links, registered before main.
//
// Linking `tapeflow::cuda` defines TAPEFLOW_HAS_CUDA; the inline variable below then calls into
// that library, which both registers the GPU platform and makes the linker keep the library's
// object (a registration object nobody references would be dropped from a static archive).
#pragma once

#include <tapeflow/backend/cuda/platform.hpp>  // declarations only: compiles without CUDA
#include <tapeflow/backend/platform.hpp>

#if defined(TAPEFLOW_HAS_CUDA) && TAPEFLOW_HAS_CUDA
TAPEFLOW_BEGIN_NAMESPACE
namespace backend::detail_platform {
inline const bool cuda_registered = register_platform(cuda::gpu_platform());
}  // namespace backend::detail_platform
TAPEFLOW_END_NAMESPACE
#endif
