#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/detail/trace_graph.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_core_trace_graph {

namespace tf = tapeflow;
namespace trace = tapeflow::detail::trace;

TEST_CASE("graphs give arguments, constants and nodes their own slots", "[core][trace_graph]") {
  trace::Graph graph;
  auto x = graph.add_argument<float, 2>({2, 3});
  CHECK(x.is_symbolic());
  CHECK_FALSE(x.has_value());
  CHECK(x.shape() == tf::Shape{2, 3});
  const auto arg_slot = graph.slot_of(x);
  CHECK(arg_slot == graph.arg_slots.at(0));

  auto c = tf::constant<float>({1, 2, 3});
  const auto c_slot = graph.slot_of(c);
  CHECK(graph.slot_of(c) == c_slot);  // captured once
  REQUIRE(graph.constants.size() == 1);
  CHECK(graph.constants[0].first == c_slot);

  trace::GraphNode node;
  node.op = "AddV2";
  node.inputs = {arg_slot, c_slot};
  node.run = [](std::span<const tf::AnyTensor> v) { return v[0]; };
  auto out = tf::detail::tensor_access::symbolic<float, 2>({2, 3});
  const auto out_slot = graph.add_node(node, out.id());
  CHECK(graph.slot_of(out) == out_slot);
  graph.add_node(node, 0);
  CHECK(graph.nodes[0].name == "AddV2");
  CHECK(graph.nodes[1].name == "AddV2_1");  // unique names
  CHECK(graph.nodes[1].output == -1);

  trace::Graph other;
  CHECK_THROWS_AS(other.slot_of(x), tf::invalid_argument);  // a tensor of another trace
}

TEST_CASE("trace scopes nest and suspend", "[core][trace_graph]") {
  trace::Graph outer;
  trace::Graph inner;
  CHECK(trace::active() == nullptr);
  {
    trace::Scope a(&outer);
    CHECK(trace::active() == &outer);
    {
      trace::Scope b(&inner);
      CHECK(trace::active() == &inner);
      trace::Suspend eager;
      CHECK(trace::active() == nullptr);
    }
    CHECK(trace::active() == &outer);
  }
  CHECK(trace::active() == nullptr);
}

}  // namespace test_core_trace_graph
