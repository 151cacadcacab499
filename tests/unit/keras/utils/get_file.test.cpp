// keras::utils::get_file finds dataset files: an explicit directory, $TAPEFLOW_DATASETS, the
// compiled-in default (the repository's data/ for tapeflow's own tests), and lists every path
// it tried when nothing is there.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include <tapeflow/keras/datasets.hpp>
#include <tapeflow/keras/utils/get_file.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_utils_get_file {

namespace tf = tapeflow;
namespace fs = std::filesystem;

namespace {
void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x";
}
// Sets (or unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      old_ = old;
    }
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};
// Runs in another working directory for one scope.
class ScopedCwd {
 public:
  explicit ScopedCwd(const fs::path& to) : old_(fs::current_path()) { fs::current_path(to); }
  ScopedCwd(const ScopedCwd&) = delete;
  ScopedCwd& operator=(const ScopedCwd&) = delete;
  ~ScopedCwd() { fs::current_path(old_); }

 private:
  fs::path old_;
};
}  // namespace

TEST_CASE("get_file in an explicit directory: <dir>/<fname>, then <dir>/<file name>",
          "[keras][get_file]") {
  const fs::path root = fs::current_path() / "explicit";
  fs::remove_all(root);
  touch(root / "text" / "a.txt");
  touch(root / "flat" / "b.txt");
  CHECK(tf::keras::utils::get_file("text/a.txt", {.cache_dir = root}) == root / "text" / "a.txt");
  CHECK(tf::keras::utils::get_file("text/b.txt", {.cache_dir = root / "flat"}) ==
        root / "flat" / "b.txt");
  // only there: not found lists exactly the two paths tried
  try {
    (void)tf::keras::utils::get_file("text/c.txt", {.cache_dir = root});
    FAIL("expected not_found");
  } catch (const tf::not_found& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("text/c.txt not found; tried:\n  " +
                                    (root / "text" / "c.txt").string() + "\n  " +
                                    (root / "c.txt").string()));
  }
}

TEST_CASE("get_file searches $TAPEFLOW_DATASETS before the compiled-in default",
          "[keras][get_file]") {
  const fs::path mine = fs::current_path() / "my_datasets";
  fs::remove_all(mine);
  touch(mine / "mnist" / "train-images-idx3-ubyte.gz");
  ScopedEnv env("TAPEFLOW_DATASETS", mine.c_str());
  CHECK(tf::keras::utils::get_file("mnist/train-images-idx3-ubyte.gz") ==
        mine / "mnist" / "train-images-idx3-ubyte.gz");
  const auto dirs = tf::keras::utils::dataset_dirs();
  REQUIRE(dirs.size() >= 2);
  CHECK(dirs[0] == mine);
#ifdef TAPEFLOW_DEFAULT_DATASETS_DIR
  CHECK(dirs[1] == fs::path(TAPEFLOW_DEFAULT_DATASETS_DIR));
#endif
}

#ifdef TAPEFLOW_DEFAULT_DATASETS_DIR
TEST_CASE("the compiled-in default finds the repository's data/ from any directory",
          "[keras][get_file]") {
  ScopedEnv env("TAPEFLOW_DATASETS", nullptr);
  ScopedEnv keras_home("KERAS_HOME", nullptr);
  ScopedCwd cwd("/");
  const auto text = tf::keras::utils::get_file("text/nietzsche.txt");
  CHECK(text == fs::path(TAPEFLOW_DEFAULT_DATASETS_DIR) / "text" / "nietzsche.txt");
  CHECK(tf::keras::datasets::mnist::load_data().y_test.num_elements() == 10000);
}
#endif

TEST_CASE("not found names every path tried, in search order", "[keras][get_file]") {
  const fs::path mine = fs::current_path() / "empty_datasets";
  fs::create_directories(mine);
  ScopedEnv env("TAPEFLOW_DATASETS", mine.c_str());
  ScopedEnv keras_home("KERAS_HOME", (fs::current_path() / "keras_home").c_str());
  try {
    (void)tf::keras::utils::get_file("nothing/here.bin");
    FAIL("expected not_found");
  } catch (const tf::not_found& e) {
    const std::string msg = e.what();
    const auto at = [&](const fs::path& p) { return msg.find("\n  " + p.string() + "\n"); };
    const auto env_at = at(mine / "nothing" / "here.bin");
    const auto keras_at =
        at(fs::current_path() / "keras_home" / "datasets" / "nothing" / "here.bin");
    const auto keras_flat_at = at(fs::current_path() / "keras_home" / "datasets" / "here.bin");
    const auto cwd_at = at(fs::current_path() / "data" / "nothing" / "here.bin");
    CHECK(env_at != std::string::npos);
    CHECK(keras_at != std::string::npos);
    CHECK(keras_flat_at != std::string::npos);
    CHECK(cwd_at != std::string::npos);
    CHECK(env_at < keras_at);
    CHECK(keras_at < cwd_at);
    CHECK(msg.find("TAPEFLOW_DATASETS") != std::string::npos);  // the hint
    // the last parent is the file system root, tried last
    CHECK(msg.rfind((fs::path("/") / "shared" / "data" / "nothing" / "here.bin").string()) >
          cwd_at);
  }
  // load_data says which dataset it was looking for
  CHECK_THROWS_WITH(tf::keras::datasets::fashion_mnist::load_data(mine),
                    Catch::Contains("fashion-mnist::load_data") &&
                        Catch::Contains((mine / "fashion-mnist").string()));
}

}  // namespace test_keras_utils_get_file
