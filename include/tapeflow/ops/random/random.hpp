// Random tensors: normal, truncated_normal, uniform, and the global seed (TensorFlow:
// `tf.random.normal`, `tf.random.truncated_normal`, `tf.random.uniform`, `tf.random.set_seed`).
//
// Note [Random seeds]. Seeding follows TensorFlow's rules (`tf.random.set_seed`):
//   * global seed set, op seed set:   the pair (global, op) picks the stream;
//   * global seed set, op seed unset: the op seed is the number of random calls made since
//     set_seed (so a program that calls set_seed once gets the same values on every run);
//   * global seed unset, op seed set: the global seed defaults to 87654321 (as in TensorFlow);
//   * neither set: the values come from per-process entropy and differ on every run.
// Every (global seed, op seed) pair keeps a call counter, so calling `normal<float>({2},
// {.seed = 1})` twice gives two different tensors, and a fresh program repeats that sequence.
// `set_seed` resets all counters, so `set_seed(s)` followed by the same calls repeats the same
// values within one program too. The counters are process-wide and thread-safe; which calls
// see which counter values then depends on the order in which threads make them.
//
// Note [Philox]. Values come from Philox4x32-10 (Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3", SC 2011), a counter-based generator: a 64-bit key (from the seed pair) and a
// 128-bit counter (call number, element block) map to four random 32-bit words. Element i's
// value depends only on (seeds, call, i), so tensors are filled in parallel and the result does
// not depend on the thread count. The streams are not bit-identical to TensorFlow's (its
// kernels derive keys and split counters differently).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <map>
#include <mutex>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

// The OS's entropy (getentropy: glibc 2.25+, macOS, the BSDs) instead of std::random_device,
// whose <random> costs every including program about 0.2 s of parsing.
#if __has_include(<sys/random.h>)
#include <sys/random.h>
#define TAPEFLOW_HAS_GETENTROPY 1
#endif

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/op_concepts.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail::random_impl {

/// Philox4x32-10: four 32-bit random words from a 128-bit counter and a 64-bit key.
struct Philox4x32 {
  using Counter = std::array<std::uint32_t, 4>;
  using Key = std::array<std::uint32_t, 2>;

  static Counter generate(Counter ctr, Key key) noexcept {
    for (int round = 0; round < 10; ++round) {
      ctr = single_round(ctr, key);
      key[0] += 0x9E3779B9u;  // golden ratio
      key[1] += 0xBB67AE85u;  // sqrt(3) - 1
    }
    return ctr;
  }

 private:
  static Counter single_round(Counter const& c, Key const& k) noexcept {
    std::uint64_t const p0 = std::uint64_t{0xD2511F53u} * c[0];
    std::uint64_t const p1 = std::uint64_t{0xCD9E8D57u} * c[2];
    return {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<std::uint32_t>(p1),
            static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<std::uint32_t>(p0)};
  }
};

/// SplitMix64 finaliser: spreads a seed's bits over the whole key.
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// TensorFlow's default global seed when only an op seed is given (`DEFAULT_GRAPH_SEED`).
inline constexpr std::int64_t default_global_seed = 87654321;

/// The (seed, seed2) attributes of a random op; (0, 0) means "nondeterministic", as in
/// TensorFlow's kernels.
struct SeedPair {
  std::int64_t seed = 0;
  std::int64_t seed2 = 0;
};

/// Where one call draws from: Philox key and the call number (high counter half).
struct Stream {
  Philox4x32::Key key{};
  std::uint64_t call = 0;
};

/// Process-wide seeding state (see Note [Random seeds]).
class RandomState {
 public:
  static RandomState& instance() {
    static RandomState state;
    return state;
  }

  void set_global_seed(std::int64_t seed) {
    std::lock_guard lock(mutex_);
    global_ = seed;
    op_counter_ = 0;
    calls_.clear();
  }

  /// TensorFlow's `get_seed(op_seed)`: the op's attributes from the global and op seeds.
  SeedPair seeds_for(std::optional<std::int64_t> op_seed) {
    std::lock_guard lock(mutex_);
    SeedPair s;
    if (global_) {
      s = {*global_, op_seed ? *op_seed : static_cast<std::int64_t>(op_counter_++)};
    } else if (op_seed) {
      s = {default_global_seed, *op_seed};
    } else {
      return {0, 0};
    }
    if (s.seed == 0 && s.seed2 == 0) {
      s.seed2 = INT64_MAX;  // (0, 0) would read as "nondeterministic" (TensorFlow does the same)
    }
    return s;
  }

  /// The stream of one execution of an op with these seeds: a seeded pair advances its own
  /// call counter; (0, 0) draws a fresh stream from the process entropy.
  Stream next_stream(SeedPair s) {
    if (s.seed == 0 && s.seed2 == 0) {
      std::uint64_t const n = fresh_.fetch_add(1, std::memory_order_relaxed);
      return {key_of(entropy_, n), n};
    }
    std::uint64_t call = 0;
    {
      std::lock_guard lock(mutex_);
      call = calls_[{s.seed, s.seed2}]++;
    }
    return {key_of(static_cast<std::uint64_t>(s.seed), static_cast<std::uint64_t>(s.seed2)), call};
  }

 private:
  RandomState() {
    std::uint64_t e = static_cast<std::uint64_t>(
        std::chrono::high_resolution_clock::now().time_since_epoch().count());
#ifdef TAPEFLOW_HAS_GETENTROPY
    std::uint64_t os_entropy = 0;
    if (getentropy(&os_entropy, sizeof os_entropy) == 0) {
      e ^= os_entropy;
    }  // else no entropy source: the clock alone still differs between runs
#endif
    entropy_ = e;
  }
  static Philox4x32::Key key_of(std::uint64_t seed, std::uint64_t seed2) noexcept {
    std::uint64_t const k = mix64(seed ^ mix64(seed2 + 0x632BE59BD9B4E019ull));
    return {static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32)};
  }

  std::mutex mutex_;
  std::optional<std::int64_t> global_{};
  std::uint64_t op_counter_ = 0;
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint64_t> calls_;
  std::uint64_t entropy_ = 0;
  std::atomic<std::uint64_t> fresh_{0};
};

