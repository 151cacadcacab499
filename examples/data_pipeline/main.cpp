// The tf.data chapter's MNIST pipeline: from_tensor_slices | map(rot90) | shuffle | batch |
// prefetch. Saves the first batch as a PNG grid with each image's label drawn above it (what the
// chapter shows with matplotlib), then times one full epoch and prints the autotuner's report.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include <tapeflow/data.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/io/files.hpp>
#include <tapeflow/keras/datasets.hpp>
#include <tapeflow/tapeflow.hpp>

#include "common/argparse.hpp"

namespace tf = tapeflow;

namespace {
examples::ArgumentParser parser(
    "data_pipeline",
    "Builds the tf.data chapter's MNIST pipeline\n"
    "  from_tensor_slices(images, labels) | map(rot90, num_parallel_calls=2)\n"
    "  | shuffle(10000) | batch(4) | prefetch(autotune),\n"
    "saves the first batch as a PNG grid with labels, then times one epoch at batch 32 and\n"
    "prints the autotuner's stats.");
auto& out = parser.add_argument("--out", "mnist_batch.png", "the PNG of the first batch");
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{4});
auto& shuffle_buffer = parser.add_argument("--shuffle_buffer", std::int64_t{10000});
auto& synthetic = parser.add_argument("--synthetic", false, "2000 generated digits instead");
auto& no_epoch = parser.add_argument("--no_epoch", false, "skip the timed epoch");
auto& data_dir = parser.add_data_dir();

// 3x5 pixel digits for the labels.
constexpr const char* font[10] = {
    "111101101101111", "010110010010111", "111001111100111", "111001111001111", "101101111001001",
    "111100111001111", "111100111101111", "111001001001001", "111101111101111", "111101111001111"};

// The batch side by side, each image under its label, black on white (matplotlib's subplots).
tf::Tensor<std::uint8_t, 3> grid_with_labels(const tf::Tensor<float, 4>& images,
                                             const tf::Tensor<std::uint8_t, 1>& labels) {
  const std::int64_t n = images.dim(0), h = images.dim(1), w = images.dim(2);
  const std::int64_t scale = 3, pad = 4, top = 5 * scale + 2 * pad, cell_w = w * scale + pad;
  auto grid = tf::fill<std::uint8_t, 3>({top + h * scale + pad, n * cell_w + pad, 1}, 255);
  std::uint8_t* px = grid.mutable_data();
  const std::int64_t row = grid.dim(1);
  for (std::int64_t b = 0; b < n; ++b) {
    const std::int64_t x0 = pad + b * cell_w;
    const char* glyph = font[labels(b) % 10];
    for (std::int64_t y = 0; y < 5 * scale; ++y) {
      for (std::int64_t x = 0; x < 3 * scale; ++x) {
        if (glyph[(y / scale) * 3 + x / scale] == '1') {
          px[(pad + y) * row + x0 + (w * scale) / 2 - 4 + x] = 0;
        }
      }
    }
    for (std::int64_t y = 0; y < h * scale; ++y) {
      for (std::int64_t x = 0; x < w * scale; ++x) {
        const float ink = images(b, y / scale, x / scale, 0);  // in [0, 1]
        px[(top + y) * row + x0 + x] = static_cast<std::uint8_t>(255.0f * (1.0f - ink));
      }
    }
  }
  return grid;
}

// Digits-sized noise with labels 0..9, for a run without MNIST (training split only).
tf::keras::datasets::ImageDataset synthetic_digits() {
  const std::int64_t n = 2000;
  std::vector<std::uint8_t> pixels(n * 28 * 28), labels(n);
  for (std::size_t i = 0; i < pixels.size(); ++i) {
    pixels[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 24);
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    labels[i] = static_cast<std::uint8_t>(i % 10);
  }
  return {.x_train = tf::from_vector(std::move(pixels), {n, 28, 28}),
          .y_train = tf::from_vector(std::move(labels)),
          .x_test = {},
          .y_test = {}};
}

void run() {
  // [seed:data_pipeline begin]
  // [snippet:mnist_dataset]
  auto [train_data, train_label, x_test, y_test] =
      synthetic ? synthetic_digits() : tf::keras::datasets::mnist::load_data(data_dir);
  auto images = tf::expand_dims(tf::cast<float>(train_data) / 255.0f, -1);  // [60000, 28, 28, 1]
  auto mnist_dataset = tf::data::from_tensor_slices(images, train_label);
  // [snippet:mnist_dataset]

  // [snippet:pipeline]
  // [snippet:rot90]
  auto rot90 = [](const tf::Tensor<float, 3>& image, const tf::Tensor<std::uint8_t, 0>& label) {
    return std::tuple{tf::image::rot90(image), label};
  };
  // [snippet:rot90]
  auto rotated = mnist_dataset | tf::data::map(rot90, {.num_parallel_calls = 2}) |
                 tf::data::shuffle(shuffle_buffer, {.seed = 42});
  auto batched = rotated | tf::data::batch(batch_size) | tf::data::prefetch(tf::data::autotune);
  for (auto&& [batch_images, batch_labels] : batched) {  // images: [4, 28, 28, 1], labels: [4]
    std::cout << "first batch: images " << batch_images.shape().to_string() << ", labels";
    for (auto label : batch_labels.to_vector()) {
      std::cout << " " << int(label);
    }
    tf::io::write_file(out, tf::image::encode_png(grid_with_labels(batch_images, batch_labels)));
    std::cout << "\nwrote " << out << "\n";
    break;  // stops the pipeline's threads
  }
  // [snippet:pipeline]
  // [seed:data_pipeline end]
  if (no_epoch) {
    return;
  }
  // [snippet:timed_epoch]
  auto ds = rotated | tf::data::batch(32) | tf::data::prefetch(tf::data::autotune);
  auto it = ds.iter();
  const auto t0 = std::chrono::steady_clock::now();
  std::int64_t elements = 0;
  while (auto b = it.next()) {
    elements += std::get<0>(*b).dim(0);
  }
  const std::chrono::duration<double> s = std::chrono::steady_clock::now() - t0;
  std::cout << "epoch: " << elements << " elements in " << s.count() << " s ("
            << static_cast<std::int64_t>(static_cast<double>(elements) / s.count())
            << " elements/s)\n";
  for (const auto& st : it.stats()) {
    std::cout << "  " << st.stage << ": parallelism " << st.parallelism << ", buffer "
              << st.buffer_size << ", input-bound "
              << static_cast<int>(100 * st.input_bound_fraction) << "%\n";
  }
  // [snippet:timed_epoch]
}
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    run();
    return 0;
  });
}
