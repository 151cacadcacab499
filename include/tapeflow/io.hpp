// tapeflow's io module (TensorFlow: `tf.io`): CRC-32C, TFRecord files, `tf.train.Example`
// and its parsers. `tf::data::TFRecordDataset` is in <tapeflow/data/source/tfrecord_dataset.hpp>.
#pragma once

#include <tapeflow/io/crc32c.hpp>         // IWYU pragma: export
#include <tapeflow/io/example.hpp>        // IWYU pragma: export
#include <tapeflow/io/files.hpp>          // IWYU pragma: export
#include <tapeflow/io/parse_example.hpp>  // IWYU pragma: export
#include <tapeflow/io/tfrecord.hpp>       // IWYU pragma: export
