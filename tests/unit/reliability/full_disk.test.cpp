// Full disks and read-only directories: each writer runs in a child process under a file-size
// limit (setrlimit(RLIMIT_FSIZE) with SIGXFSZ ignored, so a write past it fails with EFBIG),
// or as an unprivileged user. The
// child reports the error it got through a pipe. The parent then checks that the error is typed
// and names the path, and that what was on disk before is intact (docs/reliability.md).
#include <csignal>
#include <filesystem>
#include <functional>
#include <string>

#include <catch2/catch.hpp>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/io/tfrecord_writer.hpp>
#include <tapeflow/ops/state/variable.hpp>
#include <tapeflow/summary/event_reader.hpp>
#include <tapeflow/summary/scalar.hpp>
#include <tapeflow/summary/text.hpp>
#include <tapeflow/summary/writer.hpp>
#include <tapeflow/train/checkpoint.hpp>
#include <tapeflow/train/checkpoint_manager.hpp>

namespace test_reliability_full_disk {
namespace tf = tapeflow;
namespace fs = std::filesystem;

// Runs `body` in a child whose files may not grow past `limit` bytes. Returns "ok", or the
// typed error's TensorFlow code and message ("RESOURCE_EXHAUSTED: ..."), or "untyped: ..." for any
// other exception. The child allocates its own tensors and threads: nothing crosses the fork.
std::string run_with_file_limit(rlim_t limit, const std::function<void()>& body,
                                bool unprivileged = false) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit rl{limit, limit};
    setrlimit(RLIMIT_FSIZE, &rl);
    std::string result = "ok";
    // root writes into read-only directories: become nobody (65534) so permissions apply
    const bool dropped =
        !unprivileged || geteuid() != 0 || (setgid(65534) == 0 && setuid(65534) == 0);
    try {
      if (dropped) {
        body();
      } else {
        result = "cannot drop privileges";
      }
    } catch (const tf::error& e) {
      result = std::string(e.code()) + ": " + e.what();
    } catch (const std::exception& e) {
      result = std::string("untyped: ") + e.what();
    }
    const auto written = write(fds[1], result.data(), result.size());
    _exit(written == static_cast<ssize_t>(result.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string result;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) {
    result.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return result;
}

bool has_temporaries(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (name.find("tempstate") != std::string::npos || name.find("_temp") != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST_CASE("CheckpointManager on a full disk fails typed and keeps the previous checkpoint",
          "[reliability][checkpoint]") {
  const fs::path dir = "full_disk_manager";
  fs::remove_all(dir);
  auto save_filled = [&](float value) {
    tf::Variable<float, 2> w(tf::fill<float>({64, 64}, value));  // 16 KiB
    tf::train::Checkpoint ckpt({{"w", w}});
    if (const auto latest = tf::train::latest_checkpoint(dir.string()); !latest.empty()) {
      ckpt.restore(latest);
      w.assign(tf::fill<float>({64, 64}, value));
    }
    tf::train::CheckpointManager manager(ckpt, dir.string(), {.max_to_keep = 2});
    return manager.save();
  };
  REQUIRE(save_filled(1.0f) == (dir / "ckpt-1").string());

  // 4 KiB per file: the 16 KiB data file of the next save cannot be written.
  const std::string failure = run_with_file_limit(4096, [&] { save_filled(2.0f); });
  INFO(failure);
  CHECK(failure.rfind("RESOURCE_EXHAUSTED: ", 0) == 0);
  CHECK(failure.find((dir / "ckpt-2").string()) != std::string::npos);

  CHECK(tf::train::latest_checkpoint(dir.string()) == (dir / "ckpt-1").string());
  tf::Variable<float, 2> back(tf::zeros<float>({64, 64}));
  tf::train::Checkpoint restored({{"w", back}});
  restored.restore((dir / "ckpt-1").string()).assert_consumed();
  CHECK(back.value().data()[4095] == 1.0f);
  CHECK_FALSE(has_temporaries(dir));

  // With room again the next saves succeed and max_to_keep still holds.
  CHECK(save_filled(3.0f) == (dir / "ckpt-2").string());
  CHECK(save_filled(4.0f) == (dir / "ckpt-3").string());
  CHECK_FALSE(fs::exists(dir / "ckpt-1.index"));
  CHECK(fs::exists(dir / "ckpt-2.index"));
  CHECK_FALSE(has_temporaries(dir));
}

TEST_CASE("TFRecordWriter on a full disk raises resource_exhausted naming the file",
          "[reliability][tfrecord]") {
  fs::remove_all("full_disk_records");
  fs::create_directories("full_disk_records");
  for (const auto compression : {tf::io::Compression::none, tf::io::Compression::gzip}) {
    const std::string failure = run_with_file_limit(64 * 1024, [&] {
      tf::io::TFRecordWriter writer("full_disk_records/data.tfrecord",
                                    {.compression = compression, .compression_level = 0});
      const std::string record(1024, 'x');
      for (int i = 0; i < 256; ++i) {
        writer.write(record);
      }
      writer.close();
    });
    INFO(failure);
    CHECK(failure.rfind("RESOURCE_EXHAUSTED: ", 0) == 0);
    CHECK(failure.find("full_disk_records/data.tfrecord") != std::string::npos);
  }
}

TEST_CASE("a summary writer on a full disk reports data_loss naming the event file",
          "[reliability][summary]") {
  fs::remove_all("full_disk_logs");
  const std::string failure = run_with_file_limit(16 * 1024, [] {
    auto writer = tf::summary::create_file_writer("full_disk_logs", {.max_queue = 10});
    auto scope = writer.as_default();
    const std::string note(1024, 'n');
    for (int step = 0; step < 64; ++step) {
      tf::summary::text("note", note, step);
    }
    writer.flush();
  });
  INFO(failure);
  CHECK(failure.rfind("DATA_LOSS: ", 0) == 0);
  CHECK(failure.find("full_disk_logs/events.out.tfevents.") != std::string::npos);
  // What reached the disk before the limit is a readable prefix of the run.
  for (const auto& e : fs::directory_iterator("full_disk_logs")) {
    const auto events = tf::summary::summary_iterator(e.path());
    CHECK_FALSE(events.empty());
    CHECK(events.front().file_version == "brain.Event:2");
  }
}

TEST_CASE("writers into a read-only directory raise failed_precondition naming the path",
          "[reliability][checkpoint]") {
  const fs::path dir = "readonly_dir";
  if (fs::exists(dir)) {
    fs::permissions(dir, fs::perms::owner_all);
  }
  fs::remove_all(dir);
  {
    tf::Variable<float, 1> v(tf::constant<float>({1, 2}));
    tf::train::Checkpoint ckpt({{"v", v}});
    tf::train::CheckpointManager(ckpt, dir.string()).save();
  }
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                           fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const std::string failure = run_with_file_limit(
      RLIM_INFINITY,
      [&] {
        tf::Variable<float, 1> v(tf::constant<float>({3, 4}));
        tf::train::Checkpoint ckpt({{"v", v}});
        tf::train::CheckpointManager manager(ckpt, dir.string());
        ckpt.restore(tf::train::latest_checkpoint(dir.string())).assert_consumed();
        manager.save();
      },
      /*unprivileged=*/true);
  const std::string records = run_with_file_limit(
      RLIM_INFINITY, [&] { tf::io::TFRecordWriter((dir / "data.tfrecord").string()); }, true);
  fs::permissions(dir, fs::perms::owner_all);
  INFO(failure);
  CHECK(failure.rfind("FAILED_PRECONDITION: ", 0) == 0);
  CHECK(failure.find((dir / "ckpt-2").string()) != std::string::npos);
  INFO(records);
  CHECK(records.rfind("FAILED_PRECONDITION: ", 0) == 0);
  CHECK(records.find((dir / "data.tfrecord").string()) != std::string::npos);
  CHECK(tf::train::latest_checkpoint(dir.string()) == (dir / "ckpt-1").string());
  CHECK_FALSE(has_temporaries(dir));
}

TEST_CASE("CheckpointManager whose directory vanished between saves", "[reliability][checkpoint]") {
  const fs::path dir = "vanished_dir";
  fs::remove_all(dir);
  tf::Variable<float, 1> v(tf::constant<float>({1, 2}));
  tf::train::Checkpoint ckpt({{"v", v}});
  tf::train::CheckpointManager manager(ckpt, dir.string(), {.max_to_keep = 1});
  manager.save();
  fs::remove_all(dir);
  // TensorFlow recreates the directory (gfile.makedirs): so does tapeflow, and the new
  // checkpoint restores.
  const auto path = manager.save();
  CHECK(tf::train::latest_checkpoint(dir.string()) == path);
  tf::Variable<float, 1> back(tf::zeros<float>({2}));
  tf::train::Checkpoint restored({{"v", back}});
  restored.restore(path).assert_consumed();
  CHECK(back.value().data()[1] == 2.0f);
}

}  // namespace test_reliability_full_disk
