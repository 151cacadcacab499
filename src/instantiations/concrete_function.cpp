// Part of tapeflow::instantiations (MAINTAINERS.md, "tapeflow::instantiations"): what builds
// and runs a tf::function's graph (the graph passes, the executor), compiled once, so that a
// program built with TAPEFLOW_PRECOMPILED parses only ConcreteFunction's declaration
// (function/graph.hpp).
#define TAPEFLOW_PRECOMPILED  // ConcreteFunction declared; the op kernels from the other sources
#define TAPEFLOW_CONCRETE_FUNCTION_INLINE  // empty: the definitions below are the program's
#include <tapeflow/function/detail/concrete_function_impl.hpp>