/// Four random words for element block `block` of a call (`trial` re-draws for rejection).
inline Philox4x32::Counter block_bits(Stream const& s, std::uint64_t block,
                                      std::uint64_t trial = 0) noexcept {
  std::uint64_t const b = block | (trial << 48);  // blocks < 2^48: far beyond any tensor
  return Philox4x32::generate(
      {static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32),
       static_cast<std::uint32_t>(s.call), static_cast<std::uint32_t>(s.call >> 32)},
      s.key);
}

/// Uniform [0, 1) from 32 random bits (float: 24 of them) or 64 (double: 53).
inline float unit_float(std::uint32_t x) noexcept { return static_cast<float>(x >> 8) * 0x1p-24f; }
inline double unit_double(std::uint32_t hi, std::uint32_t lo) noexcept {
  return static_cast<double>(((std::uint64_t{hi} << 32) | lo) >> 11) * 0x1p-53;
}

/// Fills `out[0, n)` block by block: `fill_block(bits_of(trial), values, lanes)` writes up to
/// `Lanes` values per block, run in parallel over blocks.
template <int Lanes, class T, class Block>
void fill_blocks(T* out, std::int64_t n, Block&& block) {
  std::int64_t const blocks = (n + Lanes - 1) / Lanes;
  backend::cpu::parallel_for(blocks, 2048, [&](std::int64_t b0, std::int64_t b1) {
    T tmp[Lanes];
    for (std::int64_t b = b0; b < b1; ++b) {
      std::int64_t const first = b * Lanes;
      if (first + Lanes <= n) {
        block(static_cast<std::uint64_t>(b), out + first);
      } else {
        block(static_cast<std::uint64_t>(b), tmp);
        std::copy(tmp, tmp + (n - first), out + first);
      }
    }
  });
}

