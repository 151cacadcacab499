// tf::image against values computed by TensorFlow (tests/data/image/make_goldens.py).
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/function/function.hpp>
#include <tapeflow/image.hpp>
#include <tapeflow/io/files.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_image_image_ops {

namespace tf = tapeflow;

namespace {
struct Golden {
  std::vector<std::int64_t> dims;
  std::vector<double> values;
};
const std::map<std::string, Golden>& goldens() {
  static const std::map<std::string, Golden> g = [] {
    std::map<std::string, Golden> out;
    std::ifstream in(std::string(TAPEFLOW_TEST_DATA_DIR) + "/image/goldens.txt");
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream s(line);
      std::string name;
      int rank = 0;
      s >> name >> rank;
      Golden gd;
      std::int64_t n = 1;
      for (int i = 0; i < rank; ++i) {
        std::int64_t d = 0;
        s >> d;
        gd.dims.push_back(d);
        n *= d;
      }
      gd.values.resize(static_cast<std::size_t>(n));
      for (auto& v : gd.values) {
        s >> v;
      }
      out[name] = gd;
    }
    return out;
  }();
  return g;
}
tf::Tensor<std::uint8_t, 3> test_image(std::int64_t h, std::int64_t w, std::int64_t c) {
  auto t = tf::Tensor<std::uint8_t, 3>::uninitialized({h, w, c});
  auto* p = t.mutable_data();
  for (std::int64_t i = 0; i < h; ++i) {
    for (std::int64_t j = 0; j < w; ++j) {
      for (std::int64_t k = 0; k < c; ++k) {
        *p++ = static_cast<std::uint8_t>((i * 37 + j * 11 + k * 71) % 256);
      }
    }
  }
  return t;
}
template <class T, std::size_t R>
void check_against(const std::string& name, const tf::Tensor<T, R>& t, double tol) {
  INFO(name);
  REQUIRE(goldens().count(name) == 1);
  const auto& g = goldens().at(name);
  REQUIRE(g.dims.size() == R);
  for (std::size_t k = 0; k < R; ++k) {
    REQUIRE(t.dim(k) == g.dims[k]);
  }
  double worst = 0;
  for (std::size_t i = 0; i < g.values.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(t.data()[i]) - g.values[i]));
  }
  CHECK(worst <= tol);
}
}  // namespace

TEST_CASE("resize bilinear and nearest match TensorFlow", "[image]") {
  const auto img = test_image(5, 7, 3);
  for (auto [h, w] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 4}, {8, 11}, {5, 7}, {10, 3}}) {
    const std::string size = std::to_string(h) + "x" + std::to_string(w);
    check_against("bilinear_" + size, tf::image::resize(img, {h, w}), 1e-4);
    check_against(
        "nearest_" + size,
        tf::image::resize(img, {h, w}, {.method = tf::image::ResizeMethod::nearest_neighbor}), 0);
    check_against("nearest_" + size, tf::image::resize_nearest_neighbor(img, {h, w}), 0);
  }
  // batches resize image by image
  const auto batch = tf::image::resize(
      tf::Tensor<std::uint8_t, 4>(tf::detail::tensor_access::wrap<std::uint8_t, 4>(
          tf::detail::tensor_access::buffer(img), {1, 5, 7, 3}, img.id())),
      {3, 4});
  CHECK(batch.shape().to_string() == "(1, 3, 4, 3)");
  CHECK_THROWS_AS(tf::image::resize(img, {0, 4}), tf::invalid_argument);
}

TEST_CASE("rot90, flips and convert_image_dtype match TensorFlow", "[image]") {
  const auto img = test_image(5, 7, 3);
  for (int k = 0; k < 4; ++k) {
    check_against("rot90_k" + std::to_string(k), tf::image::rot90(img, k), 0);
  }
  check_against("rot90_k3", tf::image::rot90(img, -1), 0);
  check_against("flip_left_right", tf::image::flip_left_right(img), 0);
  check_against("flip_up_down", tf::image::flip_up_down(img), 0);
  check_against("u8_to_float", tf::image::convert_image_dtype<float>(img), 1e-7);
  auto f = tf::from_vector(std::vector<float>{0.0f, 0.25f, 0.5f, 0.999f, 1.0f, 0.0031f}, {2, 3, 1});
  check_against("float_to_u8", tf::image::convert_image_dtype<std::uint8_t>(f), 0);
  // out of range saturates instead of wrapping
  auto over = tf::constant<float>({2.0f, -1.0f});
  const auto sat = tf::image::convert_image_dtype<std::uint8_t>(over);
  CHECK(sat(0) == 255);
  CHECK(sat(1) == 0);
}

