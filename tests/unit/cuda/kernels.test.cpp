// The CUDA kernels against the CPU kernels on the same inputs: elementwise ops with every
// broadcasting pattern, matrix products (transposes, batches, broadcast batches), gradients
// through them, tensors in GPU memory (placement, copies, host reads and writes, variables),
// and memory_limit as a typed error. Tolerances: elementwise results are exact (the same IEEE
// operation on each element); products allow a relative 1e-5 (float) for cuBLAS's different
// summation order, checked against the CPU's result; transcendental functions (exp, log, tanh,
// sigmoid, and softmax and the loss built on them) allow 1e-6 (float) and 1e-13 (double) for
// CUDA's and Eigen's differently rounded implementations; float sums allow 1e-5 and cuDNN's
// convolutions 1e-4; pooling sums in the CPU's order (gradients within 1e-6).
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/config.hpp>
#include <tapeflow/tapeflow.hpp>

#include "gpu_available.hpp"

namespace test_cuda_kernels {
namespace tf = tapeflow;
namespace config = tf::config;

const std::string gpu0 = "/job:localhost/replica:0/task:0/device:GPU:0";
const std::string gpu1 = "/job:localhost/replica:0/task:0/device:GPU:1";

template <class T, std::size_t R>
tf::Tensor<T, R> random_tensor(const std::array<std::int64_t, R>& dims, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  auto t = tf::Tensor<T, R>::uninitialized(dims);
  for (T& v : t.mutable_values()) {
    v = static_cast<T>(std::is_integral_v<T> ? std::round(dist(engine) * 10) : dist(engine));
    if (v == T(0)) {
      v = T(1);  // divisors
    }
  }
  return t;
}

template <class T>
void check_close(const std::vector<T>& gpu, const std::vector<T>& cpu, double tolerance) {
  REQUIRE(gpu.size() == cpu.size());
  double worst = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    double const scale = std::max(1.0, std::abs(static_cast<double>(cpu[i])));
    worst = std::max(worst, std::abs(static_cast<double>(gpu[i]) - cpu[i]) / scale);
  }
  INFO("largest relative difference " << worst);
  CHECK(worst <= tolerance);
}

template <class T, std::size_t A, std::size_t B, class Op>
void compare_binary(const std::array<std::int64_t, A>& da, const std::array<std::int64_t, B>& db,
                    Op op) {
  auto a = random_tensor<T>(da, 1);
  auto b = random_tensor<T>(db, 2);
  auto on_cpu = op(a, b);
  auto scope = tf::device("/GPU:0");
  auto on_gpu = op(a, b);
  CHECK(on_gpu.device() == gpu0);
  check_close(on_gpu.numpy(), on_cpu.numpy(), 0.0);
}

TEST_CASE("GPU elementwise ops equal the CPU's for every broadcasting pattern", "[gpu]") {
  if (!tapeflow_test::gpu_available("GPU elementwise ops")) {
    return;
  }
  auto add = [](const auto& x, const auto& y) { return x + y; };
  auto sub = [](const auto& x, const auto& y) { return x - y; };
  auto mul = [](const auto& x, const auto& y) { return x * y; };
  auto div = [](const auto& x, const auto& y) { return x / y; };
  using D2 = std::array<std::int64_t, 2>;
  using D3 = std::array<std::int64_t, 3>;
  using D0 = std::array<std::int64_t, 0>;
  compare_binary<float>(D2{300, 257}, D2{300, 257}, add);     // same shape
  compare_binary<float>(D2{300, 257}, D0{}, sub);             // a single value
  compare_binary<float>(D3{3, 1, 40}, D2{70, 40}, mul);       // both broadcast
  compare_binary<float>(D2{64, 1}, D2{1, 33}, div);           // outer product shape
  compare_binary<double>(D3{5, 6, 7}, D3{5, 1, 7}, div);      // middle axis
  compare_binary<std::int32_t>(D2{100, 10}, D2{1, 10}, mul);  // integers
  compare_binary<std::int32_t>(D2{40, 9}, D2{40, 9}, div);    // truncating toward zero
  compare_binary<std::int64_t>(D2{40, 9}, D0{}, div);
  compare_binary<std::int64_t>(D0{}, D2{17, 3}, sub);  // scalar first
  compare_binary<float>(D2{0, 4}, D2{1, 4}, add);      // empty
  auto add_n = [](const auto& x, const auto& y) {
    return tf::detail::execute(tf::ops::AddN{}, x, y);
  };
  compare_binary<float>(D2{31, 7}, D2{31, 7}, add_n);  // the tape's gradient accumulation
  auto scope = tf::device("/GPU:0");
  CHECK_THROWS_WITH(tf::constant<std::int32_t>({4, 5}) / tf::constant<std::int32_t>({2, 0}),
                    "Div: integer division by zero");
}