/// Standard normal pairs by Box-Muller from two uniforms (u1 in (0, 1], so log(u1) is finite).
template <class T>
void box_muller(T u1, T u2, T& z0, T& z1) noexcept {
  T const r = std::sqrt(T(-2) * std::log(u1));
  T const theta = T(2) * std::numbers::pi_v<T> * u2;
  z0 = r * std::cos(theta);
  z1 = r * std::sin(theta);
}

/// The normals a block of random words gives: 4 floats or 2 doubles.
template <class T>
inline constexpr int normal_lanes = sizeof(T) == 4 ? 4 : 2;

template <class T>
void normals_of(Philox4x32::Counter const& w, T* z) noexcept {
  if constexpr (sizeof(T) == 4) {
    box_muller<float>(unit_float(w[0]) + 0x1p-24f, unit_float(w[1]), z[0], z[1]);
    box_muller<float>(unit_float(w[2]) + 0x1p-24f, unit_float(w[3]), z[2], z[3]);
  } else {
    box_muller<double>(unit_double(w[0], w[1]) + 0x1p-53, unit_double(w[2], w[3]), z[0], z[1]);
  }
}

template <std::size_t R>
std::array<std::int64_t, R> checked_dims(std::string_view op, std::array<std::int64_t, R> dims) {
  for (auto d : dims) {
    if (d < 0) {
      std::string text = "(";
      for (std::size_t i = 0; i < R; ++i) {
        text += (i > 0 ? ", " : "") + std::to_string(dims[i]);
      }
      throw invalid_argument(std::string(op) + ": shape " + text + (R == 1 ? ",)" : ")") +
                             " has a negative dimension");
    }
  }
  return dims;
}

/// A braced shape `{2, 3}` as an array.
template <std::size_t R>
std::array<std::int64_t, R> to_array(std::int64_t const (&dims)[R]) {
  std::array<std::int64_t, R> a{};
  std::copy(dims, dims + R, a.begin());
  return a;
}
/// z * scale + shift, skipping the ops when they would change nothing.
template <class T, std::size_t R>
Tensor<T, R> scale_shift(Tensor<T, R> const& z, double scale, double shift) {
  if (scale == 1.0 && shift == 0.0) {
    return z;
  }
  return z * static_cast<T>(scale) + static_cast<T>(shift);
}

}  // namespace detail::random_impl

namespace ops {

/// Samples from N(0, 1) (TensorFlow op "RandomStandardNormal"). Stateful: each execution
/// advances the seed pair's call counter (see Note [Random seeds]).
template <class T, std::size_t R>
struct RandomStandardNormal {
  static constexpr std::string_view name = "RandomStandardNormal";
  static constexpr std::string_view type_attr = "dtype";    ///< TensorFlow's output dtype
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  static constexpr bool differentiable = false;
  static constexpr bool stateful = true;
  std::array<std::int64_t, R> shape{};
  std::int64_t seed = 0;
  std::int64_t seed2 = 0;

  /// TensorFlow's attributes: the seed pair and the type of the `shape` input.
  [[nodiscard]] OpAttributes attributes() const {
    return {{"seed", seed}, {"seed2", seed2}, {"T", DType::int32}};
  }
  /// TensorFlow's `shape` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"shape", detail::int32_vector(shape)}};
  }

  OutSpec<T, R> infer() const {
    static_assert(floating_element<T>, "tf::random::normal<T>: T must be float or double");
    return {detail::random_impl::checked_dims(name, shape)};
  }
  void compute(Tensor<T, R>& out) const {
    namespace ri = detail::random_impl;
    auto const stream = ri::RandomState::instance().next_stream({seed, seed2});
    constexpr int lanes = ri::normal_lanes<T>;
    ri::fill_blocks<lanes>(
        detail::tensor_access::mutable_data(out), out.num_elements(),
        [&](std::uint64_t b, T* z) { ri::normals_of(ri::block_bits(stream, b), z); });
  }
};

