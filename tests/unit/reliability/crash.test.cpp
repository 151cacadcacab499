// Killed processes: a child saves with CheckpointManager (max_to_keep 3), or writes a TFRecord
// or event file in a loop, and is killed with SIGKILL at random moments (200 saves, 50 files
// of each kind). After each kill the checkpoint that latest_checkpoint names restores
// bit-exactly, and the next complete save leaves no temporaries and keeps max_to_keep; a
// TFRecord or event file cut anywhere reads back as a prefix of what was written
// (docs/reliability.md).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/io/tfrecord_reader.hpp>
#include <tapeflow/io/tfrecord_writer.hpp>
#include <tapeflow/ops/state/variable.hpp>
#include <tapeflow/summary/event_reader.hpp>
#include <tapeflow/summary/scalar.hpp>
#include <tapeflow/summary/writer.hpp>
#include <tapeflow/train/checkpoint.hpp>
#include <tapeflow/train/checkpoint_manager.hpp>

#include "kill_at_random.hpp"

namespace test_reliability_crash {
namespace tf = tapeflow;
namespace fs = std::filesystem;
using tapeflow_test::kill_at_random;

constexpr int kills = 200;

struct Model {
  // every element holds the save number of the checkpoint it was saved in
  tf::Variable<float, 2> a{tf::zeros<float>({64, 64})};
  tf::Variable<std::int64_t, 1> b{tf::zeros<std::int64_t>({100})};
  tf::train::Checkpoint ckpt{{{"a", a}, {"b", b}}};

  // Restores `dir`'s latest checkpoint, if any; returns its save number (0 without one).
  std::int64_t resume(const fs::path& dir) {
    if (const auto latest = tf::train::latest_checkpoint(dir.string()); !latest.empty()) {
      ckpt.restore(latest).assert_consumed();
    }
    return ckpt.save_counter().value().item();
  }
  void fill(std::int64_t n) {
    a.assign(tf::fill<float>({64, 64}, static_cast<float>(n)));
    b.assign(tf::fill<std::int64_t>({100}, n));
  }
};

int count_with(const fs::path& dir, const std::string& part) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    n += e.path().filename().string().find(part) != std::string::npos ? 1 : 0;
  }
  return n;
}

TEST_CASE("SIGKILL during CheckpointManager saves at 200 random moments",
          "[reliability][checkpoint][crash]") {
  const fs::path dir = "kill_manager";
  fs::remove_all(dir);
  std::mt19937 rng(2026);
  int verified = 0;
  for (int round = 0; round < kills; ++round) {
    kill_at_random(rng, [&] {
      Model m;
      tf::train::CheckpointManager manager(m.ckpt, dir.string(), {.max_to_keep = 3});
      for (std::int64_t n = m.resume(dir) + 1;; ++n) {
        m.fill(n);
        manager.save();
      }
    });
    Model m;
    const std::int64_t n = m.resume(dir);
    if (n == 0) {
      continue;  // killed before the first save completed
    }
    // bit-exact: every element is the save number of the checkpoint latest_checkpoint names
    REQUIRE(tf::train::latest_checkpoint(dir.string()) ==
            (dir / "ckpt-").string() + std::to_string(n));
    const float* a = m.a.value().data();
    const std::int64_t* b = m.b.value().data();
    REQUIRE(std::all_of(a, a + 4096, [&](float v) { return v == static_cast<float>(n); }));
    REQUIRE(std::all_of(b, b + 100, [&](std::int64_t v) { return v == n; }));
    ++verified;
    if (round % 20 == 19) {
      // the next complete save sweeps what killed saves left
      tf::train::CheckpointManager manager(m.ckpt, dir.string(), {.max_to_keep = 3});
      m.fill(n + 1);
      manager.save();
      CHECK(count_with(dir, ".tempstate") == 0);
      CHECK(count_with(dir, ".index") <= 3 + 1);  // kept ones, plus one a kill left unrecorded
    }
  }
  INFO("checkpoints verified after " << kills << " kills: " << verified);
  CHECK(verified > kills * 3 / 4);
}

TEST_CASE("SIGKILL while writing a TFRecord file leaves a readable prefix",
          "[reliability][tfrecord][crash]") {
  fs::remove_all("kill_records");
  fs::create_directories("kill_records");
  std::mt19937 rng(7);
  int records_seen = 0;
  for (int round = 0; round < kills / 4; ++round) {
    const std::string path = "kill_records/r" + std::to_string(round) + ".tfrecord";
    kill_at_random(rng, [&] {
      tf::io::TFRecordWriter writer(path);
      for (std::int64_t i = 0;; ++i) {
        writer.write(std::string(static_cast<std::size_t>(i % 1000), static_cast<char>(i)));
        if (i % 64 == 0) {
          writer.flush();
        }
      }
    });
    if (!fs::exists(path)) {
      continue;  // killed before the file was created
    }
    // a cut tail is data_loss "truncated"; what precedes it is exactly what was written
    tf::io::TFRecordReader reader(path, {.skip_corrupt = true});
    std::string record;
    for (std::int64_t i = 0; reader.read(record); ++i) {
      REQUIRE(record == std::string(static_cast<std::size_t>(i % 1000), static_cast<char>(i)));
      ++records_seen;
    }
    CHECK(reader.corrupt_records_skipped() <= 1);
  }
  CHECK(records_seen > 0);
}

TEST_CASE("SIGKILL while a summary writer flushes leaves a readable event file",
          "[reliability][summary][crash]") {
  fs::remove_all("kill_logs");
  std::mt19937 rng(11);
  int events_seen = 0;
  for (int round = 0; round < kills / 4; ++round) {
    const fs::path dir = fs::path("kill_logs") / std::to_string(round);
    kill_at_random(rng, [&] {
      auto writer = tf::summary::create_file_writer(dir, {.max_queue = 4});
      auto scope = writer.as_default();
      for (std::int64_t step = 0;; ++step) {
        tf::summary::scalar("loss", static_cast<double>(step), step);
        if (step % 16 == 0) {
          writer.flush();
        }
      }
    });
    if (!fs::exists(dir)) {
      continue;
    }
    for (const auto& file : fs::directory_iterator(dir)) {
      // a record cut by the kill is dropped (as TensorBoard does); the rest is the run, in order
      const auto events = tf::summary::summary_iterator(file.path());
      for (std::size_t i = 0; i < events.size(); ++i) {
        if (i == 0) {
          REQUIRE(events[0].file_version == "brain.Event:2");
        } else {
          REQUIRE(events[i].step == static_cast<std::int64_t>(i) - 1);
          ++events_seen;
        }
      }
    }
  }
  CHECK(events_seen > 0);
}

}  // namespace test_reliability_crash