template <class T, std::size_t R, class Op>
void compare_unary(const std::array<std::int64_t, R>& dims, Op op, double tolerance,
                   bool positive = false) {
  auto x = random_tensor<T>(dims, 31);
  if (positive) {
    x = tf::abs(x);
  }
  auto on_cpu = op(x);
  auto scope = tf::device("/GPU:0");
  auto on_gpu = op(x);
  CHECK(on_gpu.device() == gpu0);
  check_close(on_gpu.numpy(), on_cpu.numpy(), tolerance);
}

TEST_CASE("GPU unary ops equal the CPU's", "[gpu]") {
  if (!tapeflow_test::gpu_available("GPU unary ops")) {
    return;
  }
  using D2 = std::array<std::int64_t, 2>;
  D2 const dims{123, 77};
  auto each = [&]<class T>(double transcendental) {
    INFO("dtype " << tf::dtype_name(tf::dtype_v<T>));
    compare_unary<T>(
        dims, [](const auto& x) { return -x; }, 0.0);
    compare_unary<T>(
        dims, [](const auto& x) { return tf::square(x); }, 0.0);
    compare_unary<T>(
        dims, [](const auto& x) { return tf::abs(x); }, 0.0);
    compare_unary<T>(
        dims, [](const auto& x) { return tf::sign(x); }, 0.0);
    compare_unary<T>(
        dims, [](const auto& x) { return tf::nn::relu(x); }, 0.0);
    compare_unary<T>(
        dims, [](const auto& x) { return tf::exp(x); }, transcendental);
    compare_unary<T>(
        dims, [](const auto& x) { return tf::log(x); }, transcendental, true);
    compare_unary<T>(
        dims, [](const auto& x) { return tf::sqrt(x); }, transcendental, true);
    compare_unary<T>(
        dims, [](const auto& x) { return tf::tanh(x); }, transcendental);
    compare_unary<T>(
        dims, [](const auto& x) { return tf::sigmoid(x); }, transcendental);
  };
  each.template operator()<float>(1e-6);
  each.template operator()<double>(1e-13);
  compare_unary<std::int32_t>(
      dims, [](const auto& x) { return tf::abs(-x); }, 0.0);
  compare_unary<std::int64_t>(
      dims, [](const auto& x) { return tf::nn::relu(x); }, 0.0);
  // relu's gradient is ReluGrad on the GPU
  auto relu_gradient = [](const auto& x) {
    tf::Variable<float, 2> v(x);
    tf::GradientTape tape;
    auto y = tf::nn::relu(v.value()) * tf::Tensor<float, 0>(3.0f);
    return *tape.gradient(tf::reduce_sum(y), v);
  };
  compare_unary<float>(dims, relu_gradient, 0.0);
}

