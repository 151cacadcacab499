// Umbrella for tf::data: dataset sources and pipeable adaptors (`tf.data`). Compiles without
// Eigen; of range-v3 it includes only the view-closure machinery (MAINTAINERS.md, "Datasets are
// views"), so a program using only pipelines builds in seconds.
#pragma once

#include <tapeflow/data/adaptor/batch.hpp>               // IWYU pragma: export
#include <tapeflow/data/adaptor/cache.hpp>               // IWYU pragma: export
#include <tapeflow/data/adaptor/enumerate.hpp>           // IWYU pragma: export
#include <tapeflow/data/adaptor/filter.hpp>              // IWYU pragma: export
#include <tapeflow/data/adaptor/interleave.hpp>          // IWYU pragma: export
#include <tapeflow/data/adaptor/map.hpp>                 // IWYU pragma: export
#include <tapeflow/data/adaptor/prefetch.hpp>            // IWYU pragma: export
#include <tapeflow/data/adaptor/prefetch_to_device.hpp>  // IWYU pragma: export
#include <tapeflow/data/adaptor/reduce.hpp>              // IWYU pragma: export
#include <tapeflow/data/adaptor/repeat.hpp>              // IWYU pragma: export
#include <tapeflow/data/adaptor/shard.hpp>               // IWYU pragma: export
#include <tapeflow/data/adaptor/shuffle.hpp>             // IWYU pragma: export
#include <tapeflow/data/adaptor/take.hpp>                // IWYU pragma: export
#include <tapeflow/data/adaptor/unbatch.hpp>             // IWYU pragma: export
#include <tapeflow/data/any_dataset.hpp>                 // IWYU pragma: export
#include <tapeflow/data/dataset.hpp>                     // IWYU pragma: export
#include <tapeflow/data/element.hpp>                     // IWYU pragma: export
#include <tapeflow/data/features.hpp>                    // IWYU pragma: export
#include <tapeflow/data/source/concatenate.hpp>          // IWYU pragma: export
#include <tapeflow/data/source/from_generator.hpp>       // IWYU pragma: export
#include <tapeflow/data/source/from_range.hpp>           // IWYU pragma: export
#include <tapeflow/data/source/from_tensor_slices.hpp>   // IWYU pragma: export
#include <tapeflow/data/source/list_files.hpp>           // IWYU pragma: export
#include <tapeflow/data/source/range.hpp>                // IWYU pragma: export
#include <tapeflow/data/source/zip.hpp>                  // IWYU pragma: export
#if __has_include(<tapeflow/data/source/tfrecord_dataset.hpp>)
#include <tapeflow/data/source/tfrecord_dataset.hpp>  // IWYU pragma: export
#endif
