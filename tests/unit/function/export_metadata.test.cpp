// What a traced node carries for a SavedModel exporter, read from the op structs (Note [One
// definition per op] in ops/op_concepts.hpp): TensorFlow's type attribute, output argument,
// typed attributes, the inputs an op holds as members, variables, and why a node cannot
// export.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/function/function.hpp>
#include <tapeflow/ops/state/any_variable.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_function_export_metadata {

namespace tf = tapeflow;
using Node = tf::detail::trace::GraphNode;

// The first node of op `op`; fails the test when there is none.
const Node& node_of(const tf::ConcreteFunction& fn, std::string_view op) {
  const Node* found = nullptr;
  for (const auto& node : fn.nodes()) {
    if (found == nullptr && node.op == op) {
      found = &node;
    }
  }
  INFO("op " << op << " in\n" << fn.to_string());
  REQUIRE(found != nullptr);
  return *found;
}

std::vector<std::int32_t> int32_values(const tf::AnyTensor& t) {
  return t.as<std::int32_t, 1>().numpy();
}

TEST_CASE("function/export_metadata: a dense layer's nodes carry TensorFlow's NodeDef parts",
          "[function][export_metadata]") {
  tf::Variable<float, 2> w(tf::constant<float>({{1, 2, 3}, {4, 5, 6}}), {.name = "w"});
  const auto b = tf::constant<float>({0.5f, -0.5f, 0.0f});
  auto f = tf::function([&](const tf::Tensor<float, 2>& x) {
    auto h = tf::nn::relu(tf::matmul(x, w) + b);
    auto p = tf::nn::softmax(h);
    return tf::reshape(tf::reduce_mean(p, 0), {3, 1});
  });
  const auto y = f(tf::constant<float>({{1, 0}, {0, 1}}));
  CHECK(y.shape() == tf::Shape{3, 1});
  const auto& fn = *f.concrete_functions().at(0);

  const Node& read = node_of(fn, "ReadVariableOp");
  CHECK(read.type_attr == "dtype");
  CHECK(read.type_attr_dtype == tf::DType::float32);
  CHECK(read.output_arg == "value");
  CHECK(read.attrs.empty());
  CHECK(read.const_inputs.empty());
  CHECK(read.inputs.empty());
  // The resource is the variable itself: the id a checkpoint walk finds on the AnyVariable.
  REQUIRE(read.resources.size() == 1);
  CHECK(read.resources[0] == w.id());
  CHECK(read.resources[0] == tf::AnyVariable(w).id());
  CHECK(read.export_error.empty());

  const Node& matmul = node_of(fn, "BatchMatMulV2");
  CHECK(matmul.type_attr == "T");
  CHECK(matmul.type_attr_dtype == tf::DType::float32);
  CHECK(matmul.output_arg == "output");
  CHECK(matmul.attrs == tf::OpAttributes{{"adj_x", false}, {"adj_y", false}});
  CHECK(matmul.inputs.size() == 2);
  CHECK(matmul.const_inputs.empty());
  CHECK(matmul.resources.empty());

  const Node& add = node_of(fn, "AddV2");
  CHECK(add.type_attr == "T");
  CHECK(add.output_arg == "z");
  CHECK(add.attrs.empty());

  const Node& relu = node_of(fn, "Relu");
  CHECK(relu.type_attr == "T");
  CHECK(relu.output_arg == "activations");

  const Node& softmax = node_of(fn, "Softmax");
  CHECK(softmax.type_attr == "T");
  CHECK(softmax.output_arg == "softmax");
  CHECK(softmax.attrs.empty());  // TensorFlow's Softmax has no axis attribute
  CHECK(softmax.export_error.empty());

  const Node& mean = node_of(fn, "Mean");
  CHECK(mean.type_attr == "T");
  CHECK(mean.type_attr_dtype == tf::DType::float32);
  CHECK(mean.output_arg == "output");
  CHECK(mean.attrs == tf::OpAttributes{{"keep_dims", false}, {"Tidx", tf::DType::int32}});
  REQUIRE(mean.const_inputs.size() == 1);
  CHECK(mean.const_inputs[0].first == "reduction_indices");
  CHECK(mean.const_inputs[0].second.dtype() == tf::DType::int32);
  CHECK(int32_values(mean.const_inputs[0].second) == std::vector<std::int32_t>{0});
  CHECK(mean.const_inputs_at == 1);  // after the tensor input

  const Node& reshape = node_of(fn, "Reshape");
  CHECK(reshape.type_attr == "T");
  CHECK(reshape.output_arg == "output");
  CHECK(reshape.attrs == tf::OpAttributes{{"Tshape", tf::DType::int32}});
  REQUIRE(reshape.const_inputs.size() == 1);
  CHECK(reshape.const_inputs[0].first == "shape");
  CHECK(int32_values(reshape.const_inputs[0].second) == std::vector<std::int32_t>{3, 1});
  CHECK(reshape.const_inputs_at == 1);

  // The listing shows the attributes and the inputs held as members, not the type attributes.
  const std::string text = fn.to_string();
  CHECK_THAT(text, Catch::Contains("Mean[keep_dims=false, reduction_indices=[0]](Softmax)"));
  CHECK_THAT(text, Catch::Contains("Reshape[shape=[3, 1]](Mean)"));
}