TEST_CASE("GPU maximum, minimum, comparisons and casts equal the CPU's", "[gpu]") {
  if (!tapeflow_test::gpu_available("GPU comparisons and casts")) {
    return;
  }
  using D2 = std::array<std::int64_t, 2>;
  using D1 = std::array<std::int64_t, 1>;
  auto maximum = [](const auto& x, const auto& y) { return tf::maximum(x, y); };
  auto minimum = [](const auto& x, const auto& y) { return tf::minimum(x, y); };
  compare_binary<float>(D2{70, 33}, D1{33}, maximum);
  compare_binary<std::int64_t>(D2{70, 33}, D2{70, 33}, minimum);
  auto squared_difference = [](const auto& x, const auto& y) {
    return tf::math::squared_difference(x, y);
  };
  compare_binary<float>(D2{70, 33}, D1{33}, squared_difference);
  compare_binary<std::int32_t>(D2{70, 33}, D2{70, 33}, squared_difference);
  auto pow = [](const auto& x, const auto& y) { return tf::pow(tf::abs(x), y); };
  auto on_cpu = pow(random_tensor<double>(D2{30, 7}, 75), random_tensor<double>(D1{7}, 76));
  {
    auto scope = tf::device("/GPU:0");
    auto on_gpu = pow(random_tensor<double>(D2{30, 7}, 75), random_tensor<double>(D1{7}, 76));
    CHECK(on_gpu.device() == gpu0);
    check_close(on_gpu.numpy(), on_cpu.numpy(), 1e-13);  // CUDA's pow and glibc's
  }
  auto bools = [](auto compare) {
    // whole numbers in [-2, 2]: ties included
    auto a = tf::cast<float>(tf::cast<std::int32_t>(random_tensor<float>(D2{50, 20}, 71)));
    auto b = tf::cast<float>(tf::cast<std::int32_t>(random_tensor<float>(D2{50, 20}, 72)));
    auto on_cpu = compare(a, b);
    auto scope = tf::device("/GPU:0");
    auto on_gpu = compare(a, b);
    CHECK(on_gpu.device() == gpu0);
    CHECK(on_gpu.numpy() == on_cpu.numpy());
  };
  bools([](const auto& x, const auto& y) { return tf::equal(x, y); });
  bools([](const auto& x, const auto& y) { return tf::not_equal(x, y); });
  bools([](const auto& x, const auto& y) { return tf::less(x, y); });
  bools([](const auto& x, const auto& y) { return tf::less_equal(x, y); });
  bools([](const auto& x, const auto& y) { return tf::greater(x, y); });
  bools([](const auto& x, const auto& y) { return tf::greater_equal(x, y); });
  auto x = random_tensor<float>(D2{64, 9}, 73) * tf::Tensor<float, 0>(100.0f);
  auto casts = [&](auto cast) {
    auto on_cpu = cast(x);
    auto scope = tf::device("/GPU:0");
    auto on_gpu = cast(x);
    CHECK(on_gpu.device() == gpu0);
    CHECK(on_gpu.numpy() == on_cpu.numpy());
  };
  casts([](const auto& v) { return tf::cast<std::int32_t>(v); });  // truncation toward zero
  casts([](const auto& v) { return tf::cast<std::int64_t>(v); });
  casts([](const auto& v) { return tf::cast<double>(v); });
  casts([](const auto& v) { return tf::cast<float>(tf::cast<bool>(tf::cast<std::int32_t>(v))); });
  // the gradient of maximum routes through GreaterEqual, Less and Cast on the GPU
  auto a = random_tensor<float>(D2{20, 8}, 74);
  auto gradient = [&](const char* device) {
    auto scope = tf::device(device);
    tf::Variable<float, 2> v(a);
    tf::GradientTape tape;
    auto y = tf::minimum(tf::maximum(v.value(), tf::Tensor<float, 0>(-0.5f)),
                         tf::Tensor<float, 0>(0.5f));
    return tape.gradient(tf::reduce_sum(y * y), v)->numpy();
  };
  CHECK(gradient("/GPU:0") == gradient("/cpu:0"));
}

