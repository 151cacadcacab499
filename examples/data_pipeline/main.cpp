// The tf.data chapter's MNIST pipeline: from_tensor_slices | map(rot90) | shuffle | batch |
// prefetch. Saves the first batch as a PNG grid with each image's label drawn above it (what the
// chapter shows with matplotlib), then times one full epoch and prints the autotuner's report.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <zlib.h>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/io/files.hpp>

namespace tf = tapeflow;

namespace {
// Reads a gzipped IDX file (MNIST's format: big-endian magic, counts, then uint8 data).
std::vector<std::uint8_t> read_idx(const std::string& path, std::vector<std::int64_t>& dims) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    throw tf::not_found("data_pipeline: cannot open " + path);
  }
  std::vector<std::uint8_t> bytes;
  std::uint8_t buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    bytes.insert(bytes.end(), buf, buf + n);
  }
  gzclose(f);
  auto be32 = [&](std::size_t at) {
    return static_cast<std::int64_t>(bytes[at]) << 24 |
           static_cast<std::int64_t>(bytes[at + 1]) << 16 |
           static_cast<std::int64_t>(bytes[at + 2]) << 8 | static_cast<std::int64_t>(bytes[at + 3]);
  };
  if (bytes.size() < 8) {
    throw tf::data_loss("data_pipeline: " + path + " is too short for an IDX file");
  }
  const int rank = bytes[3];
  std::size_t header = 4 + 4 * static_cast<std::size_t>(rank);
  std::int64_t count = 1;
  dims.clear();
  for (int i = 0; i < rank; ++i) {
    dims.push_back(be32(4 + 4 * static_cast<std::size_t>(i)));
    count *= dims.back();
  }
  if (bytes.size() != header + static_cast<std::size_t>(count)) {
    throw tf::data_loss("data_pipeline: " + path + " has the wrong size for its IDX header");
  }
  return {bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end()};
}

// 3x5 pixel digits for the labels.
constexpr const char* font[10] = {
    "111101101101111", "010110010010111", "111001111100111", "111001111001111", "101101111001001",
    "111100111001111", "111100111101111", "111001001001001", "111101111101111", "111101111001111"};

