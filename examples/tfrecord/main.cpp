// TFRecord: store the cats_vs_dogs training images with their labels as tf.train.Examples in
// a TFRecord file, then read it back with TFRecordDataset | map(parse_single_example +
// decode_jpeg) and show a batch (the seed chapter's "TFRecord" section, in C++).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/core.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/data/source/tfrecord_dataset.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/io.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());  // os.listdir's order is arbitrary; make runs repeatable
  return out;
}

// Writes n small JPEGs per class in the chapter's layout (for a run without the photos).
void make_synthetic(const std::string& root, int n) {
  for (const char* cls : {"cats", "dogs"}) {
    fs::create_directories(root + "/train/" + cls);
    for (int i = 0; i < n; ++i) {
      const std::int64_t h = 40 + 7 * i;
      const std::int64_t w = 50 + 5 * i;
      std::vector<std::uint8_t> px(static_cast<std::size_t>(h * w * 3));
      for (std::size_t k = 0; k < px.size(); ++k) {
        px[k] = static_cast<std::uint8_t>((k % 3 == 0 ? (cls[0] == 'c' ? 200 : 40) : k * 13) % 256);
      }
      auto jpeg = tf::image::encode_jpeg(tf::constant<std::uint8_t, 3>(px, {h, w, 3}));
      tf::io::write_file(root + "/train/" + cls + "/" + cls + "." + std::to_string(i) + ".jpg",
                         std::string_view(jpeg.item()));
    }
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::string data_dir = "../shared/data/cats_vs_dogs";
  std::string output = "./train.tfrecords";
  std::string compression;
  int synthetic = 0;
  std::int64_t batch_size = 8;
  std::int64_t image_size = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout
          << "usage: tfrecord [--data_dir DIR] [--output FILE] [--compression ''|GZIP|ZLIB]\n"
             "                [--batch_size N] [--image_size S] [--synthetic N]\n"
             "Writes the images of DIR/train/cats (label 0) and DIR/train/dogs (label 1) as\n"
             "tf.train.Examples {image: bytes, label: int64} to a TFRecord file (default\n"
             "./train.tfrecords), reads it back with TFRecordDataset | map(parse_single_example\n"
             "+ decode_jpeg), and shows one shuffled batch resized to SxS.\n"
             "  --data_dir DIR   default ../shared/data/cats_vs_dogs\n"
             "  --synthetic N    first write N generated JPEGs per class to\n"
             "                   ./synthetic_cats_vs_dogs and use that as DIR\n";
      return 0;
    }
    if (i + 1 >= argc) {
      std::cerr << "tfrecord: " << arg << " needs a value (see --help)\n";
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "--data_dir") {
      data_dir = value;
    } else if (arg == "--output") {
      output = value;
    } else if (arg == "--compression") {
      compression = value;
    } else if (arg == "--synthetic") {
      synthetic = std::stoi(value);
    } else if (arg == "--batch_size") {
      batch_size = std::stoll(value);
    } else if (arg == "--image_size") {
      image_size = std::stoll(value);
    } else {
      std::cerr << "tfrecord: unknown argument " << arg << " (see --help)\n";
      return 2;
    }
  }
  try {
    if (synthetic > 0) {
      data_dir = "./synthetic_cats_vs_dogs";
      make_synthetic(data_dir, synthetic);
    }
    const auto comp = tf::io::compression_type(compression);

    // File names and labels: cats 0, dogs 1.
    const auto train_cat_filenames = list_dir(data_dir + "/train/cats");
    const auto train_dog_filenames = list_dir(data_dir + "/train/dogs");
    std::vector<std::string> train_filenames = train_cat_filenames;
    train_filenames.insert(train_filenames.end(), train_dog_filenames.begin(),
                           train_dog_filenames.end());
    std::vector<std::int64_t> train_labels(train_cat_filenames.size(), 0);
    train_labels.resize(train_filenames.size(), 1);

    // Write: one Example per image, the JPEG bytes as they are.
    {
      tf::io::TFRecordWriter writer(output, {.compression = comp});
      for (std::size_t i = 0; i < train_filenames.size(); ++i) {
        const auto image = tf::io::read_file(train_filenames[i]);
        tf::train::Example example({
            {"image", tf::train::Feature(tf::train::BytesList{{image.item()}})},
            {"label", tf::train::Feature(tf::train::Int64List{{train_labels[i]}})},
        });
        writer.write(example.serialize());
      }
      writer.close();
    }
    std::cout << "wrote " << train_filenames.size() << " examples (" << fs::file_size(output)
              << " bytes) to " << output << "\n";

    // Read: the feature description tells the parser each feature's type and shape.
    auto raw_dataset = tf::data::TFRecordDataset(output, {.compression = comp});
    const tf::io::FeatureDescription feature_description{
        {"image", tf::io::FixedLenFeature<std::string>{}},
        {"label", tf::io::FixedLenFeature<std::int64_t>{}},
    };
    auto parse_example = [&](const tf::Tensor<std::string, 0>& example_string) {
      auto feature_dict = tf::io::parse_single_example(example_string, feature_description);
      auto image = tf::image::decode_jpeg(feature_dict["image"].as<std::string, 0>());
      return std::pair(image, feature_dict["label"].as<std::int64_t, 0>());
    };
    auto dataset = raw_dataset | tf::data::map(parse_example);

    std::int64_t counts[2] = {0, 0};
    std::int64_t shown = 0;
    for (auto&& [image, label] : dataset) {
      if (shown++ < 3) {
        std::cout << "image shape=" << image.shape().to_string() << " label=" << label.item()
                  << "\n";
      }
      ++counts[label.item() != 0 ? 1 : 0];
    }
    std::cout << "read back " << counts[0] + counts[1] << " examples: " << counts[0]
              << " cats (label 0), " << counts[1] << " dogs (label 1)\n";

    // One training batch: same-size float images in [0, 1], shuffled.
    auto batches = dataset |
                   tf::data::map([&](const tf::Tensor<std::uint8_t, 3>& image,
                                     const tf::Tensor<std::int64_t, 0>& label) {
                     auto resized = tf::image::resize(image, {image_size, image_size});
                     return std::pair(resized / 255.0f, label);
                   }) |
                   tf::data::shuffle(1000, {.seed = 1}) | tf::data::batch(batch_size);
    for (auto&& [images, labels] : batches) {
      std::cout << "batch: images shape=" << images.shape().to_string() << " labels=" << labels
                << "\n";
      break;
    }
  } catch (const tf::error& e) {
    std::cerr << "tfrecord: " << e.code() << ": " << e.what() << "\n";
    return 1;
  } catch (const fs::filesystem_error& e) {
    std::cerr << "tfrecord: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
