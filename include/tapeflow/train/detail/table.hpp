// The `.index` file of a tensor bundle: a LevelDB-format SSTable (docs/formats.md 9.2).
//
// The writer reproduces TensorFlow's choices (256 KiB blocks, restart interval 16 in data
// blocks and 1 in the index block, no compression, empty metaindex, LevelDB's separator and
// successor keys) so our index files are byte-identical to TF's for the same entries. The
// reader verifies the footer magic and every block CRC and bounds-checks every length; it
// loads the whole (small) index into memory. Errors are `tf::data_loss` naming the file, the
// byte offset and, once known, the key.
// IWYU pragma: private, include <tapeflow/train.hpp>
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/io/crc32c.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::sstable {

inline constexpr std::size_t block_size = 262144;
inline constexpr std::uint64_t table_magic = 0xdb4775248b80fb57ULL;
inline constexpr std::size_t footer_size = 48;
inline constexpr std::size_t trailer_size = 5;

/// A block: prefix-compressed entries, restart offsets, restart count (docs/formats.md 9.2).
class BlockBuilder {
 public:
  explicit BlockBuilder(int restart_interval) : interval_(restart_interval) {
    restarts_.push_back(0);
  }
  void add(std::string_view key, std::string_view value) {
    std::size_t shared = 0;
    if (counter_ < interval_) {
      const std::size_t n = std::min(last_key_.size(), key.size());
      while (shared < n && last_key_[shared] == key[shared]) {
        ++shared;
      }
    } else {
      restarts_.push_back(static_cast<std::uint32_t>(buffer_.size()));
      counter_ = 0;
    }
    wire::append_varint(buffer_, shared);
    wire::append_varint(buffer_, key.size() - shared);
    wire::append_varint(buffer_, value.size());
    buffer_.append(key.substr(shared));
    buffer_.append(value);
    last_key_.assign(key);
    ++counter_;
    ++entries_;
  }
  [[nodiscard]] std::size_t size_estimate() const noexcept {
    return buffer_.size() + restarts_.size() * 4 + 4;
  }
  [[nodiscard]] bool empty() const noexcept { return entries_ == 0; }
  /// The finished block bytes; the builder is reset.
  std::string finish() {
    std::string out = std::move(buffer_);
    for (std::uint32_t r : restarts_) {
      wire::append_fixed32(out, r);
    }
    wire::append_fixed32(out, static_cast<std::uint32_t>(restarts_.size()));
    buffer_.clear();
    restarts_.assign(1, 0);
    counter_ = 0;
    entries_ = 0;
    last_key_.clear();
    return out;
  }

 private:
  int interval_;
  std::string buffer_;
  std::vector<std::uint32_t> restarts_;
  int counter_ = 0;
  std::size_t entries_ = 0;
  std::string last_key_;
};

/// LevelDB's FindShortestSeparator (bytewise comparator).
inline std::string shortest_separator(const std::string& a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) {
    ++i;
  }
  if (i < n) {
    const auto c = static_cast<unsigned char>(a[i]);
    if (c < 0xFF && c + 1 < static_cast<unsigned char>(b[i])) {
      std::string s = a.substr(0, i + 1);
      s[i] = static_cast<char>(c + 1);
      return s;
    }
  }
  return a;
}
/// LevelDB's FindShortSuccessor.
inline std::string short_successor(const std::string& a) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (static_cast<unsigned char>(a[i]) != 0xFF) {
      std::string s = a.substr(0, i + 1);
      s[i] = static_cast<char>(static_cast<unsigned char>(a[i]) + 1);
      return s;
    }
  }
  return a;
}

inline void append_handle(std::string& out, std::uint64_t offset, std::uint64_t size) {
  wire::append_varint(out, offset);
  wire::append_varint(out, size);
}

/// Builds a whole table in memory (index files are small: one entry per tensor).
class TableBuilder {
 public:
  /// Keys must arrive in strictly increasing bytewise order (internal error otherwise).
  void add(std::string_view key, std::string_view value) {
    if (entries_ > 0 && !(std::string_view(last_key_) < key)) {
      throw internal("tensor bundle index: key '" + std::string(key) +
                     "' added out of order after '" + last_key_ + "'");
    }
    if (pending_index_) {
      add_index_entry(shortest_separator(last_key_, key));
    }
    if (key.size() + value.size() >= 2 * block_size && !data_.empty()) {
      flush();
      if (pending_index_) {
        add_index_entry(shortest_separator(last_key_, key));
      }
    }
    data_.add(key, value);
    last_key_.assign(key);
    ++entries_;
    if (data_.size_estimate() >= block_size) {
      flush();
    }
  }
  /// The complete file contents.
  std::string finish() {
    flush();
    BlockBuilder meta(16);
    const auto [meta_off, meta_size] = write_block(meta.finish());
    if (pending_index_) {
      add_index_entry(short_successor(last_key_));
    }
    const auto [index_off, index_size] = write_block(index_.finish());
    std::string footer;
    append_handle(footer, meta_off, meta_size);
    append_handle(footer, index_off, index_size);
    footer.resize(40, '\0');
    wire::append_fixed32(footer, static_cast<std::uint32_t>(table_magic & 0xFFFFFFFFU));
    wire::append_fixed32(footer, static_cast<std::uint32_t>(table_magic >> 32));
    out_ += footer;
    return std::move(out_);
  }