TEST_CASE("decode_jpeg and decode_png match TensorFlow's decoders", "[image][codec]") {
  const auto jpg = tf::io::read_file(std::string(TAPEFLOW_TEST_DATA_DIR) + "/image/tiny.jpg");
  const auto rgb = tf::io::decode_jpeg(jpg);
  check_against("tiny_jpg_decoded", rgb, 0);
  check_against("tiny_jpg_decoded_gray", tf::image::decode_jpeg(jpg, {.channels = 1}), 0);
  check_against("tiny_jpg_resized", tf::image::resize(rgb, {7, 9}), 1e-3);
  const auto png = tf::io::read_file(std::string(TAPEFLOW_TEST_DATA_DIR) + "/image/tiny.png");
  check_against("tiny_png_decoded", tf::io::decode_png(png), 0);
  // the bytes as a std::string (read by the caller) decode the same
  const std::string jpg_bytes = jpg.item(), png_bytes = png.item();
  check_against("tiny_jpg_decoded", tf::image::decode_jpeg(jpg_bytes), 0);
  check_against("tiny_png_decoded", tf::image::decode_png(png_bytes), 0);
  check_against("tiny_png_decoded", tf::io::decode_png(std::string_view(png_bytes)), 0);
}

TEST_CASE("encode_png round-trips, encode_jpeg is close, bad bytes throw", "[image][codec]") {
  for (std::int64_t c = 1; c <= 4; ++c) {
    const auto img = test_image(9, 13, c);
    const auto bytes = tf::image::encode_png(img);
    CHECK(bytes.item().substr(1, 3) == "PNG");
    const auto back = tf::image::decode_png(bytes);
    REQUIRE(back.dims() == img.dims());
    CHECK(back.numpy() == img.numpy());
    if (c == 3) {
      CHECK(tf::image::decode_png(bytes, {.channels = 4}).dim(2) == 4);
    }
  }
  // a smooth image survives JPEG at quality 95 within a few levels
  auto smooth = tf::Tensor<std::uint8_t, 3>::uninitialized({32, 32, 3});
  auto* p = smooth.mutable_data();
  for (int i = 0; i < 32; ++i) {
    for (int j = 0; j < 32; ++j) {
      for (int k = 0; k < 3; ++k) {
        *p++ = static_cast<std::uint8_t>(i * 4 + j * 2 + k * 10);
      }
    }
  }
  const auto jpg = tf::image::encode_jpeg(smooth, {.quality = 95});
  const auto dec = tf::image::decode_jpeg(jpg);
  REQUIRE(dec.dims() == smooth.dims());
  int worst = 0;
  for (std::int64_t i = 0; i < dec.num_elements(); ++i) {
    worst = std::max(worst, std::abs(int(dec.data()[i]) - int(smooth.data()[i])));
  }
  CHECK(worst <= 8);
  // write_file/read_file
  tf::io::write_file("x.jpg", jpg);
  CHECK(tf::io::read_file("x.jpg").item() == jpg.item());
  CHECK_THROWS_AS(tf::io::read_file("does/not/exist.jpg"), tf::not_found);
  // corrupt data never crashes
  CHECK_THROWS_AS(tf::image::decode_jpeg(std::string_view("not a jpeg")), tf::invalid_argument);
  CHECK_THROWS_AS(tf::image::decode_png(std::string_view("\x89PNG\r\n\x1a\nxx", 10)),
                  tf::invalid_argument);
  std::string truncated = jpg.item().substr(0, jpg.item().size() - 16);
  CHECK_THROWS_AS(tf::image::decode_jpeg(std::string_view(truncated)), tf::invalid_argument);
  CHECK(
      tf::image::decode_jpeg(std::string_view(truncated), {.try_recover_truncated = true}).dims() ==
      smooth.dims());
  CHECK_THROWS_AS(tf::image::decode_jpeg(jpg, {.channels = 2}), tf::invalid_argument);
}

TEST_CASE("image ops trace as TensorFlow's ops and codecs refuse symbolic input",
          "[image][function]") {
  const auto img = test_image(5, 7, 3);
  auto augment = tf::function([](const tf::Tensor<std::uint8_t, 3>& x) {
    auto turned = tf::image::flip_up_down(tf::image::rot90(tf::image::flip_left_right(x)));
    return tf::image::resize(tf::image::convert_image_dtype<float>(turned), {4, 6});
  });
  const auto traced = augment(img);
  const auto eager = tf::image::resize(
      tf::image::convert_image_dtype<float>(
          tf::image::flip_up_down(tf::image::rot90(tf::image::flip_left_right(img)))),
      {4, 6});
  CHECK(traced.numpy() == eager.numpy());
  const std::string text = augment.concrete_functions()[0]->to_string();
  CHECK_THAT(text, Catch::Contains("ReverseV2[axis=[1]](arg0)") &&
                       Catch::Contains("Transpose[perm=[1, 0, 2]]") &&
                       Catch::Contains("ReverseV2[axis=[0]]") && Catch::Contains("= Cast(") &&
                       Catch::Contains("ResizeBilinear[half_pixel_centers=true, size=[4, 6]]"));
  auto decode = tf::function(
      [](const tf::Tensor<std::string, 0>& bytes) { return tf::image::decode_png(bytes); });
  CHECK_THROWS_WITH(decode(tf::image::encode_png(img)),
                    Catch::Contains("tf::image::decode_png (DecodePng): inside a tf::function"));
  auto encode =
      tf::function([](const tf::Tensor<std::uint8_t, 3>& x) { return tf::image::encode_jpeg(x); });
  CHECK_THROWS_AS(encode(img), tf::unimplemented);
}

}  // namespace test_image_image_ops
