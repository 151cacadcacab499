// TF_CONFIG's reader (distribute/detail/tf_config.hpp): the cluster and task TensorFlow's
// workers are given, and typed errors naming the offset for what is not TF_CONFIG. Its agreement
// with MPI's ranks is tested under mpirun (tests/mpi/multi_worker.cpp, case tf_config).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/errors.hpp>
#include <tapeflow/distribute/detail/tf_config.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_distribute_tf_config {

using Catch::Matchers::Contains;
using tapeflow::distribute::detail::parse_tf_config;

// The reader's error for `json`, checking that it is invalid_argument.
std::string error_of(const std::string& json) {
  try {
    (void)parse_tf_config(json);
  } catch (const tapeflow::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("TF_CONFIG gives the cluster's jobs and this task", "[distribute]") {
  const auto config = parse_tf_config(R"({
      "cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"]},
      "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc",
      "environment": {"nested": [1, -2.5e3, true, false, null, "s\"\\/"]}})");
  CHECK(config.cluster.at("chief") == std::vector<std::string>{"host0:2222"});
  CHECK(config.cluster.at("worker") == std::vector<std::string>{"host1:2222", "host2:2222"});
  CHECK(config.task_type == "worker");
  CHECK(config.task_index == 1);
  CHECK(parse_tf_config(R"({"task":{"index":0,"type":"chief"}})").cluster.empty());
}

TEST_CASE("what is not TF_CONFIG is invalid_argument naming the offset", "[distribute]") {
  CHECK_THAT(error_of(""), Contains("expected '{'"));
  CHECK_THAT(error_of(R"({"cluster": {}})"), Contains("no \"task\""));
  CHECK_THAT(error_of(R"({"task": {"type": "worker", "index": 1)"),
             Contains("expected '}' (at offset 38)"));
  CHECK_THAT(error_of(R"({"task": {"type": "worker", "index": "1"}})"),
             Contains("expected an integer"));
  CHECK_THAT(error_of(R"({"task": {"type": "worker", "index": 12345678901}})"),
             Contains("out of range"));
  CHECK_THAT(error_of(R"({"task": {"type": "w\u0041"}})"), Contains("unsupported escape"));
  CHECK_THAT(error_of(R"({"task": {"type": "worker"}} x)"), Contains("unexpected text"));
  CHECK_THAT(error_of(R"({"cluster": {"worker": "a:1"}})"), Contains("expected '['"));
  // Deep nesting is refused, not recursed into without bound.
  const std::string deep = R"({"x": )" + std::string(10000, '[') + std::string(10000, ']') + "}";
  CHECK_THAT(error_of(deep), Contains("nested too deeply"));
}

}  // namespace test_distribute_tf_config
