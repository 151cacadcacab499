// The graph passes (Note [Graph passes]): what each does, that each can be turned off, that side
// effects and outside tapes see the graph as traced, and that random programs (float, double
// and int32, of many shapes) give bitwise the same values and gradients with and without them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/config/memory_info.hpp>
#include <tapeflow/config/optimizer.hpp>
#include <tapeflow/function/detail/executor.hpp>  // FusedChunks, split_for_threads
#include <tapeflow/function/function.hpp>
#include <tapeflow/ops/logging/print.hpp>
#include <tapeflow/tapeflow.hpp>

// Each test file has its namespace: tests build as unity batches (cmake/TapeflowHelpers.cmake).
namespace test_function_graph_passes {

namespace tf = tapeflow;
using Options = tf::config::optimizer::Options;

namespace {
// Sets the optimizer options for the scope of a test, then restores them.
class OptionsScope {
 public:
  explicit OptionsScope(const Options& o)
      : saved_(tf::config::optimizer::get_experimental_options()) {
    tf::config::optimizer::set_experimental_options(o);
  }
  OptionsScope(const OptionsScope&) = delete;
  OptionsScope& operator=(const OptionsScope&) = delete;
  ~OptionsScope() { tf::config::optimizer::set_experimental_options(saved_); }

 private:
  Options saved_;
};

template <class T, std::size_t R>
std::vector<T> values_of(const tf::Tensor<T, R>& t) {
  return {t.values().begin(), t.values().end()};
}

template <class T, std::size_t R>
bool bitwise_equal(const tf::Tensor<T, R>& a, const tf::Tensor<T, R>& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.values().data(), b.values().data(), a.values().size() * sizeof(T)) == 0;
}

std::string optimized_listing(const auto& f) { return f.concrete_functions()[0]->to_string(true); }
const tf::GraphOptimizationReport& report_of(const auto& f) {
  return f.concrete_functions()[0]->optimization_report();
}

// How many nodes of `op` the listing shows, and the line of the last one.
std::pair<int, std::string> nodes_of(const std::string& listing, const std::string& op) {
  std::istringstream lines(listing);
  std::pair<int, std::string> found{0, ""};
  for (std::string line; std::getline(lines, line);) {
    if (line.find("= " + op + "[") != std::string::npos ||
        line.find("= " + op + "(") != std::string::npos) {
      found = {found.first + 1, line};
    }
  }
  return found;
}
}  // namespace

TEST_CASE("pruning drops what no output needs and keeps side effects", "[function][passes]") {
  std::ostringstream out;
  auto f = tf::function([&](const tf::Tensor<float, 1>& x) {
    auto unused = tf::exp(x) * 3.0f;  // reaches nothing
    auto printed = x + 1.0f;          // reaches only a print, which must still happen
    tf::print(printed, out);
    return x * 2.0f;
  });
  auto y = f(tf::constant<float>({1, 2}));
  CHECK(values_of(y) == std::vector<float>{2, 4});
  CHECK(out.str() == "[2 3]\n");
  CHECK(report_of(f).pruned == 2);  // Exp and its Mul
  const auto traced = f.concrete_functions()[0]->to_string();
  CHECK_THAT(traced, Catch::Contains("Exp"));
  CHECK_THAT(optimized_listing(f), !Catch::Contains("Exp"));
  CHECK_THAT(optimized_listing(f), Catch::Contains("PrintV2"));
}

TEST_CASE("constant folding evaluates constant subgraphs once", "[function][passes]") {
  // [snippet:folding]
  auto f = tf::function([](const tf::Tensor<double, 1>& x) {
    auto c = tf::exp(tf::constant(1.0)) * tf::constant(2.0) + tf::constant(0.5);
    return x * c;
  });
  auto y = f(tf::constant<double>({1, -1}));
  const auto& cf = *f.concrete_functions()[0];
  CHECK(cf.optimization_report().constants_folded == 3);  // Exp, Mul, AddV2
  CHECK(cf.graph().nodes.size() == 4);                    // as traced, exported and shown
  CHECK(cf.optimized_graph().nodes.size() == 1);          // what runs: x * <constant>
  // [snippet:folding]
  const double c = std::exp(1.0) * 2.0 + 0.5;
  CHECK(values_of(y) == std::vector<double>{c, -c});
  CHECK(cf.optimized_graph().nodes[0].op == "Mul");
  CHECK_THAT(cf.to_string(true), Catch::Contains("Mul(arg0, Const"));
}

TEST_CASE("common subexpressions run once", "[function][passes]") {
  auto f = tf::function([](const tf::Tensor<float, 1>& x) {
    auto a = tf::tanh(x) * x;
    auto b = tf::tanh(x) * x;  // the same two nodes again
    return a + b;
  });
  auto x = tf::constant<float>({0.25f, -2.0f});
  auto y = f(x);
  auto eager = tf::tanh(x) * x + tf::tanh(x) * x;
  CHECK(values_of(y) == values_of(eager));
  CHECK(report_of(f).common_subexpressions == 2);
  CHECK(f.concrete_functions()[0]->optimized_graph().nodes.size() == 3);
}

TEST_CASE("nodes reading equal constants merge", "[function][passes]") {
  // Each 2.0f is a constant of its own; equal ones are one, so the second x * 2 and its exp go.
  auto f = tf::function([](const tf::Tensor<float, 1>& x) {
    return tf::exp(x * 2.0f) + tf::exp(x * 2.0f) + x * tf::constant<float>({2.0f, 2.0f});
  });
  auto x = tf::constant<float>({0.25f, -2.0f});
  CHECK(values_of(f(x)) ==
        values_of(tf::exp(x * 2.0f) + tf::exp(x * 2.0f) + x * tf::constant<float>({2.0f, 2.0f})));
  const auto listing = optimized_listing(f);
  INFO(listing);
  CHECK(nodes_of(listing, "Exp").first == 1);
  CHECK(nodes_of(listing, "Mul").first == 2);      // a [2] constant is not the scalar 2
  CHECK(report_of(f).common_subexpressions == 3);  // the constant, then Mul and Exp

  // +0 and -0 are different constants, as are 2 in float and 2 in double.
  auto g = tf::function([](const tf::Tensor<float, 1>& x) { return x * 0.0f - x * -0.0f; });
  CHECK(values_of(g(x)) == values_of(x * 0.0f - x * -0.0f));
  CHECK(nodes_of(optimized_listing(g), "Mul").first == 2);
  CHECK(report_of(g).common_subexpressions == 0);
  auto h = tf::function([](const tf::Tensor<double, 1>& x) {
    return x * 2.0 + tf::cast<double>(tf::cast<float>(x) * 2.0f);
  });
  auto xd = tf::constant<double>({0.1, 3.0});
  CHECK(values_of(h(xd)) == values_of(xd * 2.0 + tf::cast<double>(tf::cast<float>(xd) * 2.0f)));
  CHECK(nodes_of(optimized_listing(h), "Mul").first == 2);
}

