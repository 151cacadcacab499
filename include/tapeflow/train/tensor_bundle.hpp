// Tensor bundle V2, TensorFlow's checkpoint container (docs/formats.md 9): `BundleWriter` writes
// `P.index` + `P.data-00000-of-00001`; `CheckpointReader` (`tf::train::load_checkpoint`)
// lists and reads them, whoever wrote them.
//
// Crash safety: the data file and the index are written under temporary names and renamed
// (data first, index last), so a prefix whose `.index` exists is complete. Reading verifies
// the index CRCs, each tensor's size against its dtype and shape, and each tensor's CRC.
// Errors are `tf::data_loss` / `not_found` / `invalid_argument` naming the key and the file.
#pragma once

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/crc32c.hpp>
#include <tapeflow/io/detail/errno_error.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>
#include <tapeflow/train/checkpoint_state.hpp>
#include <tapeflow/train/detail/table.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace train {

/// Dtype and shape of one bundle entry.
struct TensorInfo {
  DType dtype = DType::invalid;  ///< element type
  Shape shape{};                 ///< dimensions
};

namespace detail_bundle {

/// Test hook: called at each stage of a save ("data", "index", "rename_data", "rename_index",
/// "state"); a hook that throws simulates a failure at that point.
inline std::function<void(const std::string& stage)>& fault_hook() {
  static std::function<void(const std::string&)> hook;
  return hook;
}
inline void stage(const char* name) {
  if (fault_hook()) {
    fault_hook()(name);
  }
}

inline std::string data_file(const std::string& prefix, int shard = 0, int num_shards = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ".data-%05d-of-%05d", shard, num_shards);
  return prefix + buf;
}

inline std::string encode_shape(const Shape& s) {
  std::string out;
  detail::wire::Writer w(out);
  for (auto d : s.dims()) {
    w.message_field(2, [&](detail::wire::Writer& dim) { dim.int64_field(1, d); });
  }
  return out;
}

/// A tensor of `dtype` and `shape` whose bytes `fill(void* data)` writes (numeric types) or
/// whose strings `fill(std::string* data)` assigns.
template <class Fill>
AnyTensor make_tensor(DType dtype, const Shape& shape, Fill&& fill) {
  return visit_dtype(dtype, [&]<class T>() -> AnyTensor {
    AnyTensor out;
    [&]<std::size_t... R>(std::index_sequence<R...>) {
      (void)((shape.rank() == R ? (
                                      out =
                                          [&] {
                                            std::array<std::int64_t, R> dims{};
                                            for (std::size_t i = 0; i < R; ++i) {
                                              dims[i] = shape[i];
                                            }
                                            auto t = Tensor<T, R>::uninitialized(dims);
                                            fill(tapeflow::detail::tensor_access::mutable_data(t));
                                            return AnyTensor(t);
                                          }(),
                                      true)
                                : false) ||
             ...);
    }(std::make_index_sequence<max_rank + 1>{});
    return out;
  });
}

/// The payload bytes and masked CRC TF stores for a tensor (docs/formats.md 9.5).
inline std::pair<std::string, std::uint32_t> encode_payload(const AnyTensor& t) {
  const auto n = static_cast<std::size_t>(t.num_elements());
  if (t.dtype() != DType::string) {
    const std::size_t bytes = n * dtype_size(t.dtype());
    std::string payload(static_cast<const char*>(t.raw_data()), bytes);
    return {payload, io::masked_crc32c(payload)};
  }
  const auto* s = static_cast<const std::string*>(t.raw_data());
  std::string payload;
  std::uint32_t crc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    detail::wire::append_varint(payload, s[i].size());
    std::string fixed;
    if (s[i].size() <= 0xFFFFFFFFU) {
      detail::wire::append_fixed32(fixed, static_cast<std::uint32_t>(s[i].size()));
    } else {
      detail::wire::append_fixed64(fixed, s[i].size());
    }
    crc = io::crc32c_extend(crc, fixed);
  }
  std::string masked;
  detail::wire::append_fixed32(masked, io::mask_crc32c(crc));
  payload += masked;
  crc = io::crc32c_extend(crc, masked);
  for (std::size_t i = 0; i < n; ++i) {
    payload += s[i];
    crc = io::crc32c_extend(crc, s[i]);
  }
  return {payload, io::mask_crc32c(crc)};
}