TEST_CASE("GPU reductions equal the CPU's over any axes", "[gpu]") {
  if (!tapeflow_test::gpu_available("GPU reductions")) {
    return;
  }
  using D3 = std::array<std::int64_t, 3>;
  auto x = random_tensor<float>(D3{37, 29, 41}, 41);
  auto i = random_tensor<std::int64_t>(D3{37, 29, 41}, 42);
  auto compare = [](const auto& input, auto reduce, double tolerance) {
    auto on_cpu = reduce(input);
    auto scope = tf::device("/GPU:0");
    auto on_gpu = reduce(input);
    CHECK(on_gpu.device() == gpu0);
    CHECK(on_gpu.dims() == on_cpu.dims());
    check_close(on_gpu.numpy(), on_cpu.numpy(), tolerance);
  };
  for (double tolerance : {1e-5, 0.0}) {
    auto run = [&](const auto& t) {
      compare(
          t, [](const auto& v) { return tf::reduce_sum(v); }, tolerance);
      compare(
          t, [](const auto& v) { return tf::reduce_sum(v, 0); }, tolerance);
      compare(
          t, [](const auto& v) { return tf::reduce_sum(v, 2, tf::keepdims); }, tolerance);
      compare(
          t,
          [](const auto& v) {
            return tf::reduce_mean(v, {0, 2});
          },
          tolerance);
      compare(
          t, [](const auto& v) { return tf::reduce_max(v, 1); }, 0.0);
      compare(
          t,
          [](const auto& v) {
            return tf::reduce_min(v, {1, 2});
          },
          0.0);
    };
    if (tolerance > 0) {
      run(x);
    } else {
      run(i);  // integers: exact in any order
    }
  }
  // the gradient of a max splits ties on the GPU as on the CPU
  auto ties = tf::constant<float>({{1.0f, 3.0f, 3.0f}, {2.0f, 0.0f, 1.0f}});
  auto max_gradient = [](const auto& t) {
    tf::Variable<float, 2> v(t);
    tf::GradientTape tape;
    auto m = tf::reduce_max(v.value(), 1);
    return *tape.gradient(tf::reduce_sum(m * m), v);
  };
  compare(ties, max_gradient, 0.0);
}

TEST_CASE("GPU softmax, cross-entropy and one-hot equal the CPU's, gradients included", "[gpu]") {
  if (!tapeflow_test::gpu_available("GPU softmax and cross-entropy")) {
    return;
  }
  using D2 = std::array<std::int64_t, 2>;
  using D3 = std::array<std::int64_t, 3>;
  auto logits = random_tensor<float>(D2{300, 10}, 51);
  auto labels = tf::Tensor<std::int32_t, 1>::uninitialized({300});
  for (std::int64_t r = 0; r < 300; ++r) {
    labels.mutable_values()[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(r * 7 % 10);
  }
  auto compare = [](auto compute, double tolerance) {
    auto on_cpu = compute();
    auto scope = tf::device("/GPU:0");
    auto on_gpu = compute();
    CHECK(on_gpu.device() == gpu0);
    check_close(on_gpu.numpy(), on_cpu.numpy(), tolerance);
  };
  compare([&] { return tf::nn::softmax(logits); }, 1e-6);
  compare([&] { return tf::nn::log_softmax(logits); }, 1e-6);
  auto middle = random_tensor<double>(D3{4, 9, 5}, 52);
  compare([&] { return tf::nn::softmax(middle, 1); }, 1e-13);
  compare([&] { return tf::one_hot(labels, 10); }, 0.0);
  compare([&] { return tf::one_hot<double>(tf::cast<std::int64_t>(labels), 12, 2.0, -1.0, 0); },
          0.0);
  compare([&] { return tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits); }, 1e-6);
  // d mean(loss) / d logits: softmax, one-hot, subtraction and product, all on the GPU
  compare(
      [&] {
        tf::Variable<float, 2> v(logits);
        tf::GradientTape tape;
        auto loss =
            tf::reduce_mean(tf::nn::sparse_softmax_cross_entropy_with_logits(labels, v.value()));
        return *tape.gradient(loss, v);
      },
      1e-6);
  auto scope = tf::device("/GPU:0");
  auto bad = tf::constant<std::int32_t>({1, 10, 2});
  CHECK_THROWS_AS(
      tf::nn::sparse_softmax_cross_entropy_with_logits(bad, random_tensor<float>(D2{3, 10}, 53)),
      tf::invalid_argument);
  CHECK_THROWS_WITH(
      tf::nn::sparse_softmax_cross_entropy_with_logits(bad, random_tensor<float>(D2{3, 10}, 53)),
      Catch::Contains("received a label value of 10 (at index 1)"));
}

