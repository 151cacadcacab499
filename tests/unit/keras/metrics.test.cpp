#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/core/constant.hpp>
#include <tapeflow/keras/metrics.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_keras_metrics {

namespace tf = tapeflow;
namespace metrics = tf::keras::metrics;
using Catch::Detail::Approx;

TEST_CASE("SparseCategoricalAccuracy accumulates over batches and resets") {
  metrics::SparseCategoricalAccuracy acc;
  CHECK(acc.name() == "sparse_categorical_accuracy");
  CHECK(acc.result() == 0.0f);
  acc.update_state(tf::AnyTensor(tf::constant<std::int32_t>({0, 1})),
                   tf::AnyTensor(tf::constant<float>({{0.9f, 0.1f}, {0.8f, 0.2f}})));
  CHECK(acc.result() == Approx(0.5));
  acc.update_state(tf::AnyTensor(tf::constant<std::uint8_t>({1})),
                   tf::AnyTensor(tf::constant<float>({{0.1f, 0.9f}})));
  CHECK(acc.result() == Approx(2.0 / 3.0));
  auto vars = acc.trackable_children(tf::train::Layout::keras3);
  REQUIRE(vars.size() == 2);
  CHECK(vars[0].name == "total");
  CHECK(vars[1].name == "count");
  metrics::SparseCategoricalAccuracy copy = acc;  // copies share state, as Python references do
  acc.reset_state();
  CHECK(copy.result() == 0.0f);
  CHECK_THROWS_AS(acc.update_state(tf::AnyTensor(tf::constant<std::int32_t>({0})),
                                   tf::AnyTensor(tf::constant<float>({{1, 0}, {0, 1}}))),
                  tf::invalid_argument);
}

TEST_CASE("CategoricalAccuracy, Accuracy, Mean") {
  metrics::CategoricalAccuracy cat;
  cat.update_state(tf::AnyTensor(tf::constant<float>({{0, 1}, {1, 0}, {0, 1}})),
                   tf::AnyTensor(tf::constant<float>({{0.3f, 0.7f}, {0.4f, 0.6f}, {0.1f, 0.9f}})));
  CHECK(cat.result() == Approx(2.0 / 3.0));
  metrics::Accuracy accuracy;
  accuracy.update_state(tf::AnyTensor(tf::constant<std::int32_t>({1, 2, 3, 4})),
                        tf::AnyTensor(tf::constant<std::int32_t>({0, 2, 3, 4})));
  CHECK(accuracy.result() == Approx(0.75));
  metrics::Mean mean;
  mean.update_state(tf::AnyTensor(tf::constant<float>({1, 2, 3})));
  mean.update_state(10.0, 1.0);
  CHECK(mean.result() == Approx(4.0));
  mean.update_state(0.0, 4.0);  // weighted
  CHECK(mean.result() == Approx(16.0 / 8.0));
}

TEST_CASE("function forms") {
  auto acc = metrics::sparse_categorical_accuracy(
      tf::constant<std::int32_t>({1, 0}), tf::constant<float>({{0.2f, 0.8f}, {0.3f, 0.7f}}));
  CHECK(acc.numpy() == std::vector<float>{1, 0});
  auto cacc = metrics::categorical_accuracy(tf::constant<float>({{0, 1}, {0, 1}}),
                                            tf::constant<float>({{0.2f, 0.8f}, {0.3f, 0.1f}}));
  CHECK(cacc.numpy() == std::vector<float>{1, 0});
}

namespace {
// The handbook's custom metric: a re-implementation of SparseCategoricalAccuracy.
struct MyAccuracy : metrics::Metric {
  tf::Variable<float, 0> total, count;
  MyAccuracy() : Metric("my_accuracy") {
    total = add_weight("total");
    count = add_weight("count");
  }
  void update_state(const tf::AnyTensor& y_true, const tf::AnyTensor& y_pred) override {
    auto pred = tf::argmax(y_pred.as<float, 2>(), 1);
    auto values =
        tf::cast<float>(tf::equal(tf::cast<std::int64_t>(y_true.as<std::int32_t, 1>()), pred));
    total.assign_add(tf::Tensor<float, 0>(float(y_true.shape()[0])));
    count.assign_add(tf::reduce_sum(values));
  }
  float result() const override { return count.value().item() / total.value().item(); }
};
}  // namespace

TEST_CASE("a user-defined Metric") {
  MyAccuracy m;
  m.update_state(tf::AnyTensor(tf::constant<std::int32_t>({0, 1, 1})),
                 tf::AnyTensor(tf::constant<float>({{0.9f, 0.1f}, {0.8f, 0.2f}, {0.1f, 0.9f}})));
  CHECK(m.result() == Approx(2.0 / 3.0));
  m.reset_state();
  CHECK(m.total.value().item() == 0.0f);
  metrics::MetricHandle h = m;
  CHECK(h->name() == "my_accuracy");
}

}  // namespace test_keras_metrics