inline bool supported(DType d) {
  switch (d) {
    case DType::float32:
    case DType::float64:
    case DType::int32:
    case DType::uint8:
    case DType::string:
    case DType::int64:
    case DType::bool_:
      return true;
    default:
      return false;
  }
}

/// A decoded BundleEntryProto: where one tensor lies in the data files.
struct Entry {
  TensorInfo info;          ///< dtype and shape
  std::int32_t shard = 0;   ///< which data file (`.data-<shard>-of-<n>`)
  std::int64_t offset = 0;  ///< byte offset in that file
  std::int64_t size = 0;    ///< bytes
  std::uint32_t crc = 0;    ///< masked CRC32C of the bytes
  bool has_slices = false;  ///< a partitioned (sliced) variable, which we cannot read
};

inline Entry parse_entry(std::string_view value, const std::string& key, const std::string& file) {
  Entry e;
  try {
    detail::wire::Reader r(value, "BundleEntryProto");
    std::vector<std::int64_t> dims;
    while (auto tag = r.next()) {
      switch (tag->field) {
        case 1:
          e.info.dtype = static_cast<DType>(r.int32());
          break;
        case 2: {
          auto sr = r.message("TensorShapeProto");
          while (auto st = sr.next()) {
            if (st->field == 2) {
              auto dr = sr.message("TensorShapeProto.Dim");
              std::int64_t size = 0;
              while (auto dt = dr.next()) {
                if (dt->field == 1) {
                  size = dr.int64();
                } else {
                  dr.skip(*dt);
                }
              }
              dims.push_back(size);
            } else {
              sr.skip(*st);
            }
          }
          break;
        }
        case 3:
          e.shard = r.int32();
          break;
        case 4:
          e.offset = r.int64();
          break;
        case 5:
          e.size = r.int64();
          break;
        case 6:
          e.crc = r.fixed32();
          break;
        case 7:
          e.has_slices = true;
          r.skip(*tag);
          break;
        default:
          r.skip(*tag);
      }
    }
    std::int64_t count = 1;
    for (auto d : dims) {
      if (d < 0 || (d > 0 && count > (std::int64_t{1} << 50) / d)) {
        throw data_loss("bad dimension " + std::to_string(d));
      }
      count *= d;
    }
    e.info.shape = Shape(std::span<const std::int64_t>(dims));
  } catch (const error& ex) {
    throw data_loss("tensor bundle '" + file + "': bad entry for key '" + key + "': " + ex.what());
  }
  if (e.offset < 0 || e.size < 0 || e.shard < 0) {
    throw data_loss("tensor bundle '" + file + "': bad offset/size for key '" + key + "'");
  }
  return e;
}

}  // namespace detail_bundle

/// Writes one tensor bundle (TensorFlow: BundleWriter). Tensors go to the data file in the order
/// added; the index is sorted by key. Nothing is visible under the prefix until `finish()`.
///
///     tf::train::BundleWriter w("/tmp/ckpt/model");
///     w.add("w", tf::constant<float>({1, 2}));
///     w.finish();   // model.index, model.data-00000-of-00001
class BundleWriter {
 public:
  /// Starts a bundle at `prefix` (creating its directory), writing to a temporary data file;
  /// throws not_found if that file cannot be created.
  explicit BundleWriter(std::string prefix)
      : prefix_(std::move(prefix)), suffix_(detail_state::temp_suffix()) {
    const std::string dir = detail_state::dirname(prefix_);
    if (!dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
    }
    data_tmp_ = detail_bundle::data_file(prefix_) + suffix_;
    data_ = std::fopen(data_tmp_.c_str(), "wb");
    if (data_ == nullptr) {
      ::tapeflow::detail::throw_errno(errno != 0 ? errno : ENOENT,
                                      "tf::train::BundleWriter: cannot create", data_tmp_);
    }
  }
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;
  ~BundleWriter() { abandon(); }

