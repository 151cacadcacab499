#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/io/tfrecord.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_io_tfrecord {

namespace tf = tapeflow;
using Catch::Matchers::Contains;
using tf::io::Compression;

namespace {
std::string golden(const std::string& name) {
  return std::string(TAPEFLOW_TEST_DATA_DIR) + "/io/" + name;
}
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
// The records make_golden.py writes.
std::vector<std::string> golden_records() {
  std::string big;
  for (int k = 0; k < 4; ++k) {
    for (int b = 0; b < 256; ++b) {
      big += static_cast<char>(b);
    }
  }
  return {"", "a", "hello, tfrecord", big};
}
std::vector<std::string> read_all(const std::string& path, tf::io::TFRecordReaderOptions o = {}) {
  tf::io::TFRecordReader reader(path, o);
  std::vector<std::string> out;
  std::string r;
  while (reader.read(r)) {
    out.push_back(r);
  }
  return out;
}
}  // namespace

TEST_CASE("TFRecordReader reads TensorFlow's files, all compressions", "[io][tfrecord][golden]") {
  CHECK(read_all(golden("records.tfrecord")) == golden_records());
  CHECK(read_all(golden("records.gzip.tfrecord"), {.compression = Compression::gzip}) ==
        golden_records());
  CHECK(read_all(golden("records.zlib.tfrecord"), {.compression = Compression::zlib}) ==
        golden_records());
  // tiny buffers exercise refills inside headers, payloads and footers
  for (std::size_t buf : {1, 7, 13, 100}) {
    CHECK(read_all(golden("records.tfrecord"), {.buffer_size = buf}) == golden_records());
    CHECK(read_all(golden("records.gzip.tfrecord"),
                   {.compression = Compression::gzip, .buffer_size = buf}) == golden_records());
  }
}

TEST_CASE("TFRecordWriter output equals TensorFlow's byte for byte", "[io][tfrecord][golden]") {
  {
    tf::io::TFRecordWriter w("ours.tfrecord");
    for (const auto& r : golden_records()) {
      w.write(r);
    }
  }
  CHECK(slurp("ours.tfrecord") == slurp(golden("records.tfrecord")));
  std::string framed;
  for (const auto& r : golden_records()) {
    tf::io::append_tfrecord(framed, r);
  }
  CHECK(framed == slurp(golden("records.tfrecord")));
}

TEST_CASE("TFRecord round trips with every compression", "[io][tfrecord]") {
  std::vector<std::string> recs;
  for (int i = 0; i < 300; ++i) {
    recs.push_back(std::string(static_cast<std::size_t>(i * 37 % 5000), static_cast<char>(i)));
  }
  recs.push_back(std::string(1 << 20, 'x'));  // larger than the read buffer
  for (auto c : {Compression::none, Compression::zlib, Compression::gzip}) {
    const std::string path = "rt_" + std::string(tf::io::compression_name(c)) + ".tfrecord";
    tf::io::TFRecordWriter w(path, {.compression = c});
    for (const auto& r : recs) {
      w.write(r);
    }
    w.flush();
    w.close();
    CHECK_FALSE(w.is_open());
    CHECK_THROWS_AS(w.write("x"), tf::failed_precondition);
    CHECK(read_all(path, {.compression = c}) == recs);
    CHECK(read_all(path, {.compression = c, .buffer_size = 1000}) == recs);
  }
  // an empty file has zero records
  { tf::io::TFRecordWriter w("empty.tfrecord"); }
  CHECK(read_all("empty.tfrecord").empty());
  { tf::io::TFRecordWriter w("empty.gz", {.compression = Compression::gzip}); }
  CHECK(read_all("empty.gz", {.compression = Compression::gzip}).empty());
}

TEST_CASE("compression names follow TensorFlow", "[io][tfrecord]") {
  CHECK(tf::io::compression_type("GZIP") == Compression::gzip);
  CHECK(tf::io::compression_type("ZLIB") == Compression::zlib);
  CHECK(tf::io::compression_type("") == Compression::none);
  CHECK_THROWS_AS(tf::io::compression_type("SNAPPY"), tf::invalid_argument);
}