TEST_CASE("ops TensorFlow cannot express are never merged", "[function][passes]") {
  // Softmax keeps its axis as a member that no attribute shows (its export_error says so).
  auto f = tf::function(
      [](const tf::Tensor<float, 2>& x) { return tf::nn::softmax(x, 0) + tf::nn::softmax(x, 1); });
  auto x = tf::constant<float>({{1, 2}, {3, 5}});
  CHECK(values_of(f(x)) == values_of(tf::nn::softmax(x, 0) + tf::nn::softmax(x, 1)));
  CHECK(report_of(f).common_subexpressions == 0);
}

TEST_CASE("algebraic simplification reads through neutral ops", "[function][passes]") {
  auto f = tf::function([](const tf::Tensor<float, 2>& x) {
    auto a = x * 1.0f;                           // Mul by one
    auto b = a / 1.0f - 0.0f;                    // RealDiv by one, Sub of +0
    auto d = tf::reshape(b, {2, 3});             // Reshape to its own shape
    auto e = tf::transpose(tf::transpose(d));    // Transposes that undo each other
    return tf::identity(e) + 0.0f + tf::exp(x);  // x + (+0) must stay: it turns -0 into +0
  });
  auto x = tf::constant<float>({{-0.0f, 1, 2}, {3, 4, 5}});
  auto y = f(x);
  CHECK(values_of(y) == values_of(x + tf::exp(x)));
  CHECK(report_of(f).simplified == 5);
  CHECK(report_of(f).identities_removed == 1);
  const auto listing = optimized_listing(f);
  for (const char* gone : {"RealDiv", "Sub", "Reshape", "Transpose", "Identity"}) {
    CHECK_THAT(listing, !Catch::Contains(gone));
  }
  CHECK_THAT(listing, Catch::Contains("AddV2"));
  // x + (+0) stays: it turns -0 into +0
  auto g = tf::function([](const tf::Tensor<float, 2>& x) { return x * 1.0f + 0.0f; });
  auto minus_zero = tf::constant<float>({{-0.0f}});
  CHECK_FALSE(std::signbit(g(minus_zero).values()[0]));
}

TEST_CASE("a reshape of a reshape reads the first one's input", "[function][passes]") {
  const auto through_three_shapes = [](const tf::Tensor<float, 2>& x) {
    auto y = tf::reshape(tf::reshape(tf::reshape(x * 2.0f, {-1}), {2, 3, 2}), {3, 4});
    tf::GradientTape tape;
    tape.watch(x);
    auto z = tf::reshape(tf::reshape(tf::reshape(x * 2.0f, {-1}), {2, 3, 2}), {3, 4});
    auto dx = tape.gradient(tf::reduce_sum(z * z), x);
    return std::tuple{y + 1.0f, *dx};
  };
  auto f = tf::function(through_three_shapes);
  auto x = tf::random::uniform<float>({4, 3}, {.minval = -1.0f, .maxval = 1.0f, .seed = 3});
  auto [y, dx] = f(x);
  auto [y_eager, dx_eager] = through_three_shapes(x);
  CHECK(y.dims() == std::array<std::int64_t, 2>{3, 4});
  CHECK(values_of(y) == values_of(y_eager));
  CHECK(values_of(dx) == values_of(dx_eager));
  const auto listing = optimized_listing(f);
  INFO(listing);
  // Each chain of three is one Reshape reading the product (y's and z's, which CSE then merges),
  // and the gradient's three reshapes back are one too.
  CHECK(nodes_of(listing, "Reshape").first == 2);
  CHECK_THAT(listing, Catch::Contains("Reshape[shape=[3, 4]](Mul)"));
  CHECK(report_of(f).simplified >= 6);
  const auto traced = f.concrete_functions()[0]->to_string();
  CHECK(nodes_of(traced, "Reshape").first == 10);  // as traced (export, TensorBoard): 1 more in the
                                                   // sum's gradient, which constant folding takes

  // Back to the input's shape, the one Reshape left reads through.
  auto back = tf::function([](const tf::Tensor<float, 2>& x) {
    return tf::reshape(tf::reshape(x, {-1}), {4, 3}) + 1.0f;
  });
  CHECK(values_of(back(x)) == values_of(x + 1.0f));
  CHECK(nodes_of(optimized_listing(back), "Reshape").first == 0);

  // A reshape something else reads stays; the one after it still reads past it.
  auto shared = tf::function([](const tf::Tensor<float, 2>& x) {
    auto flat = tf::reshape(x - 1.0f, {-1});
    return std::tuple{tf::exp(flat), tf::reshape(flat, {2, 6}) * 3.0f};
  });
  auto [e, m] = shared(x);
  CHECK(values_of(e) == values_of(tf::exp(tf::reshape(x - 1.0f, {-1}))));
  CHECK(values_of(m) == values_of(tf::reshape(x - 1.0f, {2, 6}) * 3.0f));
  const auto shared_listing = optimized_listing(shared);
  INFO(shared_listing);
  const auto [count, last] = nodes_of(shared_listing, "Reshape");
  CHECK(count == 2);
  CHECK_THAT(last, Catch::Contains("(Sub"));
  CHECK(report_of(shared).simplified == 1);

  // Integers fold the same way (no fused chain takes them).
  auto ints = tf::function([](const tf::Tensor<std::int32_t, 2>& x) {
    return tf::reshape(tf::reshape(x, {2, 2, 3}), {6, 2}) * 3;
  });
  auto xi = tf::constant<std::int32_t>({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}});
  auto yi = ints(xi);
  CHECK(yi.dims() == std::array<std::int64_t, 2>{6, 2});
  CHECK(values_of(yi) == std::vector<std::int32_t>{3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36});
  CHECK(nodes_of(optimized_listing(ints), "Reshape").first == 1);

  // With arithmetic_optimization off both stay.
  OptionsScope scope({.arithmetic_optimization = false});
  auto plain = tf::function(through_three_shapes);
  (void)plain(x);
  CHECK(nodes_of(optimized_listing(plain), "Reshape").first == 9);
}

