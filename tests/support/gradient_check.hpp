// Central-difference gradient checks for tests: every differentiable op is checked in
// float64 against the tape's analytic gradient.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include <catch2/catch.hpp>

#include <tapeflow/autodiff/gradient_tape.hpp>
#include <tapeflow/core/constant.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>

namespace tapeflow_test {

namespace tf = tapeflow;

/// A copy of `x` with element `i` moved by `delta`.
template <std::size_t R>
tf::Tensor<double, R> perturbed(const tf::Tensor<double, R>& x, std::int64_t i, double delta) {
  auto v = x.numpy();
  v[static_cast<std::size_t>(i)] += delta;
  return tf::constant<double, R>(std::span<const double>(v), x.dims());
}

/// Checks d sum(f(inputs...) * w) / d input_k for every input against central differences,
/// where w is a fixed pseudo-random weighting (so non-scalar outputs are checked in every
/// element, not just their sum). `f` takes Tensor<double, R>... and returns a float64 tensor.
template <class Fun, std::size_t... R>
void check_gradients(Fun&& f, const tf::Tensor<double, R>&... inputs) {
  constexpr double eps = 1e-6;
  auto weigh = [](const auto& y) {
    auto v = y.numpy();
    std::vector<double> w(v.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
      w[i] = 0.5 + 0.37 * static_cast<double>((i * 7919) % 11) / 11.0;
    }
    return tf::reduce_sum(y * tf::constant<double, std::remove_cvref_t<decltype(y)>::rank_v>(
                                  std::span<double const>(w), y.dims()));
  };
  auto scalar = [&](const auto&... xs) { return weigh(f(xs...)).item(); };

  std::tuple<tf::Tensor<double, R>...> args{inputs...};
  std::size_t k = 0;
  auto check_one = [&](const auto& x) {
    tf::GradientTape tape({.persistent = true});
    std::apply([&](auto const&... xs) { (tape.watch(xs), ...); }, args);
    auto y = std::apply([&](auto const&... xs) { return weigh(f(xs...)); }, args);
    auto g = tape.gradient(y, x);
    REQUIRE(g.has_value());
    REQUIRE(g->dims() == x.dims());
    for (std::int64_t i = 0; i < x.num_elements(); ++i) {
      // Rebuild the arguments with input k perturbed at element i.
      auto eval = [&](double delta) {
        return [&]<std::size_t... J>(std::index_sequence<J...>) {
          return scalar((J == k ? perturbed(std::get<J>(args), i, delta) : std::get<J>(args))...);
        }(std::index_sequence_for<tf::Tensor<double, R>...>{});
      };
      double const numeric = (eval(eps) - eval(-eps)) / (2 * eps);
      double const analytic = g->values()[static_cast<std::size_t>(i)];
      INFO("input " << k << " element " << i << ": analytic " << analytic << " numeric "
                    << numeric);
      CHECK(analytic == Approx(numeric).epsilon(1e-5).margin(1e-6));
    }
    ++k;
  };
  std::apply([&](const auto&... xs) { (check_one(xs), ...); }, args);
}

/// Deterministic float64 test data in [-1, 1) of the given shape.
template <std::size_t R>
tf::Tensor<double, R> test_data(const std::array<std::int64_t, R>& dims, std::uint32_t seed = 1) {
  std::int64_t n = 1;
  for (auto d : dims) {
    n *= d;
  }
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<double>(s >> 8) / static_cast<double>(1u << 24) * 2.0 - 1.0;
  }
  return tf::constant<double, R>(std::span<const double>(v), dims);
}

}  // namespace tapeflow_test
