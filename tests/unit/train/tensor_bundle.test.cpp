// Tensor bundle V2: round trips for every dtype and rank, byte-level facts (header, footer,
// TF-identical index), TensorFlow-written golden files, and typed errors on corrupt input.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/core.hpp>
#include <tapeflow/train/tensor_bundle.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_train_tensor_bundle {

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}
const std::string golden = std::string(TAPEFLOW_TEST_DATA_DIR) + "/train/golden/ckpt-1";

template <class T, std::size_t R>
tf::Tensor<T, R> iota_tensor(std::array<std::int64_t, R> dims) {
  auto t = tf::Tensor<T, R>::uninitialized(dims);
  T* d = tf::detail::tensor_access::mutable_data(t);
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      d[i] = (i % 3) == 0;
    } else if constexpr (std::is_same_v<T, std::string>) {
      d[i] = std::string(static_cast<std::size_t>(i % 4), char('a' + i % 26));
    } else {
      d[i] = static_cast<T>(i * 3 - 5);
    }
  }
  return t;
}

template <class T, std::size_t R>
void check_same(const tf::AnyTensor& got, const tf::Tensor<T, R>& want) {
  REQUIRE(got.dtype() == tf::dtype_v<T>);
  REQUIRE(got.shape() == want.shape());
  auto g = got.as<T, R>();
  for (std::int64_t i = 0; i < want.num_elements(); ++i) {
    REQUIRE(g.data()[i] == want.data()[i]);
  }
}
}  // namespace

TEMPLATE_TEST_CASE("bundle round trip, every rank", "[train][bundle]", float, double, std::int32_t,
                   std::int64_t, std::uint8_t, bool, std::string) {
  fs::create_directories("bundle_rt");
  const std::string prefix = "bundle_rt/t";
  tf::train::BundleWriter w(prefix);
  auto t0 = iota_tensor<TestType, 0>({});
  auto t1 = iota_tensor<TestType, 1>({5});
  auto t2 = iota_tensor<TestType, 2>({3, 4});
  auto t3 = iota_tensor<TestType, 3>({2, 1, 3});
  auto t4 = iota_tensor<TestType, 4>({1, 2, 2, 2});
  auto e1 = iota_tensor<TestType, 2>({0, 3});  // empty
  w.add("r0", t0);
  w.add("r1", t1);
  w.add("r2", t2);
  w.add("r3", t3);
  w.add("r4", t4);
  w.add("empty", e1);
  w.finish();
  REQUIRE(fs::exists(prefix + ".index"));
  REQUIRE(fs::exists(prefix + ".data-00000-of-00001"));
  tf::train::CheckpointReader r(prefix);
  REQUIRE(r.keys() == std::vector<std::string>{"empty", "r0", "r1", "r2", "r3", "r4"});
  check_same(r.get_tensor("r0"), t0);
  check_same(r.get_tensor("r1"), t1);
  check_same(r.get_tensor("r2"), t2);
  check_same(r.get_tensor("r3"), t3);
  check_same(r.get_tensor("r4"), t4);
  check_same(r.get_tensor("empty"), e1);
}

TEST_CASE("bundle index bytes follow TensorFlow", "[train][bundle]") {
  fs::create_directories("bundle_bytes");
  tf::train::BundleWriter w("bundle_bytes/b");
  w.add("x", tf::AnyTensor(tf::constant<float>({1.0f, 2.0f})));
  w.finish();
  const std::string idx = slurp("bundle_bytes/b.index");
  REQUIRE(idx.size() > 48);
  // footer magic
  REQUIRE(idx.substr(idx.size() - 8) == std::string("\x57\xfb\x80\x8b\x24\x75\x47\xdb", 8));
  // header entry value 08 01 1a 02 08 01 right after the first entry's lengths (00 00 06)
  REQUIRE(idx.substr(0, 9) == std::string("\x00\x00\x06\x08\x01\x1a\x02\x08\x01", 9));
  // the data file is dense: 8 bytes
  REQUIRE(fs::file_size("bundle_bytes/b.data-00000-of-00001") == 8);
}