TEST_CASE("corrupt and truncated records raise data_loss with file and offset", "[io][tfrecord]") {
  const std::string good = slurp(golden("records.tfrecord"));
  // record offsets: 0 (len 0), 16 (len 1), 33 (len 15), 64 (len 1024)
  SECTION("payload CRC") {
    std::string bad = good;
    bad[33 + 12 + 3] ^= 1;
    spit("bad_payload.tfrecord", bad);
    CHECK_THROWS_MATCHES(read_all("bad_payload.tfrecord"), tf::data_loss,
                         Catch::Matchers::Message(
                             "bad_payload.tfrecord: corrupted record at byte offset 33 (data CRC "
                             "mismatch, length 15)"));
    tf::io::TFRecordReader r("bad_payload.tfrecord", {.skip_corrupt = true});
    std::vector<std::string> got;
    std::string rec;
    while (r.read(rec)) {
      got.push_back(rec);
    }
    CHECK(got.size() == 3);
    CHECK(r.corrupt_records_skipped() == 1);
  }
  SECTION("length CRC: skipping resynchronises on the next record") {
    std::string bad = good;
    bad[16] ^= 0x40;
    spit("bad_length.tfrecord", bad);
    CHECK_THROWS_WITH(read_all("bad_length.tfrecord"),
                      "bad_length.tfrecord: corrupted record at byte offset 16 (length CRC "
                      "mismatch)");
    tf::io::TFRecordReader r("bad_length.tfrecord", {.skip_corrupt = true});
    auto a = r.next();
    auto b = r.next();
    auto c = r.next();
    CHECK(a == std::string());
    CHECK(b == std::string("hello, tfrecord"));
    CHECK(c == golden_records()[3]);
    CHECK_FALSE(r.next());
    CHECK(r.corrupt_records_skipped() == 1);
  }
  SECTION("truncated anywhere") {
    for (std::size_t cut : {70UL, 64UL + 5, 64UL + 12 + 100, good.size() - 1}) {
      spit("cut.tfrecord", good.substr(0, cut));
      CHECK_THROWS_WITH(read_all("cut.tfrecord"),
                        "cut.tfrecord: truncated record at byte offset 64");
      tf::io::TFRecordReader r("cut.tfrecord", {.skip_corrupt = true});
      int n = 0;
      while (r.next()) {
        ++n;
      }
      CHECK(n == 3);
      CHECK(r.corrupt_records_skipped() == 1);
    }
  }
  SECTION("compressed streams") {
    const std::string gz = slurp(golden("records.gzip.tfrecord"));
    spit("cut.gz", gz.substr(0, gz.size() / 2));
    CHECK_THROWS_AS(read_all("cut.gz", {.compression = Compression::gzip}), tf::data_loss);
    CHECK_THROWS_WITH(read_all("cut.gz", {.compression = Compression::gzip}),
                      Contains("cut.gz: truncated GZIP stream"));
    std::string bad = gz;
    bad[20] ^= 0x55;
    spit("bad.gz", bad);
    CHECK_THROWS_AS(read_all("bad.gz", {.compression = Compression::gzip}), tf::data_loss);
    // reading a gzip file as uncompressed: a length CRC mismatch at 0
    CHECK_THROWS_WITH(read_all(golden("records.gzip.tfrecord")),
                      Contains("corrupted record at byte offset 0"));
  }
  SECTION("missing file") {
    CHECK_THROWS_AS(read_all("no/such/file.tfrecord"), tf::not_found);
    CHECK_THROWS_AS(tf::io::TFRecordWriter("no/such/dir/x.tfrecord"), tf::not_found);
  }
}

TEST_CASE("TFRecordReader works from memory and restores positions", "[io][tfrecord]") {
  const std::string good = slurp(golden("records.tfrecord"));
  auto r = tf::io::TFRecordReader::from_memory(good);
  CHECK(r.next() == std::string());
  CHECK(r.offset() == 16);
  auto r2 = tf::io::TFRecordReader::from_memory(good);
  r2.skip_to(33);
  CHECK(r2.next() == std::string("hello, tfrecord"));
  CHECK(r2.records_read() == 1);
}

