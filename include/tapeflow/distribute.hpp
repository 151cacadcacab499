// tf.distribute: collectives replicas exchange tensors through (the `Collective` concept and
// its in-process model, for replicas that are threads of one process).
#pragma once

#include <tapeflow/distribute/collective.hpp>             // IWYU pragma: export
#include <tapeflow/distribute/in_process_collective.hpp>  // IWYU pragma: export
