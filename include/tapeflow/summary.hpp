// Umbrella for tf::summary: TensorBoard event files, summaries, graph and profile traces.
#pragma once

#include <tapeflow/summary/audio.hpp>         // IWYU pragma: export
#include <tapeflow/summary/event_reader.hpp>  // IWYU pragma: export
#include <tapeflow/summary/graph.hpp>         // IWYU pragma: export
#include <tapeflow/summary/histogram.hpp>     // IWYU pragma: export
#include <tapeflow/summary/image.hpp>         // IWYU pragma: export
#include <tapeflow/summary/scalar.hpp>        // IWYU pragma: export
#include <tapeflow/summary/text.hpp>          // IWYU pragma: export
#include <tapeflow/summary/trace.hpp>         // IWYU pragma: export
#include <tapeflow/summary/writer.hpp>        // IWYU pragma: export
