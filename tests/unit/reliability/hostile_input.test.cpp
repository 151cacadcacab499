// Hostile files: headers that claim huge sizes and streams that decompress without end get a
// typed error naming the file (and offset), and the process's peak RSS stays under a stated
// bound (docs/reliability.md). CTest runs each case in its own process, so getrusage's peak is
// this case's own.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <sys/resource.h>
#include <zlib.h>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/image/decode_jpeg.hpp>
#include <tapeflow/image/decode_png.hpp>
#include <tapeflow/io/crc32c.hpp>
#include <tapeflow/io/detail/proto_wire.hpp>
#include <tapeflow/io/tfrecord_reader.hpp>
#include <tapeflow/io/tfrecord_writer.hpp>
#include <tapeflow/keras/datasets.hpp>
#include <tapeflow/train/tensor_bundle.hpp>

namespace test_reliability_hostile_input {
namespace tf = tapeflow;
using Catch::Matchers::Contains;

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

// ThreadSanitizer keeps shadow memory beside every byte the program touches (several times
// its size), which getrusage counts: under TSan, growth is scaled back by this factor.
#if defined(__SANITIZE_THREAD__)
constexpr double shadow_factor = 4.0;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr double shadow_factor = 4.0;
#else
constexpr double shadow_factor = 1.0;
#endif
#else
constexpr double shadow_factor = 1.0;
#endif

// How much the peak RSS grew while `f` ran; `f` must throw E with `text` in its message.
template <class E, class F>
double peak_growth_mib(F&& f, const std::string& text) {
  const double before = peak_rss_mib();
  CHECK_THROWS_MATCHES(
      f(), E,
      Catch::Matchers::Predicate<E>(
          [&](const E& e) { return std::string(e.what()).find(text) != std::string::npos; },
          "message contains " + text));
  return (peak_rss_mib() - before) / shadow_factor;
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A zlib stream (gzip framing when `gzip`) of prefix + `zeros` zero bytes + suffix, built in
// 1 MiB pieces so making the bomb does not raise the peak RSS the test measures.
std::string compress_zeros(const std::string& prefix, std::uint64_t zeros,
                           const std::string& suffix, bool gzip) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, gzip ? 16 + MAX_WBITS : MAX_WBITS, 9,
                       Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out;
  std::vector<unsigned char> chunk(1 << 16);
  auto feed = [&](const void* data, std::size_t n, int flush) {
    z.next_in = static_cast<Bytef*>(const_cast<void*>(data));
    z.avail_in = static_cast<uInt>(n);
    do {
      z.next_out = chunk.data();
      z.avail_out = static_cast<uInt>(chunk.size());
      deflate(&z, flush);
      out.append(reinterpret_cast<char*>(chunk.data()), chunk.size() - z.avail_out);
    } while (z.avail_out == 0);
  };
  const std::vector<char> block(1 << 20, 0);
  feed(prefix.data(), prefix.size(), Z_NO_FLUSH);
  for (std::uint64_t left = zeros; left > 0;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
    feed(block.data(), n, Z_NO_FLUSH);
    left -= n;
  }
  feed(suffix.data(), suffix.size(), Z_FINISH);
  deflateEnd(&z);
  return out;
}

// One TFRecord whose payload is `length` zero bytes, framing and CRCs valid, compressed.
std::string compressed_zero_record(std::uint64_t length, bool gzip) {
  char header[tf::io::tfrecord_header_size];
  tf::io::tfrecord_header(length, header);
  const std::vector<char> block(1 << 20, 0);
  std::uint32_t crc = 0;
  for (std::uint64_t left = length; left > 0;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
    crc = tf::io::crc32c_extend(crc, block.data(), n);
    left -= n;
  }
  std::string footer;
  tf::detail::wire::append_fixed32(footer, tf::io::mask_crc32c(crc));
  return compress_zeros(std::string(header, sizeof header), length, footer, gzip);
}

TEST_CASE("a GZIP TFRecord expanding 1000x past max_record_bytes is resource_exhausted",
          "[reliability][tfrecord]") {
  const std::uint64_t length = std::uint64_t{64} << 20;
  const std::string bomb = compressed_zero_record(length, true);
  REQUIRE(length / bomb.size() >= 1000);
  spit("bomb.tfrecord.gz", bomb);
  const auto read_with = [](std::uint64_t ceiling) {
    tf::io::TFRecordReader r("bomb.tfrecord.gz", {.compression = tf::io::Compression::gzip,
                                                  .max_record_bytes = ceiling});
    std::string record;
    while (r.read(record)) {
    }
  };
  const double growth = peak_growth_mib<tf::resource_exhausted>(
      [&] { read_with(std::uint64_t{8} << 20); },
      "bomb.tfrecord.gz: record at byte offset 0 of the decompressed GZIP stream is 67108864 "
      "bytes long, more than max_record_bytes (8388608)");
  CHECK(growth < 24.0);  // the ceiling plus the read buffer, with room for the allocator
  // The default ceiling (2 GiB) reads the same file: a large record is not an error in itself.
  tf::io::TFRecordReader r("bomb.tfrecord.gz", {.compression = tf::io::Compression::gzip});
  std::string record;
  REQUIRE(r.read(record));
  CHECK(record.size() == length);
  CHECK(std::all_of(record.begin(), record.end(), [](char c) { return c == 0; }));
}

TEST_CASE(
    "a TFRecord length of 2^63 or 2^40 is data_loss with file and offset and allocates nothing",
    "[reliability][tfrecord]") {
  for (const std::uint64_t claimed : {std::uint64_t{1} << 63, std::uint64_t{1} << 40}) {
    std::string file;
    tf::io::append_tfrecord(file, "first");
    char header[tf::io::tfrecord_header_size];
    tf::io::tfrecord_header(claimed, header);
    file.append(header, sizeof header);
    file += "only a few bytes follow";
    spit("huge_length.tfrecord", file);
    const double growth = peak_growth_mib<tf::data_loss>(
        [] {
          tf::io::TFRecordReader r("huge_length.tfrecord");
          std::string record;
          while (r.read(record)) {
          }
        },
        "huge_length.tfrecord: truncated record at byte offset 21");
    CHECK(growth < 8.0);  // the reader grows a record from 1 MiB, as bytes arrive
    // The same record inside a ZLIB stream.
    spit("huge_length.tfrecord.z", compress_zeros(file, 0, "", false));
    CHECK_THROWS_AS(
        [] {
          tf::io::TFRecordReader r("huge_length.tfrecord.z",
                                   {.compression = tf::io::Compression::zlib});
          std::string record;
          while (r.read(record)) {
          }
        }(),
        tf::data_loss);
  }
}

// A JPEG whose SOF header is patched to declare `height` x `width`.
std::string jpeg_declaring(std::uint16_t height, std::uint16_t width) {
  auto small = tf::Tensor<std::uint8_t, 3>::uninitialized({16, 16, 3});
  std::fill_n(small.mutable_data(), small.size(), std::uint8_t{128});
  std::string bytes = tf::image::encode_jpeg(small).item();
  const auto sof = bytes.find("\xFF\xC0");  // baseline SOF0: FF C0, length, precision, H, W
  REQUIRE(sof != std::string::npos);
  bytes[sof + 5] = static_cast<char>(height >> 8);
  bytes[sof + 6] = static_cast<char>(height & 0xFF);
  bytes[sof + 7] = static_cast<char>(width >> 8);
  bytes[sof + 8] = static_cast<char>(width & 0xFF);
  return bytes;
}

TEST_CASE("a JPEG declaring 65500x65500 is resource_exhausted before allocating",
          "[reliability][image]") {
  const std::string huge = jpeg_declaring(65500, 65500);
  const double growth = peak_growth_mib<tf::resource_exhausted>(
      [&] { (void)tf::image::decode_jpeg(huge); },
      "tf::image::decode_jpeg: the header declares a 65500x65500x3 image, more than "
      "max_decoded_bytes (1073741824)");
  CHECK(growth < 8.0);
  // Past libjpeg's own limit (65500) the error is libjpeg's, still typed.
  CHECK_THROWS_AS(tf::image::decode_jpeg(jpeg_declaring(65535, 65535)), tf::invalid_argument);
  // Within the ceiling, a header claiming far more blocks than the file can hold is rejected
  // before the image is allocated (TensorFlow: "Invalid JPEG data or crop window").
  const std::string liar = jpeg_declaring(8000, 8000);
  const double liar_growth = peak_growth_mib<tf::invalid_argument>(
      [&] { (void)tf::image::decode_jpeg(liar); }, "8000x8000");
  CHECK(liar_growth < 8.0);
  // A lowered ceiling applies to honest images too.
  CHECK_THROWS_AS(tf::image::decode_jpeg(jpeg_declaring(16, 16), {.max_decoded_bytes = 700}),
                  tf::resource_exhausted);
  CHECK(tf::image::decode_jpeg(jpeg_declaring(16, 16), {.max_decoded_bytes = 768}).size() == 768);
}

// A grey PNG of `height` x `width` zero pixels, its IDAT deflated in pieces.
std::string zero_png(std::uint32_t height, std::uint32_t width) {
  auto chunk = [](const std::string& type, const std::string& data) {
    std::string out;
    for (int shift : {24, 16, 8, 0}) {
      out += static_cast<char>((data.size() >> shift) & 0xFF);
    }
    out += type + data;
    const auto* typed = reinterpret_cast<const Bytef*>(out.data() + 4);
    const uLong crc = crc32(0, typed, static_cast<uInt>(out.size() - 4));
    for (int shift : {24, 16, 8, 0}) {
      out += static_cast<char>((crc >> shift) & 0xFF);
    }
    return out;
  };
  std::string ihdr;
  for (std::uint32_t v : {width, height}) {
    for (int shift : {24, 16, 8, 0}) {
      ihdr += static_cast<char>((v >> shift) & 0xFF);
    }
  }
  ihdr += std::string("\x08\x00\x00\x00\x00", 5);  // 8-bit grey, deflate, no filter, no interlace
  // every row is a filter byte (0) and `width` zero pixels: all zeros
  const std::string idat =
      compress_zeros("", static_cast<std::uint64_t>(height) * (width + 1), "", false);
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("IDAT", idat) +
         chunk("IEND", "");
}

TEST_CASE("a PNG bomb stops at max_decoded_bytes and a PNG declaring 10^5 x 10^5 at once",
          "[reliability][image]") {
  const std::string bomb = zero_png(4096, 4096);  // 16 MiB of pixels
  REQUIRE((std::size_t{4096} * 4096) / bomb.size() >= 500);
  const double growth = peak_growth_mib<tf::resource_exhausted>(
      [&] { (void)tf::image::decode_png(bomb, {.max_decoded_bytes = std::size_t{1} << 20}); },
      "tf::image::decode_png: the header declares a 4096x4096x1 image, more than "
      "max_decoded_bytes (1048576)");
  CHECK(growth < 8.0);
  const auto image = tf::image::decode_png(bomb);  // within the default ceiling: decodes
  CHECK(image.shape() == tf::Shape{4096, 4096, 1});
  CHECK(std::all_of(image.data(), image.data() + image.size(), [](auto v) { return v == 0; }));

  const std::string huge = zero_png(1, 1).substr(0, 8) +  // signature, then a lying IHDR
                           zero_png(100000, 100000).substr(8, 25);
  CHECK_THROWS_MATCHES(tf::image::decode_png(huge + zero_png(1, 1).substr(33)),
                       tf::resource_exhausted,
                       Catch::Matchers::Message(
                           "tf::image::decode_png: the header declares a 100000x100000x1 image, "
                           "more than max_decoded_bytes (1073741824)"));
}

TEST_CASE("an IDX gzip bomb and an IDX header overflowing int64 are typed errors",
          "[reliability][idx]") {
  namespace idx = tf::keras::datasets::idx;
  const std::string header("\x00\x00\x08\x03\x00\x00\x10\x00\x00\x00\x00\x1c\x00\x00\x00\x1c", 16);
  const std::string gz = compress_zeros(header, std::uint64_t{64} << 20, "", true);
  spit("bomb-images-idx3-ubyte.gz", gz);
  const double growth = peak_growth_mib<tf::resource_exhausted>(
      [] { (void)idx::read_gzip("bomb-images-idx3-ubyte.gz", std::size_t{4} << 20); },
      "bomb-images-idx3-ubyte.gz: decompresses to more than 4194304 bytes");
  CHECK(growth < 16.0);
  // 2^32-1 images of (2^32-1) x 0 pixels: no pixels, but a shape no tensor can have.
  const std::string liar("\x00\x00\x08\x03\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00", 16);
  const std::vector<std::uint8_t> bytes(liar.begin(), liar.end());
  CHECK_THROWS_WITH(idx::decode_images(bytes, "liar"), Contains("liar: header says"));
  // truncated gzip data names the file
  spit("cut.gz", gz.substr(0, gz.size() / 2));
  CHECK_THROWS_AS(idx::read_gzip("cut.gz"), tf::data_loss);
  CHECK_THROWS_WITH(idx::read_gzip("cut.gz"),
                    Catch::Matchers::StartsWith("tf::keras::datasets: cut.gz: gzip data ends "
                                                "early"));
}

TEST_CASE("a tensor bundle entry claiming 2^40 bytes is data_loss and allocates nothing",
          "[reliability][bundle]") {
  // A real bundle, then its index rewritten with the tensor's shape and size scaled up 2^38x.
  {
    tf::train::BundleWriter w("huge_entry");
    w.add("w", tf::AnyTensor(tf::constant<float>({1.0f, 2.0f, 3.0f, 4.0f})));
    w.finish();
  }
  // The index rewritten by hand: "w" claims 2^38 floats (2^40 bytes) in a 16-byte data file.
  namespace wire = tf::detail::wire;
  std::string header;
  wire::Writer h(header);
  h.int32_field(1, 1);
  h.message_field(3, [](wire::Writer& v) { v.int32_field(1, 1); });
  std::string entry;
  wire::Writer e(entry);
  e.int32_field(1, static_cast<std::int32_t>(tf::DType::float32));
  e.bytes_field(2, tf::train::detail_bundle::encode_shape(tf::Shape{std::int64_t{1} << 38}));
  e.int64_field_if_nonzero(5, std::int64_t{1} << 40);
  e.fixed32_field(6, 0);
  tf::detail::sstable::TableBuilder table;
  table.add("", header);
  table.add("w", entry);
  spit("huge_entry.index", table.finish());
  tf::train::CheckpointReader reader("huge_entry");
  CHECK(reader.info("w").shape == tf::Shape{std::int64_t{1} << 38});
  const double growth = peak_growth_mib<tf::data_loss>(
      [&] { (void)reader.get_tensor("w"); },
      "huge_entry.data-00000-of-00001' is shorter than the index says: key 'w' needs bytes "
      "0..1099511627776");
  CHECK(growth < 8.0);
}

}  // namespace test_reliability_hostile_input