TEST_CASE("TensorFlow-written golden checkpoint reads exactly", "[train][bundle][golden]") {
  auto r = tf::train::load_checkpoint(std::string(TAPEFLOW_TEST_DATA_DIR) + "/train/golden");
  REQUIRE(r.prefix().size() >= 6);
  REQUIRE(r.prefix().substr(r.prefix().size() - 6) == "ckpt-1");
  auto f = r.get_tensor("model/f32/.ATTRIBUTES/VARIABLE_VALUE").as<float, 2>();
  REQUIRE(f.shape() == tf::Shape({2, 3}));
  for (int i = 0; i < 6; ++i) {
    REQUIRE(f.data()[i] == Approx(i * 0.5 - 1.0));
  }
  auto d = r.get_tensor("model/f64/.ATTRIBUTES/VARIABLE_VALUE").as<double, 1>();
  REQUIRE(d.data()[0] == 1.25);
  REQUIRE(d.data()[1] == -2.5);
  auto i32 = r.get_tensor("model/i32/.ATTRIBUTES/VARIABLE_VALUE").as<std::int32_t, 3>();
  REQUIRE(i32.shape() == tf::Shape({1, 2, 2}));
  REQUIRE(i32.data()[1] == -2);
  REQUIRE(r.get_tensor("model/i64/.ATTRIBUTES/VARIABLE_VALUE").as<std::int64_t, 0>().item() ==
          -1234567890123LL);
  auto u8 = r.get_tensor("model/u8/.ATTRIBUTES/VARIABLE_VALUE").as<std::uint8_t, 1>();
  REQUIRE(u8.data()[2] == 255);
  auto b = r.get_tensor("model/b/.ATTRIBUTES/VARIABLE_VALUE").as<bool, 1>();
  REQUIRE((b.data()[0] && !b.data()[1] && b.data()[2]));
  auto s = r.get_tensor("model/s/.ATTRIBUTES/VARIABLE_VALUE").as<std::string, 1>();
  REQUIRE(s.data()[0] == "alpha");
  REQUIRE(s.data()[1].empty());
  REQUIRE(s.data()[2] == "gamma delta");
  REQUIRE(r.has_tensor("model/a..b.Sc/.ATTRIBUTES/VARIABLE_VALUE"));
  REQUIRE(r.get_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE").as<std::int64_t, 0>().item() ==
          1);
  REQUIRE(r.info("model/inner/w/.ATTRIBUTES/VARIABLE_VALUE").shape == tf::Shape({1, 1}));
  REQUIRE(tf::train::list_variables(golden).size() == 11);
}

TEST_CASE("our table writer reproduces TensorFlow's index byte for byte",
          "[train][bundle][golden]") {
  const std::string tf_index = slurp(golden + ".index");
  tf::detail::sstable::TableReader reader(tf_index, golden + ".index");
  auto entries = reader.read_all();
  REQUIRE(entries.size() == 12);
  tf::detail::sstable::TableBuilder builder;
  for (const auto& [k, v] : entries) {
    builder.add(k, v);
  }
  REQUIRE(builder.finish() == tf_index);
}

TEST_CASE("a large index spans several blocks and reads back", "[train][bundle]") {
  tf::detail::sstable::TableBuilder builder;
  std::vector<std::pair<std::string, std::string>> want;
  for (int i = 0; i < 5000; ++i) {
    char key[32];
    std::snprintf(key, sizeof key, "layer_%06d/kernel", i);
    want.emplace_back(key, std::string(100 + i % 50, char('a' + i % 26)));
  }
  for (const auto& [k, v] : want) {
    builder.add(k, v);
  }
  const std::string bytes = builder.finish();
  REQUIRE(bytes.size() > 2 * tf::detail::sstable::block_size);
  tf::detail::sstable::TableReader reader(bytes, "memory");
  REQUIRE(reader.read_all() == want);
}

