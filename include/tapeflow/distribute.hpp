// tf.distribute: strategies that run a training step on several replicas (MirroredStrategy on
// one machine, MultiWorkerMirroredStrategy across processes), their replica contexts and
// per-replica values, and the collectives replicas exchange tensors through (the `Collective`
// concept, its in-process model and MPI's, whose definitions are in tapeflow::mpi).
#pragma once

#include <tapeflow/distribute/any_collective.hpp>                  // IWYU pragma: export
#include <tapeflow/distribute/collective.hpp>                      // IWYU pragma: export
#include <tapeflow/distribute/distributed_dataset.hpp>             // IWYU pragma: export
#include <tapeflow/distribute/file_paths.hpp>                      // IWYU pragma: export
#include <tapeflow/distribute/in_process_collective.hpp>           // IWYU pragma: export
#include <tapeflow/distribute/mirrored_strategy.hpp>               // IWYU pragma: export
#include <tapeflow/distribute/mpi_collective.hpp>                  // IWYU pragma: export
#include <tapeflow/distribute/multi_worker_mirrored_strategy.hpp>  // IWYU pragma: export
#include <tapeflow/distribute/nccl_collective.hpp>                 // IWYU pragma: export
#include <tapeflow/distribute/per_replica.hpp>                     // IWYU pragma: export
#include <tapeflow/distribute/replica_context.hpp>                 // IWYU pragma: export
#include <tapeflow/distribute/strategy.hpp>                        // IWYU pragma: export
