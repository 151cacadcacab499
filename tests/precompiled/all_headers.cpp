// CTest precompiled/no_eigen compiles this with TAPEFLOW_PRECOMPILED and without Eigen's include
// directory: programs linking tapeflow::instantiations never parse Eigen. CTest
// precompiled/no_executor compiles it so too: nor the graph executor, passes or memory plan.
#include <tapeflow/all.hpp>
#include <tapeflow/saved_model/load.hpp>  // not in the umbrella
