// Interop driver for tests/interop/io_tfrecord.py.
//   io_tfrecord write DIR : writes cpp_{none,gzip,zlib}.tfrecord (Examples, see make_example)
//   io_tfrecord read DIR  : reads py_{none,gzip,zlib}.tfrecord written by TensorFlow and checks
//                           them against py_manifest.txt
//   io_tfrecord seq DIR   : parses py_seq.tfrecord with FixedLenSequenceFeatures, one Example at
//                           a time and as one batch, and prints the results (seq_line) to
//                           cpp_seq.txt for the script to compare with TensorFlow's
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data/source/tfrecord_dataset.hpp>
#include <tapeflow/image/decode_jpeg.hpp>
#include <tapeflow/io.hpp>

namespace tf = tapeflow;
using tf::io::Compression;

namespace {
const Compression kinds[] = {Compression::none, Compression::gzip, Compression::zlib};
std::string suffix(Compression c) {
  return c == Compression::none ? "none" : c == Compression::gzip ? "gzip" : "zlib";
}

// Record i: an (8+i) x 10 RGB JPEG, label i % 2, weights [i / 2, -i], i tags "t0".."t{i-1}".
tf::train::Example make_example(int i) {
  const std::int64_t h = 8 + i;
  const std::int64_t w = 10;
  std::vector<std::uint8_t> px(static_cast<std::size_t>(h * w * 3));
  for (std::size_t k = 0; k < px.size(); ++k) {
    px[k] = static_cast<std::uint8_t>((k * 7 + static_cast<std::size_t>(i) * 31) % 251);
  }
  auto jpeg = tf::image::encode_jpeg(tf::constant<std::uint8_t, 3>(px, {h, w, 3}));
  std::vector<std::string> tags;
  for (int t = 0; t < i; ++t) {
    tags.push_back("t" + std::to_string(t));
  }
  return tf::train::Example({
      {"image", tf::io::bytes_feature(jpeg.item())},
      {"label", tf::io::int64_feature(i % 2)},
      {"weights", tf::io::float_feature({static_cast<float>(i) / 2, -static_cast<float>(i)})},
      {"tags", tf::io::bytes_feature(tags)},
  });
}

int write(const std::string& dir) {
  for (auto c : kinds) {
    tf::io::TFRecordWriter w(dir + "/cpp_" + suffix(c) + ".tfrecord", {.compression = c});
    for (int i = 0; i < 6; ++i) {
      w.write(make_example(i).serialize());
    }
    w.close();
  }
  std::cout << "wrote 3 files of 6 Examples\n";
  return 0;
}

int check(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "MISMATCH: " << what << "\n";
  }
  return ok ? 0 : 1;
}