TEST_CASE("each pass turns off with TensorFlow's option names", "[function][passes]") {
  auto body = [](const tf::Tensor<float, 1>& x) {
    auto unused = tf::exp(x);
    auto c = tf::constant(2.0f) * tf::constant(3.0f);
    auto a = tf::identity(x * 1.0f);
    return tf::tanh(a) * c + tf::tanh(a) * c;
  };
  const auto report = [&](const Options& o) {
    OptionsScope scope(o);
    auto f = tf::function(body);
    auto y = f(tf::constant<float>({0.5f}));
    CHECK(y.values()[0] == Approx(2 * 6 * std::tanh(0.5f)));
    return report_of(f);
  };
  const auto all = report({});
  CHECK(all.pruned >= 1);
  CHECK(all.constants_folded == 1);
  CHECK(all.simplified == 1);
  CHECK(all.identities_removed == 1);
  CHECK(all.common_subexpressions == 2);
  CHECK(report({.constant_folding = false}).constants_folded == 0);
  const auto no_arith = report({.arithmetic_optimization = false});
  CHECK(no_arith.simplified == 0);
  CHECK(no_arith.common_subexpressions == 0);
  CHECK(report({.dependency_optimization = false}).identities_removed == 0);
  CHECK(report({.disable_model_pruning = true}).pruned == 0);
  CHECK_FALSE(report({.disable_meta_optimizer = true}).changed());
  {
    OptionsScope scope({.remapping = false});
    auto f = tf::function([](const tf::Tensor<float, 1>& x) { return tf::exp(x * 2.0f) + x; });
    (void)f(tf::constant<float>({1, 2, 3}));
    CHECK(f.concrete_functions()[0]->fused_chains().empty());
  }
  CHECK(tf::config::optimizer::get_experimental_options() == Options{});
}

TEST_CASE("a fused output writes over an input that dies there", "[function][passes]") {
  // h (256 KiB) dies in the chain after it: the chain's result takes h's buffer, so a call's
  // peak is about one such tensor; without fusion every op allocates its own output.
  auto body = [](const tf::Tensor<float, 2>& a, const tf::Tensor<float, 2>& b) {
    auto h = tf::matmul(a, b);
    return tf::tanh(h * 0.5f) + 1.0f;
  };
  auto a = tf::random::uniform<float>({256, 64}, {.seed = 1});
  auto b = tf::random::uniform<float>({64, 256}, {.seed = 2});
  const auto a_before = values_of(a);
  const auto eager = body(a, b);
  // Peak bytes of the tensors one call allocates (host accounting is on only with several
  // logical CPUs, so it is switched on for the call alone).
  auto peak_of = [&](auto& f) {
    (void)f(a, b);  // trace outside the measurement
    tf::config::experimental::reset_memory_stats("CPU:0");
    const auto before = tf::config::experimental::get_memory_info("CPU:0").current;
    tf::detail::devices::host_accounting.store(true);
    auto y = f(a, b);
    tf::detail::devices::host_accounting.store(false);
    CHECK(bitwise_equal(y, eager));
    return tf::config::experimental::get_memory_info("CPU:0").peak - before;
  };
  constexpr std::int64_t tensor_bytes = 256 * 256 * sizeof(float);
  auto fused = tf::function(body);
  const auto fused_peak = peak_of(fused);
  CHECK(fused_peak >= tensor_bytes);
  CHECK(fused_peak < tensor_bytes * 3 / 2);
  {
    OptionsScope scope({.remapping = false});
    auto unfused = tf::function(body);
    CHECK(peak_of(unfused) >= 2 * tensor_bytes);
  }
  // Arguments, values returned as well and values held elsewhere are never written over.
  auto g = tf::function([](const tf::Tensor<float, 2>& x) {
    auto h = tf::matmul(x, tf::transpose(x));
    return std::tuple{h, h * 2.0f, x * 3.0f};
  });
  const auto [h, twice, thrice] = g(a);
  CHECK(values_of(a) == a_before);
  const auto h_eager = tf::matmul(a, tf::transpose(a));
  CHECK(values_of(h) == values_of(h_eager));
  CHECK(values_of(twice) == values_of(h_eager * 2.0f));
  CHECK(values_of(thrice) == values_of(a * 3.0f));
}

TEST_CASE("Relu6 and Relu6Grad join fused chains", "[function][passes]") {
  // MobileNet's activation and its gradient run in chains like the other elementwise ops, with
  // the eager kernels' results: values past both clamps, and NaN (0, as comparisons read it).
  auto body = [](const tf::Tensor<float, 2>& x) {
    tf::GradientTape tape;
    tape.watch(x);
    auto y = tf::nn::relu6(x * 4.0f) + 1.0f;
    auto dx = tape.gradient(tf::reduce_sum(y * y), x);
    return std::tuple{y, *dx * 0.5f};
  };
  auto x = tf::random::uniform<float>({37, 29}, {.minval = -3.0f, .maxval = 3.0f, .seed = 3});
  auto values = x.numpy();
  values[5] = std::nanf("");
  x = tf::constant<float, 2>(std::span<const float>(values), x.dims());
  const auto [y_eager, dx_eager] = body(x);
  auto f = tf::function(body);
  const auto [y, dx] = f(x);
  CHECK(bitwise_equal(y, y_eager));
  CHECK(bitwise_equal(dx, dx_eager));
  const auto listing = f.concrete_functions()[0]->to_string(true);
  CHECK_THAT(listing, Catch::Contains("Relu6Grad"));
  // The loss is no output, so it is pruned, and every node left is elementwise: the forward
  // and backward ops run as one chain, Relu6 and Relu6Grad in it.
  const auto& cf = *f.concrete_functions()[0];
  INFO(listing);
  CHECK(cf.fused_chains() == std::vector<std::size_t>{cf.optimized_graph().nodes.size()});
}

