// GraphDef export, trace_on/trace_export, and the XSpace profile.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/function/function.hpp>
#include <tapeflow/summary.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_summary_trace {

namespace tf = tapeflow;
namespace fs = std::filesystem;
namespace wire = tf::detail::wire;

namespace {

struct Node {
  std::string name, op;
  std::vector<std::string> inputs;
  std::map<std::string, std::string> attrs;  // key -> serialized AttrValue
};

std::vector<Node> parse_graph(std::string_view graph_def, std::int32_t* producer = nullptr) {
  std::vector<Node> nodes;
  wire::Reader r(graph_def, "GraphDef");
  while (auto tag = r.next()) {
    if (tag->field == 1) {
      auto n = r.message("NodeDef");
      Node node;
      while (auto t = n.next()) {
        if (t->field == 1) {
          node.name = std::string(n.bytes());
        } else if (t->field == 2) {
          node.op = std::string(n.bytes());
        } else if (t->field == 3) {
          node.inputs.emplace_back(n.bytes());
        } else if (t->field == 5) {
          auto entry = n.message("AttrEntry");
          std::string key, value;
          while (auto et = entry.next()) {
            if (et->field == 1) {
              key = std::string(entry.bytes());
            } else {
              value = std::string(entry.bytes());
            }
          }
          node.attrs[key] = value;
        } else {
          n.skip(*t);
        }
      }
      nodes.push_back(node);
    } else if (tag->field == 4) {
      auto v = r.message("VersionDef");
      while (auto vt = v.next()) {
        if (vt->field == 1 && producer != nullptr) {
          *producer = v.int32();
        } else {
          v.skip(*vt);
        }
      }
    } else {
      r.skip(*tag);
    }
  }
  return nodes;
}

/// The serialized AttrValue{list{shape{dims}}}.
std::string output_shapes(std::vector<std::int64_t> dims) {
  std::string shape;
  wire::Writer s(shape);
  for (auto d : dims) {
    s.message_field(2, [&](wire::Writer& dim) { dim.int64_field(1, d); });
  }
  std::string list;
  wire::Writer l(list);
  l.bytes_field(7, shape);
  std::string value;
  wire::Writer v(value);
  v.bytes_field(1, list);
  return value;
}

// [snippet:mlp_function]
auto mlp_function() {
  return tf::function([](const tf::Tensor<float, 2>& x, const tf::Tensor<float, 2>& w) {
    return tf::nn::relu(tf::matmul(x, w) + 1.0f);
  });
}
// [snippet:mlp_function]

}  // namespace

TEST_CASE("graph_def: args, constants, ops with dtype and shapes, return values",
          "[summary][graph]") {
  auto f = mlp_function();
  (void)f(tf::ones<float>({2, 3}), tf::ones<float>({3, 4}));
  const auto* fn = f.concrete_functions().at(0);
  std::int32_t producer = 0;
  const auto nodes = parse_graph(tf::summary::graph_def(*fn), &producer);
  CHECK(producer == tf::summary::graph_def_producer);
  std::map<std::string, Node> by_name;
  for (const auto& n : nodes) {
    CHECK(by_name.count(n.name) == 0);  // unique names
    by_name[n.name] = n;
  }
  REQUIRE(by_name.count("arg0"));
  CHECK(by_name["arg0"].op == "_Arg");
  CHECK(by_name["arg0"].attrs["T"] == std::string("\x30\x01", 2));  // type: DT_FLOAT
  CHECK(by_name["arg0"].attrs["_output_shapes"] == output_shapes({2, 3}));
  CHECK(by_name["arg1"].attrs["_output_shapes"] == output_shapes({3, 4}));
  // Every op node of the traced function is there, with its inputs by name.
  for (const auto& node : fn->nodes()) {
    REQUIRE(by_name.count(node.name));
    auto& n = by_name[node.name];
    CHECK(n.op == node.op);
    CHECK(n.inputs.size() == node.inputs.size());
    CHECK(n.attrs["_output_shapes"] == output_shapes({2, 4}));
    for (const auto& in : n.inputs) {
      CHECK(by_name.count(in) == 1);
    }
  }
  const auto& matmul = by_name[fn->nodes().at(0).name];
  CHECK(matmul.inputs == std::vector<std::string>{"arg0", "arg1"});
  REQUIRE(by_name.count("Const"));
  CHECK(by_name["Const"].op == "Const");
  CHECK(by_name["Const"].attrs.count("value") == 1);
  REQUIRE(by_name.count("output_RetVal"));
  CHECK(by_name["output_RetVal"].inputs == std::vector<std::string>{fn->nodes().back().name});
}

