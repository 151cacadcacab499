// Umbrella for tf::image: JPEG/PNG codecs (libjpeg, libpng), rot90, flips, resize and dtype
// conversion (`tf.image`). Also brings tf::io::decode_jpeg/decode_png/encode_png.
#pragma once

#include <tapeflow/image/convert_image_dtype.hpp>  // IWYU pragma: export
#include <tapeflow/image/decode_jpeg.hpp>          // IWYU pragma: export
#include <tapeflow/image/decode_png.hpp>           // IWYU pragma: export
#include <tapeflow/image/flip_left_right.hpp>      // IWYU pragma: export
#include <tapeflow/image/resize.hpp>               // IWYU pragma: export
#include <tapeflow/image/rot90.hpp>                // IWYU pragma: export