TEST_CASE("GPU convolutions and pooling equal the CPU's, gradients included", "[gpu]") {
  if (!tapeflow_test::gpu_available("GPU convolutions and pooling")) {
    return;
  }
  using D4 = std::array<std::int64_t, 4>;
  // value, d/d input and d/d filter of sum(y^2)/2 for y = conv2d(x, w); cuDNN (FP32 engines)
  // and the CPU sum in different orders, hence 1e-4.
  auto conv = [](const D4& x_dims, const D4& w_dims, tf::nn::Conv2DOptions options) {
    auto x = random_tensor<float>(x_dims, 61);
    auto w = random_tensor<float>(w_dims, 62);
    auto run = [&](const char* device) {
      auto scope = tf::device(device);
      tf::Variable<float, 4> vx(x);
      tf::Variable<float, 4> vw(w);
      tf::GradientTape tape;
      auto y = tf::nn::conv2d(vx.value(), vw.value(), options);
      auto loss = tf::reduce_sum(y * y) * tf::Tensor<float, 0>(0.5f);
      auto [dx, dw] = tape.gradient(loss, vx, vw);
      return std::tuple{y, *dx, *dw};
    };
    auto [y_cpu, dx_cpu, dw_cpu] = run("/cpu:0");
    auto [y_gpu, dx_gpu, dw_gpu] = run("/GPU:0");
    CHECK(y_gpu.device() == gpu0);
    CHECK(dx_gpu.device() == gpu0);
    CHECK(dw_gpu.device() == gpu0);
    CHECK(y_gpu.dims() == y_cpu.dims());
    check_close(y_gpu.numpy(), y_cpu.numpy(), 1e-4);
    check_close(dx_gpu.numpy(), dx_cpu.numpy(), 1e-4);
    check_close(dw_gpu.numpy(), dw_cpu.numpy(), 1e-4);
  };
  conv(D4{4, 16, 16, 1}, D4{5, 5, 1, 8}, {.padding = "SAME"});  // the seed CNN's first layer
  conv(D4{4, 8, 8, 8}, D4{5, 5, 8, 16}, {.padding = "SAME"});
  conv(D4{3, 17, 19, 3}, D4{3, 3, 3, 6}, {});                                 // VALID
  conv(D4{2, 17, 19, 4}, D4{3, 3, 4, 5}, {.strides = 2, .padding = "SAME"});  // asymmetric pad
  conv(D4{2, 15, 15, 2}, D4{3, 3, 2, 3}, {.padding = "SAME", .dilations = 2});
  conv(D4{2, 10, 9, 3}, D4{1, 1, 3, 7}, {.strides = {2, 3}});

  auto pool = [](const D4& dims, auto pooling) {
    auto x = random_tensor<float>(dims, 63);
    auto run = [&](const char* device) {
      auto scope = tf::device(device);
      tf::Variable<float, 4> v(x);
      tf::GradientTape tape;
      auto y = pooling(v.value());
      auto loss = tf::reduce_sum(y * y);
      return std::pair{y, *tape.gradient(loss, v)};
    };
    auto [y_cpu, dx_cpu] = run("/cpu:0");
    auto [y_gpu, dx_gpu] = run("/GPU:0");
    CHECK(y_gpu.device() == gpu0);
    CHECK(dx_gpu.device() == gpu0);
    check_close(y_gpu.numpy(), y_cpu.numpy(), 0.0);  // the same sums in the same order
    check_close(dx_gpu.numpy(), dx_cpu.numpy(), 1e-6);
  };
  pool(D4{4, 16, 16, 8}, [](const auto& v) { return tf::nn::max_pool2d(v, 2, 2, "SAME"); });
  pool(D4{3, 9, 11, 5}, [](const auto& v) { return tf::nn::max_pool2d(v, 3, 1, "SAME"); });
  pool(D4{3, 9, 11, 5}, [](const auto& v) {
    return tf::nn::max_pool2d(v, {3, 2}, {2, 1}, "VALID");
  });
  pool(D4{4, 16, 16, 8}, [](const auto& v) { return tf::nn::avg_pool2d(v, 2, 2, "VALID"); });
  pool(D4{3, 9, 11, 5}, [](const auto& v) { return tf::nn::avg_pool2d(v, 3, 2, "SAME"); });

  // float64 convolutions have no cuDNN engine here: placed on the CPU
  auto scope = tf::device("/GPU:0");
  auto y = tf::nn::conv2d(random_tensor<double>(D4{1, 5, 5, 2}, 64),
                          random_tensor<double>(D4{3, 3, 2, 2}, 65), {});
  CHECK(y.device().ends_with("CPU:0"));
}

