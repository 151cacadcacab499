// tapeflow's train module (TensorFlow: `tf.train`): object-based checkpoints in TensorFlow's
// tensor-bundle format, the `checkpoint` state file and CheckpointManager.
#pragma once

#include <tapeflow/train/checkpoint.hpp>          // IWYU pragma: export
#include <tapeflow/train/checkpoint_manager.hpp>  // IWYU pragma: export
#include <tapeflow/train/checkpoint_state.hpp>    // IWYU pragma: export
#include <tapeflow/train/tensor_bundle.hpp>       // IWYU pragma: export
#include <tapeflow/train/trackable.hpp>           // IWYU pragma: export
