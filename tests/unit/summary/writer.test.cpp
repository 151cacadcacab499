// SummaryWriter: file naming, framing, defaults, flushing, threads, and reading every field
// back with our own reader.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/state/variable.hpp>
#include <tapeflow/summary.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_summary_writer {

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::current_path() / ("logs_" + name);
  fs::remove_all(dir);
  return dir;
}
float float_of(const std::string& content) {
  REQUIRE(content.size() == 4);
  float f = 0;
  std::memcpy(&f, content.data(), 4);
  return f;
}
}  // namespace

TEST_CASE("create_file_writer names and starts the file as TensorFlow does", "[summary]") {
  const auto dir = fresh_dir("naming");
  auto writer = tf::summary::create_file_writer(dir / "run1");
  const std::string name = writer.path().filename().string();
  CHECK(writer.path().parent_path() == dir / "run1");
  CHECK(name.rfind("events.out.tfevents.", 0) == 0);
  CHECK(name.size() > 3);
  CHECK(name.substr(name.size() - 3) == ".v2");
  CHECK(name.substr(20, 10).find_first_not_of("0123456789") == std::string::npos);  // %010d
  // The version record is on disk at once.
  auto events = tf::summary::summary_iterator(writer.path());
  REQUIRE(events.size() == 1);
  CHECK(events[0].file_version == "brain.Event:2");
  CHECK(events[0].source_writer == "tapeflow.summary");
  CHECK(events[0].wall_time == std::floor(events[0].wall_time));
  CHECK(events[0].step == 0);
  CHECK_FALSE(events[0].has_summary);
  writer.close();

  auto custom = tf::summary::create_file_writer(dir, {.filename_suffix = "train"});
  CHECK(custom.path().filename().string().substr(custom.path().filename().string().size() - 6) ==
        ".train");
}

TEST_CASE("scalar writes a rank-0 float32 tensor with the scalars plugin", "[summary]") {
  const auto dir = fresh_dir("scalar");
  auto writer = tf::summary::create_file_writer(dir);
  CHECK_FALSE(tf::summary::scalar("loss", 1.0, 0));  // no default writer yet
  {
    auto scope = writer.as_default();
    CHECK(tf::summary::scalar("loss", 0.5, 1));
    CHECK(tf::summary::scalar("int", 3, -2));
    CHECK(tf::summary::scalar("tensor", tf::constant<double>(0.25), 7));
    CHECK(tf::summary::scalar("described", 2.0f, 8, {.description = "a *note*"}));
    CHECK_THROWS_AS(tf::summary::scalar("bad", tf::constant<float>({1, 2}), 0),
                    tf::invalid_argument);
  }
  CHECK_FALSE(tf::summary::scalar("after", 1.0, 0));  // scope restored "no writer"
  writer.close();
  const auto events = tf::summary::summary_iterator(writer.path());
  REQUIRE(events.size() == 5);
  const std::pair<const char*, float> expected[] = {
      {"loss", 0.5f}, {"int", 3.0f}, {"tensor", 0.25f}, {"described", 2.0f}};
  const std::int64_t steps[] = {1, -2, 7, 8};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& e = events[i + 1];
    CHECK(e.step == steps[i]);
    CHECK(e.wall_time >= events[0].wall_time);
    CHECK(e.wall_time > 1.6e9);
    REQUIRE(e.values.size() == 1);
    const auto& v = e.values[0];
    CHECK(v.tag == expected[i].first);
    CHECK_FALSE(v.simple_value);
    REQUIRE(v.tensor);
    CHECK(v.tensor->dtype == 1);
    CHECK(v.tensor->shape.empty());
    CHECK(float_of(v.tensor->tensor_content) == expected[i].second);
    CHECK(v.has_metadata);
    CHECK(v.plugin_name == "scalars");
    CHECK(v.plugin_content.empty());
  }
  CHECK(events[4].values[0].summary_description == "a *note*");
}