TEST_CASE("TFRecordReader: mixed small and large records, reused and fresh strings",
          "[io][tfrecord]") {
  // Large records (> 32 KiB) are read straight into the string and switch the buffer to short
  // read-ahead; small ones go through the buffer. Mix them in every order, with buffers smaller
  // and larger than the records, and check contents, offsets and data-CRC errors.
  std::vector<std::string> recs;
  const std::size_t sizes[] = {0,     1,     40000, 5, 100000, 100001, 33000, 12, 32768,
                               32769, 70000, 3,     0, 200000, 1000,   65536, 7};
  std::uint32_t x = 1;
  for (std::size_t n : sizes) {
    std::string r(n, '\0');
    for (auto& c : r) {
      x = x * 1664525U + 1013904223U;
      c = static_cast<char>(x >> 24);
    }
    recs.push_back(std::move(r));
  }
  const std::string path = "mixed.tfrecord";
  {
    tf::io::TFRecordWriter w(path);
    for (const auto& r : recs) {
      w.write(r);
    }
  }
  for (std::size_t buf : {64UL, 1000UL, 50000UL, 256UL * 1024, 1UL << 20}) {
    CAPTURE(buf);
    CHECK(read_all(path, {.buffer_size = buf}) == recs);
    // a fresh string for every record (as TFRecordDataset does)
    tf::io::TFRecordReader r(path, {.buffer_size = buf});
    std::uint64_t offset = 0;
    for (const auto& want : recs) {
      std::string got;
      REQUIRE(r.offset() == offset);
      REQUIRE(r.read(got));
      CHECK(got == want);
      offset += 16 + want.size();
    }
    std::string none;
    CHECK_FALSE(r.read(none));
  }
  // Corrupt one byte in the middle of the 100000-byte record (index 4).
  std::string bytes = slurp(path);
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    at += 16 + recs[i].size();
  }
  bytes[at + 12 + 54321] ^= 0x10;
  spit("mixed_bad.tfrecord", bytes);
  for (std::size_t buf : {1000UL, 256UL * 1024}) {
    CHECK_THROWS_WITH(read_all("mixed_bad.tfrecord", {.buffer_size = buf}),
                      "mixed_bad.tfrecord: corrupted record at byte offset " + std::to_string(at) +
                          " (data CRC mismatch, length 100000)");
    tf::io::TFRecordReader r("mixed_bad.tfrecord", {.buffer_size = buf, .skip_corrupt = true});
    std::vector<std::string> got;
    std::string rec;
    while (r.read(rec)) {
      got.push_back(rec);
    }
    std::vector<std::string> want = recs;
    want.erase(want.begin() + 4);
    CHECK(got == want);
    CHECK(r.corrupt_records_skipped() == 1);
  }
  // Cut inside the 200000-byte record (index 13).
  at = 0;
  for (std::size_t i = 0; i < 13; ++i) {
    at += 16 + recs[i].size();
  }
  spit("mixed_cut.tfrecord", slurp(path).substr(0, at + 12 + 150000));
  CHECK_THROWS_WITH(read_all("mixed_cut.tfrecord"),
                    "mixed_cut.tfrecord: truncated record at byte offset " + std::to_string(at));
}

namespace {
// Every record (as copies of the views) and the error message, if any, of a read_view pass.
std::pair<std::vector<std::string>, std::string> read_all_views(
    const std::string& path, tf::io::TFRecordReaderOptions o = {}) {
  std::vector<std::string> out;
  try {
    tf::io::TFRecordReader reader(path, o);
    std::string_view r;
    while (reader.read_view(r)) {
      out.emplace_back(r);
    }
  } catch (const tf::data_loss& e) {
    return {out, e.what()};
  }
  return {out, ""};
}
}  // namespace