TEST_CASE("GPU matrix products equal the CPU's", "[gpu]") {
  if (!tapeflow_test::gpu_available("GPU matrix products")) {
    return;
  }
  auto check_matmul = [](auto a, auto b, tf::MatMulOptions options) {
    auto on_cpu = tf::matmul(a, b, options);
    auto scope = tf::device("/GPU:0");
    auto on_gpu = tf::matmul(a, b, options);
    CHECK(on_gpu.device() == gpu0);
    CHECK(on_gpu.dims() == on_cpu.dims());
    check_close(on_gpu.numpy(), on_cpu.numpy(), 1e-5);
  };
  using D2 = std::array<std::int64_t, 2>;
  using D3 = std::array<std::int64_t, 3>;
  using D4 = std::array<std::int64_t, 4>;
  check_matmul(random_tensor<float>(D2{64, 96}, 3), random_tensor<float>(D2{96, 80}, 4), {});
  check_matmul(random_tensor<float>(D2{96, 64}, 3), random_tensor<float>(D2{96, 80}, 4),
               {.transpose_a = true});
  check_matmul(random_tensor<float>(D2{64, 96}, 3), random_tensor<float>(D2{80, 96}, 4),
               {.transpose_b = true});
  check_matmul(random_tensor<float>(D2{96, 64}, 3), random_tensor<float>(D2{80, 96}, 4),
               {.transpose_a = true, .transpose_b = true});
  check_matmul(random_tensor<float>(D3{4, 32, 16}, 5), random_tensor<float>(D3{4, 16, 8}, 6), {});
  check_matmul(random_tensor<float>(D3{4, 32, 16}, 5), random_tensor<float>(D2{16, 8}, 6), {});
  check_matmul(random_tensor<float>(D4{2, 1, 8, 5}, 7), random_tensor<float>(D3{3, 5, 6}, 8), {});
  check_matmul(random_tensor<double>(D2{33, 17}, 9), random_tensor<double>(D2{17, 65}, 10), {});
  check_matmul(random_tensor<float>(D2{5, 0}, 9), random_tensor<float>(D2{0, 4}, 10), {});
}

TEST_CASE("gradients through GPU kernels equal the CPU's", "[gpu]") {
  if (!tapeflow_test::gpu_available("gradients through GPU kernels")) {
    return;
  }
  auto x = random_tensor<float>(std::array<std::int64_t, 2>{16, 12}, 11);
  auto w0 = random_tensor<float>(std::array<std::int64_t, 2>{12, 6}, 12);
  auto b0 = random_tensor<float>(std::array<std::int64_t, 1>{6}, 13);
  auto grads = [&](const char* device) {
    auto scope = tf::device(device);
    tf::Variable<float, 2> w(w0);
    tf::Variable<float, 1> b(b0);
    tf::GradientTape tape;
    auto y = tf::matmul(x, w) + b;
    auto loss = tf::reduce_sum(y * y / tf::Tensor<float, 0>(3.0f) - y);
    auto [dw, db] = tape.gradient(loss, w, b);
    return std::pair{dw->numpy(), db->numpy()};
  };
  auto const cpu = grads("/cpu:0");
  auto const gpu = grads("/GPU:0");
  check_close(gpu.first, cpu.first, 1e-5);
  check_close(gpu.second, cpu.second, 1e-5);
}

TEST_CASE("tensors in GPU memory: placement and copies and host reads and writes", "[gpu]") {
  if (!tapeflow_test::gpu_available("tensors in GPU memory")) {
    return;
  }
  auto scope = tf::device("/GPU:0");
  auto before = config::experimental::get_memory_info("GPU:0").current;
  auto a = tf::constant<float>({1.0f, 2.0f, 3.0f, 4.0f});
  CHECK(a.device() == gpu0);
  CHECK(config::experimental::get_memory_info("GPU:0").current >= before + 16);
  auto b = a * a;
  float* p = b.mutable_data();  // unique: written through its host copy
  p[0] = -1.0f;
  auto c = b + a;  // the GPU kernel sees the host write
  CHECK(c.numpy() == std::vector<float>{0.0f, 6.0f, 12.0f, 20.0f});
  auto r = tf::reshape(c, std::array<std::int64_t, 2>{2, 2});
  CHECK(r.device() == gpu0);
  CHECK(r(1, 0) == 12.0f);
  auto s = tf::reduce_sum(c);  // a GPU kernel; item() reads its host copy
  CHECK(s.device() == gpu0);
  CHECK(s.item() == 38.0f);
  tf::Variable<float, 1> v(a);
  v.assign_add(a);
  CHECK(v.value().device() == gpu0);
  CHECK((v.value() * a).numpy() == std::vector<float>{2.0f, 8.0f, 18.0f, 32.0f});
}