tf::Tensor<std::uint8_t, 3> grid_with_labels(const tf::Tensor<std::uint8_t, 4>& images,
                                             const tf::Tensor<std::int32_t, 1>& labels) {
  const std::int64_t n = images.dim(0), h = images.dim(1), w = images.dim(2);
  const std::int64_t scale = 3, pad = 4, top = 5 * scale + 2 * pad;
  const std::int64_t cell_w = w * scale + pad;
  auto out = tf::fill<std::uint8_t, 3>({top + h * scale + pad, n * cell_w + pad, 1}, 255);
  auto* px = tf::detail::tensor_access::mutable_data(out);
  const std::int64_t row = out.dim(1);
  for (std::int64_t b = 0; b < n; ++b) {
    const std::int64_t x0 = pad + b * cell_w;
    const char* glyph = font[labels(b) % 10];
    for (int gy = 0; gy < 5; ++gy) {
      for (int gx = 0; gx < 3; ++gx) {
        if (glyph[gy * 3 + gx] == '1') {
          for (std::int64_t dy = 0; dy < scale; ++dy) {
            for (std::int64_t dx = 0; dx < scale; ++dx) {
              px[(pad + gy * scale + dy) * row + x0 + (w * scale) / 2 - 4 + gx * scale + dx] = 0;
            }
          }
        }
      }
    }
    for (std::int64_t y = 0; y < h * scale; ++y) {
      for (std::int64_t x = 0; x < w * scale; ++x) {
        // matplotlib's imshow shows ink bright on dark: invert to keep paper white here
        px[(top + y) * row + x0 + x] =
            static_cast<std::uint8_t>(255 - images(b, y / scale, x / scale, 0));
      }
    }
  }
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  std::string data_dir = "/work/shared/data/mnist";
  std::string out = "mnist_batch.png";
  std::int64_t batch_size = 4, epoch_batch = 32, shuffle_buffer = 10000;
  bool synthetic = false, time_epoch = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout
          << "usage: data_pipeline [--data_dir DIR] [--out FILE.png] [--batch_size N]\n"
             "                     [--shuffle_buffer N] [--synthetic] [--no_epoch]\n"
             "Builds the tf.data chapter's MNIST pipeline\n"
             "  from_tensor_slices(images, labels) | map(rot90, num_parallel_calls=2)\n"
             "  | shuffle(10000) | batch(4) | prefetch(autotune),\n"
             "saves the first batch as a PNG grid with labels (default mnist_batch.png), then\n"
             "times one epoch at batch 32 and prints the autotuner's stats.\n"
             "--data_dir: folder with train-images-idx3-ubyte.gz and train-labels-idx1-ubyte.gz\n"
             "            (default /work/shared/data/mnist); --synthetic: random digits instead.\n";
      return 0;
    }
    if (arg == "--data_dir" && i + 1 < argc) {
      data_dir = argv[++i];
    } else if (arg == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (arg == "--batch_size" && i + 1 < argc) {
      batch_size = std::stoll(argv[++i]);
    } else if (arg == "--shuffle_buffer" && i + 1 < argc) {
      shuffle_buffer = std::stoll(argv[++i]);
    } else if (arg == "--synthetic") {
      synthetic = true;
    } else if (arg == "--no_epoch") {
      time_epoch = false;
    } else {
      std::cerr << "data_pipeline: unknown argument " << arg << " (see --help)\n";
      return 2;
    }
  }
  try {
    tf::Tensor<std::uint8_t, 4> images;
    tf::Tensor<std::int32_t, 1> labels;
    if (synthetic) {
      const std::int64_t n = 2000;
      images = tf::Tensor<std::uint8_t, 4>::uninitialized({n, 28, 28, 1});
      labels = tf::Tensor<std::int32_t, 1>::uninitialized({n});
      auto* p = tf::detail::tensor_access::mutable_data(images);
      for (std::int64_t i = 0; i < n * 28 * 28; ++i) {
        p[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 24);
      }
      for (std::int64_t i = 0; i < n; ++i) {
        tf::detail::tensor_access::mutable_data(labels)[i] = static_cast<std::int32_t>(i % 10);
      }
    } else {
      std::vector<std::int64_t> idims, ldims;
      auto pixels = read_idx(data_dir + "/train-images-idx3-ubyte.gz", idims);
      auto labs = read_idx(data_dir + "/train-labels-idx1-ubyte.gz", ldims);
      images = tf::constant<std::uint8_t, 4>(std::span<const std::uint8_t>(pixels),
                                             {idims[0], idims[1], idims[2], 1});
      std::vector<std::int32_t> l32(labs.begin(), labs.end());
      labels = tf::constant<std::int32_t>(l32);
    }
    std::cout << "images " << images.shape().to_string() << ", labels "
              << labels.shape().to_string() << "\n";

    auto rot90 = [](const tf::Tensor<std::uint8_t, 3>& image,
                    const tf::Tensor<std::int32_t, 0>& label) {
      return std::tuple{tf::image::rot90(image), label};
    };
    auto mnist = tf::data::from_tensor_slices(images, labels) |
                 tf::data::map(rot90, {.num_parallel_calls = 2}) |
                 tf::data::shuffle(shuffle_buffer, {.seed = 42});
    auto preview = mnist | tf::data::batch(batch_size) | tf::data::prefetch(tf::data::autotune);
    for (auto&& [batch_images, batch_labels] : preview) {
      std::cout << "first batch: images " << batch_images.shape().to_string() << ", labels";
      for (auto l : batch_labels.values()) {
        std::cout << " " << l;
      }
      std::cout << "\n";
      tf::io::write_file(out, tf::image::encode_png(grid_with_labels(batch_images, batch_labels)));
      std::cout << "wrote " << out << "\n";
      break;  // stops the pipeline's threads
    }
    if (time_epoch) {
      auto ds = mnist | tf::data::batch(epoch_batch) | tf::data::prefetch(tf::data::autotune);
      auto it = ds.iter();
      const auto t0 = std::chrono::steady_clock::now();
      std::int64_t elements = 0;
      while (auto b = it.next()) {
        elements += std::get<0>(*b).dim(0);
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::cout << "epoch: " << elements << " elements in " << s << " s ("
                << static_cast<std::int64_t>(static_cast<double>(elements) / s) << " elements/s)\n";
      for (const auto& st : it.stats()) {
        std::cout << "  " << st.stage << ": parallelism " << st.parallelism << ", buffer "
                  << st.buffer_size << ", input-bound "
                  << static_cast<int>(100 * st.input_bound_fraction) << "%\n";
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "data_pipeline: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