TEST_CASE("TFRecordReader::read_view: records in place, same checks as read", "[io][tfrecord]") {
  // Golden files, every compression.
  for (const auto& [file, c] : {std::pair{"records.tfrecord", Compression::none},
                                {"records.gzip.tfrecord", Compression::gzip},
                                {"records.zlib.tfrecord", Compression::zlib}}) {
    CAPTURE(file);
    CHECK(read_all_views(golden(file), {.compression = c}) ==
          std::pair{golden_records(), std::string()});
  }
  // Small, buffer-sized and large records in every order, with every kind of buffer; a view
  // stays valid until the next read.
  std::vector<std::string> recs;
  std::uint32_t x = 7;
  for (std::size_t n : {0UL, 1000UL, 63UL, 64UL, 65UL, 40000UL, 4UL, 100000UL, 16UL, 255UL, 256UL,
                        257UL, 1UL << 20, 999UL, 32768UL, 32769UL, 12UL}) {
    std::string r(n, '\0');
    for (auto& ch : r) {
      x = x * 1664525U + 1013904223U;
      ch = static_cast<char>(x >> 24);
    }
    recs.push_back(std::move(r));
  }
  {
    tf::io::TFRecordWriter w("views.tfrecord");
    for (const auto& r : recs) {
      w.write(r);
    }
  }
  for (std::size_t buf : {64UL, 100UL, 1000UL, 50000UL, 256UL * 1024, 2UL << 20}) {
    CAPTURE(buf);
    tf::io::TFRecordReader r("views.tfrecord", {.buffer_size = buf});
    std::uint64_t offset = 0;
    for (const auto& want : recs) {
      REQUIRE(r.offset() == offset);
      const auto got = r.next_view();
      REQUIRE(got);
      CHECK(*got == want);
      offset += 16 + want.size();
    }
    CHECK(r.offset() == offset);
    CHECK_FALSE(r.next_view());
    CHECK(r.records_read() == static_cast<std::int64_t>(recs.size()));
  }
  // Alternating views and copies on one reader.
  {
    tf::io::TFRecordReader r("views.tfrecord", {.buffer_size = 1000});
    std::string copy;
    std::string_view view;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      if (i % 2 == 0) {
        REQUIRE(r.read_view(view));
        CHECK(view == recs[i]);
      } else {
        REQUIRE(r.read(copy));
        CHECK(copy == recs[i]);
      }
    }
  }
  // Corruption and truncation: the same errors, offsets and skips as read().
  const std::string good = slurp("views.tfrecord");
  std::uint64_t at7 = 0;  // the 100000-byte record
  for (std::size_t i = 0; i < 7; ++i) {
    at7 += 16 + recs[i].size();
  }
  std::string bad = good;
  bad[at7 + 12 + 777] ^= 0x01;
  spit("views_bad.tfrecord", bad);
  std::string bad_small = good;
  bad_small[16 + 12 + 500] ^= 0x08;  // inside the 1000-byte record
  spit("views_bad_small.tfrecord", bad_small);
  spit("views_cut.tfrecord", good.substr(0, at7 + 12 + 5000));
  for (const char* file :
       {"views_bad.tfrecord", "views_bad_small.tfrecord", "views_cut.tfrecord"}) {
    for (std::size_t buf : {64UL, 1000UL, 256UL * 1024}) {
      CAPTURE(file, buf);
      const auto views = read_all_views(file, {.buffer_size = buf});
      std::string copy_error;
      try {
        (void)read_all(file, {.buffer_size = buf});
      } catch (const tf::data_loss& e) {
        copy_error = e.what();
      }
      CHECK_FALSE(copy_error.empty());
      CHECK(views.second == copy_error);
      CHECK(read_all_views(file, {.buffer_size = buf, .skip_corrupt = true}).first ==
            read_all(file, {.buffer_size = buf, .skip_corrupt = true}));
    }
  }
  CHECK_THAT(read_all_views("views_bad_small.tfrecord").second,
             Contains("corrupted record at byte offset 16 (data CRC mismatch, length 1000)"));
}

}  // namespace test_io_tfrecord