TEST_CASE("batch normalization in inference mode joins fused chains", "[function][passes]") {
  // FusedBatchNormV3 with moving statistics is x * a + b by channel: in a trace it runs in one
  // pass with the activation and the residual sum after it, with eager's bits, whatever the
  // channel count (vectors and ragged ends, periods up to a chunk) and chunk boundaries.
  auto check = [](std::int64_t n, std::int64_t h, std::int64_t c, bool fuses) {
    INFO("x [" << n << ", " << h << ", " << h << ", " << c << "]");
    auto channel = [c](float lo, float hi, std::uint64_t seed) {
      return tf::random::uniform<float>({c}, {.minval = lo, .maxval = hi, .seed = seed});
    };
    const auto gamma = channel(0.5f, 2.0f, 1);
    const auto beta = channel(-1.0f, 1.0f, 2);
    tf::Variable<float, 1> mean(channel(-0.5f, 0.5f, 3));
    tf::Variable<float, 1> variance(channel(0.1f, 3.0f, 4));
    auto body = [&](const tf::Tensor<float, 4>& x) {
      auto y = tf::nn::fused_batch_norm(x, gamma, beta, mean, variance,
                                        {.epsilon = 1e-3f, .is_training = false});
      return std::tuple{tf::nn::relu6(y) + x, y};
    };
    const auto x = tf::random::uniform<float>({n, h, h, c}, {.minval = -4, .maxval = 4, .seed = 5});
    auto f = tf::function(body);
    for (int call = 0; call < 2; ++call) {  // the coefficients follow the variables
      const auto [out_eager, y_eager] = body(x);
      const auto [out, y] = f(x);
      CHECK(values_of(out) == values_of(out_eager));
      CHECK(values_of(y) == values_of(y_eager));
      mean.assign(mean * 0.5f + 0.25f);
      variance.assign(variance * 2.0f);
    }
    const auto& cf = *f.concrete_functions()[0];
    INFO(cf.to_string(true));
    const auto chains = cf.fused_chains();
    const bool joined = std::find(chains.begin(), chains.end(), 3u) != chains.end();
    CHECK(joined == fuses);
  };
  check(2, 5, 24, true);  // two vectors less half of one per row
  check(3, 4, 5, true);   // fewer channels than a vector
  check(1, 3, 1, true);
  check(4, 30, 48, true);    // many chunks, on both threads
  check(2, 20, 144, true);   // a period that is no power of two
  check(1, 10, 960, true);   // the longest MobileNetV2 period that fits a chunk
  check(1, 4, 1280, false);  // a period longer than a chunk: the op runs on its own
  // Training mode computing the batch's statistics itself: never a chain member.
  auto train = tf::function([](const tf::Tensor<float, 4>& x) {
    const auto ones = tf::ones<float>({8});
    return tf::nn::relu6(tf::nn::fused_batch_norm(x, ones, ones * 0.0f, ones, ones));
  });
  const auto x = tf::random::uniform<float>({2, 3, 3, 8}, {.seed = 6});
  CHECK(values_of(train(x)) == values_of(tf::nn::relu6(tf::nn::fused_batch_norm(
                                   x, tf::ones<float>({8}), tf::zeros<float>({8}),
                                   tf::ones<float>({8}), tf::ones<float>({8})))));
  for (auto size : train.concrete_functions()[0]->fused_chains()) {
    CHECK(size == 1);
  }
  // Given the batch's moments (Keras' BatchNormalization when training), it is x * a + b again:
  // a chain member, with eager's bits, gradients included.
  auto step = [](bool given) {
    return [given](const tf::Tensor<float, 4>& x, const tf::Tensor<float, 1>& gamma) {
      int const axes[3] = {0, 1, 2};
      tf::GradientTape tape;
      tape.watch(x);
      tape.watch(gamma);
      const auto mean = tf::reduce_mean(x, axes);
      const auto variance = tf::reduce_mean(tf::math::squared_difference(x, mean), axes);
      const auto y = tf::nn::relu6(
          tf::detail::batch_norm_any_rank(tf::ops::FusedBatchNormV3{1e-3f, true, given}, x, gamma,
                                          tf::zeros_like(gamma), mean, variance));
      auto [dx, dgamma] = tape.gradient(tf::reduce_sum(y * x), x, gamma);
      return std::tuple{y, *dx, *dgamma};
    };
  };
  const auto xs = tf::random::uniform<float>({2, 5, 5, 24}, {.minval = -3, .maxval = 3, .seed = 7});
  const auto gamma = tf::random::uniform<float>({24}, {.minval = 0.5f, .maxval = 2, .seed = 8});
  std::size_t fused_nodes[2] = {0, 0};
  for (bool given : {false, true}) {
    INFO("moments given " << given);
    auto f = tf::function(step(given));
    const auto [y, dx, dgamma] = f(xs, gamma);
    const auto [y_eager, dx_eager, dgamma_eager] = step(given)(xs, gamma);
    CHECK(values_of(y) == values_of(y_eager));
    CHECK(values_of(dx) == values_of(dx_eager));
    CHECK(values_of(dgamma) == values_of(dgamma_eager));
    for (auto size : f.concrete_functions()[0]->fused_chains()) {
      fused_nodes[given] += size;
    }
  }
  CHECK(fused_nodes[1] == fused_nodes[0] + 1);  // the normalization joined Relu6's chain
}

TEST_CASE("a traced batch normalization's x gradient reads its scale and offset gradients",
          "[function][passes]") {
  // Note [Batch-norm gradient sums]: dx's op takes dscale and doffset, the channel sums it would
  // otherwise compute again, and the function returns those same values.
  auto body = [](const tf::Tensor<float, 4>& x, const tf::Tensor<float, 1>& gamma,
                 const tf::Tensor<float, 1>& beta) {
    tf::GradientTape tape;
    tape.watch(x);
    tape.watch(gamma);
    tape.watch(beta);
    const auto y =
        tf::nn::fused_batch_norm(x, gamma, beta, tf::zeros_like(gamma), tf::ones_like(gamma));
    auto [dx, dgamma, dbeta] = tape.gradient(tf::reduce_sum(y * x), x, gamma, beta);
    return std::tuple{*dx, *dgamma, *dbeta};
  };
  auto step = tf::function(body);
  const auto x = tf::random::uniform<float>({2, 4, 4, 8}, {.minval = -2, .maxval = 2, .seed = 9});
  const auto gamma = tf::random::uniform<float>({8}, {.minval = 0.5f, .maxval = 2, .seed = 10});
  const auto beta = tf::random::uniform<float>({8}, {.seed = 11});
  const auto [dx, dgamma, dbeta] = step(x, gamma, beta);
  const auto& graph = step.concrete_functions()[0]->graph();
  std::vector<const tf::detail::trace::GraphNode*> dx_nodes;
  for (const auto& node : graph.nodes) {
    if (node.op == "FusedBatchNormGradV3" && node.inputs.size() == 7) {
      dx_nodes.push_back(&node);
    }
  }
  REQUIRE(dx_nodes.size() == 1);
  CHECK(dx_nodes[0]->inputs[5] == graph.output_slots[1]);  // dgamma
  CHECK(dx_nodes[0]->inputs[6] == graph.output_slots[2]);  // dbeta
  CHECK_THAT(dx_nodes[0]->export_error, Catch::Contains("has no TensorFlow form"));
  // Eager computes the same values the same way.
  const auto [ex, egamma, ebeta] = body(x, gamma, beta);
  CHECK(values_of(dx) == values_of(ex));
  CHECK(values_of(dgamma) == values_of(egamma));
  CHECK(values_of(dbeta) == values_of(ebeta));
}