/// Samples from N(0, 1) conditioned on |x| <= 2: values beyond two standard deviations are
/// re-drawn (TensorFlow op "TruncatedNormal"). Stateful like RandomStandardNormal.
template <class T, std::size_t R>
struct TruncatedNormal {
  static constexpr std::string_view name = "TruncatedNormal";
  static constexpr std::string_view type_attr = "dtype";    ///< TensorFlow's output dtype
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  static constexpr bool differentiable = false;
  static constexpr bool stateful = true;
  std::array<std::int64_t, R> shape{};
  std::int64_t seed = 0;
  std::int64_t seed2 = 0;

  /// TensorFlow's attributes: the seed pair and the type of the `shape` input.
  [[nodiscard]] OpAttributes attributes() const {
    return {{"seed", seed}, {"seed2", seed2}, {"T", DType::int32}};
  }
  /// TensorFlow's `shape` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"shape", detail::int32_vector(shape)}};
  }

  OutSpec<T, R> infer() const {
    static_assert(floating_element<T>,
                  "tf::random::truncated_normal<T>: T must be float or double");
    return {detail::random_impl::checked_dims(name, shape)};
  }
  void compute(Tensor<T, R>& out) const {
    namespace ri = detail::random_impl;
    auto const stream = ri::RandomState::instance().next_stream({seed, seed2});
    constexpr int lanes = ri::normal_lanes<T>;
    ri::fill_blocks<lanes>(detail::tensor_access::mutable_data(out), out.num_elements(),
                           [&](std::uint64_t b, T* z) {
                             ri::normals_of(ri::block_bits(stream, b), z);
                             // Lane j re-draws from lane j of the block's next trial, so every
                             // element still depends only on (seeds, call, index).
                             for (int j = 0; j < lanes; ++j) {
                               for (std::uint64_t trial = 1; std::abs(z[j]) > T(2); ++trial) {
                                 T again[lanes];
                                 ri::normals_of(ri::block_bits(stream, b, trial), again);
                                 z[j] = again[j];
                               }
                             }
                           });
  }
};

/// Samples from U[0, 1) (TensorFlow op "RandomUniform"). Stateful like RandomStandardNormal.
template <class T, std::size_t R>
struct RandomUniform {
  static constexpr std::string_view name = "RandomUniform";
  static constexpr std::string_view type_attr = "dtype";    ///< TensorFlow's output dtype
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  static constexpr bool differentiable = false;
  static constexpr bool stateful = true;
  std::array<std::int64_t, R> shape{};
  std::int64_t seed = 0;
  std::int64_t seed2 = 0;

  /// TensorFlow's attributes: the seed pair and the type of the `shape` input.
  [[nodiscard]] OpAttributes attributes() const {
    return {{"seed", seed}, {"seed2", seed2}, {"T", DType::int32}};
  }
  /// TensorFlow's `shape` input, held here as a member.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"shape", detail::int32_vector(shape)}};
  }

  OutSpec<T, R> infer() const {
    static_assert(floating_element<T>, "RandomUniform: T must be float or double");
    return {detail::random_impl::checked_dims(name, shape)};
  }
  void compute(Tensor<T, R>& out) const {
    namespace ri = detail::random_impl;
    auto const stream = ri::RandomState::instance().next_stream({seed, seed2});
    if constexpr (sizeof(T) == 4) {
      ri::fill_blocks<4>(detail::tensor_access::mutable_data(out), out.num_elements(),
                         [&](std::uint64_t b, T* u) {
                           auto const w = ri::block_bits(stream, b);
                           for (int j = 0; j < 4; ++j) {
                             u[j] = ri::unit_float(w[static_cast<std::size_t>(j)]);
                           }
                         });
    } else {
      ri::fill_blocks<2>(detail::tensor_access::mutable_data(out), out.num_elements(),
                         [&](std::uint64_t b, T* u) {
                           auto const w = ri::block_bits(stream, b);
                           u[0] = static_cast<T>(ri::unit_double(w[0], w[1]));
                           u[1] = static_cast<T>(ri::unit_double(w[2], w[3]));
                         });
    }
  }
};

