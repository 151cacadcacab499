#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <ranges>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/adaptor/batch.hpp>
#include <tapeflow/data/adaptor/map.hpp>
#include <tapeflow/data/source/tfrecord_dataset.hpp>
#include <tapeflow/io/example.hpp>
#include <tapeflow/io/parse_example.hpp>
#include <tapeflow/io/tfrecord_writer.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_io_tfrecord_dataset {

namespace tf = tapeflow;
using tf::io::Compression;

namespace {
std::string golden(const std::string& name) {
  return std::string(TAPEFLOW_TEST_DATA_DIR) + "/io/" + name;
}
std::vector<std::string> collect(const tf::data::TFRecordDataset& ds) {
  std::vector<std::string> out;
  for (const auto& t : ds) {
    out.push_back(t.item());
  }
  return out;
}
void write_file(const std::string& path, const std::string& tag, int n,
                Compression c = Compression::none) {
  tf::io::TFRecordWriter w(path, {.compression = c});
  for (int i = 0; i < n; ++i) {
    w.write(tag + std::to_string(i));
  }
}
}  // namespace

static_assert(tf::data::dataset<tf::data::TFRecordDataset>);
static_assert(std::ranges::input_range<tf::data::TFRecordDataset>);

TEST_CASE("TFRecordDataset yields string tensors, every epoch", "[io][tfrecord_dataset]") {
  tf::data::TFRecordDataset ds(golden("records.tfrecord"));
  const auto first = collect(ds);
  REQUIRE(first.size() == 4);
  CHECK(first[2] == "hello, tfrecord");
  CHECK(collect(ds) == first);  // re-iterable
  CHECK(collect(tf::data::TFRecordDataset(golden("records.gzip.tfrecord"),
                                          {.compression = Compression::gzip})) == first);
  CHECK(collect(tf::data::TFRecordDataset(
            {golden("records.zlib.tfrecord")},
            {.compression = tf::io::compression_type("ZLIB"), .buffer_size = 16})) == first);
  CHECK(tf::data::cardinality(ds) == tf::data::unknown_cardinality);
}

TEST_CASE("TFRecordDataset reads several files in order or interleaved like TensorFlow",
          "[io][tfrecord_dataset]") {
  write_file("a.tfrecord", "a", 3);
  write_file("b.tfrecord", "b", 1, Compression::gzip);
  write_file("c.tfrecord", "c", 2);
  write_file("d.tfrecord", "d", 0);
  write_file("e.tfrecord", "e", 2);
  const std::vector<std::string> files{"a.tfrecord", "c.tfrecord", "d.tfrecord", "e.tfrecord"};
  CHECK(tf::data::TFRecordDataset({"a.tfrecord", "c.tfrecord"}).filenames().size() == 2);
  CHECK(collect(tf::data::TFRecordDataset(files)) ==
        std::vector<std::string>{"a0", "a1", "a2", "c0", "c1", "e0", "e1"});
  // TensorFlow 2.21 gives these orders for num_parallel_reads = 2 and 3:
  CHECK(collect(tf::data::TFRecordDataset(files, {.num_parallel_reads = 2})) ==
        std::vector<std::string>{"a0", "c0", "a1", "c1", "a2", "e0", "e1"});
  CHECK(collect(tf::data::TFRecordDataset(files, {.num_parallel_reads = 3})) ==
        std::vector<std::string>{"a0", "c0", "a1", "c1", "e0", "a2", "e1"});
  CHECK(collect(tf::data::TFRecordDataset(files, {.num_parallel_reads = tf::data::autotune}))
            .size() == 7);
  CHECK_THROWS_AS(tf::data::TFRecordDataset(files, {.num_parallel_reads = 0}),
                  tf::invalid_argument);
}

