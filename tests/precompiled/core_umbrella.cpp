// CTest precompiled/no_intrinsics compiles this with TAPEFLOW_PRECOMPILED for AVX2 + FMA: the
// core umbrella parses no intrinsics header, since the SIMD kernels that need one (GEMM,
// convolutions, batch normalization) come compiled from tapeflow::instantiations
// (MAINTAINERS.md, "Compile time").
#include <tapeflow/tapeflow.hpp>