 private:
  void add_index_entry(const std::string& key) {
    std::string handle;
    append_handle(handle, pending_offset_, pending_size_);
    index_.add(key, handle);
    pending_index_ = false;
  }
  void flush() {
    if (data_.empty()) {
      return;
    }
    std::tie(pending_offset_, pending_size_) = write_block(data_.finish());
    pending_index_ = true;
  }
  std::pair<std::uint64_t, std::uint64_t> write_block(const std::string& block) {
    const std::uint64_t offset = out_.size();
    out_ += block;
    out_.push_back('\0');  // compression type: none
    std::uint32_t crc = io::crc32c(block);
    crc = io::crc32c_extend(crc, "\0", 1);
    wire::append_fixed32(out_, io::mask_crc32c(crc));
    return {offset, block.size()};
  }

  std::string out_;
  BlockBuilder data_{16};
  BlockBuilder index_{1};
  std::string last_key_;
  std::size_t entries_ = 0;
  bool pending_index_ = false;
  std::uint64_t pending_offset_ = 0;
  std::uint64_t pending_size_ = 0;
};

/// Parses a whole table: key -> value, in key order. `file` names the file in errors.
class TableReader {
 public:
  TableReader(std::string_view bytes, std::string file) : bytes_(bytes), file_(std::move(file)) {}

  std::vector<std::pair<std::string, std::string>> read_all() {
    if (bytes_.size() < footer_size) {
      fail(0, "file of " + std::to_string(bytes_.size()) +
                  " bytes is shorter than the 48-byte table footer (truncated?)");
    }
    const std::size_t foot = bytes_.size() - footer_size;
    const std::uint64_t magic = wire::load_fixed64(bytes_.data() + foot + 40);
    if (magic != table_magic) {
      fail(foot + 40, "bad table magic number (not a tensor bundle index, or corrupt)");
    }
    wire::Reader footer(bytes_.substr(foot, 40), "table footer", foot);
    (void)handle(footer);  // metaindex: TF never reads it either
    const auto [index_off, index_size] = handle(footer);
    std::vector<std::pair<std::string, std::string>> index_entries;
    parse_block(read_block(index_off, index_size), index_off, index_entries);
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [key, value] : index_entries) {
      wire::Reader h(value, "index block handle", index_off);
      const auto [off, size] = handle(h);
      parse_block(read_block(off, size), off, out);
    }
    for (std::size_t i = 1; i < out.size(); ++i) {
      if (!(out[i - 1].first < out[i].first)) {
        fail(0, "keys out of order at '" + out[i].first + "'");
      }
    }
    return out;
  }

 private:
  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const {
    throw data_loss("tensor bundle index '" + file_ + "': " + what + " (byte offset " +
                    std::to_string(offset) + ")");
  }
  std::pair<std::uint64_t, std::uint64_t> handle(wire::Reader& r) const {
    try {
      const std::uint64_t off = r.varint();
      const std::uint64_t size = r.varint();
      return {off, size};
    } catch (const data_loss& e) {
      fail(r.offset(), std::string("bad block handle: ") + e.what());
    }
  }
  std::string_view read_block(std::uint64_t off, std::uint64_t size) const {
    if (off > bytes_.size() || size > bytes_.size() - off ||
        trailer_size > bytes_.size() - off - size) {
      fail(off, "block of " + std::to_string(size) + " bytes runs past the end of the file");
    }
    std::string_view block = bytes_.substr(off, size);
    const auto type = static_cast<unsigned char>(bytes_[off + size]);
    const std::uint32_t stored = wire::load_fixed32(bytes_.data() + off + size + 1);
    const std::uint32_t actual =
        io::mask_crc32c(io::crc32c_extend(io::crc32c(block), bytes_.data() + off + size, 1));
    if (stored != actual) {
      fail(off, "block checksum mismatch (corrupt index)");
    }
    if (type != 0) {
      fail(off + size, "compressed block (type " + std::to_string(type) + ") is not supported");
    }
    return block;
  }
  void parse_block(std::string_view block, std::uint64_t base,
                   std::vector<std::pair<std::string, std::string>>& out) const {
    if (block.size() < 4) {
      fail(base, "block shorter than its restart count");
    }
    const std::uint32_t num_restarts = wire::load_fixed32(block.data() + block.size() - 4);
    if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4) {
      fail(base, "bad restart count " + std::to_string(num_restarts));
    }
    const std::size_t limit = block.size() - 4 - std::size_t(num_restarts) * 4;
    std::size_t pos = 0;
    std::string key;
    while (pos < limit) {
      const std::size_t at = pos;
      const std::uint64_t shared = varint(block, limit, pos, base + at, key);
      const std::uint64_t non_shared = varint(block, limit, pos, base + at, key);
      const std::uint64_t value_len = varint(block, limit, pos, base + at, key);
      if (shared > key.size() || non_shared > limit - pos || value_len > limit - pos - non_shared) {
        fail(base + at, "corrupt block entry after key '" + key + "'");
      }
      key.resize(shared);
      key.append(block.substr(pos, non_shared));
      pos += non_shared;
      out.emplace_back(key, std::string(block.substr(pos, value_len)));
      pos += value_len;
    }
  }
  std::uint64_t varint(std::string_view block, std::size_t limit, std::size_t& pos,
                       std::uint64_t at, const std::string& key) const {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 35; shift += 7) {  // varint32
      if (pos >= limit) {
        break;
      }
      const auto b = static_cast<unsigned char>(block[pos++]);
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
    fail(at, "truncated or overlong varint in block entry after key '" + key + "'");
  }

  std::string_view bytes_;
  std::string file_;
};

}  // namespace detail::sstable
TAPEFLOW_END_NAMESPACE
