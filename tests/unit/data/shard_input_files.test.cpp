// Sharding a pipeline by its input files (AutoShardPolicy FILE's rewrite): each file source keeps
// files index, index + num_shards, ...; the shards together read every record exactly once,
// through any adaptors, and a pipeline without a file list comes back unchanged.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/data/detail/shard_input_files.hpp>
#include <tapeflow/io/tfrecord_writer.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_data_shard_input_files {

namespace tf = tapeflow;
namespace fs = std::filesystem;
using tf::data::detail::FileShardReport;
using tf::data::detail::shard_input_files;

namespace {
// Five files "f<i>.tfrecord" of three records "<i>.<j>" each, in a fresh folder.
std::vector<std::string> write_files(const std::string& name) {
  const fs::path dir = fs::current_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> files;
  for (int i = 0; i < 5; ++i) {
    files.push_back((dir / ("f" + std::to_string(i) + ".tfrecord")).string());
    tf::io::TFRecordWriter writer(files.back());
    for (int j = 0; j < 3; ++j) {
      writer.write(std::to_string(i) + "." + std::to_string(j));
    }
    writer.close();
  }
  return files;
}

template <class D>
std::vector<std::string> records(const D& ds) {
  std::vector<std::string> out;
  for (auto&& r : ds) {
    out.push_back(r.item());
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("sharding by file keeps every num_shards-th file of a TFRecordDataset",
          "[data][distribute]") {
  const auto files = write_files("shard_files_tfrecord");
  const auto ds = tf::data::TFRecordDataset(files) |
                  tf::data::map([](const tf::Tensor<std::string, 0>& r) { return r; }) |
                  tf::data::prefetch(2);
  FileShardReport report;
  const auto mine = shard_input_files(ds, 2, 1, report);
  CHECK(report.files_per_source == std::vector<std::size_t>{5});
  CHECK(records(mine) == std::vector<std::string>{"1.0", "1.1", "1.2", "3.0", "3.1", "3.2"});
  CHECK(records(ds).size() == 15);  // the original is untouched

  std::vector<std::string> all;
  for (std::int64_t i = 0; i < 3; ++i) {
    FileShardReport r;
    const auto part = records(shard_input_files(ds, 3, i, r));
    all.insert(all.end(), part.begin(), part.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(all == records(ds));
}

TEST_CASE("sharding by file reaches list_files through interleave, shuffle, cache and batch",
          "[data][distribute]") {
  const auto files = write_files("shard_files_listed");
  const auto pattern = (fs::path(files[0]).parent_path() / "*.tfrecord").string();
  const auto ds = tf::data::list_files(pattern, {.seed = 3}) |
                  tf::data::interleave([](const tf::Tensor<std::string, 0>& f) {
                    return tf::data::TFRecordDataset(f.item());
                  }) |
                  tf::data::cache() | tf::data::shuffle(4, {.seed = 1}) | tf::data::batch(2) |
                  tf::data::unbatch();
  const auto everything = records(ds);  // fills the original's cache
  REQUIRE(everything.size() == 15);
  FileShardReport report;
  const auto mine = shard_input_files(ds, 2, 0, report);
  CHECK(report.files_per_source == std::vector<std::size_t>{5});
  // files 0, 2 and 4 of the sorted list (each shard shuffles its own), not the cached records
  const auto got = records(mine);
  CHECK(got ==
        std::vector<std::string>{"0.0", "0.1", "0.2", "2.0", "2.1", "2.2", "4.0", "4.1", "4.2"});
  CHECK(records(mine) == got);  // the shard's own cache replays it
  CHECK(records(ds) == everything);
}

TEST_CASE("sharding by file reaches every source of zip and concatenate, and through AnyDataset",
          "[data][distribute]") {
  const auto files = write_files("shard_files_two_sources");
  const auto first =
      tf::data::TFRecordDataset(std::vector<std::string>(files.begin(), files.begin() + 2));
  const auto second =
      tf::data::TFRecordDataset(std::vector<std::string>(files.begin() + 2, files.end()));
  FileShardReport report;
  const auto both = shard_input_files(tf::data::concatenate(first, second), 2, 0, report);
  CHECK(report.files_per_source == std::vector<std::size_t>{2, 3});
  CHECK(records(both) ==
        std::vector<std::string>{"0.0", "0.1", "0.2", "2.0", "2.1", "2.2", "4.0", "4.1", "4.2"});

  FileShardReport zipped_report;
  const auto zipped = shard_input_files(tf::data::zip(first, second), 2, 1, zipped_report);
  CHECK(zipped_report.files_per_source == std::vector<std::size_t>{2, 3});
  std::vector<std::string> pairs;
  for (auto&& [a, b] : zipped) {
    pairs.push_back(a.item() + "|" + b.item());
  }
  CHECK(pairs == std::vector<std::string>{"1.0|3.0", "1.1|3.1", "1.2|3.2"});

  const tf::data::AnyDataset<tf::Tensor<std::string, 0>> erased =
      tf::data::TFRecordDataset(files) | tf::data::take(100);
  FileShardReport erased_report;
  CHECK(records(shard_input_files(erased, 5, 4, erased_report)) ==
        std::vector<std::string>{"4.0", "4.1", "4.2"});
  CHECK(erased_report.files_per_source == std::vector<std::size_t>{5});

  // No file list: the pipeline comes back as it was, and the report says so.
  const auto numbers = tf::data::range(10) | tf::data::batch(3);
  FileShardReport none;
  const auto same = shard_input_files(numbers, 2, 1, none);
  CHECK(none.files_per_source.empty());
  CHECK(std::ranges::distance(same) == 4);
}

}  // namespace test_data_shard_input_files