/// Integers uniform in [minval, maxval) (TensorFlow op "RandomUniformInt"; its minval/maxval
/// inputs are attributes here). Stateful like RandomStandardNormal.
template <class T, std::size_t R>
struct RandomUniformInt {
  static constexpr std::string_view name = "RandomUniformInt";
  static constexpr std::string_view type_attr = "Tout";     ///< TensorFlow's output dtype
  static constexpr std::string_view output_arg = "output";  ///< TensorFlow's output argument
  static constexpr bool differentiable = false;
  static constexpr bool stateful = true;
  std::array<std::int64_t, R> shape{};
  T minval = 0;
  T maxval = 0;
  std::int64_t seed = 0;
  std::int64_t seed2 = 0;

  /// TensorFlow's attributes: the seed pair and the type of the `shape` input.
  [[nodiscard]] OpAttributes attributes() const {
    return {{"seed", seed}, {"seed2", seed2}, {"T", DType::int32}};
  }
  /// TensorFlow's `shape`, `minval` and `maxval` inputs, held here as members.
  [[nodiscard]] GraphInputs graph_inputs() const {
    return {{"shape", detail::int32_vector(shape)},
            {"minval", Tensor<T, 0>(minval)},
            {"maxval", Tensor<T, 0>(maxval)}};
  }

  OutSpec<T, R> infer() const {
    static_assert(std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>,
                  "tf::random::uniform<T>: integer T must be int32 or int64");
    if (!(minval < maxval)) {
      throw invalid_argument(std::string(name) + ": need minval < maxval, got minval = " +
                             std::to_string(minval) + ", maxval = " + std::to_string(maxval));
    }
    return {detail::random_impl::checked_dims(name, shape)};
  }
  void compute(Tensor<T, R>& out) const {
    namespace ri = detail::random_impl;
    auto const stream = ri::RandomState::instance().next_stream({seed, seed2});
    // 64 random bits per value: the modulo bias is below range / 2^64.
    std::uint64_t const range =
        static_cast<std::uint64_t>(maxval) - static_cast<std::uint64_t>(minval);
    ri::fill_blocks<2>(detail::tensor_access::mutable_data(out), out.num_elements(),
                       [&](std::uint64_t b, T* v) {
                         auto const w = ri::block_bits(stream, b);
                         std::uint64_t const x0 = (std::uint64_t{w[0]} << 32) | w[1];
                         std::uint64_t const x1 = (std::uint64_t{w[2]} << 32) | w[3];
                         v[0] = static_cast<T>(static_cast<std::uint64_t>(minval) + x0 % range);
                         v[1] = static_cast<T>(static_cast<std::uint64_t>(minval) + x1 % range);
                       });
  }
};

}  // namespace ops