TEST_CASE("a convolution runs the chain after it as its output epilogue", "[function][passes]") {
  // MobileNetV2's blocks: convolution, batch normalization, Relu6. The chain runs on each range
  // of the convolution's output as soon as the kernel has written it (Note [Output epilogues]),
  // writing over that output, with eager's bits: 3x3 and pointwise convolutions, depthwise ones
  // with stride 2, channel counts that are and are not multiples of a vector.
  struct Case {
    const char* kind;
    std::int64_t n, h, c_in, c_out;
  };
  for (const Case& k : {Case{"conv3x3", 2, 9, 3, 24}, Case{"conv1x1", 3, 7, 16, 5},
                        Case{"conv1x1", 2, 28, 24, 144}, Case{"depthwise", 2, 13, 24, 24},
                        Case{"depthwise", 1, 30, 144, 144}, Case{"depthwise", 2, 5, 3, 3}}) {
    INFO(k.kind << " x [" << k.n << ", " << k.h << ", " << k.h << ", " << k.c_in << "] -> "
                << k.c_out << " channels");
    const bool depthwise = std::string(k.kind) == "depthwise";
    const std::int64_t taps = std::string(k.kind) == "conv1x1" ? 1 : 3;
    const auto w = tf::random::uniform<float>({taps, taps, k.c_in, depthwise ? 1 : k.c_out},
                                              {.minval = -0.5f, .maxval = 0.5f, .seed = 7});
    auto channel = [&](float lo, float hi, std::uint64_t seed) {
      return tf::random::uniform<float>({k.c_out}, {.minval = lo, .maxval = hi, .seed = seed});
    };
    const auto gamma = channel(0.5f, 2.0f, 8);
    const auto beta = channel(-1.0f, 1.0f, 9);
    // Variables, as in Keras: their reads come between the convolution and the chain.
    tf::Variable<float, 1> mean(channel(-0.5f, 0.5f, 10));
    tf::Variable<float, 1> variance(channel(0.1f, 3.0f, 11));
    auto body = [&](const tf::Tensor<float, 4>& x) {
      auto h = depthwise ? tf::nn::depthwise_conv2d(x, w, {.strides = 2, .padding = "SAME"})
                         : tf::nn::conv2d(x, w, {.strides = 1, .padding = "SAME"});
      return tf::nn::relu6(
          tf::nn::fused_batch_norm(h, gamma, beta, mean, variance, {.is_training = false}) * 2.0f);
    };
    const auto x = tf::random::uniform<float>({k.n, k.h, k.h, k.c_in},
                                              {.minval = -2, .maxval = 2, .seed = 12});
    auto f = tf::function(body);
    CHECK(values_of(f(x)) == values_of(body(x)));
    CHECK(values_of(f(x)) == values_of(body(x)));  // buffers reused from the first call
    CHECK(f.concrete_functions()[0]->output_epilogues() == 1);
  }
  // The convolution's output read after the chain too: the chain writes elsewhere.
  const auto w = tf::random::uniform<float>({3, 3, 4, 8}, {.seed = 13});
  const auto x = tf::random::uniform<float>({2, 6, 6, 4}, {.seed = 14});
  auto both = [&](const tf::Tensor<float, 4>& in) {
    auto h = tf::nn::conv2d(in, w, {.strides = 1, .padding = "SAME"});
    return std::tuple{tf::nn::relu6(h * 3.0f), h};
  };
  auto f = tf::function(both);
  const auto [chain, h] = f(x);
  const auto [chain_eager, h_eager] = both(x);
  CHECK(values_of(chain) == values_of(chain_eager));
  CHECK(values_of(h) == values_of(h_eager));
  CHECK(f.concrete_functions()[0]->output_epilogues() == 1);
}