TEST_CASE("corrupt or missing bundles give typed errors naming key and file",
          "[train][bundle][errors]") {
  fs::create_directories("bundle_bad");
  const std::string prefix = "bundle_bad/c";
  {
    tf::train::BundleWriter w(prefix);
    w.add("alpha", tf::AnyTensor(tf::constant<float>({1.0f, 2.0f, 3.0f})));
    w.add("beta", tf::AnyTensor(tf::constant({"x", "yz"})));
    w.finish();
  }
  const std::string index = slurp(prefix + ".index");
  const std::string data = slurp(prefix + ".data-00000-of-00001");
  auto restore_files = [&] {
    spit(prefix + ".index", index);
    spit(prefix + ".data-00000-of-00001", data);
  };
  auto message_of = [&](auto&& f) -> std::string {
    try {
      f();
    } catch (const tf::error& e) {
      return e.what();
    }
    return "no error";
  };

  SECTION("missing index") {
    REQUIRE_THROWS_AS(tf::train::CheckpointReader("bundle_bad/nope"), tf::not_found);
    REQUIRE_THROWS_WITH(tf::train::CheckpointReader("bundle_bad/nope"),
                        Catch::Contains("bundle_bad/nope.index"));
  }
  SECTION("bad magic") {
    std::string bad = index;
    bad[bad.size() - 1] = '\x00';
    spit(prefix + ".index", bad);
    REQUIRE_THROWS_AS(tf::train::CheckpointReader(prefix), tf::data_loss);
    REQUIRE_THROWS_WITH(tf::train::CheckpointReader(prefix),
                        Catch::Contains("magic") && Catch::Contains("c.index"));
  }
  SECTION("bad block CRC") {
    std::string bad = index;
    bad[4] = static_cast<char>(bad[4] ^ 0x40);
    spit(prefix + ".index", bad);
    REQUIRE_THROWS_AS(tf::train::CheckpointReader(prefix), tf::data_loss);
    REQUIRE_THROWS_WITH(tf::train::CheckpointReader(prefix), Catch::Contains("checksum"));
  }
  SECTION("truncated index") {
    for (std::size_t n : {std::size_t(0), std::size_t(10), index.size() - 1}) {
      spit(prefix + ".index", index.substr(0, n));
      REQUIRE_THROWS_AS(tf::train::CheckpointReader(prefix), tf::data_loss);
    }
  }
  SECTION("data shorter than the index says") {
    spit(prefix + ".data-00000-of-00001", data.substr(0, 6));
    tf::train::CheckpointReader r(prefix);
    const std::string msg = message_of([&] { (void)r.get_tensor("alpha"); });
    REQUIRE(msg.find("alpha") != std::string::npos);
    REQUIRE(msg.find("c.data-00000-of-00001") != std::string::npos);
    REQUIRE_THROWS_AS(r.get_tensor("beta"), tf::data_loss);
  }
  SECTION("flipped data byte fails the tensor CRC") {
    std::string bad = data;
    bad[1] = static_cast<char>(bad[1] ^ 1);
    spit(prefix + ".data-00000-of-00001", bad);
    tf::train::CheckpointReader r(prefix);
    REQUIRE_THROWS_AS(r.get_tensor("alpha"), tf::data_loss);
    REQUIRE_THROWS_WITH(r.get_tensor("alpha"), Catch::Contains("alpha"));
    REQUIRE(r.get_tensor("beta").num_elements() == 2);
  }
  SECTION("missing data file") {
    fs::remove(prefix + ".data-00000-of-00001");
    tf::train::CheckpointReader r(prefix);
    REQUIRE_THROWS_AS(r.get_tensor("alpha"), tf::not_found);
  }
  SECTION("unknown key") {
    tf::train::CheckpointReader r(prefix);
    REQUIRE_THROWS_AS(r.get_tensor("gamma"), tf::not_found);
    REQUIRE_THROWS_WITH(r.get_tensor("gamma"), Catch::Contains("gamma"));
  }
  SECTION("every single-byte corruption and truncation of the index is caught or harmless") {
    for (std::size_t i = 0; i < index.size(); ++i) {
      std::string bad = index;
      bad[i] = static_cast<char>(bad[i] ^ 0x5A);
      try {
        tf::train::CheckpointReader r(prefix, bad);
        for (const auto& k : r.keys()) {
          (void)r.get_tensor(k);
        }
      } catch (const tf::error&) {
      }
      try {
        tf::train::CheckpointReader r(prefix, std::string_view(index).substr(0, i));
      } catch (const tf::error&) {
      }
    }
  }
  restore_files();
}

TEST_CASE("writer refuses bad keys and leaves no files on failure", "[train][bundle][errors]") {
  fs::create_directories("bundle_fail");
  {
    tf::train::BundleWriter w("bundle_fail/p");
    w.add("a", tf::AnyTensor(tf::constant<float>({1.0f})));
    REQUIRE_THROWS_AS(w.add("a", tf::AnyTensor(tf::constant<float>({1.0f}))), tf::invalid_argument);
    REQUIRE_THROWS_AS(w.add("", tf::AnyTensor(tf::constant<float>({1.0f}))), tf::invalid_argument);
  }  // abandoned: temporaries removed
  REQUIRE(fs::is_empty("bundle_fail"));
}

}  // namespace test_train_tensor_bundle