  /// Appends a tensor under `key` (keys must be unique and non-empty).
  void add(const std::string& key, const AnyTensor& t) {
    if (key.empty() || entries_.count(key) != 0) {
      throw invalid_argument(
          "tf::train::BundleWriter: " +
          (key.empty() ? std::string("empty key") : "duplicate key '" + key + "'") + " in '" +
          prefix_ + "'");
    }
    if (!t.has_value() || !detail_bundle::supported(t.dtype())) {
      throw invalid_argument("tf::train::BundleWriter: tensor for key '" + key +
                             "' has no value or an unsupported dtype");
    }
    // Numeric tensors are written straight from their buffer (no copy); strings are encoded.
    std::string encoded;
    std::string_view payload;
    std::uint32_t crc = 0;
    if (t.dtype() == DType::string) {
      std::tie(encoded, crc) = detail_bundle::encode_payload(t);
      payload = encoded;
    } else {
      payload =
          std::string_view(static_cast<const char*>(t.raw_data()),
                           static_cast<std::size_t>(t.num_elements()) * dtype_size(t.dtype()));
      crc = io::masked_crc32c(payload);
    }
    std::string entry;
    detail::wire::Writer w(entry);
    w.int32_field(1, static_cast<std::int32_t>(t.dtype()));
    w.bytes_field(2, detail_bundle::encode_shape(t.shape()));
    w.int64_field_if_nonzero(4, offset_);
    w.int64_field_if_nonzero(5, static_cast<std::int64_t>(payload.size()));
    w.fixed32_field(6, crc);
    if (!payload.empty() &&
        std::fwrite(payload.data(), 1, payload.size(), data_) != payload.size()) {
      throw resource_exhausted("tf::train::BundleWriter: short write to '" + data_tmp_ +
                               "' for key '" + key + "'");
    }
    offset_ += static_cast<std::int64_t>(payload.size());
    entries_.emplace(key, std::move(entry));
  }

  /// Writes the index and moves both files into place. Returns the prefix.
  std::string finish() {
    if (data_ == nullptr) {
      throw failed_precondition("tf::train::BundleWriter: finish() called twice for '" + prefix_ +
                                "'");
    }
    const bool ok = std::fflush(data_) == 0;
    const bool closed = std::fclose(data_) == 0;
    data_ = nullptr;
    if (!ok || !closed) {
      abandon();
      throw resource_exhausted("tf::train::BundleWriter: cannot write '" + data_tmp_ + "'");
    }
    try {
      detail_bundle::stage("data");
      detail::sstable::TableBuilder table;
      std::string header;
      detail::wire::Writer h(header);
      h.int32_field(1, 1);
      h.message_field(3, [](detail::wire::Writer& v) { v.int32_field(1, 1); });
      table.add("", header);
      for (const auto& [k, v] : entries_) {
        table.add(k, v);
      }
      index_tmp_ = prefix_ + ".index" + suffix_;
      detail_state::atomic_write(index_tmp_, table.finish());  // complete before renamed
      detail_bundle::stage("index");
      rename(data_tmp_, detail_bundle::data_file(prefix_));
      detail_bundle::stage("rename_data");
      rename(index_tmp_, prefix_ + ".index");
      index_tmp_.clear();
      data_tmp_.clear();
      detail_bundle::stage("rename_index");
    } catch (...) {
      abandon();
      throw;
    }
    return prefix_;
  }

 private:
  static void rename(const std::string& from, const std::string& to) {
    std::error_code ec;
    std::filesystem::rename(from, to, ec);
    if (ec) {
      throw internal("tf::train::BundleWriter: cannot rename '" + from + "' to '" + to +
                     "': " + ec.message());
    }
  }
  void abandon() noexcept {
    if (data_ != nullptr) {
      std::fclose(data_);
      data_ = nullptr;
    }
    if (!data_tmp_.empty()) {
      std::remove(data_tmp_.c_str());
      data_tmp_.clear();
    }
    if (!index_tmp_.empty()) {
      std::remove(index_tmp_.c_str());
      index_tmp_.clear();
    }
  }

