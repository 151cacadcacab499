// Sharding a pipeline by its input files (TensorFlow's AutoShardPolicy FILE): the pipeline is
// rewritten so that each file source (TFRecordDataset, list_files) keeps files index,
// index + num_shards, ... of its list, found through the adaptors' transform_inputs (see
// "pipeline rewrites" in data/dataset.hpp). Everything after the sources is unchanged, so
// `list_files(...) | interleave(read) | map | shuffle | batch` reads each file on one worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data::detail {

/// What a FILE shard found: how many files each file source listed before sharding.
struct FileShardReport {
  std::vector<std::size_t> files_per_source;  ///< empty: the pipeline reads no file list
};

/// `ds` with every file source keeping its share of files for shard `index` of `num_shards`;
/// records the sources found in `report`. Datasets without a file source come back unchanged.
template <class D>
D shard_input_files(const D& ds, std::int64_t num_shards, std::int64_t index,
                    FileShardReport& report) {
  if constexpr (requires { ds.shard_input_files(num_shards, index, report); }) {
    return ds.shard_input_files(num_shards, index, report);  // type-erased (AnyDataset)
  } else if constexpr (requires { ds.with_filenames(ds.filenames()); }) {
    const std::vector<std::string>& all = ds.filenames();
    report.files_per_source.push_back(all.size());
    std::vector<std::string> mine;
    for (std::size_t i = static_cast<std::size_t>(index); i < all.size();
         i += static_cast<std::size_t>(num_shards)) {
      mine.push_back(all[i]);
    }
    return ds.with_filenames(std::move(mine));
  } else if constexpr (requires { ds.transform_inputs([](const auto& in) { return in; }); }) {
    return ds.transform_inputs([&](const auto& input) {
      return detail::shard_input_files(input, num_shards, index, report);
    });
  } else {
    return ds;
  }
}

}  // namespace data::detail
TAPEFLOW_END_NAMESPACE
