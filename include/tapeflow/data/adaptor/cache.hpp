// `ds | tf::data::cache()` (in memory) and `ds | tf::data::cache(filename)` (on disk)
// (`Dataset.cache`). The first complete epoch reads the input and records its elements; later
// epochs (and, for a file, later programs) replay the record without running the input. An
// epoch that stops early records nothing (TensorFlow discards partial caches too).
// The file is tapeflow's own format (magic "TFDCACHE", then per element a u64 length and the
// element_traits encoding); it is written to `<filename>.tmp` and renamed when complete.
// The iterator state can be saved in every mode (see save_state below for what it holds).
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

#include <range/v3/functional/bind_back.hpp>
#include <range/v3/view/view.hpp>

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

/// The dataset `cache` returns (`Dataset.cache`): replays the first complete epoch of `ds`
/// from memory or from a file (see the file comment).
template <dataset D>
class CacheDataset : public DatasetBase<CacheDataset<D>, element_t<D>> {
 public:
  using element_type = element_t<D>;  ///< the input's element type
  /// The in-memory cache, shared by copies of the dataset (and by their epochs).
  struct Store {
    std::mutex m;           ///< guards the members below
    bool complete = false;  ///< whether a complete epoch has been recorded
    /// The recorded epoch (set once complete; later epochs replay it).
    std::shared_ptr<const std::vector<element_type>> elements;
  };

  CacheDataset() = default;
  /// Caches `ds` in memory (`filename` empty) or in the file `filename`.
  CacheDataset(D ds, std::string filename)
      : ds_(std::move(ds)), filename_(std::move(filename)), store_(std::make_shared<Store>()) {}

  struct iterator {
    using element_type = CacheDataset::element_type;
    enum class Mode { record_memory, replay_memory, record_file, replay_file } mode;
    std::optional<D> ds{};  // to rebuild the input when restoring a recording epoch
    std::optional<iterator_impl_t<D>> input{};
    std::shared_ptr<Store> store{};
    std::shared_ptr<const std::vector<element_type>> replay{};
    std::vector<element_type> recorded{};
    std::size_t pos = 0;
    std::string filename{};
    std::unique_ptr<std::ofstream> out{};
    std::unique_ptr<std::ifstream> in{};
    std::int64_t offset = 0;  // bytes of the file written (record) or read (replay)
    bool finished = false;