TEST_CASE("dtypes without a GPU kernel run on the CPU under soft placement", "[gpu]") {
  if (!tapeflow_test::gpu_available("dtypes without a GPU kernel fall back")) {
    return;
  }
  auto bytes = tf::constant<std::uint8_t>({1, 2, 3});
  auto ints = tf::constant<std::int32_t>({1, 2, 3});
  auto scope = tf::device("/GPU:0");
  auto sum = bytes + bytes;  // the elementwise kernels take float, double, int32, int64
  CHECK(sum.device().ends_with("CPU:0"));
  CHECK(sum.numpy() == std::vector<std::uint8_t>{2, 4, 6});
  CHECK((ints + ints).device() == gpu0);
  auto m = tf::constant<std::int32_t>({{1, 2}, {3, 4}});
  auto p = tf::matmul(m, m);  // cuBLAS: float and double only
  CHECK(p.device().ends_with("CPU:0"));
  CHECK(p.numpy() == std::vector<std::int32_t>{7, 10, 15, 22});
}

TEST_CASE("two logical GPUs on one card hold and exchange tensors", "[gpu]") {
  if (!tapeflow_test::gpu_available("two logical GPUs hold and exchange tensors")) {
    return;
  }
  auto gpu = config::list_physical_devices("GPU").at(0);
  config::set_logical_device_configuration(gpu, {{.memory_limit = 64}, {.memory_limit = 64}});
  tf::Tensor<float, 1> on0;
  {
    auto scope = tf::device("/GPU:0");
    on0 = tf::constant<float>({1.0f, 2.0f}) * tf::constant<float>({3.0f, 3.0f});
  }
  auto scope = tf::device("/GPU:1");
  auto on1 = on0 + on0;
  CHECK(on1.device() == gpu1);
  CHECK(on1.numpy() == std::vector<float>{6.0f, 12.0f});
  // 64 MiB each: a 48 MiB tensor fits once, the second is a typed error naming the device.
  auto big = tf::zeros<float>({12 * 1024 * 1024});
  CHECK(big.device() == gpu1);
  CHECK_THROWS_AS(tf::zeros<float>({12 * 1024 * 1024}), tf::resource_exhausted);
  CHECK_THROWS_WITH(tf::zeros<float>({12 * 1024 * 1024}),
                    Catch::Contains("OOM when allocating 50331648 bytes on "
                                    "/job:localhost/replica:0/task:0/device:GPU:1"));
  CHECK(config::experimental::get_memory_info("GPU:0").current < 1024);
}

TEST_CASE("linear regression trains on the GPU as on the CPU", "[gpu]") {
  if (!tapeflow_test::gpu_available("linear regression trains on the GPU")) {
    return;
  }
  auto x = random_tensor<float>(std::array<std::int64_t, 2>{256, 8}, 21);
  auto true_w = random_tensor<float>(std::array<std::int64_t, 2>{8, 1}, 22);
  auto y = tf::matmul(x, true_w);
  auto train = [&](const char* device) {
    auto scope = tf::device(device);
    tf::Variable<float, 2> w(tf::zeros<float>({8, 1}));
    auto const rate = tf::Tensor<float, 0>(0.05f / 256.0f);
    for (int step = 0; step < 100; ++step) {
      tf::GradientTape tape;
      auto error = tf::matmul(x, w) - y;
      auto loss = tf::reduce_sum(error * error);
      w.assign_sub(*tape.gradient(loss, w) * rate);
    }
    return w.value().numpy();
  };
  auto const cpu = train("/cpu:0");
  auto const gpu = train("/GPU:0");
  check_close(gpu, cpu, 1e-4);
  check_close(gpu, true_w.numpy(), 1e-2);
}

}  // namespace test_cuda_kernels