int read(const std::string& dir) {
  // manifest: i label h w c pixel_sum weight0 weight1 ntags
  std::ifstream manifest(dir + "/py_manifest.txt");
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(manifest, line)) {
    std::istringstream in(line);
    std::vector<double> row;
    double v = 0;
    while (in >> v) {
      row.push_back(v);
    }
    rows.push_back(row);
  }
  // The chapter's feature description plus a FixedLen float vector and a VarLen string list.
  const tf::io::FeatureDescription description{
      {"image", tf::io::FixedLenFeature<std::string>{}},
      {"label", tf::io::FixedLenFeature<std::int64_t>{}},
      {"weights", tf::io::FixedLenFeature<float>{{2}}},
      {"tags", tf::io::VarLenFeature<std::string>{}},
  };
  int failures = 0;
  for (auto c : kinds) {
    const std::string path = dir + "/py_" + suffix(c) + ".tfrecord";
    std::size_t i = 0;
    for (const auto& record : tf::data::TFRecordDataset(path, {.compression = c})) {
      const auto& want = rows.at(i);
      auto f = tf::io::parse_single_example(record, description);
      auto image = tf::image::decode_jpeg(f["image"].as<std::string, 0>());
      const auto px = image.values();
      const double sum = std::accumulate(px.begin(), px.end(), 0.0);
      const std::string at = path + " record " + std::to_string(i);
      failures += check(f["label"].as<std::int64_t, 0>().item() == want[1], at + " label");
      failures +=
          check(image.dim(0) == want[2] && image.dim(1) == want[3] && image.dim(2) == want[4],
                at + " image shape " + image.shape().to_string());
      failures += check(sum == want[5], at + " pixel sum " + std::to_string(sum) + " vs " +
                                            std::to_string(want[5]));
      const auto weights = f["weights"].as<float, 1>();
      failures += check(weights(0) == want[6] && weights(1) == want[7], at + " weights");
      failures +=
          check(f["tags"].sparse<std::string>().values.num_elements() == want[8], at + " tags");
      // Re-serializing the parsed Example gives TensorFlow's bytes back (deterministic order).
      failures += check(tf::train::Example::parse(record.item()).serialize() == record.item(),
                        at + " re-serialization");
      ++i;
    }
    failures += check(i == rows.size(), path + ": " + std::to_string(i) + " records");
  }
  std::cout << (failures == 0 ? "read OK" : "read FAILED") << "\n";
  return failures == 0 ? 0 : 1;
}
// "<tag> <key> shape=d0,d1 values=v;v;..." per feature: floats as %.9g, strings in hex (the
// script writes TensorFlow's results the same way).
template <class T, std::size_t R>
std::string seq_line(const std::string& tag, const std::string& key, const tf::Tensor<T, R>& t) {
  std::string out = tag + " " + key + " shape=";
  for (std::size_t i = 0; i < R; ++i) {
    out += (i != 0 ? "," : "") + std::to_string(t.dim(i));
  }
  out += " values=";
  bool first = true;
  for (const T& v : t.values()) {
    out += first ? "" : ";";
    first = false;
    if constexpr (std::is_same_v<T, float>) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
      out += buf;
    } else if constexpr (std::is_same_v<T, std::string>) {
      static const char* hex = "0123456789abcdef";
      for (unsigned char ch : v) {
        out += hex[ch >> 4];
        out += hex[ch & 15];
      }
    } else {
      out += std::to_string(v);
    }
  }
  return out;
}

int seq(const std::string& dir) {
  using tf::io::FixedLenSequenceFeature;
  const tf::io::FeatureDescription description{
      {"frames",
       FixedLenSequenceFeature<float>{.shape = {2}, .allow_missing = true, .default_value = -1.0f}},
      {"ids", FixedLenSequenceFeature<std::int64_t>{.allow_missing = true}},
      {"words",
       FixedLenSequenceFeature<std::string>{.allow_missing = true, .default_value = "<pad>"}},
      {"label", tf::io::FixedLenFeature<std::int64_t>{}},
  };
  std::vector<std::string> records;
  for (const auto& r : tf::data::TFRecordDataset(dir + "/py_seq.tfrecord")) {
    records.push_back(r.item());
  }
  std::ofstream out(dir + "/cpp_seq.txt");
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto p = tf::io::parse_single_example(records[i], description);
    const std::string tag = "single" + std::to_string(i);
    out << seq_line(tag, "frames", p["frames"].as<float, 2>()) << "\n"
        << seq_line(tag, "ids", p["ids"].as<std::int64_t, 1>()) << "\n"
        << seq_line(tag, "label", p["label"].as<std::int64_t, 0>()) << "\n"
        << seq_line(tag, "words", p["words"].as<std::string, 1>()) << "\n";
  }
  const auto b = tf::io::parse_example(std::span<const std::string>(records), description);
  out << seq_line("batch", "frames", b["frames"].as<float, 3>()) << "\n"
      << seq_line("batch", "ids", b["ids"].as<std::int64_t, 2>()) << "\n"
      << seq_line("batch", "label", b["label"].as<std::int64_t, 1>()) << "\n"
      << seq_line("batch", "words", b["words"].as<std::string, 2>()) << "\n";
  std::cout << "parsed " << records.size() << " sequence Examples\n";
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: io_tfrecord write|read|seq DIR\n";
    return 2;
  }
  try {
    const std::string mode = argv[1];
    if (mode == "seq") {
      return seq(argv[2]);
    }
    return mode == "write" ? write(argv[2]) : read(argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