TEST_CASE("a Pad before convolutions folds into their windows", "[function][passes]") {
  // Note [Padding folding]: MobileNetV2's ZeroPadding2D before a VALID depthwise convolution with
  // stride 2, and a Conv2D the same way; in a training step the filter gradient reads the padded
  // value too, and folds as well, and the input gradient computes the unpadded rows and columns
  // only (Pad's gradient, a Slice, folds into it). Values and gradients are eager's, bitwise.
  struct Case {
    const char* kind;
    std::int64_t h, c, stride, taps;
    std::int64_t top, bottom, left, right;
  };
  // A 1x1 window padded below and to the right only is no plain matrix product.
  for (const Case& k :
       {Case{"depthwise", 9, 24, 2, 3, 0, 1, 0, 1}, Case{"depthwise", 8, 5, 1, 3, 1, 1, 2, 0},
        Case{"conv2d", 9, 3, 2, 3, 1, 1, 1, 1}, Case{"conv2d", 7, 4, 1, 3, 0, 2, 3, 1},
        Case{"conv2d", 5, 8, 1, 1, 0, 1, 0, 1}}) {
    INFO(k.kind << " h " << k.h << " c " << k.c << " stride " << k.stride << " taps " << k.taps);
    const bool depthwise = std::string(k.kind) == "depthwise";
    const auto w = tf::random::uniform<float>({k.taps, k.taps, k.c, depthwise ? 1 : 6},
                                              {.minval = -0.5f, .maxval = 0.5f, .seed = 21});
    auto body = [&](const tf::Tensor<float, 4>& x, const tf::Tensor<float, 4>& filter) {
      tf::GradientTape tape;
      tape.watch(x);
      tape.watch(filter);
      const auto padded = tf::pad(x, {{0, 0}, {k.top, k.bottom}, {k.left, k.right}, {0, 0}});
      const auto y =
          depthwise ? tf::nn::depthwise_conv2d(padded, filter, {.strides = k.stride})
                    : tf::nn::conv2d(padded, filter, {.strides = k.stride, .padding = "VALID"});
      auto [dx, dw] = tape.gradient(tf::reduce_sum(y * y), x, filter);
      return std::tuple{y, *dx, *dw};
    };
    const auto x =
        tf::random::uniform<float>({2, k.h, k.h, k.c}, {.minval = -2, .maxval = 2, .seed = 22});
    auto f = tf::function(body);
    const auto [y, dx, dw] = f(x, w);
    const auto [ey, edx, edw] = body(x, w);
    CHECK(values_of(y) == values_of(ey));
    CHECK(values_of(dx) == values_of(edx));
    CHECK(values_of(dw) == values_of(edw));
    CHECK(report_of(f).paddings_folded == 1);
    CHECK(report_of(f).crops_folded == 1);
    const auto& graph = f.concrete_functions()[0]->optimized_graph();
    CHECK(std::none_of(graph.nodes.begin(), graph.nodes.end(),
                       [](const auto& node) { return node.op == "Pad"; }));
    CHECK(std::none_of(graph.nodes.begin(), graph.nodes.end(),
                       [](const auto& node) { return node.op == "Slice"; }));
    int explicit_nodes = 0;
    for (const auto& node : graph.nodes) {
      for (const auto& [name, value] : node.attrs) {
        explicit_nodes += name == "padding" && value == tf::AttrValue("EXPLICIT") ? 1 : 0;
      }
    }
    CHECK(explicit_nodes == 3);  // the convolution and its two gradients
    CHECK_THAT(optimized_listing(f), Catch::Contains("explicit_paddings"));
    // The graph as traced keeps the Pad (export and TensorBoard's "before" show it).
    CHECK_THAT(f.concrete_functions()[0]->to_string(), Catch::Contains("Pad"));
  }
}

TEST_CASE("a Pad stays where a reader cannot take it", "[function][passes]") {
  const auto w = tf::random::uniform<float>({3, 3, 4, 1}, {.seed = 23});
  const auto x = tf::random::uniform<float>({1, 6, 6, 4}, {.seed = 24});
  auto folded = [](const auto& f) { return report_of(f).paddings_folded; };
  // The padded value is also returned.
  auto returned = tf::function([&](const tf::Tensor<float, 4>& in) {
    auto padded = tf::pad(in, {{0, 0}, {1, 1}, {1, 1}, {0, 0}});
    return std::tuple{tf::nn::depthwise_conv2d(padded, w), padded};
  });
  (void)returned(x);
  CHECK(folded(returned) == 0);
  // Another op reads it too.
  auto shared = tf::function([&](const tf::Tensor<float, 4>& in) {
    auto padded = tf::pad(in, {{0, 0}, {1, 1}, {1, 1}, {0, 0}});
    return tf::reduce_sum(tf::nn::depthwise_conv2d(padded, w)) + tf::reduce_sum(padded);
  });
  (void)shared(x);
  CHECK(folded(shared) == 0);
  // Padded channels, or a SAME convolution (which pads by itself).
  const auto w5 = tf::random::uniform<float>({3, 3, 5, 1}, {.seed = 25});
  auto channels = tf::function([&](const tf::Tensor<float, 4>& in) {
    return tf::nn::depthwise_conv2d(tf::pad(in, {{0, 0}, {1, 1}, {1, 1}, {0, 1}}), w5);
  });
  (void)channels(x);
  CHECK(folded(channels) == 0);
  auto same = tf::function([&](const tf::Tensor<float, 4>& in) {
    return tf::nn::depthwise_conv2d(tf::pad(in, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}), w,
                                    {.padding = "SAME"});
  });
  CHECK(values_of(same(x)) ==
        values_of(tf::nn::depthwise_conv2d(tf::pad(x, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}), w,
                                           {.padding = "SAME"})));
  CHECK(folded(same) == 0);
  // remapping off.
  const OptionsScope off({.remapping = false});
  auto plain = tf::function([&](const tf::Tensor<float, 4>& in) {
    return tf::nn::depthwise_conv2d(tf::pad(in, {{0, 0}, {1, 1}, {1, 1}, {0, 0}}), w);
  });
  (void)plain(x);
  CHECK(folded(plain) == 0);
}

TEST_CASE("a long chain over one chunk is cut into a piece per thread", "[function][passes]") {
  using tf::detail::FusedChunks;
  using tf::detail::split_for_threads;
  const auto cut = [](FusedChunks planned, std::int64_t elements, std::int64_t unit,
                      std::int64_t task, int threads) {
    const FusedChunks c = split_for_threads(planned, elements, unit, task, threads);
    return std::pair<std::int64_t, std::int64_t>{c.chunk, c.chunks};
  };
  using Cut = std::pair<std::int64_t, std::int64_t>;
  // 1000 elements at 327 a task: one piece per thread, of whole packets, none under a task.
  CHECK(cut({1024, 1}, 1000, 16, 327, 2) == Cut{512, 2});
  CHECK(cut({1024, 1}, 1000, 16, 327, 4) == Cut{336, 3});
  CHECK(cut({1024, 1}, 1000, 256, 327, 2) == Cut{512, 2});  // ending in a sum: whole blocks
  // A short end joins the piece before; where that leaves one piece, the plan stands.
  CHECK(cut({1280, 1}, 1030, 256, 256, 4) == Cut{512, 2});
  CHECK(cut({576, 1}, 520, 256, 256, 2) == Cut{576, 1});
  // The plan stands on one thread, under two tasks' work, and where it has several chunks
  // (their tasks then take whole chunks).
  CHECK(cut({1024, 1}, 1000, 16, 327, 1) == Cut{1024, 1});
  CHECK(cut({1024, 1}, 1000, 16, 8192, 2) == Cut{1024, 1});
  CHECK(cut({1024, 3}, 3015, 16, 327, 2) == Cut{1024, 3});
  CHECK(cut({4096, 1}, 4000, 4096, 256, 2) == Cut{4096, 1});  // a unit longer than a piece

  // Traced, such chains give eager's bits, the ragged ends and a fused sum included.
  const int threads = tf::backend::cpu::ThreadPool::global().num_threads();
  if (threads < 2) {
    WARN("one thread: the chains below run unsplit");
  }
  auto chain = [](const auto& x) {
    auto y = x;
    for (int i = 0; i < 10; ++i) {
      y = x * tf::tanh(y * 0.9f + 0.1f) - x;
    }
    return y;
  };
  auto traced = tf::function([&](const tf::Tensor<float, 1>& x) {
    return std::make_tuple(chain(x), tf::reduce_sum(chain(x * 2.0f)));
  });
  for (const std::int64_t n : {1000, 1001, 1023, 1024, 700, 520}) {
    auto x = tf::random::uniform<float>({n}, {.minval = -2.0f, .maxval = 2.0f, .seed = 7});
    auto [y, s] = traced(x);
    INFO(n << " elements");
    CHECK(bitwise_equal(y, chain(x)));
    CHECK(bitwise_equal(s, tf::reduce_sum(chain(x * 2.0f))));
  }
}

