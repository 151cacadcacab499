// tapeflow's saved_model module (TensorFlow: `tf.saved_model`): export models and their traced
// functions as SavedModels that TensorFlow loads and serves.
#pragma once

#include <tapeflow/saved_model/save.hpp>  // IWYU pragma: export
