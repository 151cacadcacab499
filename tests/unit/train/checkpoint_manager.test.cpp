// tf::train::CheckpointManager: numbering, max_to_keep with file deletion, the state file,
// reloading an existing directory, keep_checkpoint_every_n_hours.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include <tapeflow/core.hpp>
#include <tapeflow/train.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_train_checkpoint_manager {

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
int count_files(const std::string& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("manager keeps the last max_to_keep and deletes older files", "[train][manager]") {
  fs::remove_all("mgr");
  // [snippet:manager]
  tf::Variable<float, 1> v(tf::constant<float>({0, 0}));
  tf::train::Checkpoint ckpt({{"model", v}});
  tf::train::CheckpointManager manager(ckpt, "./mgr",
                                       {.checkpoint_name = "model.ckpt", .max_to_keep = 3});
  REQUIRE(manager.latest_checkpoint().empty());
  for (int step = 100; step <= 600; step += 100) {
    v.assign(tf::fill<float>({2}, float(step)));
    REQUIRE(manager.save({.checkpoint_number = step}) ==
            "./mgr/model.ckpt-" + std::to_string(step));
  }
  REQUIRE(manager.checkpoints() == std::vector<std::string>{"./mgr/model.ckpt-400",
                                                            "./mgr/model.ckpt-500",
                                                            "./mgr/model.ckpt-600"});
  REQUIRE(manager.latest_checkpoint() == "./mgr/model.ckpt-600");
  // [snippet:manager]
  REQUIRE(tf::train::latest_checkpoint("./mgr") == "./mgr/model.ckpt-600");
  REQUIRE(!fs::exists("mgr/model.ckpt-300.index"));
  REQUIRE(!fs::exists("mgr/model.ckpt-300.data-00000-of-00001"));
  REQUIRE(fs::exists("mgr/model.ckpt-400.data-00000-of-00001"));
  REQUIRE(count_files("mgr") == 7);  // 3 x (index + data) + checkpoint
  REQUIRE(ckpt.save_counter().value().item() == 6);

  const std::string state = slurp("mgr/checkpoint");
  REQUIRE(state.rfind("model_checkpoint_path: \"model.ckpt-600\"\n"
                      "all_model_checkpoint_paths: \"model.ckpt-400\"\n"
                      "all_model_checkpoint_paths: \"model.ckpt-500\"\n"
                      "all_model_checkpoint_paths: \"model.ckpt-600\"\n"
                      "all_model_checkpoint_timestamps: ",
                      0) == 0);
  REQUIRE(state.find("last_preserved_timestamp: ") != std::string::npos);
  auto st = tf::train::get_checkpoint_state("./mgr");
  REQUIRE(st);
  REQUIRE(st->all_model_checkpoint_timestamps.size() == 3);
  REQUIRE(st->all_model_checkpoint_timestamps[0] <= st->all_model_checkpoint_timestamps[2]);

  SECTION("a new manager on the directory picks the list up and keeps counting") {
    tf::train::CheckpointManager again(ckpt, "./mgr",
                                       {.checkpoint_name = "model.ckpt", .max_to_keep = 3});
    REQUIRE(again.checkpoints().size() == 3);
    REQUIRE(again.save() == "./mgr/model.ckpt-7");  // save_counter 7
    REQUIRE(!fs::exists("mgr/model.ckpt-400.index"));
    REQUIRE(again.checkpoints().front() == "./mgr/model.ckpt-500");
  }
  SECTION("restore the latest") {
    tf::Variable<float, 1> w(tf::zeros<float>({2}));
    tf::train::Checkpoint back({{"model", w}});
    back.restore(manager.latest_checkpoint()).assert_consumed();
    REQUIRE(w.value().data()[1] == 600.0f);
  }
}

TEST_CASE("manager numbering defaults to save_counter, max_to_keep unset keeps all",
          "[train][manager]") {
  fs::remove_all("mgr_all");
  tf::Variable<float, 0> v(1.0f);
  tf::train::Checkpoint ckpt({{"v", v}});
  tf::train::CheckpointManager manager(ckpt, "mgr_all");
  for (int i = 1; i <= 4; ++i) {
    REQUIRE(manager.save() == "mgr_all/ckpt-" + std::to_string(i));
  }
  REQUIRE(manager.checkpoints().size() == 4);
  REQUIRE(fs::exists("mgr_all/ckpt-1.index"));
  // re-saving an existing number moves it to the end
  manager.save({.checkpoint_number = 2});
  REQUIRE(manager.checkpoints().back() == "mgr_all/ckpt-2");
  REQUIRE(manager.checkpoints().size() == 4);
}

TEST_CASE("keep_checkpoint_every_n_hours preserves some files outside the list",
          "[train][manager]") {
  // Which checkpoints are preserved depends only on their recorded save times, so the test sets
  // them in the state file (as a run saving every 100 s would have left them) instead of
  // sleeping: nothing here depends on how fast the machine is.
  fs::remove_all("mgr_hours");
  tf::Variable<float, 0> v(1.0f);
  tf::train::Checkpoint ckpt({{"v", v}});
  {
    tf::train::CheckpointManager writer(ckpt, "mgr_hours", {.checkpoint_name = "ckpt"});
    for (int i = 0; i < 6; ++i) {
      writer.save();
    }
  }
  auto state = tf::train::get_checkpoint_state("mgr_hours");
  REQUIRE(state);
  REQUIRE(state->all_model_checkpoint_paths.size() == 6);
  double const now = tf::train::detail_state::now_seconds();
  state->all_model_checkpoint_timestamps.clear();
  for (int i = 0; i < 6; ++i) {
    state->all_model_checkpoint_timestamps.push_back(now - 1000.0 + 100.0 * i);
  }
  state->last_preserved_timestamp = now - 2000.0;
  tf::train::detail_state::write_state("mgr_hours", *state);

  // One every 250 s: ckpt-1 (1000 s after the last preserved one), then ckpt-4 (300 s after
  // ckpt-1); ckpt-2, -3, -5 and -6 are deleted as max_to_keep = 1 would.
  tf::train::CheckpointManager manager(
      ckpt, "mgr_hours",
      {.checkpoint_name = "ckpt", .max_to_keep = 1, .keep_checkpoint_every_n_hours = 250.0 / 3600});
  REQUIRE(manager.checkpoints().size() == 6);
  manager.save();
  REQUIRE(manager.checkpoints() == std::vector<std::string>{"mgr_hours/ckpt-7"});
  std::vector<int> kept;
  for (int i = 1; i <= 6; ++i) {
    if (fs::exists("mgr_hours/ckpt-" + std::to_string(i) + ".index")) {
      kept.push_back(i);
    }
  }
  CHECK(kept == std::vector<int>{1, 4});
  // The state file remembers the last preserved time, so a later run goes on from it.
  auto after = tf::train::get_checkpoint_state("mgr_hours");
  REQUIRE(after);
  REQUIRE(after->last_preserved_timestamp);
  CHECK(*after->last_preserved_timestamp == Approx(now - 700.0));
}

TEST_CASE("state file parsing", "[train][manager]") {
  auto st = tf::train::parse_checkpoint_state(
      "model_checkpoint_path: \"a\\\"b-2\"\n"
      "all_model_checkpoint_paths: \"a-1\"\n"
      "all_model_checkpoint_paths: \"/abs/a-2\"\n"
      "all_model_checkpoint_timestamps: 1700000000.5\n"
      "last_preserved_timestamp: 1.7e9\n");
  REQUIRE(st);
  REQUIRE(st->model_checkpoint_path == "a\"b-2");
  REQUIRE(st->all_model_checkpoint_paths.size() == 2);
  REQUIRE(st->all_model_checkpoint_timestamps[0] == 1700000000.5);
  REQUIRE(*st->last_preserved_timestamp == 1.7e9);
  REQUIRE(tf::train::parse_checkpoint_state(tf::train::to_text(*st))->model_checkpoint_path ==
          "a\"b-2");
  REQUIRE(!tf::train::parse_checkpoint_state("garbage without colon\n"));
  REQUIRE(!tf::train::parse_checkpoint_state("all_model_checkpoint_paths: \"x\"\n"));
  fs::remove_all("state_dir");
  fs::create_directories("state_dir");
  std::ofstream("state_dir/checkpoint") << "model_checkpoint_path: \"m-1\"\n";
  REQUIRE(tf::train::latest_checkpoint("state_dir").empty());  // m-1.index does not exist
  std::ofstream("state_dir/m-1.index") << "x";
  REQUIRE(tf::train::latest_checkpoint("state_dir") == "state_dir/m-1");
}

TEST_CASE("a directory managed by TensorFlow's CheckpointManager is picked up",
          "[train][manager][golden]") {
  fs::remove_all("mgr_tf");
  fs::copy(std::string(TAPEFLOW_TEST_DATA_DIR) + "/train/golden_manager", "mgr_tf");
  tf::Variable<float, 0> v(0.0f);
  tf::train::Checkpoint ckpt({{"v", v}});
  tf::train::CheckpointManager manager(ckpt, "mgr_tf", {.max_to_keep = 2});
  REQUIRE(manager.checkpoints() == std::vector<std::string>{"mgr_tf/ckpt-2", "mgr_tf/ckpt-3"});
  REQUIRE(manager.latest_checkpoint() == "mgr_tf/ckpt-3");
  ckpt.restore(manager.latest_checkpoint()).assert_consumed();
  REQUIRE(v.value().item() == 3.0f);
  REQUIRE(ckpt.save_counter().value().item() == 3);
  REQUIRE(manager.save() == "mgr_tf/ckpt-4");
  REQUIRE(!fs::exists("mgr_tf/ckpt-2.index"));
  REQUIRE(!fs::exists("mgr_tf/ckpt-2.data-00000-of-00001"));
  REQUIRE(fs::exists("mgr_tf/ckpt-3.index"));
  auto st = tf::train::get_checkpoint_state("mgr_tf");
  REQUIRE(st->all_model_checkpoint_paths ==
          std::vector<std::string>{"mgr_tf/ckpt-3", "mgr_tf/ckpt-4"});
  REQUIRE(st->last_preserved_timestamp);
}

}  // namespace test_train_checkpoint_manager