namespace random {

/// Sets the global random seed (TensorFlow: `tf.random.set_seed`) and resets every call
/// counter, so the random calls that follow repeat the same values on every run (see
/// Note [Random seeds] in this header).
inline void set_seed(std::int64_t seed) {
  detail::random_impl::RandomState::instance().set_global_seed(seed);
}

/// Keyword arguments of `normal` and `truncated_normal`.
struct NormalOptions {
  double mean = 0.0;    ///< mean of the distribution
  double stddev = 1.0;  ///< standard deviation (of the untruncated distribution)
  /// The op seed; with or without a global seed (see `set_seed`) it makes the values
  /// reproducible. std::nullopt: depends on the global seed, or is nondeterministic.
  std::optional<std::int64_t> seed = std::nullopt;
};

/// Keyword arguments of `uniform<T>`: values in [minval, maxval). For floating T, maxval
/// defaults to 1; integer T needs it (as in TensorFlow).
template <class T>
struct UniformOptions {
  T minval = T(0);  ///< lower bound, included
  /// Upper bound, excluded; 1 when unset for floating T, required for integer T
  /// (invalid_argument otherwise).
  std::optional<T> maxval = std::nullopt;
  /// The op seed, as NormalOptions::seed.
  std::optional<std::int64_t> seed = std::nullopt;
};

/// Samples from a normal distribution (TensorFlow: `tf.random.normal(shape, mean, stddev,
/// dtype, seed)`).
///
///     tf::Variable<float, 2> w(tf::random::normal<float>({784, 10}, {.stddev = 0.1, .seed = 1}));
///
/// T: float or double. Throws invalid_argument for a negative dimension. Reproducibility: see
/// Note [Random seeds] at the top of this header.
template <class T = float, std::size_t R>
Tensor<T, R> normal(std::array<std::int64_t, R> const& shape, NormalOptions const& options = {}) {
  static_assert(floating_element<T>, "tf::random::normal<T>(shape): T must be float or double");
  auto const s = detail::random_impl::RandomState::instance().seeds_for(options.seed);
  auto z = detail::execute(ops::RandomStandardNormal<T, R>{shape, s.seed, s.seed2});
  return detail::random_impl::scale_shift(z, options.stddev, options.mean);
}
/// The same with the shape in braces, its rank deduced: `normal<float>({784, 10})`.
template <class T = float, std::size_t R>
Tensor<T, R> normal(std::int64_t const (&shape)[R], NormalOptions const& options = {}) {
  return normal<T, R>(detail::random_impl::to_array(shape), options);
}

/// Samples from a normal distribution truncated to two standard deviations: values farther
/// than 2 * stddev from the mean are re-drawn (TensorFlow: `tf.random.truncated_normal`).
/// Arguments and errors as for `normal`.
template <class T = float, std::size_t R>
Tensor<T, R> truncated_normal(std::array<std::int64_t, R> const& shape,
                              NormalOptions const& options = {}) {
  static_assert(floating_element<T>,
                "tf::random::truncated_normal<T>(shape): T must be float or double");
  auto const s = detail::random_impl::RandomState::instance().seeds_for(options.seed);
  auto z = detail::execute(ops::TruncatedNormal<T, R>{shape, s.seed, s.seed2});
  return detail::random_impl::scale_shift(z, options.stddev, options.mean);
}
/// The same with the shape in braces, its rank deduced.
template <class T = float, std::size_t R>
Tensor<T, R> truncated_normal(std::int64_t const (&shape)[R], NormalOptions const& options = {}) {
  return truncated_normal<T, R>(detail::random_impl::to_array(shape), options);
}

/// Samples uniformly from [minval, maxval) (TensorFlow: `tf.random.uniform(shape, minval,
/// maxval, dtype, seed)`).
///
///     auto u = tf::random::uniform<float>({2, 3});                          // [0, 1)
///     auto k = tf::random::uniform<int32_t>({10}, {.minval = 0, .maxval = 6});  // dice - 1
///
/// T: float, double, int32 or int64. Throws invalid_argument for a negative dimension, or for
/// integer T when `maxval` is missing or `minval >= maxval`.
template <class T = float, std::size_t R>
Tensor<T, R> uniform(std::array<std::int64_t, R> const& shape,
                     UniformOptions<T> const& options = {}) {
  static_assert(
      floating_element<T> || std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>,
      "tf::random::uniform<T>(shape): T must be float, double, int32 or int64");
  if constexpr (floating_element<T>) {
    auto const s = detail::random_impl::RandomState::instance().seeds_for(options.seed);
    auto u = detail::execute(ops::RandomUniform<T, R>{shape, s.seed, s.seed2});
    double const lo = static_cast<double>(options.minval);
    double const hi = options.maxval ? static_cast<double>(*options.maxval) : 1.0;
    return detail::random_impl::scale_shift(u, hi - lo, lo);
  } else {
    if (!options.maxval) {
      throw invalid_argument(
          std::string("tf::random::uniform: maxval must be given for integer dtype ") +
          std::string(dtype_name(dtype_v<T>)));
    }
    auto const s = detail::random_impl::RandomState::instance().seeds_for(options.seed);
    return detail::execute(
        ops::RandomUniformInt<T, R>{shape, options.minval, *options.maxval, s.seed, s.seed2});
  }
}
/// The same with the shape in braces, its rank deduced: `uniform<float>({2, 3})`.
template <class T = float, std::size_t R>
Tensor<T, R> uniform(std::int64_t const (&shape)[R], UniformOptions<T> const& options = {}) {
  return uniform<T, R>(detail::random_impl::to_array(shape), options);
}

}  // namespace random
TAPEFLOW_END_NAMESPACE
