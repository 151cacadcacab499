// CTest precompiled/no_eigen compiles this with TAPEFLOW_PRECOMPILED and without Eigen's include
// directory: programs linking tapeflow::instantiations never parse Eigen.
#include <tapeflow/all.hpp>
#include <tapeflow/saved_model/load.hpp>  // not in the umbrella
