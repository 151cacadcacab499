// `ds | tf::data::cache()` (in memory) and `ds | tf::data::cache(filename)` (on disk)
// (`Dataset.cache`). The first complete epoch reads the input and records its elements; later
// epochs (and, for a file, later programs) replay the record without running the input. An
// epoch that stops early records nothing (TensorFlow discards partial caches too).
// The file is tapeflow's own format (magic "TFDCACHE", then per element a u64 length and the
// element_traits encoding); it is written to `<filename>.tmp` and renamed when complete.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/data/dataset.hpp>
#include <tapeflow/data/element.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace data {

namespace detail {
inline constexpr std::string_view cache_magic = "TFDCACHE";
inline bool file_exists(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return f.good();
}
}  // namespace detail

template <dataset D>
class CacheDataset : public DatasetBase<CacheDataset<D>, element_t<D>> {
 public:
  using element_type = element_t<D>;
  struct Store {
    std::mutex m;
    bool complete = false;
    std::shared_ptr<const std::vector<element_type>> elements;
  };

  CacheDataset(D ds, std::string filename)
      : ds_(std::move(ds)), filename_(std::move(filename)), store_(std::make_shared<Store>()) {}

  struct iterator {
    using element_type = CacheDataset::element_type;
    enum class Mode { record_memory, replay_memory, record_file, replay_file } mode;
    std::optional<iterator_impl_t<D>> input{};
    std::shared_ptr<Store> store{};
    std::shared_ptr<const std::vector<element_type>> replay{};
    std::vector<element_type> recorded{};
    std::size_t pos = 0;
    std::string filename{};
    std::unique_ptr<std::ofstream> out{};
    std::unique_ptr<std::ifstream> in{};
    bool finished = false;

    iterator(iterator&&) noexcept = default;
    iterator& operator=(iterator&&) = delete;
    explicit iterator(Mode m) : mode(m) {}
    ~iterator() {
      if (out && !finished) {  // partial epoch: drop the temporary file
        out.reset();
        std::remove((filename + ".tmp").c_str());
      }
    }

    std::optional<element_type> next() {
      switch (mode) {
        case Mode::replay_memory:
          if (pos >= replay->size()) {
            return std::nullopt;
          }
          return (*replay)[pos++];
        case Mode::replay_file:
          return read_one();
        case Mode::record_memory: {
          auto e = input->next();
          if (!e) {
            finish_memory();
            return std::nullopt;
          }
          recorded.push_back(*e);
          return e;
        }
        case Mode::record_file: {
          auto e = input->next();
          if (!e) {
            finish_file();
            return std::nullopt;
          }
          std::string bytes;
          element_traits<element_type>::encode(*e, bytes);
          const std::uint64_t n = bytes.size();
          out->write(reinterpret_cast<const char*>(&n), sizeof n);
          out->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
          if (!*out) {
            throw resource_exhausted("tf::data::cache: cannot write '" + filename + ".tmp'");
          }
          return e;
        }
      }
      return std::nullopt;
    }
    void finish_memory() {
      if (finished) {
        return;
      }
      finished = true;
      std::lock_guard lk(store->m);
      if (!store->complete) {
        store->elements = std::make_shared<const std::vector<element_type>>(std::move(recorded));
        store->complete = true;
      }
    }
    void finish_file() {
      if (finished) {
        return;
      }
      finished = true;
      out->close();
      out.reset();
      if (std::rename((filename + ".tmp").c_str(), filename.c_str()) != 0) {
        throw resource_exhausted("tf::data::cache: cannot rename '" + filename + ".tmp'");
      }
    }
    std::optional<element_type> read_one() {
      std::uint64_t n = 0;
      in->read(reinterpret_cast<char*>(&n), sizeof n);
      if (in->gcount() == 0 && in->eof()) {
        return std::nullopt;
      }
      if (in->gcount() != sizeof n || n > (std::uint64_t{1} << 40)) {
        throw data_loss("tf::data::cache: truncated or corrupt cache file '" + filename +
                        "' at byte " + std::to_string(static_cast<long long>(in->tellg())));
      }
      std::string bytes(n, '\0');
      in->read(bytes.data(), static_cast<std::streamsize>(n));
      if (static_cast<std::uint64_t>(in->gcount()) != n) {
        throw data_loss("tf::data::cache: truncated cache file '" + filename + "'");
      }
      std::string_view view(bytes);
      return element_traits<element_type>::decode(view);
    }
  };

  [[nodiscard]] iterator make_iterator() const {
    using Mode = typename iterator::Mode;
    if (filename_.empty()) {
      std::lock_guard lk(store_->m);
      if (store_->complete) {
        iterator it(Mode::replay_memory);
        it.replay = store_->elements;
        return it;
      }
      iterator it(Mode::record_memory);
      it.input.emplace(ds_.make_iterator());
      it.store = store_;
      return it;
    }
    if (detail::file_exists(filename_)) {
      iterator it(Mode::replay_file);
      it.filename = filename_;
      it.in = std::make_unique<std::ifstream>(filename_, std::ios::binary);
      char magic[8] = {};
      it.in->read(magic, 8);
      if (std::string_view(magic, 8) != detail::cache_magic) {
        throw data_loss("tf::data::cache: '" + filename_ + "' is not a tapeflow cache file");
      }
      return it;
    }
    iterator it(Mode::record_file);
    it.filename = filename_;
    it.input.emplace(ds_.make_iterator());
    it.out = std::make_unique<std::ofstream>(filename_ + ".tmp", std::ios::binary);
    if (!*it.out) {
      throw not_found("tf::data::cache: cannot create '" + filename_ + ".tmp'");
    }
    it.out->write(detail::cache_magic.data(), 8);
    return it;
  }
  [[nodiscard]] std::int64_t cardinality() const { return ds_.cardinality(); }

 private:
  D ds_;
  std::string filename_;
  std::shared_ptr<Store> store_;  // shared by copies: the memory cache outlives one epoch
};

struct cache_fn {
  template <dataset D>
  auto operator()(D&& ds, std::string filename = {}) const {
    return CacheDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), std::move(filename));
  }
  auto operator()(std::string filename = {}) const {
    return make_closure(
        [filename]<class D>(D&& ds) { return cache_fn{}(std::forward<D>(ds), filename); });
  }
};
/// `ds | cache()` (memory), `ds | cache("/tmp/train.cache")` (file).
inline constexpr cache_fn cache{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