    iterator(iterator&&) noexcept = default;
    iterator& operator=(iterator&&) = delete;
    explicit iterator(Mode m) : mode(m) {}
    ~iterator() { drop_tmp(); }

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
          offset += static_cast<std::int64_t>(sizeof n + bytes.size());
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
                        "' at byte " + std::to_string(offset));
      }
      std::string bytes(n, '\0');
      in->read(bytes.data(), static_cast<std::streamsize>(n));
      if (static_cast<std::uint64_t>(in->gcount()) != n) {
        throw data_loss("tf::data::cache: truncated cache file '" + filename + "' at byte " +
                        std::to_string(offset));
      }
      offset += static_cast<std::int64_t>(sizeof n + n);
      std::string_view view(bytes);
      return element_traits<element_type>::decode(view);
    }

    // ---- iterator state ----------------------------------------------------------------------
    // "cache/mode" is the Mode. A recording epoch saves what it recorded so far (elements in
    // memory; the bytes of `<filename>.tmp` for a file) and its input; a memory replay saves the
    // position and the cached elements (so a restarted program replays them, as TensorFlow's
    // memory cache does); a file replay saves only the byte offset in the file. A finished
    // recording epoch saves as a replay at the end.
    void save_state(IteratorState& s, const std::string& p) const {
      const std::string k = p + "cache/";
      if (mode == Mode::record_memory && !finished) {
        s.put_int(k + "mode", static_cast<std::int64_t>(Mode::record_memory));
        s.put(k + "elements", encode_all(recorded));
        detail::save_state_of(*input, s, k);
      } else if (mode == Mode::record_memory || mode == Mode::replay_memory) {
        std::shared_ptr<const std::vector<element_type>> all = replay;
        if (mode == Mode::record_memory) {
          std::lock_guard lk(store->m);
          all = store->elements;
        }
        s.put_int(k + "mode", static_cast<std::int64_t>(Mode::replay_memory));
        s.put_int(k + "pos", mode == Mode::record_memory ? static_cast<std::int64_t>(all->size())
                                                         : static_cast<std::int64_t>(pos));
        s.put(k + "elements", encode_all(*all));
      } else if (mode == Mode::record_file && !finished) {
        out->flush();
        std::ifstream tmp(filename + ".tmp", std::ios::binary);
        std::string bytes(static_cast<std::size_t>(offset - 8), '\0');
        tmp.seekg(8);
        tmp.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!out->good() || static_cast<std::size_t>(tmp.gcount()) != bytes.size()) {
          throw data_loss("tf::data::cache: cannot read back '" + filename +
                          ".tmp' to save the iterator state");
        }
        s.put_int(k + "mode", static_cast<std::int64_t>(Mode::record_file));
        s.put(k + "bytes", std::move(bytes));
        detail::save_state_of(*input, s, k);
      } else {
        std::int64_t at = offset;
        if (mode == Mode::record_file) {  // finished: the whole file
          std::ifstream f(filename, std::ios::binary | std::ios::ate);
          at = static_cast<std::int64_t>(f.tellg());
        }
        s.put_int(k + "mode", static_cast<std::int64_t>(Mode::replay_file));
        s.put_int(k + "offset", at);
      }
    }
    /// Restores a state saved from an iterator of the same pipeline (same cache file name).
    void restore_state(const IteratorState& s, const std::string& p) {
      const std::string k = p + "cache/";
      const auto saved = s.get_int(k + "mode");
      if (saved < 0 || saved > 3) {
        throw data_loss("tf::data::cache: corrupt iterator state (mode " + std::to_string(saved) +
                        ")");
      }
      const auto m = static_cast<Mode>(saved);
      const bool saved_file = m == Mode::record_file || m == Mode::replay_file;
      if (saved_file == filename.empty()) {
        throw invalid_argument(std::string("tf::data::cache: the iterator state is of a ") +
                               (saved_file ? "file" : "memory") + " cache, this is a " +
                               (filename.empty() ? "memory" : "file") + " cache");
      }
      input.reset();
      recorded.clear();
      replay.reset();
      pos = 0;
      finished = false;
      switch (m) {
        case Mode::record_memory: {
          recorded = decode_all(s.get(k + "elements"));
          input.emplace(ds->make_iterator());
          detail::restore_state_of(*input, s, k);
          break;
        }
        case Mode::replay_memory: {
          auto all =
              std::make_shared<const std::vector<element_type>>(decode_all(s.get(k + "elements")));
          const auto at = s.get_int(k + "pos");
          if (at < 0 || static_cast<std::size_t>(at) > all->size()) {
            throw data_loss("tf::data::cache: corrupt iterator state (position " +
                            std::to_string(at) + " of " + std::to_string(all->size()) + ")");
          }
          std::lock_guard lk(store->m);
          if (!store->complete) {  // a restarted program: later epochs replay these too
            store->elements = all;
            store->complete = true;
          }
          replay = std::move(all);
          pos = static_cast<std::size_t>(at);
          break;
        }
        case Mode::record_file: {
          in.reset();
          drop_tmp();
          open_tmp();
          const std::string& bytes = s.get(k + "bytes");
          out->write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
          if (!*out) {
            throw resource_exhausted("tf::data::cache: cannot write '" + filename + ".tmp'");
          }
          offset += static_cast<std::int64_t>(bytes.size());
          input.emplace(ds->make_iterator());
          detail::restore_state_of(*input, s, k);
          break;
        }
        case Mode::replay_file: {
          drop_tmp();
          open_replay();
          const auto at = s.get_int(k + "offset");
          in->seekg(0, std::ios::end);
          const auto size = static_cast<std::int64_t>(in->tellg());
          if (at < 8 || at > size) {
            throw data_loss("tf::data::cache: saved offset " + std::to_string(at) +
                            " is outside cache file '" + filename + "' (" + std::to_string(size) +
                            " bytes)");
          }
          in->seekg(at);
          offset = at;
          break;
        }
      }
      mode = m;
    }

    static std::string encode_all(const std::vector<element_type>& v) {
      std::string buf;
      const std::uint64_t n = v.size();
      detail::put_raw(buf, &n, sizeof n);
      for (const auto& e : v) {
        element_traits<element_type>::encode(e, buf);
      }
      return buf;
    }
    static std::vector<element_type> decode_all(std::string_view in) {
      std::uint64_t n = 0;
      detail::get_raw(in, &n, sizeof n);
      std::vector<element_type> v;
      for (std::uint64_t i = 0; i < n; ++i) {
        v.push_back(element_traits<element_type>::decode(in));
      }
      return v;
    }
    // A recording epoch that did not finish leaves no temporary file behind.
    void drop_tmp() noexcept {
      if (out && !finished) {
        out.reset();
        std::remove((filename + ".tmp").c_str());
      }
      out.reset();
    }
    void open_tmp() {
      out = std::make_unique<std::ofstream>(filename + ".tmp", std::ios::binary);
      if (!*out) {
        throw not_found("tf::data::cache: cannot create '" + filename + ".tmp'");
      }
      out->write(detail::cache_magic.data(), 8);
      offset = 8;
    }
    void open_replay() {
      in = std::make_unique<std::ifstream>(filename, std::ios::binary);
      if (!*in) {
        throw not_found("tf::data::cache: cannot open cache file '" + filename + "'");
      }
      char magic[8] = {};
      in->read(magic, 8);
      if (std::string_view(magic, 8) != detail::cache_magic) {
        throw data_loss("tf::data::cache: '" + filename + "' is not a tapeflow cache file");
      }
      offset = 8;
    }
  };

  /// Starts an epoch: replays the memory record or the file if there is one, else records
  /// while reading `ds`. File errors, here or during the epoch: not_found (cannot open or
  /// create), data_loss (not a cache file, truncated), resource_exhausted (cannot write or
  /// rename).
  [[nodiscard]] iterator make_iterator() const {
    using Mode = typename iterator::Mode;
    // a default-constructed dataset has no store: it records into one that no epoch replays
    const std::shared_ptr<Store> store = store_ ? store_ : std::make_shared<Store>();
    const auto made = [&](Mode m) {
      iterator it(m);
      it.ds.emplace(ds_);
      it.store = store;
      it.filename = filename_;
      return it;
    };
    if (filename_.empty()) {
      std::lock_guard lk(store->m);
      if (store->complete) {
        iterator it = made(Mode::replay_memory);
        it.replay = store->elements;
        return it;
      }
      iterator it = made(Mode::record_memory);
      it.input.emplace(ds_.make_iterator());
      return it;
    }
    if (detail::file_exists(filename_)) {
      iterator it = made(Mode::replay_file);
      it.open_replay();
      return it;
    }
    iterator it = made(Mode::record_file);
    it.input.emplace(ds_.make_iterator());
    it.open_tmp();
    return it;
  }
  /// The input's cardinality.
  [[nodiscard]] std::int64_t cardinality() const { return ds_.cardinality(); }

  /// A copy reading `f(input)` instead of its input (see "pipeline rewrites" in
  /// data/dataset.hpp), with an empty memory cache of its own: what was recorded came from the
  /// old input. (A file cache keeps its file name.)
  template <class Rewrite>
  [[nodiscard]] CacheDataset transform_inputs(Rewrite&& f) const {
    CacheDataset out = detail::with_input(*this, &CacheDataset::ds_, f);
    out.store_ = std::make_shared<Store>();
    return out;
  }

 private:
  D ds_;
  std::string filename_{};
  std::shared_ptr<Store> store_{};  // shared by copies: the memory cache outlives one epoch
};

/// The dataset-first form of `cache` (`cache(ds, filename)`); cache_fn adds the pipeable one.
struct cache_base_fn {
  /// A CacheDataset of `ds`: in memory if `filename` is empty (the default), else on disk.
  template <dataset D>
  auto operator()(D&& ds, std::string filename = {}) const {
    return CacheDataset<std::remove_cvref_t<D>>(std::forward<D>(ds), std::move(filename));
  }
};
/// The type of `cache`: both the dataset-first and the pipeable form.
struct cache_fn : cache_base_fn {
  using cache_base_fn::operator();
  /// A closure caching the dataset piped into it: `ds | cache()`, `ds | cache(path)`.
  auto operator()(std::string filename = {}) const {
    return ranges::make_view_closure(ranges::bind_back(cache_base_fn{}, std::move(filename)));
  }
};
/// `ds | cache()` (memory), `ds | cache("/tmp/train.cache")` (file).
inline constexpr cache_fn cache{};

}  // namespace data
TAPEFLOW_END_NAMESPACE