TEST_CASE("a call holds no tensor once it returns", "[function][passes]") {
  // The executor resets at the end of a run only the slots no node releases (constants,
  // outputs, values nothing reads); every other value must already be gone, fused or not.
  auto body = [](const tf::Tensor<float, 2>& x) {
    auto h = tf::matmul(x, x);
    auto unread = tf::exp(h) * 3.0f;  // kept where pruning is off
    (void)unread;
    return std::tuple{tf::tanh(h * 0.5f) + x, h - 1.0f, h};
  };
  auto x = tf::random::uniform<float>({32, 32}, {.seed = 4});
  for (const Options& options :
       {Options{}, Options{.remapping = false}, Options{.disable_model_pruning = true},
        Options{.disable_meta_optimizer = true}}) {
    OptionsScope scope(options);
    auto f = tf::function(body);
    (void)f(x);  // trace outside the measurement
    tf::config::experimental::reset_memory_stats("CPU:0");
    const auto before = tf::config::experimental::get_memory_info("CPU:0").current;
    tf::detail::devices::host_accounting.store(true);
    {
      auto [y, z, h] = f(x);
      CHECK(tf::config::experimental::get_memory_info("CPU:0").current > before);
      CHECK(values_of(h) == values_of(tf::matmul(x, x)));
    }
    tf::detail::devices::host_accounting.store(false);
    CHECK(tf::config::experimental::get_memory_info("CPU:0").current == before);
  }
}

TEST_CASE("an outside tape differentiates through captured constants", "[function][passes]") {
  // Folded in the optimized graph; a recording tape runs the graph as traced and sees them.
  auto c = tf::constant(3.0f);
  auto f = tf::function([&](const tf::Tensor<float, 1>& x) { return x * (c * c); });
  auto x = tf::constant<float>({1, 2});
  CHECK(values_of(f(x)) == std::vector<float>{9, 18});
  CHECK(report_of(f).constants_folded == 1);
  tf::GradientTape tape;
  tape.watch(c);
  auto y = tf::reduce_sum(f(x));
  auto dc = tape.gradient(y, c);
  REQUIRE(dc.has_value());
  CHECK(dc->item() == Approx(2 * 3.0f * (1 + 2)));
}

TEST_CASE("variable updates and reads keep their order", "[function][passes]") {
  tf::Variable<float, 1> v(tf::constant<float>({1, 2}));
  auto f = tf::function([&](const tf::Tensor<float, 1>& x) {
    auto before = v.read_value() * 1.0f;  // reads through to the read, which shares v's buffer
    v.assign_add(x);                      // so the update must not change `before`
    auto after = v.read_value() * 1.0f;   // the same op on another read: not merged
    return before + after * 100.0f;
  });
  CHECK(values_of(f(tf::constant<float>({10, 20}))) == std::vector<float>{1101, 2202});
  CHECK(values_of(f(tf::constant<float>({10, 20}))) == std::vector<float>{2111, 4222});
  CHECK(report_of(f).simplified == 2);
  CHECK(report_of(f).common_subexpressions == 0);
}

// A random program over a 2-D argument: elementwise ops, neutral constants, repeats, reshapes
// (to the same shape, through another one inside a chain, and chains of them), transposes,
// identities, rows repeated along the first axis and means over a middle axis; it returns two
// of its values and the gradient of their sum with respect to the argument, taken by a tape
// inside the traced body (the sums end fused chains: over the larger argument, in several
// blocks and chunks).
struct Program {
  struct Step {
    int op;
    int a;
    int b;
  };
  std::vector<Step> steps;
  int out0 = 0;
  int out1 = 0;
};

Program random_program(std::mt19937& rng) {
  Program p;
  const int n = std::uniform_int_distribution<int>(3, 14)(rng);
  for (int i = 0; i < n; ++i) {
    const int values = i + 1;  // value 0 is the argument
    std::uniform_int_distribution<int> pick(0, values - 1);
    // Half the steps continue the latest value: chains let neutral ops meet signed zeros.
    const int a = std::bernoulli_distribution(0.5)(rng) ? values - 1 : pick(rng);
    Program::Step s{std::uniform_int_distribution<int>(0, 19)(rng), a, pick(rng)};
    if (s.op == 13 && !p.steps.empty()) {  // repeat an earlier step: a common subexpression
      s = p.steps[std::uniform_int_distribution<std::size_t>(0, p.steps.size() - 1)(rng)];
    }
    p.steps.push_back(s);
  }
  p.out0 = n;  // the latest value
  p.out1 = std::uniform_int_distribution<int>(0, n)(rng);
  return p;
}

