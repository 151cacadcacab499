// Part of tapeflow::instantiations (MAINTAINERS.md, "tapeflow::instantiations"): the SavedModel
// loader, compiled once, so that a program calling tf::saved_model::load with
// TAPEFLOW_PRECOMPILED parses only its declaration (saved_model/load.hpp).
#define TAPEFLOW_PRECOMPILED  // the declaration of load; the op kernels from the other sources
#include <tapeflow/saved_model/detail/loader.hpp>
#include <tapeflow/saved_model/load.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace saved_model {

LoadedModel load(const std::string& dir) { return detail::load_model(dir); }

}  // namespace saved_model
TAPEFLOW_END_NAMESPACE
