// Compile-only checks of tapeflow's type rules: concept satisfaction, result types of ops,
// dtype/rank arithmetic. Built as part of `all`; a failure here is a compile error.
#include <tapeflow/fwd.hpp>
#include <tapeflow/ops.hpp>
#include <tapeflow/version.hpp>

namespace tf = tapeflow;

static_assert(tf::tensor_like<tf::Tensor<float, 2>>);
static_assert(tf::tensor_like<tf::Variable<double, 0>>);
static_assert(!tf::tensor_like<float>);
static_assert(tf::tensor_of<tf::Tensor<float, 2>, float, 2>);
static_assert(!tf::tensor_of<tf::Tensor<float, 2>, float, 1>);
static_assert(std::is_same_v<tf::tensor_type_of<tf::Variable<float, 3>>, tf::Tensor<float, 3>>);
static_assert(tf::op_definition<tf::ops::MatMul>);
static_assert(tf::op_definition<tf::ops::Tanh>);

// Result types follow TensorFlow's broadcasting and reduction rules.
using M = tf::Tensor<float, 2>;
using V = tf::Tensor<float, 1>;
static_assert(std::is_same_v<decltype(std::declval<M>() + std::declval<V>()), M>);
static_assert(std::is_same_v<decltype(std::declval<V>() * 2.0f), V>);
static_assert(std::is_same_v<decltype(std::declval<M>() < std::declval<M>()), tf::Tensor<bool, 2>>);
static_assert(std::is_same_v<decltype(tf::reduce_sum(std::declval<M>())), tf::Tensor<float, 0>>);
static_assert(std::is_same_v<decltype(tf::reduce_sum(std::declval<M>(), 1)), V>);
static_assert(std::is_same_v<decltype(tf::reduce_sum(std::declval<M>(), 1, tf::keepdims)), M>);
static_assert(
    std::is_same_v<decltype(tf::matmul(std::declval<tf::Tensor<float, 3>>(), std::declval<M>())),
                   tf::Tensor<float, 3>>);
static_assert(std::is_same_v<decltype(tf::cast<std::int32_t>(std::declval<M>())),
                             tf::Tensor<std::int32_t, 2>>);
static_assert(
    std::is_same_v<decltype(tf::argmax(std::declval<M>(), 1)), tf::Tensor<std::int64_t, 1>>);
static_assert(TAPEFLOW_VERSION_MAJOR == 0);