  std::string prefix_;
  std::string suffix_;
  std::string data_tmp_;
  std::string index_tmp_;
  std::FILE* data_ = nullptr;
  std::int64_t offset_ = 0;
  std::map<std::string, std::string> entries_;
};

/// Reads a tensor bundle (TensorFlow: `tf.train.load_checkpoint`'s CheckpointReader).
///
///     auto reader = tf::train::load_checkpoint("./save");          // directory or prefix
///     for (auto& [key, shape] : reader.get_variable_to_shape_map()) ...
///     tf::AnyTensor w = reader.get_tensor("w/.ATTRIBUTES/VARIABLE_VALUE");
class CheckpointReader {
 public:
  /// Opens `prefix.index`; not_found if missing, data_loss if corrupt.
  explicit CheckpointReader(std::string prefix) : prefix_(std::move(prefix)) {
    const std::string index = prefix_ + ".index";
    std::FILE* f = std::fopen(index.c_str(), "rb");
    if (f == nullptr) {
      throw not_found("tf::train::CheckpointReader: no checkpoint index '" + index + "'");
    }
    std::string bytes;
    char buf[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
      bytes.append(buf, n);
    }
    std::fclose(f);
    from_index_bytes(bytes, index);
  }
  /// Parses index bytes already in memory (fuzzing, tests); data files resolve from `prefix`.
  CheckpointReader(std::string prefix, std::string_view index_bytes) : prefix_(std::move(prefix)) {
    from_index_bytes(index_bytes, prefix_ + ".index");
  }