TEST_CASE("function/export_metadata: softmax over a non-last axis cannot export",
          "[function][export_metadata]") {
  auto f = tf::function([](const tf::Tensor<float, 2>& x) {
    return tf::nn::softmax(x, 0) + tf::nn::log_softmax(x, -1);
  });
  f(tf::ones<float>({2, 3}));
  const auto& fn = *f.concrete_functions().at(0);
  const Node& softmax = node_of(fn, "Softmax");
  CHECK_THAT(softmax.export_error, Catch::Contains("axis 0") && Catch::Contains("last axis"));
  const Node& log_softmax = node_of(fn, "LogSoftmax");
  CHECK(log_softmax.output_arg == "logsoftmax");
  CHECK(log_softmax.export_error.empty());
}

TEST_CASE("function/export_metadata: type attributes, inputs held as members, assignments",
          "[function][export_metadata]") {
  tf::Variable<float, 1> v(tf::zeros<float>({3}), {.name = "v"});
  auto f = tf::function([&](const tf::Tensor<std::int32_t, 1>& x) {
    auto padded = tf::pad(tf::cast<float>(x), {{1, 0}}, 7.0f);  // PadV2
    auto picked = tf::gather(padded, tf::constant<std::int64_t>({1, 2, 3}));
    v.assign_add(picked);
    return tf::concat(std::vector{picked, picked}, 0);
  });
  f(tf::constant<std::int32_t>({1, 2, 3}));
  const auto& fn = *f.concrete_functions().at(0);

  const Node& cast = node_of(fn, "Cast");
  CHECK(cast.type_attr == "SrcT");
  CHECK(cast.type_attr_dtype == tf::DType::int32);
  CHECK(cast.output_arg == "y");
  CHECK(cast.attrs == tf::OpAttributes{{"DstT", tf::DType::float32}});

  const Node& pad = node_of(fn, "PadV2");
  CHECK(pad.attrs == tf::OpAttributes{{"Tpaddings", tf::DType::int32}});
  REQUIRE(pad.const_inputs.size() == 1);
  CHECK(pad.const_inputs[0].first == "paddings");
  CHECK(pad.const_inputs[0].second.shape() == tf::Shape{1, 2});
  CHECK(pad.inputs.size() == 2);    // the tensor and the constant value
  CHECK(pad.const_inputs_at == 1);  // TensorFlow's order: input, paddings, constant_values
  CHECK_THAT(fn.to_string(), Catch::Contains("PadV2[paddings=[[1, 0]]]"));

  const Node& gather = node_of(fn, "GatherV2");
  CHECK(gather.type_attr == "Tparams");
  CHECK(gather.type_attr_dtype == tf::DType::float32);
  CHECK(gather.attrs ==
        tf::OpAttributes{{"Tindices", tf::DType::int64}, {"Taxis", tf::DType::int32}});
  REQUIRE(gather.const_inputs.size() == 1);
  CHECK(gather.const_inputs[0].first == "axis");
  CHECK(gather.const_inputs[0].second.rank() == 0);

  const Node& assign = node_of(fn, "AssignAddVariableOp");
  CHECK(assign.type_attr == "dtype");
  CHECK(assign.type_attr_dtype == tf::DType::float32);
  CHECK(assign.output_arg == tf::no_output_arg);  // TensorFlow's op has no output
  CHECK(assign.resources == std::vector<std::int64_t>{v.id()});
  CHECK(assign.attrs.empty());

  const Node& concat = node_of(fn, "ConcatV2");
  CHECK(concat.attrs == tf::OpAttributes{{"N", 2}, {"Tidx", tf::DType::int32}});
  CHECK(concat.const_inputs_at == 2);  // after both tensors of the list
}

TEST_CASE("function/export_metadata: batch norm, depthwise convolution and relu6 nodes",
          "[function][export_metadata]") {
  // What TensorFlow 2.21 accepted when these nodes were exported in a SavedModel and served.
  auto f = tf::function([](const tf::Tensor<float, 4>& x, const tf::Tensor<float, 4>& w) {
    auto y = tf::nn::depthwise_conv2d(x, w, {.strides = 2, .padding = "SAME"});
    auto p = tf::ones<float>({4});
    auto n = tf::nn::fused_batch_norm(y, p, p, p, p, {.epsilon = 1e-5f, .is_training = false});
    return tf::nn::relu6(n);
  });
  f(tf::ones<float>({1, 4, 4, 2}), tf::ones<float>({3, 3, 2, 2}));
  const auto& fn = *f.concrete_functions().at(0);

  const Node& dw = node_of(fn, "DepthwiseConv2dNative");
  CHECK(dw.type_attr == "T");
  CHECK(dw.output_arg == "output");
  CHECK(dw.attrs == tf::OpAttributes{{"strides", std::vector<std::int64_t>{1, 2, 2, 1}},
                                     {"padding", "SAME"},
                                     {"dilations", std::vector<std::int64_t>{1, 1, 1, 1}},
                                     {"data_format", "NHWC"}});
  CHECK(dw.export_error.empty());

  const Node& bn = node_of(fn, "FusedBatchNormV3");
  CHECK(bn.type_attr == "T");
  CHECK(bn.type_attr_dtype == tf::DType::float32);
  CHECK(bn.output_arg == "y");  // TensorFlow's first output
  CHECK(bn.inputs.size() == 5);
  CHECK(bn.attrs == tf::OpAttributes{{"U", tf::DType::float32},
                                     {"epsilon", 1e-5f},
                                     {"exponential_avg_factor", 1.0f},
                                     {"data_format", "NHWC"},
                                     {"is_training", false}});

  const Node& relu6 = node_of(fn, "Relu6");
  CHECK(relu6.type_attr == "T");
  CHECK(relu6.output_arg == "activations");
  CHECK(relu6.attrs.empty());
}

}  // namespace test_function_export_metadata
