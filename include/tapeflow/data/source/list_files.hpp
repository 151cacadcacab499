// `tf::data::list_files(pattern, {.shuffle, .seed})`: the file names matching a glob, as scalar
// string tensors (TensorFlow: `tf.data.Dataset.list_files`; shuffled by default, reshuffled
// each epoch, like TensorFlow).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <glob.h>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

/// Options of `list_files` (tf.data.Dataset.list_files's keyword arguments).
struct ListFilesOptions {
  bool shuffle = true;                  ///< TensorFlow's default (shuffle=None) shuffles
  std::optional<std::uint64_t> seed{};  ///< fixed order per epoch sequence when set
};

namespace detail {
inline std::vector<std::string> glob_files(const std::vector<std::string>& patterns) {
  std::vector<std::string> out;
  for (const auto& pattern : patterns) {
    glob_t g{};
    const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
    if (rc == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) {
        out.emplace_back(g.gl_pathv[i]);
      }
    }
    ::globfree(&g);
    if (rc != 0 && rc != GLOB_NOMATCH) {
      throw internal("tf::data::list_files: glob failed for pattern '" + pattern + "'");
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}
}  // namespace detail

/// The files matching one or more glob patterns (`tf.data.Dataset.list_files`).
class ListFilesDataset : public DatasetBase<ListFilesDataset, Tensor<std::string, 0>> {
 public:
  ListFilesDataset() = default;  // no files
  /// Globs `patterns` now (the matches, sorted and without duplicates, are fixed from here);
  /// not_found if nothing matches, internal if glob fails. Without a seed one is drawn here.
  ListFilesDataset(std::vector<std::string> patterns, ListFilesOptions options)
      : files_(std::make_shared<const std::vector<std::string>>(detail::glob_files(patterns))),
        options_(options),
        epoch_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
    if (files_->empty()) {
      std::string p;
      for (const auto& s : patterns) {
        p += (p.empty() ? "" : ", ") + s;
      }
      throw not_found("tf::data::list_files: no files matched pattern(s) " + p);
    }
    if (!options_.seed) {
      options_.seed = std::random_device{}();
    }
  }
  struct iterator {
    using element_type = Tensor<std::string, 0>;
    std::vector<std::size_t> order;
    std::shared_ptr<const std::vector<std::string>> files;
    std::size_t pos = 0;
    std::optional<element_type> next() {
      if (pos >= order.size()) {
        return std::nullopt;
      }
      return element_type((*files)[order[pos++]]);
    }
    void save_state(IteratorState& s, const std::string& prefix) const {
      s.put_int(prefix + "list_files/pos", static_cast<std::int64_t>(pos));
      std::string o;
      for (auto i : order) {
        const auto v = static_cast<std::uint64_t>(i);
        o.append(reinterpret_cast<const char*>(&v), sizeof v);
      }
      s.put(prefix + "list_files/order", o);
    }
    void restore_state(const IteratorState& s, const std::string& prefix) {
      pos = static_cast<std::size_t>(s.get_int(prefix + "list_files/pos"));
      const auto& o = s.get(prefix + "list_files/order");
      if (o.size() != order.size() * sizeof(std::uint64_t)) {
        throw data_loss("tf::data::list_files: saved state has a different file count");
      }
      for (std::size_t i = 0; i < order.size(); ++i) {
        std::uint64_t v = 0;
        std::memcpy(&v, o.data() + i * sizeof v, sizeof v);
        order[i] = static_cast<std::size_t>(v);
      }
    }
  };
  /// Starts an epoch: in sorted order, or with `shuffle` in an order drawn from (seed, epoch
  /// number); epochs are counted across copies.
  [[nodiscard]] iterator make_iterator() const {
    if (!files_) {
      return iterator{};
    }
    std::vector<std::size_t> order(files_->size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = i;
    }
    if (options_.shuffle) {
      // a new order each epoch, reproducible from the seed
      std::mt19937_64 rng(*options_.seed + 0x9E3779B97F4A7C15ULL * (*epoch_)++);
      std::shuffle(order.begin(), order.end(), rng);
    }
    return iterator{std::move(order), files_, 0};
  }
  /// The number of matched files.
  [[nodiscard]] std::int64_t cardinality() const noexcept {
    return files_ ? static_cast<std::int64_t>(files_->size()) : 0;
  }
  /// The matched files, sorted (empty if default-constructed).
  [[nodiscard]] const std::vector<std::string>& filenames() const noexcept {
    static const std::vector<std::string> none;
    return files_ ? *files_ : none;
  }
  /// A copy listing `filenames` instead, with the same options (sharding by file:
  /// data/detail/shard_input_files.hpp); a default-constructed one stays empty.
  [[nodiscard]] ListFilesDataset with_filenames(std::vector<std::string> filenames) const {
    ListFilesDataset out = *this;
    if (files_) {
      out.files_ = std::make_shared<const std::vector<std::string>>(std::move(filenames));
    }
    return out;
  }

 private:
  std::shared_ptr<const std::vector<std::string>> files_{};  // null: default-constructed
  ListFilesOptions options_{};
  std::shared_ptr<std::atomic<std::uint64_t>> epoch_{};  // epochs started, shared by copies
};

/// `list_files("data/*.tfrecord")`: the files matching a glob pattern as scalar string tensors;
/// not_found if none matches.
inline ListFilesDataset list_files(const std::string& pattern, ListFilesOptions options = {}) {
  return {{pattern}, options};
}
/// The files matching any of several patterns (each file once).
inline ListFilesDataset list_files(std::vector<std::string> patterns,
                                   ListFilesOptions options = {}) {
  return {std::move(patterns), options};
}

}  // namespace data
TAPEFLOW_END_NAMESPACE