  /// The checkpoint prefix (without `.index`).
  [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }
  /// Whether the checkpoint has a tensor named `key`.
  [[nodiscard]] bool has_tensor(const std::string& key) const { return entries_.count(key) != 0; }
  /// Every key but the header, sorted.
  [[nodiscard]] std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [k, e] : entries_) {
      out.push_back(k);
    }
    return out;
  }
  /// Dtype and shape of tensor `key`; throws not_found if there is none.
  [[nodiscard]] const TensorInfo& info(const std::string& key) const { return entry(key).info; }
  /// Key -> shape of every tensor (TensorFlow: `get_variable_to_shape_map()`).
  [[nodiscard]] std::map<std::string, Shape> get_variable_to_shape_map() const {
    std::map<std::string, Shape> out;
    for (const auto& [k, e] : entries_) {
      out.emplace(k, e.info.shape);
    }
    return out;
  }
  /// Key -> dtype of every tensor (TensorFlow: `get_variable_to_dtype_map()`).
  [[nodiscard]] std::map<std::string, DType> get_variable_to_dtype_map() const {
    std::map<std::string, DType> out;
    for (const auto& [k, e] : entries_) {
      out.emplace(k, e.info.dtype);
    }
    return out;
  }

  /// Reads and verifies one tensor.
  [[nodiscard]] AnyTensor get_tensor(const std::string& key) const {
    const auto& e = entry(key);
    const std::string file = detail_bundle::data_file(prefix_, e.shard, num_shards_);
    if (e.has_slices) {
      throw unimplemented("tf::train::CheckpointReader: key '" + key + "' in '" + file +
                          "' is a partitioned (sliced) variable");
    }
    if (!detail_bundle::supported(e.info.dtype)) {
      throw unimplemented("tf::train::CheckpointReader: key '" + key + "' has dtype " +
                          std::to_string(static_cast<int>(e.info.dtype)) + ", not supported");
    }
    const std::int64_t n = e.info.shape.num_elements();
    if (e.info.dtype != DType::string &&
        e.size != n * static_cast<std::int64_t>(dtype_size(e.info.dtype))) {
      throw data_loss("tf::train::CheckpointReader: key '" + key + "' in '" + file + "': size " +
                      std::to_string(e.size) + " does not fit " + std::to_string(n) +
                      " elements of " + std::string(dtype_name(e.info.dtype)));
    }
    if (e.info.dtype != DType::string) {
      require_in_file(file, e.offset, e.size, key);
      // Read straight into the new tensor's buffer, then check the CRC there.
      return detail_bundle::make_tensor(e.info.dtype, e.info.shape, [&](auto* d) {
        if constexpr (!std::is_same_v<std::remove_pointer_t<decltype(d)>, std::string>) {
          read_range(file, e.offset, e.size, key, reinterpret_cast<char*>(d));
          if (io::masked_crc32c(d, static_cast<std::size_t>(e.size)) != e.crc) {
            throw data_loss("tf::train::CheckpointReader: checksum mismatch for key '" + key +
                            "' in '" + file + "' at byte offset " + std::to_string(e.offset));
          }
        }
      });
    }
    const std::string payload = read_string_range(file, e.offset, e.size, key);
    return decode_strings(payload, n, e, key, file);
  }

 private:
  const detail_bundle::Entry& entry(const std::string& key) const {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      throw not_found("tf::train::CheckpointReader: key '" + key + "' not found in checkpoint '" +
                      prefix_ + "'");
    }
    return it->second;
  }
  void from_index_bytes(std::string_view bytes, const std::string& file) {
    detail::sstable::TableReader table(bytes, file);
    auto all = table.read_all();
    if (all.empty() || !all.front().first.empty()) {
      throw data_loss("tensor bundle index '" + file + "': no header entry");
    }
    try {
      detail::wire::Reader r(all.front().second, "BundleHeaderProto");
      while (auto tag = r.next()) {
        if (tag->field == 1) {
          num_shards_ = r.int32();
        } else if (tag->field == 2) {
          if (r.int32() != 0) {
            throw unimplemented("big-endian tensor bundles are not supported");
          }
        } else {
          r.skip(*tag);
        }
      }
    } catch (const data_loss& ex) {
      throw data_loss("tensor bundle index '" + file + "': bad header: " + ex.what());
    }
    if (num_shards_ < 1 || num_shards_ > 99999) {
      throw data_loss("tensor bundle index '" + file + "': bad shard count " +
                      std::to_string(num_shards_));
    }
    for (std::size_t i = 1; i < all.size(); ++i) {
      auto e = detail_bundle::parse_entry(all[i].second, all[i].first, file);
      if (e.shard >= num_shards_) {
        throw data_loss("tensor bundle index '" + file + "': key '" + all[i].first +
                        "' names shard " + std::to_string(e.shard) + " of " +
                        std::to_string(num_shards_));
      }
      entries_.emplace(std::move(all[i].first), e);
    }
  }
  // Reads `size` bytes at `offset` of `file` into `out`, checking the file is long enough
  // first (a corrupt index must not make us allocate or read its claimed size).
  static void read_range(const std::string& file, std::int64_t offset, std::int64_t size,
                         const std::string& key, char* out) {
    if (size == 0) {
      return;
    }
    std::FILE* f = std::fopen(file.c_str(), "rb");
    if (f == nullptr) {
      throw not_found("tf::train::CheckpointReader: data file '" + file + "' (for key '" + key +
                      "') cannot be opened");
    }
    const bool fits =
        fseeko(f, 0, SEEK_END) == 0 && ftello(f) >= offset && ftello(f) - offset >= size;
    const bool ok =
        fits && fseeko(f, offset, SEEK_SET) == 0 &&
        std::fread(out, 1, static_cast<std::size_t>(size), f) == static_cast<std::size_t>(size);
    std::fclose(f);
    if (!ok) {
      throw data_loss(
          "tf::train::CheckpointReader: data file '" + file +
          "' is shorter than the "
          "index says: key '" +
          key + "' needs bytes " + std::to_string(offset) + ".." +
          std::to_string(static_cast<std::uint64_t>(offset) + static_cast<std::uint64_t>(size)));
    }
  }
  /// Checks that bytes [offset, offset + size) exist in `file` before anything that size is
  /// allocated: an index claiming 2^40 bytes is data_loss, not a terabyte allocation.
  static void require_in_file(const std::string& file, std::int64_t offset, std::int64_t size,
                              const std::string& key) {
    std::error_code ec;
    const auto file_size = std::filesystem::file_size(file, ec);
    if (ec) {
      throw not_found("tf::train::CheckpointReader: data file '" + file + "' (for key '" + key +
                      "') cannot be opened");
    }
    if (static_cast<std::uint64_t>(offset) > file_size ||
        static_cast<std::uint64_t>(size) > file_size - static_cast<std::uint64_t>(offset)) {
      throw data_loss(
          "tf::train::CheckpointReader: data file '" + file +
          "' is shorter than the index says: key '" + key + "' needs bytes " +
          std::to_string(offset) + ".." +
          std::to_string(static_cast<std::uint64_t>(offset) + static_cast<std::uint64_t>(size)));
    }
  }
  static std::string read_string_range(const std::string& file, std::int64_t offset,
                                       std::int64_t size, const std::string& key) {
    require_in_file(file, offset, size, key);
    std::string out(static_cast<std::size_t>(size), '\0');
    read_range(file, offset, size, key, out.data());
    return out;
  }
  static AnyTensor decode_strings(const std::string& payload, std::int64_t n,
                                  const detail_bundle::Entry& e, const std::string& key,
                                  const std::string& file) {
    auto bad = [&](const std::string& what) -> data_loss {
      return data_loss("tf::train::CheckpointReader: string tensor '" + key + "' in '" + file +
                       "': " + what);
    };
    std::vector<std::uint64_t> lens;
    std::size_t pos = 0;
    std::uint32_t crc = 0;
    detail::wire::Reader r(payload, "string lengths");
    try {
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint64_t len = r.varint();
        lens.push_back(len);
        std::string fixed;
        if (len <= 0xFFFFFFFFU) {
          detail::wire::append_fixed32(fixed, static_cast<std::uint32_t>(len));
        } else {
          detail::wire::append_fixed64(fixed, len);
        }
        crc = io::crc32c_extend(crc, fixed);
      }
      pos = r.position();
    } catch (const data_loss&) {
      throw bad("truncated length list");
    }
    if (payload.size() - pos < 4) {
      throw bad("missing length checksum");
    }
    if (detail::wire::load_fixed32(payload.data() + pos) != io::mask_crc32c(crc)) {
      throw bad("length checksum mismatch");
    }
    crc = io::crc32c_extend(crc, payload.data() + pos, 4);
    pos += 4;
    std::uint64_t total = 0;
    for (auto l : lens) {
      total += l;
      if (total > payload.size() - pos) {
        throw bad("data shorter than the string lengths say");
      }
    }
    crc = io::crc32c_extend(crc, payload.data() + pos, payload.size() - pos);
    if (io::mask_crc32c(crc) != e.crc) {
      throw bad("checksum mismatch");
    }
    return detail_bundle::make_tensor(DType::string, e.info.shape, [&](auto* d) {
      if constexpr (std::is_same_v<std::remove_pointer_t<decltype(d)>, std::string>) {
        for (std::size_t i = 0; i < lens.size(); ++i) {
          d[i].assign(payload.data() + pos, lens[i]);
          pos += lens[i];
        }
      }
    });
  }

  std::string prefix_;
  int num_shards_ = 1;
  std::map<std::string, detail_bundle::Entry> entries_;
};

/// Opens a checkpoint by prefix, or by directory (its latest checkpoint), like
/// `tf.train.load_checkpoint`; not_found when neither exists.
inline CheckpointReader load_checkpoint(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::string latest = latest_checkpoint(path);
    if (latest.empty()) {
      throw not_found("tf::train::load_checkpoint: no checkpoint found in directory '" + path +
                      "'");
    }
    return CheckpointReader(latest);
  }
  return CheckpointReader(path);
}

/// (key, shape) of every tensor in a checkpoint (`tf.train.list_variables`).
inline std::vector<std::pair<std::string, Shape>> list_variables(const std::string& path) {
  auto m = load_checkpoint(path).get_variable_to_shape_map();
  return {m.begin(), m.end()};
}

}  // namespace train
TAPEFLOW_END_NAMESPACE
