#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/ops/state/variable.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_ops_variable {

namespace tf = tapeflow;

TEST_CASE("Variable assign, assign_add, assign_sub", "[ops][variable]") {
  // [snippet:variable]
  tf::Variable<float, 1> v(tf::constant<float>({1, 2, 3}), {.name = "v"});
  CHECK(v.name() == "v");
  CHECK(v.trainable());
  v.assign_add(tf::constant<float>({1, 1, 1}));
  CHECK(v.value().numpy() == std::vector<float>{2, 3, 4});
  v.assign_sub(tf::constant<float>({2, 2, 2}));
  CHECK(v.value().numpy() == std::vector<float>{0, 1, 2});
  v.assign(tf::constant<float>({5, 6, 7}));
  CHECK(v.value().numpy() == std::vector<float>{5, 6, 7});
  // [snippet:variable]
  CHECK_THROWS_WITH(v.assign(tf::constant<float>({1, 2})),
                    Catch::Contains("(2,)") && Catch::Contains("(3,)"));
}

TEST_CASE("reads are snapshots - copies are handles", "[ops][variable]") {
  tf::Variable<double, 0> v(1.0);
  auto before = v.value();
  auto alias = v;
  alias.assign_add(tf::constant(1.0));
  CHECK(v.value().item() == 2.0);
  CHECK(before.item() == 1.0);  // the old read is untouched
  CHECK(alias.same_as(v));
  CHECK(v.value().id() == v.id());
  tf::Variable<float, 0> frozen(0.0f, {.trainable = false});
  CHECK_FALSE(frozen.trainable());
  tf::Variable<float, 1> none;
  CHECK_THROWS_AS(none.value(), tf::failed_precondition);
}

TEST_CASE("writable_data updates in place and copies only when a snapshot is held",
          "[ops][variable]") {
  tf::Variable<float, 1> v(tf::constant<float>({1, 2}), {.name = "v"});
  const float* before = v.writable_data();
  v.writable_data()[0] = 10;  // nobody holds the value: same buffer
  CHECK(v.writable_data() == before);
  CHECK(v.value().numpy() == std::vector<float>{10, 2});
  auto snapshot = v.value();
  float* after = v.writable_data();  // a reader holds it: copy on write
  after[1] = 20;
  CHECK(after != snapshot.data());
  CHECK(snapshot.numpy() == std::vector<float>{10, 2});
  CHECK(v.value().numpy() == std::vector<float>{10, 20});
  CHECK(v.value().id() == v.id());
}

}  // namespace test_ops_variable
