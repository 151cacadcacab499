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
#include <tapeflow/keras/utils/get_file.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>

#include "common/argparse.hpp"

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {
examples::ArgumentParser parser(
    "tfrecord",
    "Writes the images of DATA_DIR/train/cats (label 0) and DATA_DIR/train/dogs (label 1) as\n"
    "tf.train.Examples {image: bytes, label: int64} to a TFRecord file, reads it back with\n"
    "TFRecordDataset | map(parse_single_example + decode_jpeg), and shows one shuffled batch\n"
    "resized to SxS. DATA_DIR: --data_dir (the cats_vs_dogs folder or one holding it), else\n"
    "cats_vs_dogs found as tf::keras::utils::get_file finds datasets.");
auto& compression = parser.add_argument("--compression", "", "'', GZIP or ZLIB");
auto& batch_size = parser.add_argument("--batch_size", std::int64_t{8});
auto& image_size = parser.add_argument("--image_size", std::int64_t{64});
auto& synthetic = parser.add_argument(
    "--synthetic", 0, "first write N generated JPEGs per class to ./synthetic_cats_vs_dogs");
auto& output = parser.add_argument("--output", "./train.tfrecords", "the TFRecord file");
auto& data_dir_flag = parser.add_data_dir();

// The chapter's [dir + filename for filename in os.listdir(dir)], sorted so that runs repeat.
std::vector<std::string> listdir(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    out.push_back(dir + entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Writes n small JPEGs per class in the chapter's layout (for a run without the photos).
std::string make_synthetic(const std::string& root, int n) {
  for (const std::string animal : {"cats", "dogs"}) {
    fs::create_directories(root + "/train/" + animal);
    for (int i = 0; i < n; ++i) {
      // [snippet:encode_jpeg]
      const std::int64_t h = 40 + 7 * i, w = 50 + 5 * i;
      std::vector<std::uint8_t> px(static_cast<std::size_t>(h * w * 3));
      for (std::size_t k = 0; k < px.size(); ++k) {
        px[k] = static_cast<std::uint8_t>((k % 3 == 0 ? (animal == "cats" ? 200 : 40) : k * 13));
      }
      auto jpeg = tf::image::encode_jpeg(tf::constant(px, {h, w, 3}));
      tf::io::write_file(root + "/train/" + animal + "/" + std::to_string(i) + ".jpg", jpeg);
      // [snippet:encode_jpeg]
    }
  }
  return root;
}

// --synthetic's folder, --data_dir (the cats_vs_dogs folder or one holding it), or cats_vs_dogs
// found as tf::keras::utils::get_file finds datasets.
std::string cats_vs_dogs_dir() {
  if (synthetic > 0) {
    return make_synthetic("./synthetic_cats_vs_dogs", synthetic);
  }
  return tf::keras::utils::get_file("cats_vs_dogs/train", {.cache_dir = data_dir_flag})
      .parent_path()
      .string();
}

void write_and_read() {
  // [seed:tfrecord begin]
  // [snippet:filenames]
  auto data_dir = cats_vs_dogs_dir();
  auto train_cats_dir = data_dir + "/train/cats/", train_dogs_dir = data_dir + "/train/dogs/";
  auto tfrecord_file = output;
  auto train_filenames = listdir(train_cats_dir), train_dog_filenames = listdir(train_dogs_dir);
  std::vector<std::int64_t> train_labels(train_filenames.size(), 0);  // cats 0, then dogs 1
  train_filenames.insert(train_filenames.end(), train_dog_filenames.begin(),
                         train_dog_filenames.end());
  // [snippet:filenames]
  train_labels.resize(train_filenames.size(), 1);
  // [snippet:write]

  auto compression_type = tf::io::compression_type(compression);
  tf::io::TFRecordWriter writer(tfrecord_file, {.compression = compression_type});
  for (std::size_t i = 0; i < train_filenames.size(); ++i) {
    auto image = tf::io::read_file(train_filenames[i]).item();  // the JPEG's bytes
    tf::train::Example example({
        {"image", tf::train::Feature(tf::train::BytesList{{image}})},
        {"label", tf::train::Feature(tf::train::Int64List{{train_labels[i]}})},
    });
    writer.write(example.serialize());
  }
  writer.close();
  std::cout << "wrote " << train_filenames.size() << " examples (" << fs::file_size(tfrecord_file)
            << " bytes) to " << tfrecord_file << "\n";
  // [snippet:write]

  // [snippet:read]
  auto raw_dataset = tf::data::TFRecordDataset(tfrecord_file, {.compression = compression_type});
  const tf::io::FeatureDescription feature_description{
      // tells the parser each feature's type and shape
      {"image", tf::io::FixedLenFeature<std::string>{}},
      {"label", tf::io::FixedLenFeature<std::int64_t>{}},
  };
  auto parse_example = [&](const tf::Tensor<std::string, 0>& example_string) {
    auto feature_dict = tf::io::parse_single_example(example_string, feature_description);
    auto image = tf::image::decode_jpeg(feature_dict["image"].as<std::string, 0>());
    return std::pair(image, feature_dict["label"].as<std::int64_t, 0>());
  };
  auto dataset = raw_dataset | tf::data::map(parse_example);
  // [snippet:read]
  // [seed:tfrecord end]

  std::int64_t counts[2] = {0, 0}, shown = 0;
  for (auto&& [image, label] : dataset) {
    if (shown++ < 3) {
      std::cout << "image shape=" << image.shape().to_string() << " label=" << label.item() << "\n";
    }
    ++counts[label.item() != 0 ? 1 : 0];
  }
  std::cout << "read back " << counts[0] + counts[1] << " examples: " << counts[0]
            << " cats (label 0), " << counts[1] << " dogs (label 1)\n";

  // One training batch: same-size float images in [0, 1], shuffled.
  auto resize = [](const tf::Tensor<std::uint8_t, 3>& image, const tf::Tensor<std::int64_t, 0>& l) {
    return std::pair(tf::image::resize(image, {image_size, image_size}) / 255.0f, l);
  };
  auto batches = dataset | tf::data::map(resize) | tf::data::shuffle(1000, {.seed = 1}) |
                 tf::data::batch(batch_size);
  for (auto&& [images, labels] : batches) {
    std::cout << "batch: images shape=" << images.shape().to_string() << " labels=" << labels
              << "\n";
    break;
  }
}
}  // namespace

int main(int argc, char** argv) {
  parser.parse_args(argc, argv);
  return examples::run(parser, [] {
    write_and_read();
    return 0;
  });
}