TEST_CASE("default writer scopes nest and restore - default step", "[summary]") {
  const auto dir = fresh_dir("scopes");
  auto a = tf::summary::create_file_writer(dir / "a");
  auto b = tf::summary::create_file_writer(dir / "b");
  {
    auto sa = a.as_default(10);
    CHECK(tf::summary::experimental::get_step() == 10);
    tf::summary::scalar("x", 1.0);  // step 10
    {
      auto sb = b.as_default();
      tf::summary::experimental::set_step(20);
      tf::summary::scalar("x", 2.0);
    }
    CHECK(tf::summary::experimental::get_step() == 10);  // restored with the scope
    tf::summary::scalar("x", 3.0);
  }
  CHECK_FALSE(tf::summary::experimental::get_step());
  {
    auto sa = a.as_default();
    CHECK_THROWS_AS(tf::summary::scalar("x", 1.0), tf::invalid_argument);  // no step anywhere
  }
  a.close();
  b.close();
  auto ea = tf::summary::summary_iterator(a.path());
  auto eb = tf::summary::summary_iterator(b.path());
  REQUIRE(ea.size() == 3);
  REQUIRE(eb.size() == 2);
  CHECK(ea[1].step == 10);
  CHECK(ea[2].step == 10);
  CHECK(eb[1].step == 20);
  CHECK(float_of(ea[2].values[0].tensor->tensor_content) == 3.0f);
}

TEST_CASE("events reach the disk at max_queue, flush() and close()", "[summary]") {
  const auto dir = fresh_dir("flush");
  auto writer = tf::summary::create_file_writer(dir, {.max_queue = 1000, .flush_millis = 600000});
  auto scope = writer.as_default();
  for (int i = 0; i < 5; ++i) {
    tf::summary::scalar("s", i, i);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(tf::summary::summary_iterator(writer.path()).size() == 1);  // still queued
  writer.flush();
  CHECK(tf::summary::summary_iterator(writer.path()).size() == 6);

  auto small =
      tf::summary::create_file_writer(dir / "small", {.max_queue = 3, .flush_millis = 600000});
  {
    auto s = small.as_default();
    for (int i = 0; i < 4; ++i) {
      tf::summary::scalar("s", i, i);
    }
  }
  // More than max_queue pending wakes the writer thread without any flush call.
  std::size_t seen = 0;
  for (int attempt = 0; attempt < 200 && seen < 5; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = tf::summary::summary_iterator(small.path()).size();
  }
  CHECK(seen == 5);

  auto timed =
      tf::summary::create_file_writer(dir / "timed", {.max_queue = 1000, .flush_millis = 20});
  {
    auto s = timed.as_default();
    tf::summary::scalar("s", 1, 1);
  }
  seen = 0;
  for (int attempt = 0; attempt < 200 && seen < 2; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = tf::summary::summary_iterator(timed.path()).size();
  }
  CHECK(seen == 2);

  writer.close();
  writer.close();  // idempotent
  CHECK_THROWS_AS(tf::summary::scalar("s", 1, 1), tf::failed_precondition);
}

TEST_CASE("one writer from several threads keeps every event", "[summary]") {
  const auto dir = fresh_dir("threads");
  auto writer = tf::summary::create_file_writer(dir);
  constexpr int threads = 4;
  constexpr int per_thread = 2000;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto scope = writer.as_default();
      for (int i = 0; i < per_thread; ++i) {
        tf::summary::scalar("thread" + std::to_string(t), static_cast<float>(i), i);
      }
    });
  }
  for (auto& th : pool) {
    th.join();
  }
  writer.close();
  const auto events = tf::summary::summary_iterator(writer.path());
  REQUIRE(events.size() == 1 + threads * per_thread);
  std::vector<std::int64_t> next(threads, 0);
  for (std::size_t i = 1; i < events.size(); ++i) {
    const auto& v = events[i].values.at(0);
    const int t = v.tag.back() - '0';
    CHECK(events[i].step == next[static_cast<std::size_t>(t)]++);  // per-thread order kept
  }
}