TEST_CASE("trace_export writes traced graphs and a profile TensorBoard can list",
          "[summary][graph]") {
  const fs::path dir = fs::current_path() / "logs_trace";
  fs::remove_all(dir);
  // [snippet:trace]
  auto writer = tf::summary::create_file_writer(dir);
  auto f = mlp_function();
  (void)f(tf::ones<float>({2, 3}),
          tf::ones<float>({3, 4}));  // traced before trace_on: not recorded
  tf::summary::trace_on({.graph = true, .profiler = true});
  (void)f(tf::ones<float>({5, 3}), tf::ones<float>({3, 4}));  // a new trace
  (void)f(tf::ones<float>({5, 3}), tf::ones<float>({3, 4}));
  {
    auto scope = writer.as_default();
    CHECK(tf::summary::trace_export("model_trace", 0, {.profiler_outdir = dir.string()}));
  }
  // [snippet:trace]
  CHECK(tf::detail::trace::observer().load() == nullptr);  // export stops tracing
  CHECK_THROWS_AS(tf::summary::trace_export("again", 0), tf::failed_precondition);
  writer.close();

  const auto events = tf::summary::summary_iterator(writer.path());
  REQUIRE(events.size() == 2);
  const auto& v = events[1].values.at(0);
  CHECK(v.tag == "model_trace");
  CHECK(v.plugin_name == "graph_run_metadata");
  CHECK(v.plugin_content == "1");
  CHECK(v.tensor->dtype == 7);
  CHECK(v.tensor->shape.empty());
  REQUIRE(v.tensor->string_val.size() == 1);
  // RunMetadata: step_stats (1) and exactly one function graph (4).
  wire::Reader rm(v.tensor->string_val[0], "RunMetadata");
  int graphs = 0;
  int node_stats = 0;
  while (auto tag = rm.next()) {
    if (tag->field == 4) {
      auto fg = rm.message("FunctionGraphs");
      while (auto t = fg.next()) {
        REQUIRE(t->field == 2);
        const auto nodes = parse_graph(fg.bytes());
        bool has_shape = false;
        for (auto n : nodes) {
          // (5, 4), or (None, 4) when tf::function relaxed the retraced shape.
          has_shape = has_shape || n.attrs["_output_shapes"] == output_shapes({5, 4}) ||
                      n.attrs["_output_shapes"] == output_shapes({-1, 4});
        }
        CHECK(has_shape);
        ++graphs;
      }
    } else if (tag->field == 1) {
      auto ss = rm.message("StepStats");
      while (auto t = ss.next()) {
        auto dev = ss.message("DeviceStepStats");
        while (auto dt = dev.next()) {
          if (dt->field == 2) {
            ++node_stats;
          }
          dev.skip(*dt);
        }
      }
    } else {
      rm.skip(*tag);
    }
  }
  CHECK(graphs == 1);
  CHECK(node_stats >= 2 * 2);  // two calls, at least matmul + (fused) add/relu each

  std::vector<fs::path> xplanes;
  bool profile_empty = false;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name.size() > 10 && name.substr(name.size() - 10) == ".xplane.pb") {
      xplanes.push_back(entry.path());
      CHECK(entry.path().parent_path().parent_path() == dir / "plugins" / "profile");
    }
    profile_empty = profile_empty || name.find(".profile-empty") != std::string::npos;
  }
  CHECK(profile_empty);
  REQUIRE(xplanes.size() == 1);
  std::ifstream in(xplanes[0], std::ios::binary);
  const std::string space((std::istreambuf_iterator<char>(in)), {});
  CHECK(space.find("/host:CPU") != std::string::npos);
  CHECK(space.find(":BatchMatMulV2") != std::string::npos);
  CHECK(space.find("profile_start_time") != std::string::npos);
}

TEST_CASE("trace_on with graph only records no profile - trace_off discards", "[summary][graph]") {
  const fs::path dir = fs::current_path() / "logs_graph_only";
  fs::remove_all(dir);
  auto writer = tf::summary::create_file_writer(dir);
  tf::summary::trace_on({.graph = true});
  auto f = mlp_function();
  (void)f(tf::ones<float>({1, 3}), tf::ones<float>({3, 4}));
  {
    auto scope = writer.as_default();
    CHECK(tf::summary::trace_export("g", 2));
  }
  tf::summary::trace_on({.graph = true});
  tf::summary::trace_off();
  CHECK(tf::detail::trace::observer().load() == nullptr);
  writer.close();
  CHECK_FALSE(fs::exists(dir / "plugins"));
  const auto events = tf::summary::summary_iterator(writer.path());
  REQUIRE(events.size() == 2);
  CHECK(events[1].step == 2);
  CHECK(events[1].values.at(0).plugin_name == "graph_run_metadata_graph");
}

TEST_CASE("summary::graph writes Event.graph_def", "[summary][graph]") {
  const fs::path dir = fs::current_path() / "logs_graph_event";
  fs::remove_all(dir);
  auto writer = tf::summary::create_file_writer(dir);
  auto f = mlp_function();
  (void)f(tf::ones<float>({1, 3}), tf::ones<float>({3, 4}));
  {
    auto scope = writer.as_default();
    CHECK(tf::summary::graph(*f.concrete_functions().at(0)));
    CHECK(tf::summary::graph(*f.concrete_functions().at(0), {.optimized = true}));
  }
  writer.close();
  const auto events = tf::summary::summary_iterator(writer.path());
  REQUIRE(events.size() == 3);
  REQUIRE(events[1].graph_def);
  CHECK(*events[1].graph_def == tf::summary::graph_def(*f.concrete_functions().at(0)));
  REQUIRE(events[2].graph_def);
  CHECK(*events[2].graph_def ==
        tf::summary::graph_def(*f.concrete_functions().at(0), {.optimized = true}));
}

}  // namespace test_summary_trace
