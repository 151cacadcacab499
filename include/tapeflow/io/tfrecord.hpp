// TFRecord files (TensorFlow: `tf.io.TFRecordWriter`, `tf.io.TFRecordOptions`, the reader
// under `tf.data.TFRecordDataset`): byte-compatible with TensorFlow (docs/formats.md section 3).
#pragma once

#include <tapeflow/io/tfrecord_options.hpp>  // IWYU pragma: export
#include <tapeflow/io/tfrecord_reader.hpp>   // IWYU pragma: export
#include <tapeflow/io/tfrecord_writer.hpp>   // IWYU pragma: export
