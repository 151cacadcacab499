// Every tapeflow module: the core API (<tapeflow/tapeflow.hpp>) plus tf.config, tf.data, tf.image,
// tf.distribute, tf.io, tf.summary, tf.train, tf.saved_model and tf.keras. Convenient for small
// programs; it costs what all of them cost to parse (tf.keras most), so larger code bases
// include the modules they use.
#pragma once

#include <tapeflow/config.hpp>       // IWYU pragma: export
#include <tapeflow/data.hpp>         // IWYU pragma: export
#include <tapeflow/distribute.hpp>   // IWYU pragma: export
#include <tapeflow/image.hpp>        // IWYU pragma: export
#include <tapeflow/io.hpp>           // IWYU pragma: export
#include <tapeflow/keras.hpp>        // IWYU pragma: export
#include <tapeflow/saved_model.hpp>  // IWYU pragma: export
#include <tapeflow/summary.hpp>      // IWYU pragma: export
#include <tapeflow/tapeflow.hpp>     // IWYU pragma: export
#include <tapeflow/train.hpp>        // IWYU pragma: export