TEST_CASE("image, histogram, text and audio read back field by field", "[summary]") {
  const auto dir = fresh_dir("kinds");
  auto writer = tf::summary::create_file_writer(dir);
  {
    auto scope = writer.as_default(3);
    auto batch = tf::zeros<std::uint8_t>({5, 2, 3, 3});
    CHECK(tf::summary::image("img", batch, {}, {.max_outputs = 2}));
    CHECK(tf::summary::histogram("h", tf::constant<float>({1, 2, 3, 4}), 4, {.buckets = 2}));
    CHECK(tf::summary::text("t", "**bold**"));
    CHECK(tf::summary::text("table", tf::constant({"a", "b"})));
    CHECK(tf::summary::audio("a", tf::zeros<float>({2, 10, 1}), 16000, 5, {.max_outputs = 1}));
    CHECK_THROWS_AS(tf::summary::image("bad", tf::zeros<float>({1, 2, 2, 5})),
                    tf::invalid_argument);
  }
  writer.close();
  const auto e = tf::summary::summary_iterator(writer.path());
  REQUIRE(e.size() == 6);
  const auto& img = e[1].values.at(0);
  CHECK(e[1].step == 3);
  CHECK(img.plugin_name == "images");
  CHECK(img.tensor->dtype == 7);
  CHECK(img.tensor->shape == std::vector<std::int64_t>{4});
  CHECK(img.tensor->string_val.at(0) == "3");  // width
  CHECK(img.tensor->string_val.at(1) == "2");  // height
  CHECK(img.tensor->string_val.at(2).substr(1, 3) == "PNG");

  const auto& h = e[2].values.at(0);
  CHECK(e[2].step == 4);
  CHECK(h.plugin_name == "histograms");
  CHECK(h.tensor->dtype == 2);
  CHECK(h.tensor->shape == std::vector<std::int64_t>{2, 3});
  std::vector<double> rows(6);
  REQUIRE(h.tensor->tensor_content.size() == 48);
  std::memcpy(rows.data(), h.tensor->tensor_content.data(), 48);
  CHECK(rows == std::vector<double>{1.0, 2.5, 2.0, 2.5, 4.0, 2.0});

  const auto& t = e[3].values.at(0);
  CHECK(t.plugin_name == "text");
  CHECK(t.tensor->shape.empty());
  CHECK(t.tensor->string_val == std::vector<std::string>{"**bold**"});
  CHECK(e[4].values.at(0).tensor->shape == std::vector<std::int64_t>{2});

  const auto& a = e[5].values.at(0);
  CHECK(a.plugin_name == "audio");
  CHECK(a.plugin_content == std::string("\x10\x0b", 2));
  CHECK(a.tensor->shape == std::vector<std::int64_t>{1, 2});
  REQUIRE(a.tensor->string_val.size() == 2);
  CHECK(a.tensor->string_val[0].size() == 44 + 20);
  CHECK(a.tensor->string_val[0].substr(0, 4) == "RIFF");
  CHECK(a.tensor->string_val[1].empty());
}

TEST_CASE("the reader reports corruption with the byte offset, and stops at a torn tail",
          "[summary]") {
  const auto dir = fresh_dir("corrupt");
  auto writer = tf::summary::create_file_writer(dir);
  {
    auto scope = writer.as_default();
    tf::summary::scalar("a", 1, 1);
    tf::summary::scalar("b", 2, 2);
  }
  writer.close();
  std::string bytes;
  {
    std::ifstream in(writer.path(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto records = tf::summary::read_records(writer.path());
  REQUIRE(records.size() == 3);
  const std::uint64_t second = records[1].first;
  auto write = [&](const std::string& content) {
    std::ofstream out(dir / "x.tfevents", std::ios::binary | std::ios::trunc);
    out << content;
  };
  write(bytes.substr(0, bytes.size() - 3));  // torn final record: not written yet
  CHECK(tf::summary::summary_iterator(dir / "x.tfevents").size() == 2);
  std::string bad = bytes;
  bad[second + 14] ^= 0x40;  // inside the second record's payload
  write(bad);
  try {
    (void)tf::summary::summary_iterator(dir / "x.tfevents");
    FAIL("no error");
  } catch (const tf::data_loss& e) {
    CHECK_THAT(e.what(), Catch::Contains("byte offset " + std::to_string(second)));
  }
  CHECK_THROWS_AS(tf::summary::summary_iterator(dir / "missing"), tf::not_found);
}

TEST_CASE("scalar of a Variable logs its current value", "[summary]") {
  const auto dir = fresh_dir("variable");
  auto writer = tf::summary::create_file_writer(dir);
  tf::Variable<float, 0> v(tf::constant<float>(1.5f));
  {
    auto scope = writer.as_default();
    CHECK(tf::summary::scalar("v", v, 1));
  }
  writer.close();
  const auto events = tf::summary::summary_iterator(writer.path());
  REQUIRE(events.size() == 2);
  CHECK(float_of(events[1].values.at(0).tensor->tensor_content) == 1.5f);
}

}  // namespace test_summary_writer