// Runs `p` on x of element type T. Integer programs take the steps that keep to integers (and
// cannot overflow in 14 steps: at most a doubling each); their gradient is zeros.
template <class T>
std::tuple<tf::Tensor<T, 2>, tf::Tensor<T, 2>, tf::Tensor<T, 2>> run_program(
    const Program& p, const tf::Tensor<T, 2>& x) {
  constexpr bool real = std::is_floating_point_v<T>;
  const auto c = [](double value) { return tf::constant(static_cast<T>(value)); };
  const auto& d = x.dims();
  tf::GradientTape tape;
  if constexpr (real) {
    tape.watch(x);
  }
  std::vector<tf::Tensor<T, 2>> v{x};
  for (const auto& s : p.steps) {
    const auto& a = v[static_cast<std::size_t>(s.a)];
    const auto& b = v[static_cast<std::size_t>(s.b)];
    switch (s.op) {
      case 0:
        v.push_back(a + b);
        break;
      case 1:
        if constexpr (real) {
          v.push_back(a * b);
        } else {
          v.push_back(a - b);
        }
        break;
      case 2:
        v.push_back(a - b);
        break;
      case 3:
        v.push_back(a * c(1));
        break;
      case 4:
        v.push_back(a + c(0));
        break;
      case 5:
        v.push_back(a - c(0));
        break;
      case 6:
        if constexpr (real) {
          v.push_back(a / c(1));
        } else {
          v.push_back(c(1) * a);
        }
        break;
      case 7:
        v.push_back(tf::identity(a));
        break;
      case 8:
        if constexpr (real) {
          v.push_back(tf::exp(a * c(0.25)));
        } else {
          v.push_back(b + a);
        }
        break;
      case 9:
        v.push_back(tf::reshape(a, {d[0], d[1]}));
        break;
      case 10:
        v.push_back(tf::transpose(tf::transpose(a)));
        break;
      case 11:
        if constexpr (real) {
          v.push_back(tf::tanh(a) * (c(2) * c(0.5)));
        } else {
          v.push_back(a * (c(2) - c(1)));
        }
        break;
      case 14:  // a bias: a constant row repeated along the first axis
        v.push_back(a + tf::range<T>(T{1}, static_cast<T>(d[1] + 1), T{1}));
        break;
      case 15:  // a row known only at run time
        if constexpr (real) {
          v.push_back(a * tf::reduce_mean(b, 0) - tf::reduce_max(a, 0));
        } else {
          v.push_back(a - tf::reduce_max(a, 0));
        }
        break;
      case 16:  // Relu6 and, in the gradient, Relu6Grad: both clamps are reached
        if constexpr (real) {
          v.push_back(tf::nn::relu6(a * c(4)));
        } else {
          v.push_back(tf::maximum(a, c(0)));
        }
        break;
      case 17: {  // through another shape of the same elements, with a bias in that shape
        auto bias = tf::range<T>(T{1}, static_cast<T>(d[0] + 1), T{1});
        v.push_back(
            tf::reshape(tf::reshape(a, {d[1], d[0]}) * c(real ? 1.5 : 1) + bias, {d[0], d[1]}));
        break;
      }
      case 18: {  // flat, then the other shape, then back: the passes fold the reshapes
        auto turned = tf::reshape(tf::reshape(a, {-1}), {d[1], d[0]});
        v.push_back(tf::reshape(turned * c(real ? 0.5 : 1), {-1, d[1]}));
        break;
      }
      case 19:  // a mean over a middle axis ([rows, columns, 20] -> [rows, 20]) ends a chain
        if constexpr (real) {
          int const middle[1] = {1};
          auto spread = tf::reshape(a, {d[0], d[1], 1}) * tf::range<T>(T{1}, T{21}, T{1});
          auto pooled = tf::reduce_mean(tf::tanh(spread * c(0.5)), middle);
          v.push_back(a - tf::reduce_mean(pooled, 1, tf::keepdims));
        } else {
          v.push_back(b - a);
        }
        break;
      default:
        v.push_back(a * c(real ? -0.0 : 0));  // -0 where a > 0
        break;
    }
  }
  const auto& y0 = v[static_cast<std::size_t>(p.out0)];
  const auto& y1 = v[static_cast<std::size_t>(p.out1)];
  if constexpr (real) {
    auto dx = tape.gradient(tf::reduce_sum(y0) + tf::reduce_sum(y1), x);
    return {y0, y1, dx.has_value() ? *dx : tf::zeros_like(x)};
  } else {
    return {y0, y1, tf::zeros_like(x)};
  }
}

// `trials` random programs on T, optimized against unoptimized; returns how many the passes
// changed. Shapes: `shape(trial)`.
template <class T>
int check_random_programs(std::uint32_t seed, int trials, auto shape) {
  std::mt19937 rng(seed);
  int changed = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const Program p = random_program(rng);
    auto body = [&p](const tf::Tensor<T, 2>& x) { return run_program(p, x); };
    const std::pair<std::int64_t, std::int64_t> dims = shape(trial, rng);
    const std::int64_t rows = dims.first;
    const std::int64_t columns = dims.second;
    auto optimized = tf::function(body);
    auto plain = [&] {
      OptionsScope scope({.disable_meta_optimizer = true});
      auto f = tf::function(body);
      (void)f(tf::zeros<T>({rows, columns}));  // traced now, with the passes off
      return f;
    }();
    auto x = [&] {
      if constexpr (std::is_floating_point_v<T>) {
        return tf::random::uniform<T>({rows, columns}, {.minval = -2, .maxval = 2, .seed = trial});
      } else {
        return tf::random::uniform<T>({rows, columns}, {.minval = -3, .maxval = 4, .seed = trial});
      }
    }();
    auto [a0, a1, ag] = optimized(x);
    auto [b0, b1, bg] = plain(x);
    INFO("trial " << trial << " of [" << rows << ", " << columns << "]\n"
                  << optimized.concrete_functions()[0]->to_string());
    REQUIRE(bitwise_equal(a0, b0));
    REQUIRE(bitwise_equal(a1, b1));
    REQUIRE(bitwise_equal(ag, bg));
    changed += report_of(optimized).changed() ? 1 : 0;
    CHECK_FALSE(report_of(plain).changed());
  }
  return changed;
}

TEST_CASE("random programs: the passes change no value and no gradient", "[function][passes]") {
  // float on two shapes (the larger one is several chunks and sum blocks) ...
  const int changed = check_random_programs<float>(20261127, 300, [](int trial, std::mt19937&) {
    return trial % 3 == 0 ? std::pair<std::int64_t, std::int64_t>{67, 45}
                          : std::pair<std::int64_t, std::int64_t>{2, 3};
  });
  CHECK(changed > 200);  // the programs exercise the passes
  // ... and double and int32 on random shapes, ragged chunk ends included.
  const auto any_shape = [](int, std::mt19937& rng) {
    return std::pair<std::int64_t, std::int64_t>{
        std::uniform_int_distribution<std::int64_t>(1, 90)(rng),
        std::uniform_int_distribution<std::int64_t>(1, 70)(rng)};
  };
  CHECK(check_random_programs<double>(20261206, 80, any_shape) > 50);
  CHECK(check_random_programs<std::int32_t>(20261207, 80, any_shape) > 50);
}

}  // namespace test_function_graph_passes