TEST_CASE("TFRecordDataset errors and skipping", "[io][tfrecord_dataset]") {
  std::ifstream in(golden("records.tfrecord"), std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  bytes[33 + 12] ^= 1;
  std::ofstream("corrupt.tfrecord", std::ios::binary) << bytes;
  CHECK_THROWS_WITH(collect(tf::data::TFRecordDataset("corrupt.tfrecord")),
                    "corrupt.tfrecord: corrupted record at byte offset 33 (data CRC mismatch, "
                    "length 15)");
  CHECK_THROWS_AS(collect(tf::data::TFRecordDataset("corrupt.tfrecord", {.num_parallel_reads = 2})),
                  tf::data_loss);
  const std::vector<std::string> two{"corrupt.tfrecord", "corrupt.tfrecord"};
  CHECK_THROWS_AS(collect(tf::data::TFRecordDataset(two, {.num_parallel_reads = 2})),
                  tf::data_loss);
  tf::data::TFRecordDataset skipping("corrupt.tfrecord", {.skip_corrupt = true});
  CHECK(collect(skipping).size() == 3);
  CHECK(skipping.corrupt_records_skipped() == 1);
  tf::data::TFRecordDataset par(two, {.num_parallel_reads = 2, .skip_corrupt = true});
  CHECK(collect(par).size() == 6);
  CHECK(par.corrupt_records_skipped() == 2);
  CHECK_THROWS_AS(collect(tf::data::TFRecordDataset("missing.tfrecord")), tf::not_found);
}

TEST_CASE("TFRecordDataset saves and restores its position", "[io][tfrecord_dataset]") {
  write_file("s1.tfrecord", "x", 3);
  write_file("s2.tfrecord", "y", 3, Compression::zlib);
  tf::data::TFRecordDataset plain({"s1.tfrecord"});
  auto it = plain.iter();
  CHECK(it.get_next().item() == "x0");
  auto state = it.save_state();
  CHECK(it.get_next().item() == "x1");
  auto it2 = plain.iter();
  it2.restore_state(state);
  CHECK(it2.get_next().item() == "x1");
  CHECK(it2.get_next().item() == "x2");
  CHECK_FALSE(it2.next());
}

TEST_CASE("TFRecordDataset composes with map and batch: the chapter's pipeline",
          "[io][tfrecord_dataset]") {
  {
    tf::io::TFRecordWriter w("chapter.tfrecords");
    for (int i = 0; i < 5; ++i) {
      w.write(tf::train::Example({{"image", tf::io::bytes_feature("img" + std::to_string(i))},
                                  {"label", tf::io::int64_feature(i % 2)}})
                  .serialize());
    }
  }
  const tf::io::FeatureDescription description{
      {"image", tf::io::FixedLenFeature<std::string>{}},
      {"label", tf::io::FixedLenFeature<std::int64_t>{}},
  };
  auto ds = tf::data::TFRecordDataset("chapter.tfrecords") |
            tf::data::map([&](const tf::Tensor<std::string, 0>& record) {
              auto f = tf::io::parse_single_example(record, description);
              return std::pair(f["image"].as<std::string, 0>(), f["label"].as<std::int64_t, 0>());
            });
  std::vector<std::int64_t> labels;
  for (auto&& [image, label] : ds) {
    CHECK(image.item() == "img" + std::to_string(labels.size()));
    labels.push_back(label.item());
  }
  CHECK(labels == std::vector<std::int64_t>{0, 1, 0, 1, 0});
}

namespace {
std::vector<std::string> drain(tf::data::Iterator<tf::data::TFRecordDataset::iterator>& it) {
  std::vector<std::string> out;
  while (auto e = it.next()) {
    out.push_back(e->item());
  }
  return out;
}
}  // namespace

TEST_CASE("TFRecordDataset saves and restores its position with num_parallel_reads > 1",
          "[io][tfrecord_dataset]") {
  for (const Compression c : {Compression::none, Compression::gzip}) {
    CAPTURE(static_cast<int>(c));
    // Files of 5, 2, 0, 3, 1 and 4 records: slots empty and refill at different times.
    const std::vector<std::pair<std::string, int>> spec{{"pa", 5}, {"pb", 2}, {"pc", 0},
                                                        {"pd", 3}, {"pe", 1}, {"pf", 4}};
    std::vector<std::string> files;
    for (const auto& [tag, n] : spec) {
      files.push_back(tag + ".tfrecord");
      write_file(files.back(), tag, n, c);
    }
    for (int cycle : {2, 3, 6}) {
      CAPTURE(cycle);
      const tf::data::TFRecordDataset ds(files, {.compression = c, .num_parallel_reads = cycle});
      const auto all = collect(ds);
      REQUIRE(all.size() == 15);
      for (std::size_t k = 0; k <= all.size(); ++k) {
        CAPTURE(k);
        auto it = ds.iter();
        for (std::size_t i = 0; i < k; ++i) {
          REQUIRE(it.get_next().item() == all[i]);
        }
        const auto state = it.save_state();
        const std::vector<std::string> rest(all.begin() + static_cast<std::ptrdiff_t>(k),
                                            all.end());
        // A fresh iterator restored there yields exactly the remaining records ...
        auto restored = ds.iter();
        restored.restore_state(state);
        CHECK(drain(restored) == rest);
        // ... and so does the saved one (saving does not disturb it).
        CHECK(drain(it) == rest);
      }
      // Restore, read on, save again, restore again.
      auto it = ds.iter();
      for (int i = 0; i < 4; ++i) {
        (void)it.get_next();
      }
      auto second = ds.iter();
      second.restore_state(it.save_state());
      for (int i = 0; i < 5; ++i) {
        (void)second.get_next();
      }
      auto third = ds.iter();
      third.restore_state(second.save_state());
      CHECK(drain(third) == std::vector<std::string>(all.begin() + 9, all.end()));
    }
  }
  // The saved mode must match the iterator's.
  const std::vector<std::string> two{"pa.tfrecord", "pb.tfrecord"};
  tf::data::TFRecordDataset sequential(two, {.compression = Compression::gzip});
  tf::data::TFRecordDataset parallel(two,
                                     {.compression = Compression::gzip, .num_parallel_reads = 2});
  auto s = sequential.iter();
  (void)s.get_next();
  auto p = parallel.iter();
  CHECK_THROWS_AS(p.restore_state(s.save_state()), tf::invalid_argument);
  auto q = sequential.iter();
  CHECK_THROWS_AS(q.restore_state(parallel.iter().save_state()), tf::invalid_argument);
  tf::data::TFRecordDataset three({"pa.tfrecord", "pb.tfrecord", "pd.tfrecord"},
                                  {.compression = Compression::gzip, .num_parallel_reads = 3});
  auto r = three.iter();
  CHECK_THROWS_AS(r.restore_state(parallel.iter().save_state()), tf::invalid_argument);
}

TEST_CASE("TFRecordDataset reuses a record's storage only after every holder released it",
          "[io][tfrecord_dataset]") {
  // Records of varied lengths, one larger than the pool keeps (1 MiB).
  std::vector<std::string> want;
  {
    tf::io::TFRecordWriter w("recycle.tfrecord");
    for (int i = 0; i < 200; ++i) {
      std::string r =
          std::to_string(i) + ":" +
          std::string(static_cast<std::size_t>(i * 37 % 1500), static_cast<char>('a' + i % 26));
      if (i == 77) {
        r += std::string(std::size_t{3} << 20, 'z');
      }
      w.write(r);
      want.push_back(std::move(r));
    }
  }
  for (int parallel : {1, 2}) {
    CAPTURE(parallel);
    const std::vector<std::string> files(static_cast<std::size_t>(parallel), "recycle.tfrecord");
    const tf::data::TFRecordDataset ds(files, {.num_parallel_reads = parallel});
    // Hold every third record (and copies of some) while iterating; none may change.
    std::vector<tf::Tensor<std::string, 0>> held;
    std::vector<std::string> expected_held;
    std::vector<std::int64_t> ids;
    std::size_t i = 0;
    for (const auto& t : ds) {
      const std::string& expect = want[i / static_cast<std::size_t>(parallel)];
      REQUIRE(t.item() == expect);
      ids.push_back(t.id());
      if (i % 3 == 0) {
        held.push_back(t);
        expected_held.push_back(expect);
      }
      ++i;
    }
    CHECK(i == want.size() * static_cast<std::size_t>(parallel));
    for (std::size_t j = 0; j < held.size(); ++j) {
      CHECK(held[j].item() == expected_held[j]);
    }
    std::sort(ids.begin(), ids.end());
    CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());  // every record a new id
    // Through an explicit iterator, keeping everything: all records stay intact.
    auto it = ds.iter();
    std::vector<tf::Tensor<std::string, 0>> all;
    while (auto t = it.next()) {
      all.push_back(*t);
    }
    REQUIRE(all.size() == want.size() * static_cast<std::size_t>(parallel));
    for (std::size_t j = 0; j < all.size(); ++j) {
      CHECK(all[j].item() == want[j / static_cast<std::size_t>(parallel)]);
    }
  }
}

}  // namespace test_io_tfrecord_dataset
