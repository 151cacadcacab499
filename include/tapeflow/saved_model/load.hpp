// `tf::saved_model::load` (tf.saved_model.load): reads a SavedModel written by TensorFlow or by
// tf::saved_model::save, restores its variables and runs its signatures with our kernels
// (Note [SavedModel loading] in saved_model/detail/loader.hpp).
//
// Not in the <tapeflow/saved_model.hpp> umbrella: the loader instantiates every op its table
// admits (about 30 s of compile time header-only), so only the programs that load pay for it,
// and with TAPEFLOW_PRECOMPILED (linking tapeflow::instantiations) none do.
#pragma once

#include <string>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/saved_model/loaded_model.hpp>

#ifndef TAPEFLOW_PRECOMPILED
#include <tapeflow/saved_model/detail/loader.hpp>
#endif

TAPEFLOW_BEGIN_NAMESPACE
namespace saved_model {

/// Loads the SavedModel in `dir` (TensorFlow: `tf.saved_model.load(dir)`): restores its
/// variables and traces each signature into a graph of tapeflow ops (Note [SavedModel
/// loading]). Reads what TensorFlow 2.21 writes for a tf.Module or a Keras 3 model saved with
/// `tf.saved_model.save`, and what tf::saved_model::save writes.
///
///     auto m = tf::saved_model::load("mlp");
///     auto out = m.signatures["serving_default"]({{"inputs", x}});  // {"output_0": ...}
///     auto y = m.signatures["serving_default"].call<float, 2>(x);
///
/// Throws data_loss for a corrupt saved_model.pb (with the byte offset), not_found for a
/// missing file or a variable missing from the bundle (naming its key), unimplemented naming
/// the op, node and function for an op tapeflow cannot run.
#ifdef TAPEFLOW_PRECOMPILED
LoadedModel load(const std::string& dir);  // compiled in src/instantiations/saved_model_load.cpp
#endif
#ifndef TAPEFLOW_PRECOMPILED
inline LoadedModel load(const std::string& dir) { return detail::load_model(dir); }
#endif

}  // namespace saved_model
TAPEFLOW_END_NAMESPACE
