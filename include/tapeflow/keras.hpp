// Umbrella for tf::keras: layers, models, losses, metrics, optimizers, callbacks, datasets.
#pragma once

#include <tapeflow/keras/activations.hpp>                 // IWYU pragma: export
#include <tapeflow/keras/applications/application.hpp>    // IWYU pragma: export
#include <tapeflow/keras/applications/mobilenet_v2.hpp>   // IWYU pragma: export
#include <tapeflow/keras/applications/resnet50.hpp>       // IWYU pragma: export
#include <tapeflow/keras/applications/vgg16.hpp>          // IWYU pragma: export
#include <tapeflow/keras/callbacks/tensorboard.hpp>       // IWYU pragma: export
#include <tapeflow/keras/datasets.hpp>                    // IWYU pragma: export
#include <tapeflow/keras/initializers.hpp>                // IWYU pragma: export
#include <tapeflow/keras/layer.hpp>                       // IWYU pragma: export
#include <tapeflow/keras/layers/activation.hpp>           // IWYU pragma: export
#include <tapeflow/keras/layers/batch_normalization.hpp>  // IWYU pragma: export
#include <tapeflow/keras/layers/conv2d.hpp>               // IWYU pragma: export
#include <tapeflow/keras/layers/dense.hpp>                // IWYU pragma: export
#include <tapeflow/keras/layers/depthwise_conv2d.hpp>     // IWYU pragma: export
#include <tapeflow/keras/layers/dropout.hpp>              // IWYU pragma: export
#include <tapeflow/keras/layers/embedding.hpp>            // IWYU pragma: export
#include <tapeflow/keras/layers/flatten.hpp>              // IWYU pragma: export
#include <tapeflow/keras/layers/global_pooling.hpp>       // IWYU pragma: export
#include <tapeflow/keras/layers/lstm.hpp>                 // IWYU pragma: export
#include <tapeflow/keras/layers/merge.hpp>                // IWYU pragma: export
#include <tapeflow/keras/layers/pooling.hpp>              // IWYU pragma: export
#include <tapeflow/keras/layers/relu.hpp>                 // IWYU pragma: export
#include <tapeflow/keras/layers/rescaling.hpp>            // IWYU pragma: export
#include <tapeflow/keras/layers/zero_padding2d.hpp>       // IWYU pragma: export
#include <tapeflow/keras/losses.hpp>                      // IWYU pragma: export
#include <tapeflow/keras/metrics.hpp>                     // IWYU pragma: export
#include <tapeflow/keras/model.hpp>                       // IWYU pragma: export
#include <tapeflow/keras/optimizers.hpp>                  // IWYU pragma: export
#include <tapeflow/keras/progbar.hpp>                     // IWYU pragma: export
#include <tapeflow/keras/schedules.hpp>                   // IWYU pragma: export
#include <tapeflow/keras/sequential.hpp>                  // IWYU pragma: export
#include <tapeflow/keras/utils/get_file.hpp>              // IWYU pragma: export
#include <tapeflow/keras/weights.hpp>                     // IWYU pragma: export
